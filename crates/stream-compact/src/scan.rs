//! Prefix scan: CPU (rayon, chunked) and GPU (single pass with decoupled look-back and
//! fallback, or reduce-then-scan for large inputs; subgroup and shared-memory block scans).

use std::marker::PhantomData;

use bytemuck::Pod;
use lumbre_gpu::stages::{Bind, Buf, Stage, Stages, Uniform};
use lumbre_gpu::{Buffer, Compute, Error, Fit, Gpu, Recorder, Result, pieces};
use lumbre_shaders::Shader;
use rayon::prelude::*;

use crate::stages::{ScanParams, scan_tile};

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
    let mut s = Stages::record(rec);
    let (src, dst) = (s.adopt(src)?, s.adopt(dst)?);
    let carry = Scan { kind, method, lookback, _t: PhantomData }.record_stages(&mut s, src, dst)?;
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
                scan_tile::reduce::<T>(p, view(src), view_mut(tile_values));
            })?;
            let totals = TileTotals { totals: scratch.totals, prefixes: scratch.prefixes, state: scratch.state };
            record_totals_scan::<T>(s, totals, scratch.carry, tiles, k, self.lookback)?;
            let binds = [src, dst, scratch.prefixes.all()];
            s.dispatch("scan tiles", from_prefixes, &p, &binds, tiles as u64, |p, b| {
                let [src, dst, tile_values] = b else { unreachable!() };
                scan_tile::scan_from_prefixes::<T>(p, view(src), view_mut(dst), view(tile_values));
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
        scan_tile::scan::<T>(p, view(src), view_mut(dst), state, view_mut(carry));
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
