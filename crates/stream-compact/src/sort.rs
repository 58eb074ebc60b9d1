//! Stable LSD radix sort of `u32` and `u64` keys, keys only or with `u32` values.

use std::marker::PhantomData;

use bytemuck::Pod;
use lumbre_gpu::{Buffer, Compute, Error, Fit, Gpu, Recorder, Result};
use rayon::prelude::*;

use crate::pieces::{piece_len, pieces};
use crate::scan::{ScanKind, record_scan};

/// Keys per GPU sort tile (256 threads x 8), `SORT_TILE` in the radix shaders.
pub const SORT_TILE: usize = 2048;

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
const CPU_CHUNK: usize = 1 << 16;

/// One stable counting pass on the CPU, in parallel and without `unsafe`: the output is cut
/// into one disjoint slice per (digit, chunk), in (digit, chunk) order, and each chunk
/// fills its slices.
fn cpu_pass<K: SortKey>(keys: &[K], vals: Option<&[u32]>, keys_out: &mut [K], vals_out: Option<&mut [u32]>, pass: u32) {
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
    let chunks = hist.len();
    // Slices in (digit, chunk) order; regroup per chunk.
    let mut per_chunk: Vec<Vec<&mut [K]>> = (0..chunks).map(|_| Vec::with_capacity(256)).collect();
    let mut rest = keys_out;
    for d in 0..256 {
        for (c, h) in hist.iter().enumerate() {
            let (head, tail) = std::mem::take(&mut rest).split_at_mut(h[d]);
            per_chunk[c].push(head);
            rest = tail;
        }
    }
    match (vals, vals_out) {
        (Some(vals), Some(vals_out)) => {
            let mut per_chunk_v: Vec<Vec<&mut [u32]>> = (0..chunks).map(|_| Vec::with_capacity(256)).collect();
            let mut rest = vals_out;
            for d in 0..256 {
                for (c, h) in hist.iter().enumerate() {
                    let (head, tail) = std::mem::take(&mut rest).split_at_mut(h[d]);
                    per_chunk_v[c].push(head);
                    rest = tail;
                }
            }
            per_chunk
                .into_par_iter()
                .zip(per_chunk_v)
                .zip(keys.par_chunks(CPU_CHUNK).zip(vals.par_chunks(CPU_CHUNK)))
                .for_each(|((mut ks, mut vs), (kc, vc))| {
                    let mut at = [0usize; 256];
                    for (k, v) in kc.iter().zip(vc) {
                        let d = k.digit(pass);
                        ks[d][at[d]] = *k;
                        vs[d][at[d]] = *v;
                        at[d] += 1;
                    }
                });
        }
        _ => {
            per_chunk.into_par_iter().zip(keys.par_chunks(CPU_CHUNK)).for_each(|(ks, kc)| {
                let mut ks: Vec<_> = ks.into_iter().map(|s| s.iter_mut()).collect();
                for k in kc {
                    if let Some(slot) = ks[k.digit(pass)].next() {
                        *slot = *k;
                    }
                }
            });
        }
    }
}

/// Stable LSD radix sort on the CPU (parallel counting passes), keys with optional values
/// that move with them. Sorts in place.
///
/// ```
/// let mut keys = vec![3u32, 1, 3, 0];
/// let mut vals = vec![0, 1, 2, 3];
/// lumbre_compact::radix_sort_cpu(&mut keys, Some(&mut vals));
/// assert_eq!((keys, vals), (vec![0, 1, 3, 3], vec![3, 1, 0, 2]));
/// ```
pub fn radix_sort_cpu<K: SortKey>(keys: &mut [K], mut vals: Option<&mut [u32]>) {
    if let Some(v) = &vals {
        assert_eq!(v.len(), keys.len(), "radix_sort_cpu: keys and values differ in length");
    }
    let passes = 4 * K::WORDS;
    let mut k_tmp = keys.to_vec();
    let mut v_tmp = vals.as_ref().map(|v| v.to_vec());
    for pass in 0..passes {
        // Even passes read `keys` and write the scratch; odd passes the other way round.
        if pass % 2 == 0 {
            cpu_pass(keys, vals.as_deref(), &mut k_tmp, v_tmp.as_deref_mut(), pass);
        } else {
            cpu_pass(&k_tmp, v_tmp.as_deref(), keys, vals.as_deref_mut(), pass);
        }
    }
    // 4 or 8 passes: the result is back in `keys`.
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    n: u32,
    shift: u32,
    word: u32,
    key_words: u32,
    num_tiles: u32,
    has_values: u32,
    tile_base: u32,
    out_base: u32,
    out_len: u32,
    _pad: [u32; 3],
}

