//! Stream compaction on the GPU: `compact/compact.wgsl` in one pass with a look-back, or in
//! two around a scan of the tiles' counts, the twin of `compact.rs`.

use lumbre_gpu::stages::{Buf, Stages};
use lumbre_gpu::{Buffer, Compute, Error, Fit, Gpu, Progress, Recorder, Report, Result, Timings, pieces};
use lumbre_shaders::compact::{COMPACT_PLAIN, COMPACT_SUBGROUPS};

use crate::compact::twin::{self, CompactParams, TILE_WORDS};
use crate::compact::{COMPACT_TILE, Compact, Emit, Select, Stream};
use crate::gpu::scan::{TileTotals, record_totals_scan};
use crate::scan::ScanMethod;

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
        let [state, carry, totals, prefixes, keep_bits] = state_lens(tiles, 1);
        Ok(GpuCompacted {
            out,
            count,
            state: gpu.zeroed(state)?,
            carry: gpu.zeroed(carry)?,
            totals: gpu.zeroed(totals)?,
            prefixes: gpu.zeroed(prefixes)?,
            keep_bits: gpu.zeroed(keep_bits)?,
        })
    }

    /// Whether this output has the state to compact `tiles` tiles.
    fn has_state_for(&self, tiles: usize) -> bool {
        self.state.len() >= 4 + 4 * tiles && self.keep_bits.len() >= tiles * TILE_WORDS
    }
}

/// Lengths of a compaction's state for pieces of `tiles` tiles: look-back state, carries
/// (one more than the pieces), the two-pass method's tile counts and their prefixes (scanned
/// as vec4s), and its keep bits.
fn state_lens(tiles: usize, pieces: usize) -> [usize; 5] {
    let totals = tiles.next_multiple_of(4).max(4);
    [4 + 4 * tiles, pieces + 1, totals, totals, (tiles * TILE_WORDS).max(1)]
}

/// A compaction's output and state as a pipeline's buffers (see [`GpuCompacted`]).
#[derive(Clone, Copy)]
struct Compacted {
    out: Buf<u32>,
    count: Buf<u32>,
    state: Buf<u32>,
    carry: Buf<u32>,
    totals: Buf<u32>,
    prefixes: Buf<u32>,
    keep_bits: Buf<u32>,
}

impl Compacted {
    /// `out` and `count` with the state for `pieces` pieces of `tiles` tiles.
    fn new(s: &mut Stages<'_>, out: Buf<u32>, count: Buf<u32>, tiles: usize, pieces: usize) -> Result<Self> {
        let [state, carry, totals, prefixes, keep_bits] = state_lens(tiles, pieces);
        Ok(Compacted {
            out,
            count,
            state: s.zeroed(state)?,
            carry: s.zeroed(carry)?,
            totals: s.zeroed(totals)?,
            prefixes: s.zeroed(prefixes)?,
            keep_bits: s.zeroed(keep_bits)?,
        })
    }

    /// The buffers of `kept` in `s`.
    fn adopt(s: &mut Stages<'_>, kept: &GpuCompacted) -> Result<Self> {
        Ok(Compacted {
            out: s.adopt(&kept.out)?,
            count: s.adopt(&kept.count)?,
            state: s.adopt(&kept.state)?,
            carry: s.adopt(&kept.carry)?,
            totals: s.adopt(&kept.totals)?,
            prefixes: s.adopt(&kept.prefixes)?,
            keep_bits: s.adopt(&kept.keep_bits)?,
        })
    }
}

impl Compact {
    /// The uniform of piece `piece`, `n` elements from input element `index_base` on, its
    /// output binding starting at output position `out_base`.
    fn params(&self, n: usize, piece: usize, index_base: usize, out_base: usize) -> CompactParams {
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
        let gpu = rec.gpu();
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
        let mut s = Stages::record(rec);
        let (values, flags) = (s.adopt(&input.values)?, s.adopt(&input.flags)?);
        let out = Compacted::adopt(&mut s, out)?;
        self.stages(&mut s, values, flags, n, &out)
    }

    /// Records the compaction of the `n` elements of `values` and `flags` into `s` (either
    /// may be a one-element stand-in where this compaction does not read it). Returns the
    /// output (`n` elements, the kept ones first) and a one-element buffer holding their
    /// count. A stream longer than one storage binding is compacted piece by piece, each
    /// placed by the count so far, which is read back (on the GPU path, what was recorded
    /// before is submitted then).
    ///
    /// ```
    /// use lumbre_compact::{Compact, Emit, Select};
    /// use lumbre_gpu::stages::Stages;
    /// let mut s = Stages::cpu();
    /// let (values, flags) = (s.zeroed::<u32>(1)?, s.upload(&[0u32, 1, 1, 0])?);
    /// let c = Compact { select: Select::Flags, emit: Emit::Indices, ..Default::default() };
    /// let (out, count) = c.record_stages(&mut s, values, flags, 4)?;
    /// assert_eq!((s.read(out)?, s.read(count)?), (vec![1, 2, 0, 0], vec![2]));
    /// # Ok::<(), lumbre_gpu::Error>(())
    /// ```
    pub fn record_stages(
        &self,
        s: &mut Stages<'_>,
        values: Buf<u32>,
        flags: Buf<u32>,
        n: usize,
    ) -> Result<(Buf<u32>, Buf<u32>)> {
        let piece = piece_len(s, n)?;
        let parts = n.div_ceil(piece).max(1);
        let out = if parts > 1 { s.zeroed_fit(n, Fit::Pieces)? } else { s.zeroed(n)? };
        let count = s.zeroed(1)?;
        let out = Compacted::new(s, out, count, piece.min(n).div_ceil(COMPACT_TILE), parts)?;
        self.stages(s, values, flags, n, &out)?;
        Ok((out.out, out.count))
    }

