//! Prefix scan: CPU (rayon, chunked) and GPU (single pass, decoupled look-back with
//! fallback; subgroup and shared-memory block scans).

use std::marker::PhantomData;

use bytemuck::Pod;
use lumbre_gpu::{Buffer, Compute, Error, Fit, Gpu, Recorder, Result};
use lumbre_shaders::Shader;
use rayon::prelude::*;

use crate::pieces::{piece_len, pieces};

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
fn scan_serial<T: ScanElem>(input: &[T], output: &mut [T], kind: ScanKind, carry: T) -> T {
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

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct ScanParams {
    n: u32,
    piece: u32,
    inclusive: u32,
    num_tiles: u32,
    lookback: u32,
}

/// Scratch for GPU scans: the look-back state and the carries between pieces.
#[derive(Debug)]
pub struct ScanScratch {
    state: Buffer<u32>,
    carry: Buffer<u32>,
}

impl ScanScratch {
    /// Scratch for scanning `n` elements of `T` on `gpu`.
    pub fn new<T: ScanElem>(gpu: &Gpu, n: usize) -> Result<Self> {
        let piece = piece_len(gpu, size_of::<T>(), SCAN_TILE);
        let tiles = piece.min(n.max(1)).div_ceil(SCAN_TILE);
        Ok(ScanScratch { state: gpu.zeroed(4 + 4 * tiles)?, carry: gpu.zeroed(n.div_ceil(piece) + 1)? })
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

/// Records a GPU scan of `src` into `dst` (same length; may be the same length as several
/// storage bindings: it is scanned piece by piece with the carry kept on the GPU). Returns
/// the scratch, whose carry buffer ends with the total.
pub fn record_scan<T: ScanElem>(
    rec: &mut Recorder,
    src: &Buffer<T>,
    dst: &Buffer<T>,
    kind: ScanKind,
) -> Result<ScanScratch> {
    record_scan_with(rec, src, dst, kind, Lookback::default())
}

/// [`record_scan`] with explicit look-back tuning.
pub fn record_scan_with<T: ScanElem>(
    rec: &mut Recorder,
    src: &Buffer<T>,
    dst: &Buffer<T>,
    kind: ScanKind,
    lookback: Lookback,
) -> Result<ScanScratch> {
    if src.len() != dst.len() {
        return Err(Error::Input(format!("scan of {} elements into {}", src.len(), dst.len())));
    }
    let gpu = rec.gpu().clone();
    let scratch = ScanScratch::new::<T>(&gpu, src.len())?;
    let (plain, sg) = T::shaders();
    let kernel = gpu.kernel(if gpu.has_subgroups() { &sg } else { &plain }, "scan")?;
    let piece = piece_len(&gpu, size_of::<T>(), SCAN_TILE);
    for (k, (start, len)) in pieces(src.len(), piece).into_iter().enumerate() {
        let tiles = len.div_ceil(SCAN_TILE);
        let params = gpu.uniform(&ScanParams {
            n: len as u32,
            piece: k as u32,
            inclusive: (kind == ScanKind::Inclusive) as u32,
            num_tiles: tiles as u32,
            lookback: lookback.tuning(),
        })?;
        rec.clear(&scratch.state);
        let bind = [
            params.as_entire_binding(),
            src.binding_range(start..start + len),
            dst.binding_range(start..start + len),
            scratch.state.binding(),
            scratch.carry.binding(),
        ];
        rec.dispatch("scan", &kernel, &bind, tiles as u64)?;
    }
    Ok(scratch)
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
    /// Look-back tuning of the GPU path.
    pub lookback: Lookback,
    _t: PhantomData<T>,
}

impl<T> Scan<T> {
    /// A scan of the given kind.
    pub fn new(kind: ScanKind) -> Self {
        Scan { kind, lookback: Lookback::default(), _t: PhantomData }
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
        record_scan_with(rec, input, &out, self.kind, self.lookback)?;
        Ok(out)
    }

    fn download(&self, gpu: &Gpu, out: &Buffer<T>) -> Result<Vec<T>> {
        gpu.download(out)
    }
}
