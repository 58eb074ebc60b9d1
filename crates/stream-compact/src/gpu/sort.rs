//! The radix sort on the GPU, the twin of `sort.rs`. One sweep: `compact/sort_counts.wgsl`
//! (every pass's digit counts and starts), then per pass `compact/sort_sweep.wgsl`. Multi-pass:
//! per pass `compact/sort_hist.wgsl` (each tile's digit counts), `compact/sort_offsets.wgsl`
//! around a scan (the tiles' output positions) and `compact/sort_scatter.wgsl`.

use lumbre_gpu::stages::{Buf, Stages};
use lumbre_gpu::{Buffer, Compute, Error, Fit, Gpu, Progress, Recorder, Report, Result, pieces};
use lumbre_shaders::compact::{
    SORT_COUNTS, SORT_HIST, SORT_OFFSETS, SORT_SCATTER_PLAIN, SORT_SCATTER_SUBGROUPS, SORT_SWEEP,
};

use crate::scan::{Lookback, Scan, ScanKind};
use crate::sort::twin::{self, CHUNK, SortParams};
use crate::sort::{RadixSort, RadixSortPairs, SORT_TILE, SWEEP_TILE, SortKey, SortMethod};

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
    record_sort_with(s, keys, values, key_bits, SortMethod::Auto)
}

/// [`record_sort_stages`] by an explicit [`SortMethod`]. `OneSweep` runs its stages' twins
/// where there is no GPU, and is an error for keys it cannot sort (2^30 or more, or longer
/// than one binding) or a GPU without subgroups of 8 to 128 lanes.
///
/// ```
/// use lumbre_compact::{Lookback, SortMethod, record_sort_with};
/// use lumbre_gpu::stages::Stages;
/// let mut s = Stages::cpu();
/// let keys = s.upload(&[3u64 << 40, 1, 2 << 40])?;
/// record_sort_with(&mut s, keys, None, 64, SortMethod::OneSweep(Lookback::default()))?;
/// assert_eq!(s.read(keys)?, vec![1, 2 << 40, 3 << 40]);
/// # Ok::<(), lumbre_gpu::Error>(())
/// ```
pub fn record_sort_with<K: SortKey>(
    s: &mut Stages<'_>,
    keys: Buf<K>,
    values: Option<Buf<u32>>,
    key_bits: u32,
    method: SortMethod,
) -> Result<()> {
    let n = keys.len();
    if let Some(v) = values
        && v.len() != n
    {
        return Err(Error::Input(format!("sort of {n} keys with {} values", v.len())));
    }
    if n < 2 {
        return Ok(());
    }
    let passes = key_bits.min(32 * K::WORDS).div_ceil(8);
    let sweep = match method {
        SortMethod::Auto | SortMethod::MultiPass => None,
        SortMethod::OneSweep(lookback) => {
            let fits = n < 1 << 30 && (size_of::<K>() * n) as u64 <= s.max_binding();
            let (min, max) = s.gpu().map_or((8, 8), |g| g.subgroup_size_range());
            if !fits {
                return Err(Error::Input(format!("one-sweep sort of {n} keys: at most 2^30 keys of one binding")));
            }
            if s.gpu().is_some() && !(s.supports(&SORT_SWEEP) && min >= 8 && max <= 128) {
                return Err(Error::Input("one-sweep sort: needs subgroups of 8 to 128 lanes".into()));
            }
            Some(lookback)
        }
    };
    match sweep {
        Some(lookback) => record_sweeps(s, keys, values, passes, lookback),
        None => record_multi_pass(s, keys, values, passes),
    }
}

