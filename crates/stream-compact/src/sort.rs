//! Stable LSD radix sort of `u32` and `u64` keys, keys only or with `u32` values.

use std::marker::PhantomData;

use bytemuck::Pod;
use lumbre_gpu::stages::{Buf, Stages};
use lumbre_gpu::{Buffer, Compute, Error, Fit, Gpu, Recorder, Result, pieces};
use lumbre_shaders::compact::{RADIX_HIST, RADIX_OFFSETS, RADIX_SCATTER_PLAIN, RADIX_SCATTER_SUBGROUPS};
use rayon::prelude::*;

use crate::pieces::split_sizes;
use crate::scan::{Scan, ScanKind};
use crate::stages::{SortParams, radix_hist, radix_offsets, radix_scatter};

/// Keys per GPU sort tile (256 threads x 8), `SORT_TILE` in the radix shaders.
pub const SORT_TILE: usize = 2048;

/// Tiles per chunk when the per-tile histograms become output positions, `CHUNK` in
/// `radix_offsets.wgsl`.
const RADIX_CHUNK: usize = 32;

/// Keys the radix sort handles: 8-bit digits, least significant first.
pub trait SortKey: Pod + Ord + Send + Sync + std::fmt::Debug {
    /// 32-bit words per key.
    const WORDS: u32;
    /// Digit `pass` (0 = least significant byte).
    fn digit(self, pass: u32) -> usize;
}

impl SortKey for u32 {
    const WORDS: u32 = 1;
    fn digit(self, pass: u32) -> usize {
        ((self >> (8 * pass)) & 0xff) as usize
    }
}

impl SortKey for u64 {
    const WORDS: u32 = 2;
    fn digit(self, pass: u32) -> usize {
        ((self >> (8 * pass)) & 0xff) as usize
    }
}

/// Keys per CPU chunk: each chunk counts and scatters its own keys in parallel.
const CPU_CHUNK: usize = 1 << 18;

/// Cuts `out` into one slice per (digit, chunk), in (digit, chunk) order, and regroups them
/// per chunk: chunk `c`'s keys of digit `d` go to `result[c][d]`.
fn split_by_digit<'a, T>(out: &'a mut [T], hist: &[[usize; 256]]) -> Vec<Vec<&'a mut [T]>> {
    let mut per_chunk: Vec<Vec<&mut [T]>> = (0..hist.len()).map(|_| Vec::with_capacity(256)).collect();
    let mut rest = out;
    for d in 0..256 {
        for (c, h) in hist.iter().enumerate() {
            let (head, tail) = std::mem::take(&mut rest).split_at_mut(h[d]);
            per_chunk[c].push(head);
            rest = tail;
        }
    }
    per_chunk
}

/// Software write combining for one chunk's scatter: each digit collects 128 bytes before
/// they are written out together, so the scatter writes whole cache lines instead of one
/// element at a time to 256 places.
struct Combiner<'a, T> {
    dst: Vec<&'a mut [T]>,
    buf: Vec<T>,
    fill: [usize; 256],
    width: usize,
}

impl<'a, T: Pod> Combiner<'a, T> {
    fn new(dst: Vec<&'a mut [T]>) -> Self {
        let width = (128 / std::mem::size_of::<T>()).max(1);
        Combiner { dst, buf: vec![T::zeroed(); 256 * width], fill: [0; 256], width }
    }

    #[inline(always)]
    fn push(&mut self, d: usize, x: T) {
        let (w, f) = (self.width, self.fill[d]);
        self.buf[d * w + f] = x;
        if f + 1 == w {
            let (head, tail) = std::mem::take(&mut self.dst[d]).split_at_mut(w);
            head.copy_from_slice(&self.buf[d * w..(d + 1) * w]);
            self.dst[d] = tail;
            self.fill[d] = 0;
        } else {
            self.fill[d] = f + 1;
        }
    }

