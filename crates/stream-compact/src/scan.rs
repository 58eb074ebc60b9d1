//! Prefix scan: CPU (rayon, chunked) and GPU (single pass with decoupled look-back and
//! fallback, or reduce-then-scan for large inputs; subgroup and shared-memory block scans).

use std::marker::PhantomData;

use bytemuck::Pod;
#[cfg(feature = "gpu")]
use lumbre_shaders::Shader;
use rayon::prelude::*;

pub mod twin;

/// Elements per GPU scan tile (256 threads x 16), `TILE` in `compact/scan_tile.wgsl`.
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
    #[cfg(feature = "gpu")]
    fn shaders() -> (Shader, Shader);
}

impl ScanElem for u32 {
    fn add(self, other: Self) -> Self {
        self.wrapping_add(other)
    }
    #[cfg(feature = "gpu")]
    fn shaders() -> (Shader, Shader) {
        (lumbre_shaders::compact::SCAN_U32_PLAIN, lumbre_shaders::compact::SCAN_U32_SUBGROUPS)
    }
}

impl ScanElem for f32 {
    fn add(self, other: Self) -> Self {
        self + other
    }
    #[cfg(feature = "gpu")]
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
    #[cfg(feature = "gpu")]
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

/// Prefix scan through the [`Compute`](lumbre_gpu::Compute) trait.
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

impl<T: ScanElem> Scan<T> {
    /// The CPU path: the scan of `input` ([`scan_cpu`]).
    ///
    /// ```
    /// use lumbre_compact::{Scan, ScanKind};
    /// assert_eq!(Scan::<u32>::new(ScanKind::Exclusive).cpu(&[1, 2, 3])?, vec![0, 1, 3]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn cpu(&self, input: &[T]) -> lumbre_gpu::Result<Vec<T>> {
        let mut out = vec![T::default(); input.len()];
        scan_cpu(input, &mut out, self.kind);
        Ok(out)
    }
}
