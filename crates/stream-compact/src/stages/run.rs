//! This crate's GPU pipelines on a [`StageRunner`]: the same dispatches, in the same order
//! and with the same parameters as the `record_*` functions record, each of which may run
//! as its CPU twin instead.

use bytemuck::Pod;
use lumbre_gpu::{Error, Result, pieces};
use lumbre_shaders::Shader;
use lumbre_shaders::compact::{COMPACT_PLAIN, COMPACT_SUBGROUPS, HPYRAMID, RADIX_HIST, RADIX_OFFSETS};

use super::{
    Bind, Buf, CompactParams, HpParams, ScanParams, SortParams, StageRunner, compact, hpyramid, radix_hist,
    radix_offsets, radix_scatter, scan_tile,
};
use crate::{COMPACT_TILE, Compact, HistoPyramid, Lookback, SCAN_TILE, SORT_TILE, ScanElem, ScanKind, ScanMethod};

/// Tiles per chunk of the radix sort's offsets (`CHUNK` in `radix_offsets.wgsl`).
const RADIX_CHUNK: usize = 32;

/// Keep-bit words per compaction tile.
const TILE_WORDS: usize = 256;

fn view<T: Pod>(words: &[u32]) -> &[T] {
    bytemuck::cast_slice(words)
}

fn view_mut<T: Pod>(words: &mut [u32]) -> &mut [T] {
    bytemuck::cast_slice_mut(words)
}

/// The scan of `n` elements of `T` (4 bytes each) from `src` into `dst`, as
/// [`record_scan_with`](crate::record_scan_with) records it; returns the carry buffer, whose
/// last word is the total (as `T`'s bits).
///
/// ```
/// use lumbre_compact::stages::{StageRunner, run_scan};
/// use lumbre_compact::{Lookback, ScanKind, ScanMethod};
/// let mut r = StageRunner::cpu();
/// let (src, dst) = (r.upload(&[1.0f32, 2.0, 3.0]), r.zeroed(3));
/// let carry = run_scan::<f32>(&mut r, src, dst, 3, ScanKind::Inclusive, ScanMethod::ReduceThenScan, Lookback::default())?;
/// assert_eq!(r.read_as::<f32>(dst)?, vec![1.0, 3.0, 6.0]);
/// assert_eq!(r.read_as::<f32>(carry)?.last(), Some(&6.0));
/// # Ok::<(), lumbre_gpu::Error>(())
/// ```
pub fn run_scan<T: ScanElem>(
    r: &mut StageRunner,
    src: Buf,
    dst: Buf,
    n: usize,
    kind: ScanKind,
    method: ScanMethod,
    lookback: Lookback,
) -> Result<Buf> {
    if size_of::<T>() != 4 {
        return Err(Error::Input(format!("the scan kernels take 4-byte elements, not {}", size_of::<T>())));
    }
    if r.len(src) < n || r.len(dst) < n {
        return Err(Error::Input(format!("scan of {n} elements from {} into {}", r.len(src), r.len(dst))));
    }
    let method = method.resolve(n);
    let piece = r.piece_len(4, SCAN_TILE);
    let most_tiles = piece.min(n.max(1)).div_ceil(SCAN_TILE);
    let per_tile = if method == ScanMethod::ReduceThenScan { most_tiles.next_multiple_of(4) } else { 4 };
    let state = r.zeroed(4 + 4 * most_tiles);
    let carry = r.zeroed(n.div_ceil(piece) + 1);
    let totals = TotalsScan { totals: r.zeroed(per_tile), prefixes: r.zeroed(per_tile), state, carry };
    let shader = scan_shader::<T>(r);
    for (k, (start, len)) in pieces(n, piece).into_iter().enumerate() {
        let tiles = len.div_ceil(SCAN_TILE);
        let p = ScanParams {
            n: len as u32,
            piece: k as u32,
            inclusive: (kind == ScanKind::Inclusive) as u32,
            num_tiles: tiles as u32,
            lookback: lookback.tuning(),
        };
        let (s, d) = (src.range(start..start + len), dst.range(start..start + len));
        if method != ScanMethod::ReduceThenScan {
            r.clear(state);
            scan_stage::<T>(r, &shader, &p, [s, d, state.all(), carry.all()])?;
            continue;
        }
        r.stage(&shader, "reduce", &p, &[s.clone(), totals.totals.all()], tiles as u64, |p, b| {
            let [src, tile_values] = b else { unreachable!() };
            scan_tile::reduce::<T>(p, view(src), view_mut(tile_values));
        })?;
        totals.run::<T>(r, tiles, k, lookback)?;
        r.stage(&shader, "scan_from_prefixes", &p, &[s, d, totals.prefixes.all()], tiles as u64, |p, b| {
            let [src, dst, tile_values] = b else { unreachable!() };
            scan_tile::scan_from_prefixes::<T>(p, view(src), view_mut(dst), view(tile_values));
        })?;
    }
    Ok(carry)
}