    fn finish(mut self) {
        for d in 0..256 {
            let f = self.fill[d];
            self.dst[d][..f].copy_from_slice(&self.buf[d * self.width..d * self.width + f]);
        }
    }
}

/// One stable counting pass on the CPU, in parallel and without `unsafe`: per-chunk digit
/// counts give every chunk its own disjoint output slices, which it fills in order. Returns
/// the count of each digit, or `None`, having written nothing, when every key has the same
/// digit (the pass would not change the order).
fn cpu_pass<K: SortKey>(
    keys: &[K],
    vals: Option<&[u32]>,
    keys_out: &mut [K],
    vals_out: Option<&mut [u32]>,
    pass: u32,
) -> Option<[usize; 256]> {
    let hist: Vec<[usize; 256]> = keys
        .par_chunks(CPU_CHUNK)
        .map(|c| {
            let mut h = [0usize; 256];
            for k in c {
                h[k.digit(pass)] += 1;
            }
            h
        })
        .collect();
    let mut total = [0usize; 256];
    for h in &hist {
        total.iter_mut().zip(h).for_each(|(t, c)| *t += c);
    }
    if total.contains(&keys.len()) {
        return None;
    }
    let key_slices = split_by_digit(keys_out, &hist);
    match (vals, vals_out) {
        (Some(vals), Some(vals_out)) => {
            let val_slices = split_by_digit(vals_out, &hist);
            key_slices
                .into_par_iter()
                .zip(val_slices)
                .zip(keys.par_chunks(CPU_CHUNK).zip(vals.par_chunks(CPU_CHUNK)))
                .for_each(|((ks, vs), (kc, vc))| {
                    let (mut ks, mut vs) = (Combiner::new(ks), Combiner::new(vs));
                    for (&k, &v) in kc.iter().zip(vc) {
                        let d = k.digit(pass);
                        ks.push(d, k);
                        vs.push(d, v);
                    }
                    ks.finish();
                    vs.finish();
                });
        }
        _ => {
            key_slices.into_par_iter().zip(keys.par_chunks(CPU_CHUNK)).for_each(|(ks, kc)| {
                let mut ks = Combiner::new(ks);
                for &k in kc {
                    ks.push(k.digit(pass), k);
                }
                ks.finish();
            });
        }
    }
    Some(total)
}

/// Keys per bucket below which the CPU sort finishes a bucket with LSD passes: the keys and
/// their scratch then stay in a core's L2 cache, where a counting pass runs faster than one
/// that scatters to memory.
const CPU_IN_CACHE: usize = 1 << 16;

/// Stable radix sort on the CPU, keys with optional values that move with them. Sorts in
/// place.
///
/// Large inputs are split by their most significant varying digit (one parallel counting
/// pass through memory), and each bucket is then sorted on its own, in parallel: by LSD
/// passes once it fits the cache, else by splitting it again.
///
/// ```
/// let mut keys = vec![3u32, 1, 3, 0];
/// let mut vals = vec![0, 1, 2, 3];
/// lumbre_compact::radix_sort_cpu(&mut keys, Some(&mut vals));
/// assert_eq!((keys, vals), (vec![0, 1, 3, 3], vec![3, 1, 0, 2]));
/// ```
pub fn radix_sort_cpu<K: SortKey>(keys: &mut [K], vals: Option<&mut [u32]>) {
    if let Some(v) = &vals {
        assert_eq!(v.len(), keys.len(), "radix_sort_cpu: keys and values differ in length");
    }
    // Zeroed scratch, not a copy: the allocator hands out fresh zero pages at no cost.
    let mut k_tmp = vec![K::zeroed(); keys.len()];
    let mut v_tmp = vals.as_ref().map(|v| vec![0u32; v.len()]);
    sort_digits(keys, vals, &mut k_tmp, v_tmp.as_deref_mut(), 4 * K::WORDS);
}

