//! Compaction by histogram pyramid, the method of the density-estimation paper, kept to
//! compare against the single-pass compaction on one chart.

use lumbre_gpu::{Buffer, Compute, Error, Gpu, Recorder, Result};

use crate::compact::{Emit, GpuCompacted, GpuStream, Select, Stream};
use crate::stages::HpParams;

/// Levels above the flags (level 1 counts groups of 4 elements) up to the single root.
pub(crate) fn level_sizes(n: usize) -> Vec<usize> {
    let mut sizes = vec![0];
    let mut count = n.div_ceil(4).max(1);
    loop {
        sizes.push(count);
        if count == 1 {
            break;
        }
        count = count.div_ceil(4);
    }
    sizes
}

/// Stream compaction with a histogram pyramid (HistoPyramid): a 4-ary tree of keep counts
/// built bottom-up in one pass per level, then one top-down descent per output element.
/// Keeps by flag or by `value != 0`; emits values or indices.
///
/// ```
/// use lumbre_compact::{Emit, HistoPyramid, Select, Stream};
/// use lumbre_gpu::{Backend, Compute};
/// let hp = HistoPyramid { select: Select::Flags, emit: Emit::Values, index_base: 0 };
/// let s = Stream { values: vec![4, 5, 6], flags: vec![0, 1, 1] };
/// assert_eq!(hp.run(&Backend::Cpu, &s).unwrap(), vec![5, 6]);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct HistoPyramid {
    /// [`Select::Flags`], or [`Select::Where`] with [`crate::Predicate::NonZero`].
    pub select: Select,
    /// Values or indices.
    pub emit: Emit,
    /// Added to emitted indices (used when a long stream is run in pieces).
    pub index_base: u32,
}

impl HistoPyramid {
    pub(crate) fn mode(&self) -> Result<u32> {
        let by_value = match self.select {
            Select::Flags => 0,
            Select::Where(crate::Predicate::NonZero) => 1,
            Select::Where(p) => {
                return Err(Error::Input(format!("the histogram pyramid keeps by flag or NonZero, not {p:?}")));
            }
        };
        Ok(by_value | (((self.emit == Emit::Indices) as u32) << 1))
    }
}

impl Compute for HistoPyramid {
    type Input = Stream;
    type Output = Vec<u32>;
    type GpuInput = GpuStream;
    type GpuOutput = GpuCompacted;