/// The scan shader of `T`: the subgroup variant where the GPU has subgroups.
fn scan_shader<T: ScanElem>(r: &StageRunner) -> Shader {
    let (plain, subgroups) = T::shaders();
    if r.has_subgroups() { subgroups } else { plain }
}

/// One dispatch of the single-pass scan (`src`, `dst`, `state`, `carry`).
fn scan_stage<T: ScanElem>(r: &mut StageRunner, shader: &Shader, p: &ScanParams, binds: [Bind; 4]) -> Result<()> {
    r.stage(shader, "scan", p, &binds, p.num_tiles as u64, |p, b| {
        let [src, dst, state, carry] = b else { unreachable!() };
        scan_tile::scan::<T>(p, view(src), view_mut(dst), state, view_mut(carry));
    })
}

/// The middle step of the two-pass methods: the exclusive scan of the tiles' totals into
/// their prefixes, after the carry of earlier pieces.
#[derive(Clone, Copy)]
struct TotalsScan {
    totals: Buf,
    prefixes: Buf,
    state: Buf,
    carry: Buf,
}

impl TotalsScan {
    /// As `record_totals_scan` records it, for `n` totals of piece `piece`.
    fn run<T: ScanElem>(&self, r: &mut StageRunner, n: usize, piece: usize, lookback: Lookback) -> Result<()> {
        let p = ScanParams {
            n: n as u32,
            piece: piece as u32,
            inclusive: 0,
            num_tiles: n.div_ceil(SCAN_TILE) as u32,
            lookback: lookback.tuning(),
        };
        r.clear(self.state);
        let shader = scan_shader::<T>(r);
        scan_stage::<T>(r, &shader, &p, [self.totals.all(), self.prefixes.all(), self.state.all(), self.carry.all()])
    }
}