/// Sorts `keys` (and `vals`) by their digits `0..digits`, stably, using the scratch slices.
fn sort_digits<K: SortKey>(
    keys: &mut [K],
    vals: Option<&mut [u32]>,
    k_tmp: &mut [K],
    mut v_tmp: Option<&mut [u32]>,
    digits: u32,
) {
    if digits == 0 {
        return;
    }
    if keys.len() <= CPU_IN_CACHE {
        return lsd(keys, vals, k_tmp, v_tmp, digits);
    }
    let top = digits - 1;
    let Some(counts) = cpu_pass(keys, vals.as_deref(), k_tmp, v_tmp.as_deref_mut(), top) else {
        return sort_digits(keys, vals, k_tmp, v_tmp, top);
    };
    // The keys now lie in the scratch, grouped by their top digit; each group is sorted by
    // the lower digits with the original slices as its scratch, then copied back.
    let sizes: Vec<usize> = counts.into_iter().filter(|&c| c > 0).collect();
    let groups: Vec<_> = split_sizes(k_tmp, &sizes).into_iter().zip(split_sizes(keys, &sizes)).collect();
    let vals_groups: Vec<Option<(&mut [u32], &mut [u32])>> = match (v_tmp, vals) {
        (Some(vt), Some(v)) => split_sizes(vt, &sizes).into_iter().zip(split_sizes(v, &sizes)).map(Some).collect(),
        _ => sizes.iter().map(|_| None).collect(),
    };
    groups.into_par_iter().zip(vals_groups).for_each(|((src, dst), v)| {
        let (mut vs, mut vd) = v.map_or((None, None), |(a, b)| (Some(a), Some(b)));
        sort_digits(src, vs.as_deref_mut(), dst, vd.as_deref_mut(), top);
        dst.copy_from_slice(src);
        if let (Some(vs), Some(vd)) = (vs, vd) {
            vd.copy_from_slice(vs);
        }
    });
}

/// Sequential LSD passes over digits `0..digits` for inputs that fit the cache: one read
/// counts every digit, then each pass scatters straight to its offsets. The result ends in
/// `keys`.
fn lsd<K: SortKey>(
    keys: &mut [K],
    mut vals: Option<&mut [u32]>,
    k_tmp: &mut [K],
    mut v_tmp: Option<&mut [u32]>,
    digits: u32,
) {
    let mut counts = vec![[0usize; 256]; digits as usize];
    for k in keys.iter() {
        for (p, c) in counts.iter_mut().enumerate() {
            c[k.digit(p as u32)] += 1;
        }
    }
    let mut in_tmp = false;
    for (pass, c) in counts.iter().enumerate() {
        if c.contains(&keys.len()) {
            continue;
        }
        let mut at = [0usize; 256];
        let mut sum = 0;
        for (a, &x) in at.iter_mut().zip(c) {
            *a = sum;
            sum += x;
        }
        let (src, dst): (&[K], &mut [K]) = if in_tmp { (k_tmp, keys) } else { (keys, k_tmp) };
        let pass = pass as u32;
        match (&mut vals, &mut v_tmp) {
            (Some(v), Some(t)) => {
                let (vsrc, vdst): (&[u32], &mut [u32]) = if in_tmp { (t, v) } else { (v, t) };
                for (&k, &x) in src.iter().zip(vsrc) {
                    let d = k.digit(pass);
                    dst[at[d]] = k;
                    vdst[at[d]] = x;
                    at[d] += 1;
                }
            }
            _ => {
                for &k in src {
                    let d = k.digit(pass);
                    dst[at[d]] = k;
                    at[d] += 1;
                }
            }
        }
        in_tmp = !in_tmp;
    }
    if in_tmp {
        keys.copy_from_slice(k_tmp);
        if let (Some(v), Some(t)) = (vals, v_tmp) {
            v.copy_from_slice(t);
        }
    }
}

