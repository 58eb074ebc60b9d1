//! Stable stream compaction: keep the elements whose flag is set (or whose value satisfies a
//! predicate), in order, as values or as indices. The "non-uniform stream reduction" of the
//! density-estimation paper.

use lumbre_gpu::{Buffer, Compute, Error, Fit, Gpu, Recorder, Result, Timings};
use lumbre_shaders::Shader;
use rayon::prelude::*;

use crate::pieces::split_sizes;
use crate::scan::{Lookback, ScanMethod, TileTotals, record_totals_scan};
use crate::stages::CompactParams;
use lumbre_gpu::pieces;

/// Elements per GPU compaction tile (256 threads x 16), `TILE` in `compact/compact.wgsl`.
pub const COMPACT_TILE: usize = 4096;

/// Keep-bit words per tile in the two-pass compaction: one per thread (`WG` in the shader).
const TILE_WORDS: usize = 256;

/// A test on a `u32` value, evaluated identically on the CPU and in WGSL.
///
/// ```
/// use lumbre_compact::Predicate;
/// assert!(Predicate::Lt(5).holds(4));
/// assert!(Predicate::AnyBits(0b100).holds(0b110));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Predicate {
    /// `v != 0`
    NonZero,
    /// `v == x`
    Eq(u32),
    /// `v != x`
    Ne(u32),
    /// `v < x`
    Lt(u32),
    /// `v <= x`
    Le(u32),
    /// `v > x`
    Gt(u32),
    /// `v >= x`
    Ge(u32),
    /// `v & x != 0`
    AnyBits(u32),
}

impl Predicate {
    /// Whether `v` satisfies the predicate.
    pub fn holds(self, v: u32) -> bool {
        match self {
            Predicate::NonZero => v != 0,
            Predicate::Eq(x) => v == x,
            Predicate::Ne(x) => v != x,
            Predicate::Lt(x) => v < x,
            Predicate::Le(x) => v <= x,
            Predicate::Gt(x) => v > x,
            Predicate::Ge(x) => v >= x,
            Predicate::AnyBits(x) => v & x != 0,
        }
    }

    /// (op code, operand) as `compact/compact.wgsl` reads them.
    fn code(self) -> (u32, u32) {
        match self {
            Predicate::NonZero => (0, 0),
            Predicate::Eq(x) => (1, x),
            Predicate::Ne(x) => (2, x),
            Predicate::Lt(x) => (3, x),
            Predicate::Le(x) => (4, x),
            Predicate::Gt(x) => (5, x),
            Predicate::Ge(x) => (6, x),
            Predicate::AnyBits(x) => (7, x),
        }
    }
}

/// Which elements a compaction keeps.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Select {
    /// Those whose flag (a parallel `u32` array) is non-zero.
    #[default]
    Flags,
    /// Those whose value satisfies the predicate (no flag array needed).
    Where(Predicate),
}

/// What a compaction writes for each kept element.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Emit {
    /// Its value.
    #[default]
    Values,
    /// Its index in the input.
    Indices,
}

/// The input of a compaction: values, and flags when selecting by flag (else empty).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stream {
    /// The values (or, when emitting indices by flag, may be empty).
    pub values: Vec<u32>,
    /// Keep flags, one per element, when [`Select::Flags`].
    pub flags: Vec<u32>,
}

