//! Prefix scan: CPU (rayon, chunked) and GPU (single pass with decoupled look-back and
//! fallback, or reduce-then-scan for large inputs; subgroup and shared-memory block scans).

use std::marker::PhantomData;

use bytemuck::Pod;
use lumbre_gpu::{Buffer, Compute, Error, Fit, Gpu, Recorder, Result};
use lumbre_shaders::Shader;
use rayon::prelude::*;

use crate::stages::ScanParams;
use lumbre_gpu::pieces;

/// Elements per GPU scan tile (256 threads x 16), `TILE` in `shared/scan_tile.wgsl`.
pub const SCAN_TILE: usize = 4096;

/// Whether a scan includes each element in its own result.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ScanKind {
    /// `out[i] = in[0] + ... + in[i-1]` (`out[0] = 0`).
    #[default]
    Exclusive,
    /// `out[i] = in[0] + ... + in[i]`.
    Inclusive,
}

/// Types the scan works on: `u32` (wrapping addition, exact) and `f32`.
pub trait ScanElem: Pod + Default + Send + Sync + std::fmt::Debug {
    /// The addition the scan uses.
    fn add(self, other: Self) -> Self;
    /// The GPU shader: `(plain, subgroups)` variants.
    fn shaders() -> (Shader, Shader);
}

impl ScanElem for u32 {
    fn add(self, other: Self) -> Self {
        self.wrapping_add(other)
    }
    fn shaders() -> (Shader, Shader) {
        (lumbre_shaders::compact::SCAN_U32_PLAIN, lumbre_shaders::compact::SCAN_U32_SUBGROUPS)
    }
}

impl ScanElem for f32 {
    fn add(self, other: Self) -> Self {
        self + other
    }
    fn shaders() -> (Shader, Shader) {
        (lumbre_shaders::compact::SCAN_F32_PLAIN, lumbre_shaders::compact::SCAN_F32_SUBGROUPS)
    }
}

/// Sequential scan of `input` into `output` with `carry` added to every prefix; returns the
/// input's total (without the carry). The running sum starts from zero and the carry is
/// added to each output: a running f32 sum started at a large carry would round small
/// inputs away (stalling at 2^36 on 2^28 values below 4096), where the GPU's tile-local
/// sums do not.
pub(crate) fn scan_serial<T: ScanElem>(input: &[T], output: &mut [T], kind: ScanKind, carry: T) -> T {
    let mut acc = T::default();
    // One loop per kind: no branch inside the hot loop.
    match kind {
        ScanKind::Exclusive => {
            for (o, &x) in output.iter_mut().zip(input) {
                *o = carry.add(acc);
                acc = acc.add(x);
            }
        }
        ScanKind::Inclusive => {
            for (o, &x) in output.iter_mut().zip(input) {
                acc = acc.add(x);
                *o = carry.add(acc);
            }
        }
    }
    acc
}

/// CPU prefix scan in parallel: chunk totals, a scan of the totals, then each chunk again.
/// Returns the total. For `f32` the summation order differs from a serial loop.
///
/// ```
/// use lumbre_compact::{ScanKind, scan_cpu};
/// let mut out = [0u32; 4];
/// assert_eq!(scan_cpu(&[1, 2, 3, 4], &mut out, ScanKind::Exclusive), 10);
/// assert_eq!(out, [0, 1, 3, 6]);
/// ```
pub fn scan_cpu<T: ScanElem>(input: &[T], output: &mut [T], kind: ScanKind) -> T {
    assert_eq!(input.len(), output.len(), "scan_cpu: input and output lengths differ");
    const CHUNK: usize = 1 << 16;
    if input.len() <= CHUNK {
        return scan_serial(input, output, kind, T::default());
    }
    let totals: Vec<T> = input.par_chunks(CHUNK).map(|c| c.iter().fold(T::default(), |a, &x| a.add(x))).collect();
    let mut offsets = vec![T::default(); totals.len()];
    let total = scan_serial(&totals, &mut offsets, ScanKind::Exclusive, T::default());
    output.par_chunks_mut(CHUNK).zip(input.par_chunks(CHUNK)).zip(offsets).for_each(|((o, i), carry)| {
        scan_serial(i, o, kind, carry);
    });
    total
}

/// Scratch for GPU scans: the look-back state and the carries between pieces.
#[derive(Debug)]
pub struct ScanScratch {
    state: Buffer<u32>,
    carry: Buffer<u32>,
    /// Reduce-then-scan: the tiles' totals and their exclusive scan (bits of `T`).
    totals: Buffer<u32>,
    prefixes: Buffer<u32>,
}

impl ScanScratch {
    /// Scratch for scanning `n` elements of `T` on `gpu`.
    pub fn new<T: ScanElem>(gpu: &Gpu, n: usize) -> Result<Self> {
        Self::for_method::<T>(gpu, n, ScanMethod::Auto)
    }

