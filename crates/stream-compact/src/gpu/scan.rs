//! Prefix scan on the GPU: `compact/scan_u32.wgsl` and `compact/scan_f32.wgsl` (their entry
//! points in `compact/scan_tile.wgsl`), a single pass with decoupled look-back or three
//! passes (reduce, scan the totals, scan from the prefixes), the twin of `scan.rs`.

use bytemuck::Pod;
use lumbre_gpu::stages::{Bind, Buf, Stage, Stages, Uniform};
use lumbre_gpu::{Buffer, Compute, Error, Fit, Gpu, Progress, Recorder, Report, Result, pieces};
use lumbre_shaders::Shader;

use crate::scan::twin::{self, ScanParams};
use crate::scan::{Lookback, SCAN_TILE, Scan, ScanElem, ScanKind, ScanMethod};

/// What a recorded GPU scan leaves besides its output: the carries between pieces.
#[derive(Debug)]
pub struct ScanScratch {
    carry: Buffer<u32>,
}

impl ScanScratch {
    /// The carry buffer: after a scan, element `pieces` holds the total (as `T`'s bits).
    pub fn carry(&self) -> &Buffer<u32> {
        &self.carry
    }
}

/// The scratch of a scan as a pipeline's buffers.
#[derive(Clone, Copy)]
struct Scratch {
    state: Buf<u32>,
    carry: Buf<u32>,
    totals: Buf<u32>,
    prefixes: Buf<u32>,
}

impl Scratch {
    /// Scratch for scanning `n` elements of `T` by `method` (a single pass needs no per-tile
    /// totals).
    fn new<T: ScanElem>(s: &mut Stages<'_>, n: usize, method: ScanMethod) -> Result<Self> {
        let piece = s.piece_len(size_of::<T>(), SCAN_TILE);
        let tiles = piece.min(n.max(1)).div_ceil(SCAN_TILE);
        let per_tile = if method.resolve(n) == ScanMethod::ReduceThenScan { tiles.next_multiple_of(4) } else { 4 };
        Ok(Scratch {
            state: s.zeroed(4 + 4 * tiles)?,
            carry: s.zeroed(n.div_ceil(piece) + 1)?,
            totals: s.zeroed(per_tile)?,
            prefixes: s.zeroed(per_tile)?,
        })
    }
}

/// Records a GPU scan of `src` into `dst` (same length; may be the same length as several
/// storage bindings: it is scanned piece by piece with the carry kept on the GPU). Returns
/// the scratch, whose carry buffer ends with the total.
pub fn record_scan<T: ScanElem>(
    rec: &mut Recorder,
    src: &Buffer<T>,
    dst: &Buffer<T>,
    kind: ScanKind,
) -> Result<ScanScratch> {
    record_scan_with(rec, src, dst, kind, ScanMethod::Auto, Lookback::default())
}

/// [`record_scan`] with an explicit method and look-back tuning.
pub fn record_scan_with<T: ScanElem>(
    rec: &mut Recorder,
    src: &Buffer<T>,
    dst: &Buffer<T>,
    kind: ScanKind,
    method: ScanMethod,
    lookback: Lookback,
) -> Result<ScanScratch> {
    let mut s = Stages::record(rec);
    let (src, dst) = (s.adopt(src)?, s.adopt(dst)?);
    let mut scan = Scan::with_method(kind, method);
    scan.lookback = lookback;
    let carry = scan.record_stages(&mut s, src, dst)?;
    Ok(ScanScratch { carry: s.buffer(carry)? })
}

impl<T: ScanElem> Scan<T> {
    /// Records the scan of `src` into `dst` (same length, any number of storage bindings
    /// long: scanned piece by piece with the carry kept on the GPU) into `s`. Returns the
    /// carries, whose last word holds the total (as `T`'s bits).
    ///
    /// ```
    /// use lumbre_compact::{Scan, ScanKind, ScanMethod};
    /// use lumbre_gpu::stages::Stages;
    /// let mut s = Stages::cpu();
    /// let (src, dst) = (s.upload(&[1.0f32, 2.0, 3.0])?, s.zeroed::<f32>(3)?);
    /// let scan = Scan::<f32>::with_method(ScanKind::Inclusive, ScanMethod::ReduceThenScan);
    /// let carry = scan.record_stages(&mut s, src, dst)?;
    /// assert_eq!(s.read(dst)?, vec![1.0, 3.0, 6.0]);
    /// assert_eq!(s.read(carry)?.last().map(|&c| f32::from_bits(c)), Some(6.0));
    /// # Ok::<(), lumbre_gpu::Error>(())
    /// ```
    pub fn record_stages(&self, s: &mut Stages<'_>, src: Buf<T>, dst: Buf<T>) -> Result<Buf<u32>> {
        if src.len() != dst.len() {
            return Err(Error::Input(format!("scan of {} elements into {}", src.len(), dst.len())));
        }
        let n = src.len();
        let scratch = Scratch::new::<T>(s, n, self.method)?;
        let shader = scan_shader::<T>(s);
        let single = s.stage(&shader, "scan")?;
        let reduce_then_scan = match self.method.resolve(n) {
            ScanMethod::ReduceThenScan => Some((s.stage(&shader, "reduce")?, s.stage(&shader, "scan_from_prefixes")?)),
            _ => None,
        };
        let piece = s.piece_len(size_of::<T>(), SCAN_TILE);
        for (k, (start, len)) in pieces(n, piece).into_iter().enumerate() {
            let tiles = len.div_ceil(SCAN_TILE);
            let p = s.uniform(&ScanParams {
                n: len as u32,
                piece: k as u32,
                inclusive: (self.kind == ScanKind::Inclusive) as u32,
                num_tiles: tiles as u32,
                lookback: self.lookback.tuning(),
            })?;
            let (src, dst) = (src.range(start..start + len), dst.range(start..start + len));
            let Some((reduce, from_prefixes)) = &reduce_then_scan else {
                s.clear(scratch.state);
                single_pass::<T>(s, "scan", &single, &p, [src, dst, scratch.state.all(), scratch.carry.all()])?;
                continue;
            };
            s.dispatch("scan reduce", reduce, &p, &[src.clone(), scratch.totals.all()], tiles as u64, |p, b| {
                let [src, tile_values] = b else { unreachable!() };
                twin::reduce::<T>(p, view(src), view_mut(tile_values));
            })?;
            let totals = TileTotals { totals: scratch.totals, prefixes: scratch.prefixes, state: scratch.state };
            record_totals_scan::<T>(s, totals, scratch.carry, tiles, k, self.lookback)?;
            let binds = [src, dst, scratch.prefixes.all()];
            s.dispatch("scan tiles", from_prefixes, &p, &binds, tiles as u64, |p, b| {
                let [src, dst, tile_values] = b else { unreachable!() };
                twin::scan_from_prefixes::<T>(p, view(src), view_mut(dst), view(tile_values));
            })?;
        }
        Ok(scratch.carry)
    }
}