/// The compaction of the `n` elements of `values` and `flags` (either may be a one-word
/// stand-in where `c` does not read it), as [`Compute::gpu`](lumbre_gpu::Compute::gpu) runs
/// it: piece by piece, each placed by the running count. Returns the output (`n` words, the
/// kept ones first) and a one-word buffer holding their count.
///
/// ```
/// use lumbre_compact::stages::{StageRunner, run_compact};
/// use lumbre_compact::{Compact, Emit, Select};
/// let mut r = StageRunner::cpu();
/// let (values, flags) = (r.zeroed(1), r.upload(&[0u32, 1, 1, 0]));
/// let c = Compact { select: Select::Flags, emit: Emit::Indices, ..Default::default() };
/// let (out, count) = run_compact(&mut r, &c, values, flags, 4)?;
/// assert_eq!((r.read(out)?, r.read(count)?), (vec![1, 2, 0, 0], vec![2]));
/// # Ok::<(), lumbre_gpu::Error>(())
/// ```
pub fn run_compact(r: &mut StageRunner, c: &Compact, values: Buf, flags: Buf, n: usize) -> Result<(Buf, Buf)> {
    u32::try_from(n).map_err(|_| Error::Input("compaction of more than 2^32 elements".into()))?;
    let align = (r.binding_alignment() as usize / 4).max(1);
    // The output window starts up to `align` elements before the piece's first output.
    let mut piece = r.piece_len(4, COMPACT_TILE);
    if (piece + align) * 4 > r.max_binding() as usize {
        piece -= COMPACT_TILE;
    }
    if piece == 0 {
        return Err(Error::Input(format!(
            "bindings of {} bytes hold no compaction tile and its window",
            r.max_binding()
        )));
    }
    let parts = pieces(n, piece);
    let tiles = piece.min(n).div_ceil(COMPACT_TILE);
    let out = r.zeroed(n);
    let state = r.zeroed(4 + 4 * tiles);
    let carry = r.zeroed(parts.len() + 1);
    let per_tile = tiles.next_multiple_of(4).max(4);
    let totals = TotalsScan { totals: r.zeroed(per_tile), prefixes: r.zeroed(per_tile), state, carry };
    let keep_bits = r.zeroed((tiles * TILE_WORDS).max(1));
    let shader = if r.supports(&COMPACT_SUBGROUPS) { COMPACT_SUBGROUPS } else { COMPACT_PLAIN };
    for (k, (start, len)) in parts.iter().copied().enumerate() {
        let written = r.read(carry)?[k] as usize;
        let out_base = written / align * align;
        let p = c.params(len, k, start, out_base);
        // Arrays the compaction does not read are one-word stand-ins, bound whole.
        let input =
            |b: Buf, r: &StageRunner| if r.len(b) >= start + len { b.range(start..start + len) } else { b.all() };
        let (v, f, o) = (input(values, r), input(flags, r), out.range(out_base..written + len));
        let groups = p.num_tiles as u64;
        if c.method_for(len) != ScanMethod::ReduceThenScan {
            r.clear(state);
            r.stage(&shader, "compact", &p, &[v, f, state.all(), carry.all(), o], groups, |p, b| {
                let [values, flags, state, carry, out] = b else { unreachable!() };
                compact::compact(p, values, flags, state, carry, out);
            })?;
            continue;
        }
        r.stage(&shader, "count", &p, &[v.clone(), f, totals.totals.all(), keep_bits.all()], groups, |p, b| {
            let [values, flags, tile_values, keep_bits] = b else { unreachable!() };
            compact::count(p, values, flags, tile_values, keep_bits);
        })?;
        totals.run::<u32>(r, len.div_ceil(COMPACT_TILE), k, c.lookback)?;
        let binds = [v, o, totals.prefixes.all(), keep_bits.all()];
        r.stage(&shader, "compact_from_prefixes", &p, &binds, groups, |p: &CompactParams, b| {
            let [values, out, tile_values, keep_bits] = b else { unreachable!() };
            compact::compact_from_prefixes(p, values, out, tile_values, keep_bits);
        })?;
    }
    let count = r.zeroed(1);
    r.copy(carry, parts.len(), count, 0, 1)?;
    Ok((out, count))
}