impl Stream {
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.values.len().max(self.flags.len())
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A stream on the GPU.
#[derive(Clone, Debug)]
pub struct GpuStream {
    /// Values (at least one element so it can be bound).
    pub values: Buffer<u32>,
    /// Flags (at least one element).
    pub flags: Buffer<u32>,
    /// Number of elements.
    pub len: usize,
}

/// Compacted output on the GPU: `out[..count]` is the result, `count` a one-element buffer.
#[derive(Clone, Debug)]
pub struct GpuCompacted {
    /// Output, as long as the input (the worst case).
    pub out: Buffer<u32>,
    /// The number of kept elements (one `u32`, on the GPU, for later stages to read).
    pub count: Buffer<u32>,
    /// Look-back state, carries, and the two-pass method's tile counts, their prefixes and
    /// keep bits, kept with the output so that compacting into it again allocates nothing (a
    /// fresh state buffer per run made the run's time depend on where the buffer landed).
    state: Buffer<u32>,
    carry: Buffer<u32>,
    totals: Buffer<u32>,
    prefixes: Buffer<u32>,
    keep_bits: Buffer<u32>,
}

impl GpuCompacted {
    /// Zeroed output for compacting up to `n` elements.
    ///
    /// ```no_run
    /// # fn main() -> lumbre_gpu::Result<()> {
    /// let gpu = lumbre_gpu::Gpu::new()?;
    /// let out = lumbre_compact::GpuCompacted::new(&gpu, 1000)?;
    /// assert_eq!(out.out.len(), 1000);
    /// # Ok(())
    /// # }
    /// ```
    pub fn new(gpu: &Gpu, n: usize) -> Result<Self> {
        Self::with_tiles(gpu, gpu.zeroed(n)?, gpu.zeroed(1)?, n.div_ceil(COMPACT_TILE))
    }

    /// `out` and `count` with the state of either method for `tiles` tiles.
    pub(crate) fn with_tiles(gpu: &Gpu, out: Buffer<u32>, count: Buffer<u32>, tiles: usize) -> Result<Self> {
        let totals = tiles.next_multiple_of(4).max(4); // scanned as vec4s
        Ok(GpuCompacted {
            out,
            count,
            state: gpu.zeroed(4 + 4 * tiles)?,
            carry: gpu.zeroed(2)?,
            totals: gpu.zeroed(totals)?,
            prefixes: gpu.zeroed(totals)?,
            keep_bits: gpu.zeroed((tiles * TILE_WORDS).max(1))?,
        })
    }

    /// Whether this output has the state to compact `tiles` tiles.
    fn has_state_for(&self, tiles: usize) -> bool {
        self.state.len() >= 4 + 4 * tiles && self.keep_bits.len() >= tiles * TILE_WORDS
    }
}

/// Stable stream compaction through the [`Compute`] trait.
///
/// ```
/// use lumbre_compact::{Compact, Emit, Predicate, Select, Stream};
/// use lumbre_gpu::{Backend, Compute};
/// let c = Compact { select: Select::Where(Predicate::Gt(2)), emit: Emit::Indices, ..Default::default() };
/// let input = Stream { values: vec![5, 1, 3, 2], flags: vec![] };
/// assert_eq!(c.run(&Backend::Cpu, &input).unwrap(), vec![0, 2]);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Compact {
    /// What to keep.
    pub select: Select,
    /// What to write.
    pub emit: Emit,
    /// How the GPU path finds where each tile's kept elements go: one pass with a look-back,
    /// or two passes around a scan of the tiles' counts ([`ScanMethod::ReduceThenScan`]: the
    /// first pass also writes one keep bit per element, which the second reads instead of
    /// the flags). [`ScanMethod::Auto`] takes two passes from
    /// [`COMPACT_TWO_PASS_MIN`] elements on.
    pub method: ScanMethod,
    /// Look-back tuning of the GPU path.
    pub lookback: Lookback,
}

/// Elements from which [`Compact::method`]'s `Auto` compacts in two passes (2^25): one pass
/// measured faster below, two above (benches/RESULTS.md).
pub const COMPACT_TWO_PASS_MIN: usize = 1 << 25;