/// The one-sweep sort: every pass's digit counts and starts, then one sweep per pass.
fn record_sweeps<K: SortKey>(
    s: &mut Stages<'_>,
    keys: Buf<K>,
    values: Option<Buf<u32>>,
    passes: u32,
    lookback: Lookback,
) -> Result<()> {
    let n = keys.len();
    let tiles = n.div_ceil(SWEEP_TILE);
    s.check_size("one-sweep look-back state", 4 * (8 + 256 * tiles as u64), Fit::Binding)?;
    let keys_tmp = s.zeroed::<K>(n)?;
    let vals_tmp = s.zeroed::<u32>(if values.is_some() { n } else { 1 })?;
    let vals = match values {
        Some(v) => v,
        None => s.zeroed::<u32>(1)?,
    };
    let counts = s.zeroed::<u32>(256 * passes as usize)?;
    let state = s.zeroed::<u32>(8 + 256 * tiles)?;
    let count_k = s.stage(&SORT_COUNTS, "count_digits")?;
    let starts_k = s.stage(&SORT_COUNTS, "digit_starts")?;
    let sweep_k = s.stage(&SORT_SWEEP, "sweep")?;
    // About 2048 counting workgroups: enough to fill a GPU, few global atomics each.
    let tiles_per_group = tiles.div_ceil(2048);
    let base = SortParams {
        n: n as u32,
        key_words: K::WORDS,
        num_tiles: tiles as u32,
        has_values: values.is_some() as u32,
        passes,
        tiles_per_group: tiles_per_group as u32,
        lookback: lookback.tuning(),
        ..bytemuck::Zeroable::zeroed()
    };
    let (k_in, k_tmp) = (keys.cast::<u32>()?, keys_tmp.cast::<u32>()?);
    let p = s.uniform(&base)?;
    s.dispatch(
        "sort digit counts",
        &count_k,
        &p,
        &[k_in.all(), counts.all()],
        tiles.div_ceil(tiles_per_group) as u64,
        |p, b| {
            let [keys, counts] = b else { unreachable!() };
            twin::count_digits(p, keys, counts);
        },
    )?;
    s.dispatch("sort digit starts", &starts_k, &p, &[counts.all()], passes as u64, |p, b| {
        let [counts] = b else { unreachable!() };
        twin::digit_starts(p, counts);
    })?;
    for pass in 0..passes {
        let (src_k, dst_k, src_v, dst_v) =
            if pass % 2 == 0 { (k_in, k_tmp, vals, vals_tmp) } else { (k_tmp, k_in, vals_tmp, vals) };
        let p = s.uniform(&SortParams { shift: 8 * (pass % 4), word: pass / 4, digit_pass: pass, ..base })?;
        s.clear(state);
        let binds = [src_k.all(), src_v.all(), counts.all(), state.all(), dst_k.all(), dst_v.all()];
        s.dispatch("sort sweep", &sweep_k, &p, &binds, tiles as u64, |p, b| {
            let [keys_in, vals_in, starts, state, keys_out, vals_out] = b else { unreachable!() };
            twin::sweep(p, keys_in, vals_in, starts, state, keys_out, vals_out);
        })?;
    }
    if passes % 2 == 1 {
        s.copy(k_tmp, 0, k_in, 0, n * K::WORDS as usize)?;
        if values.is_some() {
            s.copy(vals_tmp, 0, vals, 0, n)?;
        }
    }
    Ok(())
}

/// The multi-pass sort: per pass the tiles' histograms, their output positions and a scatter.
fn record_multi_pass<K: SortKey>(
    s: &mut Stages<'_>,
    keys: Buf<K>,
    values: Option<Buf<u32>>,
    passes: u32,
) -> Result<()> {
    let n = keys.len();
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
    let chunks = tiles.div_ceil(CHUNK);
    let sums = s.zeroed::<u32>(256 * chunks)?;
    let starts = s.zeroed::<u32>(256 * chunks)?;
    let hist_k = s.stage(&SORT_HIST, "hist_tiles")?;
    let sums_k = s.stage(&SORT_OFFSETS, "chunk_sums")?;
    let offsets_k = s.stage(&SORT_OFFSETS, "chunk_offsets")?;
    let scatter_shader = if s.has_subgroups() { SORT_SCATTER_SUBGROUPS } else { SORT_SCATTER_PLAIN };
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
            ..bytemuck::Zeroable::zeroed()
        };
        for &part in &parts {
            let p = s.uniform(&params(part, (0, 0)))?;
            let binds = [key_range(src_k, part), hist.all()];
            s.dispatch("sort histogram", &hist_k, &p, &binds, part.1.div_ceil(SORT_TILE) as u64, |p, b| {
                let [keys, hist] = b else { unreachable!() };
                twin::hist_tiles(p, keys, hist);
            })?;
        }
        s.dispatch("sort offsets", &sums_k, &offsets_params, &[hist.all(), sums.all()], chunks as u64, |p, b| {
            let [hist, sums] = b else { unreachable!() };
            twin::chunk_sums(p, hist, sums);
        })?;
        scan.record_stages(s, sums, starts)?;
        let binds = [hist.all(), starts.all(), offsets.all()];
        s.dispatch("sort offsets", &offsets_k, &offsets_params, &binds, chunks as u64, |p, b| {
            let [hist, starts, offsets] = b else { unreachable!() };
            twin::chunk_offsets(p, hist, starts, offsets);
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
                    twin::scatter(p, keys_in, vals_in, offsets, keys_out, vals_out, hist);
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

impl<K: SortKey> Compute for RadixSort<K> {
    type Input = [K];
    type Output = Vec<K>;
    type GpuInput = Buffer<K>;
    type GpuOutput = Buffer<K>;

    fn name(&self) -> &'static str {
        "radix sort"
    }

    fn cpu_reported(&self, input: &[K], _: &dyn Progress) -> Result<(Vec<K>, Report)> {
        Report::timed(self.name(), || self.cpu(input))
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

impl<K: SortKey + lumbre_gpu::Scalar> Compute for RadixSortPairs<K> {
    type Input = (Vec<K>, Vec<u32>);
    type Output = (Vec<K>, Vec<u32>);
    type GpuInput = (Buffer<K>, Buffer<u32>);
    type GpuOutput = (Buffer<K>, Buffer<u32>);

    fn name(&self) -> &'static str {
        "radix sort (pairs)"
    }

    fn cpu_reported(&self, input: &(Vec<K>, Vec<u32>), _: &dyn Progress) -> Result<((Vec<K>, Vec<u32>), Report)> {
        Report::timed(self.name(), || self.cpu(input))
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