    /// The compaction's stages into `o`.
    fn stages(&self, s: &mut Stages<'_>, values: Buf<u32>, flags: Buf<u32>, n: usize, o: &Compacted) -> Result<()> {
        u32::try_from(n).map_err(|_| Error::Input("compaction of more than 2^32 elements".into()))?;
        let align = (s.binding_alignment() as usize / 4).max(1);
        let parts = pieces(n, piece_len(s, n)?);
        // The subgroup variant also needs subgroup barriers (for its stores).
        let shader = if s.supports(&COMPACT_SUBGROUPS) { COMPACT_SUBGROUPS } else { COMPACT_PLAIN };
        s.clear(o.carry);
        for (k, &(start, len)) in parts.iter().enumerate() {
            // Piece k starts after what the earlier pieces kept; its output window up to
            // `align` elements before that, where a binding may start.
            let written = if k == 0 { 0 } else { s.read_range(o.carry, k..k + 1)?[0] as usize };
            let out_base = written / align * align;
            let p = s.uniform(&self.params(len, k, start, out_base))?;
            // One piece binds the buffers whole; a stand-in for an array the compaction does
            // not read is bound whole in any case.
            let input = |b: Buf<u32>| {
                if parts.len() > 1 && b.len() >= start + len { b.range(start..start + len) } else { b.all() }
            };
            let out = if parts.len() > 1 { o.out.range(out_base..written + len) } else { o.out.all() };
            let (v, f) = (input(values), input(flags));
            let tiles = p.value().num_tiles as u64;
            if self.method_for(len) != ScanMethod::ReduceThenScan {
                s.clear(o.state);
                let binds = [v, f, o.state.all(), o.carry.all(), out];
                let single = s.stage(&shader, "compact")?;
                s.dispatch("compact", &single, &p, &binds, tiles, |p, b| {
                    let [values, flags, state, carry, out] = b else { unreachable!() };
                    twin::compact(p, values, flags, state, carry, out);
                })?;
                continue;
            }
            let binds = [v.clone(), f, o.totals.all(), o.keep_bits.all()];
            let count = s.stage(&shader, "count")?;
            s.dispatch("compact count", &count, &p, &binds, tiles, |p, b| {
                let [values, flags, tile_values, keep_bits] = b else { unreachable!() };
                twin::count(p, values, flags, tile_values, keep_bits);
            })?;
            let totals = TileTotals { totals: o.totals, prefixes: o.prefixes, state: o.state };
            record_totals_scan::<u32>(s, totals, o.carry, tiles as usize, k, self.lookback)?;
            let binds = [v, out, o.prefixes.all(), o.keep_bits.all()];
            let from_prefixes = s.stage(&shader, "compact_from_prefixes")?;
            s.dispatch("compact tiles", &from_prefixes, &p, &binds, tiles, |p, b| {
                let [values, out, tile_values, keep_bits] = b else { unreachable!() };
                twin::compact_from_prefixes(p, values, out, tile_values, keep_bits);
            })?;
        }
        s.copy(o.carry, parts.len(), o.count, 0, 1)
    }
}

/// The compaction's piece length for `n` elements: all of them if they fit one binding,
/// else pieces whose output window (which may start up to a binding offset alignment before
/// the piece's first output) fits one too.
fn piece_len(s: &Stages<'_>, n: usize) -> Result<usize> {
    let piece = s.piece_len(4, COMPACT_TILE);
    let align = (s.binding_alignment() as usize / 4).max(1);
    if n <= piece || (piece + align) * 4 <= s.max_binding() as usize {
        return Ok(piece);
    }
    match piece - COMPACT_TILE {
        0 => Err(Error::Input(format!("bindings of {} bytes hold no compaction tile and its window", s.max_binding()))),
        shorter => Ok(shorter),
    }
}

impl Compute for Compact {
    type Input = Stream;
    type Output = Vec<u32>;
    type GpuInput = GpuStream;
    type GpuOutput = GpuCompacted;

    fn name(&self) -> &'static str {
        "compact"
    }

    fn cpu_reported(&self, input: &Stream, _: &dyn Progress) -> Result<(Vec<u32>, Report)> {
        Report::timed(self.name(), || self.cpu(input))
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

    /// Streams longer than one storage binding are compacted piece by piece, each placed by
    /// the count so far, which is read back between the pieces.
    fn gpu_timed(&self, gpu: &Gpu, input: &Stream) -> Result<(Vec<u32>, Timings)> {
        let on_gpu = self.upload(gpu, input)?;
        let mut rec = gpu.recorder();
        if pieces(on_gpu.len, gpu.piece_len(4, COMPACT_TILE)).len() <= 1 {
            let out = self.record(&mut rec, &on_gpu)?;
            let timings = rec.submit()?;
            return Ok((self.download(gpu, &out)?, timings));
        }
        let mut s = Stages::record(&mut rec);
        let (values, flags) = (s.adopt(&on_gpu.values)?, s.adopt(&on_gpu.flags)?);
        let (out, count) = self.record_stages(&mut s, values, flags, on_gpu.len)?;
        let (out, count) = (s.buffer(out)?, s.buffer(count)?);
        let timings = rec.submit()?;
        let count = gpu.download(&count)?[0] as usize;
        Ok((gpu.download_range(&out, 0..count)?, timings))
    }
}