/// CPU compaction (rayon; order preserved).
///
/// ```
/// use lumbre_compact::{Emit, Select, compact_cpu};
/// assert_eq!(compact_cpu(&[7, 8, 9], &[1, 0, 1], Select::Flags, Emit::Values), vec![7, 9]);
/// ```
pub fn compact_cpu(values: &[u32], flags: &[u32], select: Select, emit: Emit) -> Vec<u32> {
    const CHUNK: usize = 1 << 16;
    let n = values.len().max(flags.len());
    let keep = |i: usize| match select {
        Select::Flags => flags[i] != 0,
        Select::Where(p) => p.holds(values[i]),
    };
    let chunk = |c: usize| c * CHUNK..((c + 1) * CHUNK).min(n);
    // Two passes, so that each chunk writes its part of the output in place: count every
    // chunk's kept elements, then write them after the earlier chunks'. (Collecting each
    // chunk into a vector of its own and joining them spends its time growing the vectors
    // and copying them on one thread.)
    let counts: Vec<usize> =
        (0..n.div_ceil(CHUNK)).into_par_iter().map(|c| chunk(c).map(|i| keep(i) as usize).sum()).collect();
    let mut out = vec![0u32; counts.iter().sum()];
    split_sizes(&mut out, &counts).into_par_iter().enumerate().for_each(|(c, part)| {
        let mut k = 0;
        for i in chunk(c) {
            // Every element is written and only a kept one moves on (flags come in no
            // predictable order; the bounds check fails only past the chunk's last kept one).
            if let Some(slot) = part.get_mut(k) {
                *slot = match emit {
                    Emit::Values => values[i],
                    Emit::Indices => i as u32,
                };
            }
            k += keep(i) as usize;
        }
    });
    out
}

impl Compact {
    fn check(&self, values: usize, flags: usize) -> Result<usize> {
        let n = values.max(flags);
        let need_values = matches!(self.select, Select::Where(_)) || self.emit == Emit::Values;
        if need_values && values != n {
            return Err(Error::Input(format!("compaction needs {n} values, got {values}")));
        }
        if self.select == Select::Flags && flags != n {
            return Err(Error::Input(format!("compaction by flag needs {n} flags, got {flags}")));
        }
        u32::try_from(n).map_err(|_| Error::Input("compaction of more than 2^32 elements".into()))?;
        Ok(n)
    }

    /// The GPU method used for `n` elements: [`Compact::method`], `Auto` resolved.
    ///
    /// ```
    /// use lumbre_compact::{COMPACT_TWO_PASS_MIN, Compact, ScanMethod};
    /// let c = Compact::default();
    /// assert_eq!(c.method_for(COMPACT_TWO_PASS_MIN - 1), ScanMethod::SinglePass);
    /// assert_eq!(c.method_for(COMPACT_TWO_PASS_MIN), ScanMethod::ReduceThenScan);
    /// ```
    pub fn method_for(&self, n: usize) -> ScanMethod {
        match self.method {
            ScanMethod::Auto if n >= COMPACT_TWO_PASS_MIN => ScanMethod::ReduceThenScan,
            ScanMethod::Auto => ScanMethod::SinglePass,
            m => m,
        }
    }