/// Records a stable GPU radix sort of `keys` (and `values` with them), in place: 4 passes
/// for `u32` keys, 8 for `u64`, each a histogram per tile, the tiles' output positions
/// (per-chunk sums, a scan of those, then per tile) and a scatter, all on the GPU.
///
/// Keys longer than one storage binding are sorted in binding-sized pieces: the scatter of
/// each input piece runs once per output window and writes the keys that land in it, so a
/// sort over `w` windows costs about `w` times the scatter work. The histograms must fit
/// one binding, which allows keys up to 8 bindings long.
pub fn record_sort<K: SortKey>(rec: &mut Recorder, keys: &Buffer<K>, values: Option<&Buffer<u32>>) -> Result<()> {
    record_sort_bits(rec, keys, values, 32 * K::WORDS)
}

/// [`record_sort`] for keys whose bits above `key_bits` are all zero (Morton codes, say):
/// only `ceil(key_bits / 8)` passes run.
pub fn record_sort_bits<K: SortKey>(
    rec: &mut Recorder,
    keys: &Buffer<K>,
    values: Option<&Buffer<u32>>,
    key_bits: u32,
) -> Result<()> {
    let mut s = Stages::record(rec);
    let keys = s.adopt(keys)?;
    let values = values.map(|v| s.adopt(v)).transpose()?;
    record_sort_stages(&mut s, keys, values, key_bits)
}