    fn name(&self) -> &'static str {
        "histogram pyramid"
    }

    fn cpu(&self, input: &Stream) -> Result<Vec<u32>> {
        self.mode()?;
        crate::Compact { select: self.select, emit: self.emit, ..Default::default() }.cpu(input)
    }

    fn upload(&self, gpu: &Gpu, input: &Stream) -> Result<GpuStream> {
        crate::Compact { select: self.select, emit: self.emit, ..Default::default() }.upload(gpu, input)
    }

    fn record(&self, rec: &mut Recorder, input: &GpuStream) -> Result<GpuCompacted> {
        let gpu = rec.gpu().clone();
        let mode = self.mode()?;
        let n = input.len;
        gpu.check_size("histogram pyramid input", 4 * n as u64, lumbre_gpu::Fit::Binding)?;
        let sizes = level_sizes(n);
        if sizes.len() > 16 {
            return Err(Error::Input(format!("{n} elements need more than 15 pyramid levels")));
        }
        // Each level is stored as vec4 tuples of siblings.
        let mut offsets = [0u32; 16];
        let mut at = 0usize;
        for (l, &size) in sizes.iter().enumerate().skip(1) {
            offsets[l] = at as u32;
            at += size.div_ceil(4);
        }
        let pyramid = gpu.zeroed::<[u32; 4]>(at)?;
        let out = gpu.zeroed::<u32>(n)?;
        let top = sizes.len() - 1;
        let params = |level: usize, count: usize| HpParams {
            n: n as u32,
            level: level as u32,
            index_base: self.index_base,
            _pad: 0,
            offsets,
            count: count as u32,
            mode,
            _pad2: [0; 2],
        };
        let shader = lumbre_shaders::compact::HPYRAMID;
        let p = gpu.uniform(&params(1, sizes[1]))?;
        let groups = |count: usize| count.div_ceil(256) as u64;
        rec.dispatch(
            "hp base",
            &gpu.kernel(&shader, "base")?,
            &resources(&p, input, &pyramid, &out),
            groups(sizes[1]),
        )?;
        for (l, &size) in sizes.iter().enumerate().skip(2) {
            // One thread per level-l entry, summing the tuple of its 4 children.
            let p = gpu.uniform(&params(l, size))?;
            let reduce = gpu.kernel(&shader, "reduce")?;
            rec.dispatch("hp reduce", &reduce, &resources(&p, input, &pyramid, &out), groups(size))?;
        }
        let p = gpu.uniform(&params(top, n))?;
        rec.dispatch(
            "hp traverse",
            &gpu.kernel(&shader, "traverse")?,
            &resources(&p, input, &pyramid, &out),
            groups(n),
        )?;
        // The total is the root, the first word of the top tuple.
        let count = gpu.zeroed::<u32>(1)?;
        let flat: Buffer<u32> = pyramid.cast()?;
        rec.copy_range(&flat, 4 * offsets[top] as usize, &count, 0, 1)?;
        GpuCompacted::with_tiles(&gpu, out, count, 0)
    }

    fn download(&self, gpu: &Gpu, output: &GpuCompacted) -> Result<Vec<u32>> {
        let count = gpu.download(&output.count)?[0] as usize;
        gpu.download_range(&output.out, 0..count)
    }

    /// Streams longer than one binding run piece by piece: each piece is copied to its own
    /// buffers, compacted by its own pyramid, and the results are concatenated on the host.
    fn gpu_timed(&self, gpu: &Gpu, input: &Stream) -> Result<(Vec<u32>, lumbre_gpu::Timings)> {
        let on_gpu = self.upload(gpu, input)?;
        let piece = gpu.piece_len(4, 4096);
        let parts = lumbre_gpu::pieces(on_gpu.len, piece);
        let mut rec = gpu.recorder();
        if parts.len() <= 1 {
            let out = self.record(&mut rec, &on_gpu)?;
            let t = rec.submit()?;
            return Ok((self.download(gpu, &out)?, t));
        }
        let mut all = Vec::new();
        let mut timings = lumbre_gpu::Timings {
            passes: Vec::new(),
            span: Default::default(),
            wall: Default::default(),
            source: lumbre_gpu::TimingSource::WallClock,
        };
        for (start, len) in parts {
            let copy = |src: &Buffer<u32>| -> Result<Buffer<u32>> {
                let dst = gpu.zeroed::<u32>(if src.len() >= start + len { len } else { 1 })?;
                let mut rec = gpu.recorder();
                if src.len() >= start + len {
                    rec.copy_range(src, start, &dst, 0, len)?;
                }
                rec.submit()?;
                Ok(dst)
            };
            let part = GpuStream { values: copy(&on_gpu.values)?, flags: copy(&on_gpu.flags)?, len };
            let hp = HistoPyramid { index_base: self.index_base + start as u32, ..*self };
            let mut rec = gpu.recorder();
            let out = hp.record(&mut rec, &part)?;
            let t = rec.submit()?;
            timings.passes.extend(t.passes);
            timings.span += t.span;
            timings.wall += t.wall;
            timings.source = t.source;
            all.extend(hp.download(gpu, &out)?);
        }
        Ok((all, timings))
    }
}

/// The bindings of `compact/hpyramid.wgsl`, in order.
fn resources<'a>(
    params: &'a lumbre_gpu::wgpu::Buffer,
    input: &'a GpuStream,
    pyramid: &'a Buffer<[u32; 4]>,
    out: &'a Buffer<u32>,
) -> [lumbre_gpu::wgpu::BindingResource<'a>; 5] {
    [params.as_entire_binding(), input.values.binding(), input.flags.binding(), pyramid.binding(), out.binding()]
}