    /// Records the compaction of piece `piece`, `n` elements (`params` its uniform, `values`,
    /// `flags` and `out` its bindings), by this compaction's method for `n`.
    fn record_passes<'a>(
        &self,
        rec: &mut Recorder,
        n: usize,
        piece: usize,
        params: &'a lumbre_gpu::wgpu::Buffer,
        [values, flags, out]: [lumbre_gpu::wgpu::BindingResource<'a>; 3],
        state: &'a GpuCompacted,
    ) -> Result<()> {
        let gpu = rec.gpu().clone();
        let shader = Self::shader(&gpu);
        let tiles = n.div_ceil(COMPACT_TILE) as u64;
        let bind = |tile_values: &'a Buffer<u32>| {
            [
                params.as_entire_binding(),
                values.clone(),
                flags.clone(),
                state.state.binding(),
                state.carry.binding(),
                out.clone(),
                tile_values.binding(),
                state.keep_bits.binding(),
            ]
        };
        if self.method_for(n) != ScanMethod::ReduceThenScan {
            rec.clear(&state.state);
            return rec.dispatch("compact", &gpu.kernel(&shader, "compact")?, &bind(&state.totals), tiles);
        }
        rec.dispatch("compact count", &gpu.kernel(&shader, "count")?, &bind(&state.totals), tiles)?;
        let totals = TileTotals { totals: &state.totals, prefixes: &state.prefixes, state: &state.state };
        record_totals_scan::<u32>(rec, totals, &state.carry, tiles as usize, piece, self.lookback)?;
        rec.dispatch("compact tiles", &gpu.kernel(&shader, "compact_from_prefixes")?, &bind(&state.prefixes), tiles)
    }

    fn shader(gpu: &Gpu) -> Shader {
        use lumbre_shaders::compact::{COMPACT_PLAIN, COMPACT_SUBGROUPS};
        // The subgroup variant also needs subgroup barriers (for its stores).
        if gpu.supports(&COMPACT_SUBGROUPS) { COMPACT_SUBGROUPS } else { COMPACT_PLAIN }
    }

    pub(crate) fn params(&self, n: usize, piece: usize, index_base: usize, out_base: usize) -> CompactParams {
        let (op, operand) = match self.select {
            Select::Where(p) => p.code(),
            Select::Flags => (0, 0),
        };
        CompactParams {
            n: n as u32,
            piece: piece as u32,
            num_tiles: n.div_ceil(COMPACT_TILE) as u32,
            lookback: self.lookback.tuning(),
            mode: matches!(self.select, Select::Where(_)) as u32 | (((self.emit == Emit::Indices) as u32) << 1),
            op,
            operand,
            index_base: index_base as u32,
            out_base: out_base as u32,
        }
    }

    /// Records the compaction of a stream that fits one storage binding; everything stays
    /// on the GPU, including the count. Longer streams need [`Compute::gpu`], which
    /// compacts them piece by piece.
    pub fn record_compact(&self, rec: &mut Recorder, input: &GpuStream) -> Result<GpuCompacted> {
        let out = GpuCompacted::new(rec.gpu(), input.len)?;
        self.record_compact_into(rec, input, &out)?;
        Ok(out)
    }

    /// [`Compact::record_compact`] into buffers the caller keeps: repeated compactions then
    /// allocate nothing large (on some drivers, buffers allocated after large ones were
    /// freed run up to 3x slower).
    ///
    /// ```no_run
    /// # fn main() -> lumbre_gpu::Result<()> {
    /// use lumbre_compact::{Compact, GpuCompacted, Stream};
    /// use lumbre_gpu::{Compute, Gpu};
    /// let gpu = Gpu::new()?;
    /// let c = Compact::default();
    /// let input = c.upload(&gpu, &Stream { values: vec![5, 6, 7], flags: vec![1, 0, 1] })?;
    /// let out = GpuCompacted::new(&gpu, input.len)?;
    /// for _ in 0..3 {
    ///     let mut rec = gpu.recorder();
    ///     c.record_compact_into(&mut rec, &input, &out)?;
    ///     rec.submit()?;
    /// }
    /// assert_eq!(c.download(&gpu, &out)?, vec![5, 7]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn record_compact_into(&self, rec: &mut Recorder, input: &GpuStream, out: &GpuCompacted) -> Result<()> {
        let gpu = rec.gpu().clone();
        let n = input.len;
        if pieces(n, gpu.piece_len(4, COMPACT_TILE)).len() > 1 {
            return Err(Error::LimitExceeded {
                what: "GPU-resident compaction".into(),
                limit: "max_storage_buffer_binding_size",
                requested: 4 * n as u64,
                max: gpu.limits().max_storage_buffer_binding_size,
            });
        }
        let tiles = n.div_ceil(COMPACT_TILE);
        if out.out.len() < n {
            return Err(Error::Input(format!("compaction of {n} elements into an output of {}", out.out.len())));
        }
        if !out.has_state_for(tiles) {
            return Err(Error::Input(format!(
                "compaction of {n} elements into an output without look-back state for them (make it with GpuCompacted::new)"
            )));
        }
        rec.clear(&out.carry);
        let params = gpu.uniform(&self.params(n, 0, 0, 0))?;
        self.record_passes(
            rec,
            n,
            0,
            &params,
            [input.values.binding(), input.flags.binding(), out.out.binding()],
            out,
        )?;
        rec.copy_range(&out.carry, 1, &out.count, 0, 1)
    }

    /// Piece-by-piece compaction of a stream longer than one binding: each piece reads the
    /// running count back (one `u32`) to place its output window.
    fn gpu_pieces(&self, gpu: &Gpu, input: &GpuStream) -> Result<(Vec<u32>, Timings)> {
        let n = input.len;
        let align = (gpu.limits().min_storage_buffer_offset_alignment as usize / 4).max(1);
        // The output window starts up to `align` elements before the piece's first output.
        let mut piece = gpu.piece_len(4, COMPACT_TILE);
        if (piece + align) * 4 > gpu.limits().max_storage_buffer_binding_size as usize {
            piece -= COMPACT_TILE;
        }
        let out = gpu.zeroed_fit::<u32>(n, Fit::Pieces)?;
        let parts = pieces(n, piece);
        // The state of one piece, with carries for all.
        let state = GpuCompacted {
            carry: gpu.zeroed::<u32>(parts.len() + 1)?,
            ..GpuCompacted::with_tiles(gpu, gpu.zeroed(1)?, gpu.zeroed(1)?, piece.div_ceil(COMPACT_TILE))?
        };
        let carry = &state.carry;
        let mut timings = Timings {
            passes: Vec::new(),
            span: Default::default(),
            wall: Default::default(),
            source: lumbre_gpu::TimingSource::WallClock,
        };
        for (k, (start, len)) in parts.iter().copied().enumerate() {
            let written = gpu.download_range(carry, k..k + 1)?[0] as usize;
            let out_base = written / align * align;
            let window = out_base..written + len;
            let params = gpu.uniform(&self.params(len, k, start, out_base))?;
            let mut rec = gpu.recorder();
            let bind = [
                piece_of(&input.values, start..start + len),
                piece_of(&input.flags, start..start + len),
                out.binding_range(window),
            ];
            self.record_passes(&mut rec, len, k, &params, bind, &state)?;
            let t = rec.submit()?;
            timings.passes.extend(t.passes);
            timings.span += t.span;
            timings.wall += t.wall;
            timings.source = t.source;
        }
        let count = gpu.download_range(carry, parts.len()..parts.len() + 1)?[0] as usize;
        Ok((gpu.download_range(&out, 0..count)?, timings))
    }
}