/// The stable radix sort of the `n` keys in `keys` (`key_words` words each) by their low
/// `key_bits` bits, with `vals` moving with them, as
/// [`record_sort_bits`](crate::record_sort_bits) records it. Sorts in place.
///
/// ```
/// use lumbre_compact::stages::{StageRunner, run_sort};
/// let mut r = StageRunner::cpu();
/// let (keys, vals) = (r.upload(&[3u32, 1, 2, 1]), r.upload(&[0u32, 1, 2, 3]));
/// run_sort(&mut r, keys, Some(vals), 4, 1, 32)?;
/// assert_eq!((r.read(keys)?, r.read(vals)?), (vec![1, 1, 2, 3], vec![1, 3, 2, 0]));
/// # Ok::<(), lumbre_gpu::Error>(())
/// ```
pub fn run_sort(
    r: &mut StageRunner,
    keys: Buf,
    vals: Option<Buf>,
    n: usize,
    key_words: u32,
    key_bits: u32,
) -> Result<()> {
    if !(1..=2).contains(&key_words) {
        return Err(Error::Input(format!("keys of {key_words} words: the sort takes 1 or 2")));
    }
    let w = key_words as usize;
    if r.len(keys) < n * w || vals.is_some_and(|v| r.len(v) < n) {
        return Err(Error::Input(format!("sort of {n} keys of {w} words in buffers too short for them")));
    }
    let passes = key_bits.min(32 * key_words).div_ceil(8);
    if n < 2 {
        return Ok(());
    }
    u32::try_from(n).map_err(|_| Error::Input("sort of more than 2^32 keys".into()))?;
    let tiles = n.div_ceil(SORT_TILE);
    let parts = pieces(n, r.piece_len(4 * w, SORT_TILE));
    let keys_tmp = r.zeroed(n * w);
    // Without values, two distinct one-word stand-ins.
    let vals_tmp = r.zeroed(if vals.is_some() { n } else { 1 });
    let vals_in = match vals {
        Some(v) => v,
        None => r.zeroed(1),
    };
    let hist = r.zeroed(256 * tiles);
    let offsets = r.zeroed(256 * tiles);
    let chunks = tiles.div_ceil(RADIX_CHUNK);
    let sums = r.zeroed(256 * chunks);
    let starts = r.zeroed(256 * chunks);
    let scatter_shader = if r.has_subgroups() {
        lumbre_shaders::compact::RADIX_SCATTER_SUBGROUPS
    } else {
        lumbre_shaders::compact::RADIX_SCATTER_PLAIN
    };
    let offsets_params = SortParams { num_tiles: tiles as u32, ..Default::default() };
    for pass in 0..passes {
        let (src_k, dst_k, src_v, dst_v) =
            if pass % 2 == 0 { (keys, keys_tmp, vals_in, vals_tmp) } else { (keys_tmp, keys, vals_tmp, vals_in) };
        let key_range = |b: Buf, (start, len): (usize, usize)| b.range(start * w..(start + len) * w);
        let val_range = |b: Buf, (start, len): (usize, usize), r: &StageRunner| {
            if r.len(b) >= start + len { b.range(start..start + len) } else { b.range(0..1) }
        };
        let params = |part: (usize, usize), window: (usize, usize)| SortParams {
            n: part.1 as u32,
            shift: 8 * (pass % 4),
            word: pass / 4,
            key_words,
            num_tiles: tiles as u32,
            has_values: vals.is_some() as u32,
            tile_base: (part.0 / SORT_TILE) as u32,
            out_base: window.0 as u32,
            out_len: window.1 as u32,
        };
        for &part in &parts {
            let binds = [key_range(src_k, part), hist.all()];
            r.stage(
                &RADIX_HIST,
                "hist_tiles",
                &params(part, (0, 0)),
                &binds,
                part.1.div_ceil(SORT_TILE) as u64,
                |p, b| {
                    let [keys, hist] = b else { unreachable!() };
                    radix_hist::hist_tiles(p, keys, hist);
                },
            )?;
        }
        r.stage(&RADIX_OFFSETS, "chunk_sums", &offsets_params, &[hist.all(), sums.all()], chunks as u64, |p, b| {
            let [hist, sums] = b else { unreachable!() };
            radix_offsets::chunk_sums(p, hist, sums);
        })?;
        run_scan::<u32>(r, sums, starts, 256 * chunks, ScanKind::Exclusive, ScanMethod::Auto, Lookback::default())?;
        let binds = [hist.all(), starts.all(), offsets.all()];
        r.stage(&RADIX_OFFSETS, "chunk_offsets", &offsets_params, &binds, chunks as u64, |p, b| {
            let [hist, starts, offsets] = b else { unreachable!() };
            radix_offsets::chunk_offsets(p, hist, starts, offsets);
        })?;
        for &part in &parts {
            for &window in &parts {
                let binds = [
                    key_range(src_k, part),
                    val_range(src_v, part, r),
                    offsets.all(),
                    key_range(dst_k, window),
                    val_range(dst_v, window, r),
                    hist.all(),
                ];
                let groups = part.1.div_ceil(SORT_TILE) as u64;
                r.stage(&scatter_shader, "scatter", &params(part, window), &binds, groups, |p, b| {
                    let [keys_in, vals_in, offsets, keys_out, vals_out, hist] = b else { unreachable!() };
                    radix_scatter::scatter(p, keys_in, vals_in, offsets, keys_out, vals_out, hist);
                })?;
            }
        }
    }
    // An odd number of passes leaves the result in the scratch buffers.
    if passes % 2 == 1 {
        r.copy(keys_tmp, 0, keys, 0, n * w)?;
        if vals.is_some() {
            r.copy(vals_tmp, 0, vals_in, 0, n)?;
        }
    }
    Ok(())
}