    /// Scratch for `method` (a single pass needs no per-tile totals).
    fn for_method<T: ScanElem>(gpu: &Gpu, n: usize, method: ScanMethod) -> Result<Self> {
        let piece = gpu.piece_len(size_of::<T>(), SCAN_TILE);
        let tiles = piece.min(n.max(1)).div_ceil(SCAN_TILE);
        let per_tile = if method.resolve(n) == ScanMethod::ReduceThenScan { tiles.next_multiple_of(4) } else { 4 };
        Ok(ScanScratch {
            state: gpu.zeroed(4 + 4 * tiles)?,
            carry: gpu.zeroed(n.div_ceil(piece) + 1)?,
            totals: gpu.zeroed(per_tile)?,
            prefixes: gpu.zeroed(per_tile)?,
        })
    }

    /// The carry buffer: after a scan, element `pieces` holds the total (as `T`'s bits).
    pub fn carry(&self) -> &Buffer<u32> {
        &self.carry
    }
}

/// Tuning of the decoupled look-back.
///
/// ```
/// assert_eq!(lumbre_compact::Lookback::default().spin_limit, 256);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lookback {
    /// How many times a tile polls a predecessor that has published nothing before it
    /// reduces that predecessor's input itself. 0 falls back at once (tests use it to
    /// exercise the fallback); larger values wait longer for the predecessor (at most
    /// 2^31 - 1).
    pub spin_limit: u32,
    /// Tiles publish only their aggregates (tile 0 its prefix too), so every tile walks back
    /// to tile 0 through windows of aggregates. Slow; tests use it to exercise that walk.
    pub walk_to_tile_zero: bool,
}

impl Default for Lookback {
    fn default() -> Self {
        Lookback { spin_limit: 256, walk_to_tile_zero: false }
    }
}

impl Lookback {
    /// The kernels' tuning word: the spin limit in bits 0-30, `walk_to_tile_zero` in bit 31.
    pub(crate) fn tuning(&self) -> u32 {
        self.spin_limit.min(0x7fff_ffff) | (self.walk_to_tile_zero as u32) << 31
    }
}

/// How the GPU scan (and the compaction, [`Compact::method`](crate::Compact::method)) finds
/// what precedes each tile. For the compaction the "reduce" pass counts each tile's kept
/// elements, and `Auto` switches at [`COMPACT_TWO_PASS_MIN`](crate::COMPACT_TWO_PASS_MIN).
///
/// ```
/// use lumbre_compact::{ScanMethod, REDUCE_THEN_SCAN_MIN};
/// assert_eq!(ScanMethod::default(), ScanMethod::Auto);
/// assert_eq!(ScanMethod::Auto.resolve(REDUCE_THEN_SCAN_MIN - 1), ScanMethod::SinglePass);
/// assert_eq!(ScanMethod::Auto.resolve(REDUCE_THEN_SCAN_MIN), ScanMethod::ReduceThenScan);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ScanMethod {
    /// [`ReduceThenScan`](ScanMethod::ReduceThenScan) from [`REDUCE_THEN_SCAN_MIN`]
    /// elements on, [`SinglePass`](ScanMethod::SinglePass) below.
    #[default]
    Auto,
    /// One pass: each tile finds its prefix by decoupled look-back (tuned by [`Lookback`]).
    /// Moves the fewest bytes, but a tile may wait for its predecessors as long as its own
    /// load takes.
    SinglePass,
    /// Three passes: every tile's total, the totals' scan (one small single pass), then every
    /// tile from its prefix. Reads the input twice but no tile waits for another; small
    /// inputs pay for the extra dispatches.
    ReduceThenScan,
}

/// Elements from which [`ScanMethod::Auto`] reduces, then scans (2^25): the single pass
/// measured faster below, the three passes above, where their extra dispatches no longer
/// count (benches/RESULTS.md).
pub const REDUCE_THEN_SCAN_MIN: usize = 1 << 25;

