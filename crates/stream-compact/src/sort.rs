//! Stable LSD radix sort of `u32` and `u64` keys, keys only or with `u32` values.

use std::marker::PhantomData;

use bytemuck::Pod;
use lumbre_gpu::{Error, Result};
use rayon::prelude::*;

use crate::pieces::split_sizes;

pub mod twin;

/// Keys per GPU sort tile (256 threads x 8), `SORT_TILE` in `compact/sort_params.wgsl`.
pub const SORT_TILE: usize = 2048;

/// Keys per tile of the one-sweep GPU sort's passes (256 threads x 16), `TILE` in
/// `compact/sort_sweep.wgsl`.
pub const SWEEP_TILE: usize = 4096;

/// How the GPU radix sort runs its passes.
///
/// ```
/// use lumbre_compact::{Lookback, SortMethod};
/// assert_eq!(SortMethod::default(), SortMethod::Auto);
/// let tested = SortMethod::OneSweep(Lookback { spin_limit: 0, walk_to_tile_zero: false });
/// assert_ne!(tested, SortMethod::MultiPass);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SortMethod {
    /// The method measured fastest: today [`MultiPass`](SortMethod::MultiPass) (on an NVIDIA
    /// H200 the one sweep takes 5.88 ms for 2^26 u32 keys, the multi-pass sort 5.49;
    /// benches/RESULTS.md).
    #[default]
    Auto,
    /// One count of every pass's digits, then per 8-bit digit one pass that ranks each tile's
    /// keys with subgroup ballots and finds the tile's output positions by decoupled look-back
    /// (tuned by [`Lookback`](crate::Lookback)): one read and one write of the keys per pass.
    /// Needs subgroups of 8 to 128 lanes, fewer than 2^30 keys and keys of one binding.
    OneSweep(crate::Lookback),
    /// Per digit a histogram pass, the tiles' output positions, and a scatter that sorts
    /// each tile in workgroup memory: needs no subgroups, and sorts keys longer than one
    /// binding in pieces.
    MultiPass,
}

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

/// Stable radix sort of keys through the [`Compute`](lumbre_gpu::Compute) trait.
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

impl<K: SortKey> RadixSort<K> {
    /// The CPU path: `input` sorted ([`radix_sort_cpu`]).
    ///
    /// ```
    /// use lumbre_compact::RadixSort;
    /// assert_eq!(RadixSort::<u32>::new().cpu(&[3, 1, 2])?, vec![1, 2, 3]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn cpu(&self, input: &[K]) -> Result<Vec<K>> {
        let mut keys = input.to_vec();
        radix_sort_cpu(&mut keys, None);
        Ok(keys)
    }
}

/// Stable radix sort of (key, value) pairs through the [`Compute`](lumbre_gpu::Compute) trait. Input and output
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

impl<K: SortKey> RadixSortPairs<K> {
    /// The CPU path: the pairs sorted by key ([`radix_sort_cpu`]); keys and values must be
    /// as many.
    ///
    /// ```
    /// use lumbre_compact::RadixSortPairs;
    /// let sorted = RadixSortPairs::<u32>::new().cpu(&(vec![2, 1], vec![10, 11]))?;
    /// assert_eq!(sorted, (vec![1, 2], vec![11, 10]));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn cpu(&self, (keys, vals): &(Vec<K>, Vec<u32>)) -> Result<(Vec<K>, Vec<u32>)> {
        if keys.len() != vals.len() {
            return Err(Error::Input(format!("{} keys with {} values", keys.len(), vals.len())));
        }
        let (mut k, mut v) = (keys.clone(), vals.clone());
        radix_sort_cpu(&mut k, Some(&mut v));
        Ok((k, v))
    }
}