/// The compaction of the `n` elements of `values` and `flags` by the histogram pyramid, as
/// `HistoPyramid`'s [`Compute::record`](lumbre_gpu::Compute::record) records it (inputs of
/// one binding). Returns the output and a one-word buffer holding the count.
///
/// ```
/// use lumbre_compact::stages::{StageRunner, run_histo_pyramid};
/// use lumbre_compact::{Emit, HistoPyramid, Select};
/// let mut r = StageRunner::cpu();
/// let (values, flags) = (r.upload(&[4u32, 5, 6]), r.upload(&[0u32, 1, 1]));
/// let hp = HistoPyramid { select: Select::Flags, emit: Emit::Values, index_base: 0 };
/// let (out, count) = run_histo_pyramid(&mut r, &hp, values, flags, 3)?;
/// assert_eq!((r.read(out)?, r.read(count)?), (vec![5, 6, 0], vec![2]));
/// # Ok::<(), lumbre_gpu::Error>(())
/// ```
pub fn run_histo_pyramid(
    r: &mut StageRunner,
    hp: &HistoPyramid,
    values: Buf,
    flags: Buf,
    n: usize,
) -> Result<(Buf, Buf)> {
    let mode = hp.mode()?;
    if 4 * n as u64 > r.max_binding() {
        return Err(Error::Input(format!("a histogram pyramid over {n} elements, more than one binding holds")));
    }
    let sizes = crate::hpyramid::level_sizes(n);
    if sizes.len() > 16 {
        return Err(Error::Input(format!("{n} elements need more than 15 pyramid levels")));
    }
    let mut offsets = [0u32; 16];
    let mut at = 0usize;
    for (l, &size) in sizes.iter().enumerate().skip(1) {
        offsets[l] = at as u32;
        at += size.div_ceil(4);
    }
    let pyramid = r.zeroed(4 * at);
    let out = r.zeroed(n);
    let top = sizes.len() - 1;
    let params = |level: usize, count: usize| HpParams {
        n: n as u32,
        level: level as u32,
        index_base: hp.index_base,
        offsets,
        count: count as u32,
        mode,
        ..Default::default()
    };
    let groups = |count: usize| count.div_ceil(256) as u64;
    let inputs = [values.all(), flags.all(), pyramid.all()];
    r.stage(&HPYRAMID, "base", &params(1, sizes[1]), &inputs, groups(sizes[1]), |p, b| {
        let [values, flags, pyramid] = b else { unreachable!() };
        hpyramid::base(p, values, flags, view_mut(pyramid));
    })?;
    for (l, &size) in sizes.iter().enumerate().skip(2) {
        r.stage(&HPYRAMID, "reduce", &params(l, size), &[pyramid.all()], groups(size), |p, b| {
            hpyramid::reduce(p, view_mut(&mut b[0]));
        })?;
    }
    let binds = [values.all(), flags.all(), pyramid.all(), out.all()];
    r.stage(&HPYRAMID, "traverse", &params(top, n), &binds, groups(n), |p, b| {
        let [values, flags, pyramid, out] = b else { unreachable!() };
        hpyramid::traverse(p, values, flags, view(pyramid), out);
    })?;
    let count = r.zeroed(1);
    r.copy(pyramid, 4 * offsets[top] as usize, count, 0, 1)?;
    Ok((out, count))
}