/// Records the stable radix sort of `keys` by their low `key_bits` bits, with `values`
/// moving with them, in place, into `s` (see [`record_sort`]).
///
/// ```
/// use lumbre_compact::record_sort_stages;
/// use lumbre_gpu::stages::Stages;
/// let mut s = Stages::cpu();
/// let (keys, vals) = (s.upload(&[3u32, 1, 2, 1])?, s.upload(&[0u32, 1, 2, 3])?);
/// record_sort_stages(&mut s, keys, Some(vals), 32)?;
/// assert_eq!((s.read(keys)?, s.read(vals)?), (vec![1, 1, 2, 3], vec![1, 3, 2, 0]));
/// # Ok::<(), lumbre_gpu::Error>(())
/// ```
pub fn record_sort_stages<K: SortKey>(
    s: &mut Stages<'_>,
    keys: Buf<K>,
    values: Option<Buf<u32>>,
    key_bits: u32,
) -> Result<()> {
    let passes = key_bits.min(32 * K::WORDS).div_ceil(8);
    let n = keys.len();
    if let Some(v) = values
        && v.len() != n
    {
        return Err(Error::Input(format!("sort of {n} keys with {} values", v.len())));
    }
    if n < 2 {
        return Ok(());
    }
    u32::try_from(n).map_err(|_| Error::Input("sort of more than 2^32 keys".into()))?;
    let tiles = n.div_ceil(SORT_TILE);
    s.check_size("radix sort histograms", 256 * 4 * tiles as u64, Fit::Binding)?;
    let piece = s.piece_len(size_of::<K>(), SORT_TILE);
    let parts = pieces(n, piece);
    let keys_tmp = s.zeroed_fit::<K>(n, Fit::Pieces)?;
    // Without values, two distinct one-word stand-ins (one buffer cannot be bound both
    // read-only and read-write in one dispatch).
    let vals_tmp = s.zeroed_fit::<u32>(if values.is_some() { n } else { 1 }, Fit::Pieces)?;
    let vals = match values {
        Some(v) => v,
        None => s.zeroed::<u32>(1)?,
    };
    let hist = s.zeroed::<u32>(256 * tiles)?;
    let offsets = s.zeroed::<u32>(256 * tiles)?;
    let chunks = tiles.div_ceil(RADIX_CHUNK);
    let sums = s.zeroed::<u32>(256 * chunks)?;
    let starts = s.zeroed::<u32>(256 * chunks)?;
    let hist_k = s.stage(&RADIX_HIST, "hist_tiles")?;
    let sums_k = s.stage(&RADIX_OFFSETS, "chunk_sums")?;
    let offsets_k = s.stage(&RADIX_OFFSETS, "chunk_offsets")?;
    let scatter_shader = if s.has_subgroups() { RADIX_SCATTER_SUBGROUPS } else { RADIX_SCATTER_PLAIN };
    let scatter_k = s.stage(&scatter_shader, "scatter")?;
    let k_in = keys.cast::<u32>()?;
    let k_tmp = keys_tmp.cast::<u32>()?;
    let w = K::WORDS as usize;
    let key_range = |b: Buf<u32>, (start, len): (usize, usize)| b.range(start * w..(start + len) * w);
    let val_range = |v: Buf<u32>, (start, len): (usize, usize)| {
        if v.len() >= start + len { v.range(start..start + len) } else { v.range(0..1) }
    };
    // The offsets kernels read only the tile count, the same in every pass.
    let offsets_params = s.uniform(&SortParams { num_tiles: tiles as u32, ..bytemuck::Zeroable::zeroed() })?;
    let scan = Scan::<u32>::new(ScanKind::Exclusive);
    for pass in 0..passes {
        let (src_k, dst_k, src_v, dst_v) =
            if pass % 2 == 0 { (k_in, k_tmp, vals, vals_tmp) } else { (k_tmp, k_in, vals_tmp, vals) };
        let params = |part: (usize, usize), window: (usize, usize)| SortParams {
            n: part.1 as u32,
            shift: 8 * (pass % 4),
            word: pass / 4,
            key_words: K::WORDS,
            num_tiles: tiles as u32,
            has_values: values.is_some() as u32,
            tile_base: (part.0 / SORT_TILE) as u32,
            out_base: window.0 as u32,
            out_len: window.1 as u32,
        };
        for &part in &parts {
            let p = s.uniform(&params(part, (0, 0)))?;
            let binds = [key_range(src_k, part), hist.all()];
            s.dispatch("sort histogram", &hist_k, &p, &binds, part.1.div_ceil(SORT_TILE) as u64, |p, b| {
                let [keys, hist] = b else { unreachable!() };
                radix_hist::hist_tiles(p, keys, hist);
            })?;
        }
        s.dispatch("sort offsets", &sums_k, &offsets_params, &[hist.all(), sums.all()], chunks as u64, |p, b| {
            let [hist, sums] = b else { unreachable!() };
            radix_offsets::chunk_sums(p, hist, sums);
        })?;
        scan.record_stages(s, sums, starts)?;
        let binds = [hist.all(), starts.all(), offsets.all()];
        s.dispatch("sort offsets", &offsets_k, &offsets_params, &binds, chunks as u64, |p, b| {
            let [hist, starts, offsets] = b else { unreachable!() };
            radix_offsets::chunk_offsets(p, hist, starts, offsets);
        })?;
        for &part in &parts {
            for &window in &parts {
                let p = s.uniform(&params(part, window))?;
                let binds = [
                    key_range(src_k, part),
                    val_range(src_v, part),
                    offsets.all(),
                    key_range(dst_k, window),
                    val_range(dst_v, window),
                    hist.all(),
                ];
                s.dispatch("sort scatter", &scatter_k, &p, &binds, part.1.div_ceil(SORT_TILE) as u64, |p, b| {
                    let [keys_in, vals_in, offsets, keys_out, vals_out, hist] = b else { unreachable!() };
                    radix_scatter::scatter(p, keys_in, vals_in, offsets, keys_out, vals_out, hist);
                })?;
            }
        }
    }
    // An odd number of passes leaves the result in the scratch buffers.
    if passes % 2 == 1 {
        s.copy(k_tmp, 0, k_in, 0, n * w)?;
        if values.is_some() {
            s.copy(vals_tmp, 0, vals, 0, n)?;
        }
    }
    Ok(())
}

/// Stable radix sort of keys through the [`Compute`] trait.
///
/// ```
/// use lumbre_compact::RadixSort;
/// use lumbre_gpu::{Backend, Compute};
/// let sorted = RadixSort::<u64>::new().run(&Backend::Cpu, &[5, 1 << 40, 0]).unwrap();
/// assert_eq!(sorted, vec![0, 5, 1 << 40]);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct RadixSort<K>(PhantomData<K>);