/// The scan shader of `T`: the subgroup variant where the GPU has subgroups.
fn scan_shader<T: ScanElem>(s: &Stages<'_>) -> Shader {
    let (plain, subgroups) = T::shaders();
    if s.has_subgroups() { subgroups } else { plain }
}

/// Words as values of `T`, for the twins.
fn view<T: Pod>(words: &[u32]) -> &[T] {
    bytemuck::cast_slice(words)
}

fn view_mut<T: Pod>(words: &mut [u32]) -> &mut [T] {
    bytemuck::cast_slice_mut(words)
}

/// One dispatch of the single-pass scan (`src`, `dst`, `state`, `carry`).
fn single_pass<T: ScanElem>(
    s: &mut Stages<'_>,
    label: &'static str,
    stage: &Stage,
    p: &Uniform<ScanParams>,
    binds: [Bind; 4],
) -> Result<()> {
    s.dispatch(label, stage, p, &binds, p.value().num_tiles as u64, |p, b| {
        let [src, dst, state, carry] = b else { unreachable!() };
        twin::scan::<T>(p, view(src), view_mut(dst), state, view_mut(carry));
    })
}

/// The buffers of a two-pass method's middle step: the tiles' totals (bits of the scanned
/// type), their exclusive scan, and look-back state for the scan of the totals.
#[derive(Clone, Copy)]
pub(crate) struct TileTotals {
    pub totals: Buf<u32>,
    pub prefixes: Buf<u32>,
    pub state: Buf<u32>,
}

/// Records the exclusive scan of `n` tile totals of type `T` (a single pass) for piece
/// `piece`: every prefix includes `carry[piece]`, the total of earlier pieces, and the last
/// tile leaves `carry[piece + 1]`. Clears the look-back state first.
pub(crate) fn record_totals_scan<T: ScanElem>(
    s: &mut Stages<'_>,
    b: TileTotals,
    carry: Buf<u32>,
    n: usize,
    piece: usize,
    lookback: Lookback,
) -> Result<()> {
    let single = s.stage(&scan_shader::<T>(s), "scan")?;
    let params = s.uniform(&ScanParams {
        n: n as u32,
        piece: piece as u32,
        inclusive: 0,
        num_tiles: n.div_ceil(SCAN_TILE) as u32,
        lookback: lookback.tuning(),
    })?;
    s.clear(b.state);
    single_pass::<T>(s, "scan totals", &single, &params, [b.totals.all(), b.prefixes.all(), b.state.all(), carry.all()])
}

impl<T: ScanElem> Compute for Scan<T> {
    type Input = [T];
    type Output = Vec<T>;
    type GpuInput = Buffer<T>;
    type GpuOutput = Buffer<T>;

    fn name(&self) -> &'static str {
        "scan"
    }

    fn cpu_reported(&self, input: &[T], _: &dyn Progress) -> Result<(Vec<T>, Report)> {
        Report::timed(self.name(), || self.cpu(input))
    }

    fn upload(&self, gpu: &Gpu, input: &[T]) -> Result<Buffer<T>> {
        gpu.upload_fit(input, Fit::Pieces)
    }

    fn record(&self, rec: &mut Recorder, input: &Buffer<T>) -> Result<Buffer<T>> {
        let out = rec.gpu().zeroed_fit(input.len(), Fit::Pieces)?;
        record_scan_with(rec, input, &out, self.kind, self.method, self.lookback)?;
        Ok(out)
    }

    fn download(&self, gpu: &Gpu, out: &Buffer<T>) -> Result<Vec<T>> {
        gpu.download(out)
    }
}