impl ScanMethod {
    /// The method used for `n` elements: `Auto` resolved, the others as they are.
    pub fn resolve(self, n: usize) -> ScanMethod {
        match self {
            ScanMethod::Auto if n >= REDUCE_THEN_SCAN_MIN => ScanMethod::ReduceThenScan,
            ScanMethod::Auto => ScanMethod::SinglePass,
            m => m,
        }
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
    if src.len() != dst.len() {
        return Err(Error::Input(format!("scan of {} elements into {}", src.len(), dst.len())));
    }
    let gpu = rec.gpu().clone();
    let scratch = ScanScratch::for_method::<T>(&gpu, src.len(), method)?;
    let (plain, sg) = T::shaders();
    let shader = if gpu.has_subgroups() { &sg } else { &plain };
    let single = gpu.kernel(shader, "scan")?;
    let reduce_then_scan = match method.resolve(src.len()) {
        ScanMethod::ReduceThenScan => Some((gpu.kernel(shader, "reduce")?, gpu.kernel(shader, "scan_from_prefixes")?)),
        _ => None,
    };
    let piece = gpu.piece_len(size_of::<T>(), SCAN_TILE);
    for (k, (start, len)) in pieces(src.len(), piece).into_iter().enumerate() {
        let tiles = len.div_ceil(SCAN_TILE);
        let this = gpu.uniform(&ScanParams {
            n: len as u32,
            piece: k as u32,
            inclusive: (kind == ScanKind::Inclusive) as u32,
            num_tiles: tiles as u32,
            lookback: lookback.tuning(),
        })?;
        let (src, dst) = (src.binding_range(start..start + len), dst.binding_range(start..start + len));
        let Some((reduce, from_prefixes)) = &reduce_then_scan else {
            rec.clear(&scratch.state);
            let bind = [this.as_entire_binding(), src, dst, scratch.state.binding(), scratch.carry.binding()];
            rec.dispatch("scan", &single, &bind, tiles as u64)?;
            continue;
        };
        // The first and last passes bind the same, but for the totals or their prefixes.
        let bind = |prefixes: bool| {
            let tile_values = if prefixes { &scratch.prefixes } else { &scratch.totals };
            [
                this.as_entire_binding(),
                src.clone(),
                dst.clone(),
                scratch.state.binding(),
                scratch.carry.binding(),
                tile_values.binding(),
            ]
        };
        rec.dispatch("scan reduce", reduce, &bind(false), tiles as u64)?;
        let totals = TileTotals { totals: &scratch.totals, prefixes: &scratch.prefixes, state: &scratch.state };
        record_totals_scan::<T>(rec, totals, &scratch.carry, tiles, k, lookback)?;
        rec.dispatch("scan tiles", from_prefixes, &bind(true), tiles as u64)?;
    }
    Ok(scratch)
}

/// The buffers of a two-pass method's middle step: the tiles' totals (bits of the scanned
/// type), their exclusive scan, and look-back state for the scan of the totals.
#[derive(Clone, Copy)]
pub(crate) struct TileTotals<'a> {
    pub totals: &'a Buffer<u32>,
    pub prefixes: &'a Buffer<u32>,
    pub state: &'a Buffer<u32>,
}

/// Records the exclusive scan of `n` tile totals of type `T` (a single pass) for piece
/// `piece`: every prefix includes `carry[piece]`, the total of earlier pieces, and the last
/// tile leaves `carry[piece + 1]`. Clears the look-back state first.
pub(crate) fn record_totals_scan<T: ScanElem>(
    rec: &mut Recorder,
    b: TileTotals<'_>,
    carry: &Buffer<u32>,
    n: usize,
    piece: usize,
    lookback: Lookback,
) -> Result<()> {
    let gpu = rec.gpu().clone();
    let (plain, sg) = T::shaders();
    let single = gpu.kernel(if gpu.has_subgroups() { &sg } else { &plain }, "scan")?;
    let tiles = n.div_ceil(SCAN_TILE);
    let params = gpu.uniform(&ScanParams {
        n: n as u32,
        piece: piece as u32,
        inclusive: 0,
        num_tiles: tiles as u32,
        lookback: lookback.tuning(),
    })?;
    rec.clear(b.state);
    let bind =
        [params.as_entire_binding(), b.totals.binding(), b.prefixes.binding(), b.state.binding(), carry.binding()];
    rec.dispatch("scan totals", &single, &bind, tiles as u64)
}

/// Prefix scan through the [`Compute`] trait.
///
/// ```no_run
/// use lumbre_compact::{Scan, ScanKind};
/// use lumbre_gpu::{Compute, Gpu};
/// let out = Scan::<u32>::new(ScanKind::Inclusive).gpu(&Gpu::new()?, &[1, 1, 1])?;
/// assert_eq!(out, vec![1, 2, 3]);
/// # Ok::<(), lumbre_gpu::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Scan<T> {
    /// Exclusive or inclusive.
    pub kind: ScanKind,
    /// How the GPU path finds each tile's prefix.
    pub method: ScanMethod,
    /// Look-back tuning of the GPU path.
    pub lookback: Lookback,
    _t: PhantomData<T>,
}

impl<T> Scan<T> {
    /// A scan of the given kind.
    pub fn new(kind: ScanKind) -> Self {
        Scan::with_method(kind, ScanMethod::Auto)
    }

    /// A scan of the given kind by the given GPU method.
    ///
    /// ```
    /// use lumbre_compact::{Scan, ScanKind, ScanMethod};
    /// let scan = Scan::<u32>::with_method(ScanKind::Exclusive, ScanMethod::SinglePass);
    /// assert_eq!(scan.method, ScanMethod::SinglePass);
    /// ```
    pub fn with_method(kind: ScanKind, method: ScanMethod) -> Self {
        Scan { kind, method, lookback: Lookback::default(), _t: PhantomData }
    }
}

impl<T: ScanElem> Compute for Scan<T> {
    type Input = [T];
    type Output = Vec<T>;
    type GpuInput = Buffer<T>;
    type GpuOutput = Buffer<T>;

    fn name(&self) -> &'static str {
        "scan"
    }

    fn cpu(&self, input: &[T]) -> Result<Vec<T>> {
        let mut out = vec![T::default(); input.len()];
        scan_cpu(input, &mut out, self.kind);
        Ok(out)
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