impl<K> RadixSort<K> {
    /// A keys-only sort.
    pub fn new() -> Self {
        RadixSort(PhantomData)
    }
}

impl<K: SortKey> Compute for RadixSort<K> {
    type Input = [K];
    type Output = Vec<K>;
    type GpuInput = Buffer<K>;
    type GpuOutput = Buffer<K>;

    fn name(&self) -> &'static str {
        "radix sort"
    }

    fn cpu(&self, input: &[K]) -> Result<Vec<K>> {
        let mut keys = input.to_vec();
        radix_sort_cpu(&mut keys, None);
        Ok(keys)
    }

    fn upload(&self, gpu: &Gpu, input: &[K]) -> Result<Buffer<K>> {
        gpu.upload_fit(input, Fit::Pieces)
    }

    fn record(&self, rec: &mut Recorder, keys: &Buffer<K>) -> Result<Buffer<K>> {
        record_sort(rec, keys, None)?;
        Ok(keys.clone())
    }

    fn download(&self, gpu: &Gpu, keys: &Buffer<K>) -> Result<Vec<K>> {
        gpu.download(keys)
    }
}

/// Stable radix sort of (key, value) pairs through the [`Compute`] trait. Input and output
/// are `(keys, values)`.
///
/// ```
/// use lumbre_compact::RadixSortPairs;
/// use lumbre_gpu::{Backend, Compute};
/// let out = RadixSortPairs::<u32>::new().run(&Backend::Cpu, &(vec![2, 1, 2], vec![10, 11, 12])).unwrap();
/// assert_eq!(out, (vec![1, 2, 2], vec![11, 10, 12]));
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct RadixSortPairs<K>(PhantomData<K>);

impl<K> RadixSortPairs<K> {
    /// A key-value sort.
    pub fn new() -> Self {
        RadixSortPairs(PhantomData)
    }
}

impl<K: SortKey + lumbre_gpu::Scalar> Compute for RadixSortPairs<K> {
    type Input = (Vec<K>, Vec<u32>);
    type Output = (Vec<K>, Vec<u32>);
    type GpuInput = (Buffer<K>, Buffer<u32>);
    type GpuOutput = (Buffer<K>, Buffer<u32>);

    fn name(&self) -> &'static str {
        "radix sort (pairs)"
    }

    fn cpu(&self, (keys, vals): &(Vec<K>, Vec<u32>)) -> Result<(Vec<K>, Vec<u32>)> {
        if keys.len() != vals.len() {
            return Err(Error::Input(format!("{} keys with {} values", keys.len(), vals.len())));
        }
        let (mut k, mut v) = (keys.clone(), vals.clone());
        radix_sort_cpu(&mut k, Some(&mut v));
        Ok((k, v))
    }

    fn upload(&self, gpu: &Gpu, (keys, vals): &(Vec<K>, Vec<u32>)) -> Result<(Buffer<K>, Buffer<u32>)> {
        if keys.len() != vals.len() {
            return Err(Error::Input(format!("{} keys with {} values", keys.len(), vals.len())));
        }
        Ok((gpu.upload_fit(keys, Fit::Pieces)?, gpu.upload_fit(vals, Fit::Pieces)?))
    }

    fn record(&self, rec: &mut Recorder, (keys, vals): &(Buffer<K>, Buffer<u32>)) -> Result<(Buffer<K>, Buffer<u32>)> {
        record_sort(rec, keys, Some(vals))?;
        Ok((keys.clone(), vals.clone()))
    }

    fn download(&self, gpu: &Gpu, (keys, vals): &(Buffer<K>, Buffer<u32>)) -> Result<(Vec<K>, Vec<u32>)> {
        Ok((gpu.download(keys)?, gpu.download(vals)?))
    }
}