/// A binding of `range`, or of the whole buffer if it is the one-element stand-in for an
/// array the compaction does not read.
fn piece_of(buf: &Buffer<u32>, range: std::ops::Range<usize>) -> lumbre_gpu::wgpu::BindingResource<'_> {
    if buf.len() >= range.end { buf.binding_range(range) } else { buf.binding() }
}

impl Compute for Compact {
    type Input = Stream;
    type Output = Vec<u32>;
    type GpuInput = GpuStream;
    type GpuOutput = GpuCompacted;

    fn name(&self) -> &'static str {
        "compact"
    }

    fn cpu(&self, input: &Stream) -> Result<Vec<u32>> {
        self.check(input.values.len(), input.flags.len())?;
        Ok(compact_cpu(&input.values, &input.flags, self.select, self.emit))
    }

    fn upload(&self, gpu: &Gpu, input: &Stream) -> Result<GpuStream> {
        let n = self.check(input.values.len(), input.flags.len())?;
        // Unused arrays are bound as a single zero so every binding exists.
        let values = if input.values.is_empty() { gpu.zeroed(1)? } else { gpu.upload_fit(&input.values, Fit::Pieces)? };
        let flags = if input.flags.is_empty() { gpu.zeroed(1)? } else { gpu.upload_fit(&input.flags, Fit::Pieces)? };
        Ok(GpuStream { values, flags, len: n })
    }

    fn record(&self, rec: &mut Recorder, input: &GpuStream) -> Result<GpuCompacted> {
        self.record_compact(rec, input)
    }

    fn download(&self, gpu: &Gpu, output: &GpuCompacted) -> Result<Vec<u32>> {
        let count = gpu.download(&output.count)?[0] as usize;
        gpu.download_range(&output.out, 0..count)
    }

    fn gpu_timed(&self, gpu: &Gpu, input: &Stream) -> Result<(Vec<u32>, Timings)> {
        let on_gpu = self.upload(gpu, input)?;
        if pieces(on_gpu.len, gpu.piece_len(4, COMPACT_TILE)).len() > 1 {
            return self.gpu_pieces(gpu, &on_gpu);
        }
        let mut rec = gpu.recorder();
        let out = self.record(&mut rec, &on_gpu)?;
        let timings = rec.submit()?;
        Ok((self.download(gpu, &out)?, timings))
    }
}