/// Records a stable GPU radix sort of `keys` (and `values` with them), in place: 4 passes
/// for `u32` keys, 8 for `u64`, each a histogram, a scan of the histograms and a scatter,
/// all on the GPU.
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
    let gpu = rec.gpu().clone();
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
    gpu.check_size("radix sort histograms", 256 * 4 * tiles as u64, Fit::Binding)?;
    let piece = piece_len(&gpu, size_of::<K>(), SORT_TILE);
    let parts = pieces(n, piece);
    let keys_tmp = gpu.zeroed_fit::<K>(n, Fit::Pieces)?;
    // Without values, two distinct one-word stand-ins (one buffer cannot be bound both
    // read-only and read-write in one dispatch).
    let vals_tmp = gpu.zeroed_fit::<u32>(if values.is_some() { n } else { 1 }, Fit::Pieces)?;
    let vals = match values {
        Some(v) => v.clone(),
        None => gpu.zeroed::<u32>(1)?,
    };
    let hist = gpu.zeroed::<u32>(256 * tiles)?;
    let offsets = gpu.zeroed::<u32>(256 * tiles)?;
    let hist_k = gpu.kernel(&lumbre_shaders::compact::RADIX_HIST, "hist_tiles")?;
    let scatter_shader = if gpu.has_subgroups() {
        lumbre_shaders::compact::RADIX_SCATTER_SUBGROUPS
    } else {
        lumbre_shaders::compact::RADIX_SCATTER_PLAIN
    };
    let scatter_k = gpu.kernel(&scatter_shader, "scatter")?;
    let k_in = keys.clone().cast::<u32>()?;
    let k_tmp = keys_tmp.cast::<u32>()?;
    let w = K::WORDS as usize;
    let key_range = |(start, len): (usize, usize)| start * w..(start + len) * w;
    let val_range =
        |v: &Buffer<u32>, (start, len): (usize, usize)| if v.len() >= start + len { start..start + len } else { 0..1 };
    for pass in 0..passes {
        let (src_k, dst_k, src_v, dst_v) =
            if pass % 2 == 0 { (&k_in, &k_tmp, &vals, &vals_tmp) } else { (&k_tmp, &k_in, &vals_tmp, &vals) };
        let params = |part: (usize, usize), window: (usize, usize)| Params {
            n: part.1 as u32,
            shift: 8 * (pass % 4),
            word: pass / 4,
            key_words: K::WORDS,
            num_tiles: tiles as u32,
            has_values: values.is_some() as u32,
            tile_base: (part.0 / SORT_TILE) as u32,
            out_base: window.0 as u32,
            out_len: window.1 as u32,
            _pad: [0; 3],
        };
        for &part in &parts {
            let p = gpu.uniform(&params(part, (0, 0)))?;
            let bind = [p.as_entire_binding(), src_k.binding_range(key_range(part)), hist.binding()];
            rec.dispatch("sort histogram", &hist_k, &bind, part.1.div_ceil(SORT_TILE) as u64)?;
        }
        record_scan(rec, &hist, &offsets, ScanKind::Exclusive)?;
        for &part in &parts {
            for &window in &parts {
                let p = gpu.uniform(&params(part, window))?;
                let bind = [
                    p.as_entire_binding(),
                    src_k.binding_range(key_range(part)),
                    src_v.binding_range(val_range(src_v, part)),
                    offsets.binding(),
                    dst_k.binding_range(key_range(window)),
                    dst_v.binding_range(val_range(dst_v, window)),
                ];
                rec.dispatch("sort scatter", &scatter_k, &bind, part.1.div_ceil(SORT_TILE) as u64)?;
            }
        }
    }
    // An odd number of passes leaves the result in the scratch buffers.
    if passes % 2 == 1 {
        rec.copy(&k_tmp, &k_in)?;
        if values.is_some() {
            rec.copy(&vals_tmp, &vals)?;
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
