//! The histogram pyramid on the GPU: `compact/hpyramid.wgsl`'s base level, one reduction
//! per level above it and the descent, the twin of `hpyramid.rs`.

use lumbre_gpu::stages::{Buf, Stages};
use lumbre_gpu::{Buffer, Compute, Error, Gpu, Progress, Recorder, Report, Result};
use lumbre_shaders::compact::HPYRAMID;

use crate::compact::{Compact, Stream};
use crate::gpu::compact::{GpuCompacted, GpuStream};
use crate::hpyramid::HistoPyramid;
use crate::hpyramid::twin::{self, HpParams};

/// Levels above the flags (level 1 counts groups of 4 elements) up to the single root.
fn level_sizes(n: usize) -> Vec<usize> {
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

impl HistoPyramid {
    /// Records the compaction of the `n` elements of `values` and `flags` (either may be a
    /// one-element stand-in where this pyramid does not read it), which must fit one storage
    /// binding, into `s`. Returns the output (`n` elements, the kept ones first) and a
    /// one-element buffer holding their count.
    ///
    /// ```
    /// use lumbre_compact::{Emit, HistoPyramid, Select};
    /// use lumbre_gpu::stages::Stages;
    /// let mut s = Stages::cpu();
    /// let (values, flags) = (s.upload(&[4u32, 5, 6])?, s.upload(&[0u32, 1, 1])?);
    /// let hp = HistoPyramid { select: Select::Flags, emit: Emit::Values, index_base: 0 };
    /// let (out, count) = hp.record_stages(&mut s, values, flags, 3)?;
    /// assert_eq!((s.read(out)?, s.read(count)?), (vec![5, 6, 0], vec![2]));
    /// # Ok::<(), lumbre_gpu::Error>(())
    /// ```
    pub fn record_stages(
        &self,
        s: &mut Stages<'_>,
        values: Buf<u32>,
        flags: Buf<u32>,
        n: usize,
    ) -> Result<(Buf<u32>, Buf<u32>)> {
        let mode = self.mode()?;
        s.check_size("histogram pyramid input", 4 * n as u64, lumbre_gpu::Fit::Binding)?;
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
        let pyramid = s.zeroed::<[u32; 4]>(at)?;
        let out = s.zeroed::<u32>(n)?;
        let top = sizes.len() - 1;
        let params = |level: usize, count: usize| HpParams {
            n: n as u32,
            level: level as u32,
            index_base: self.index_base,
            offsets,
            count: count as u32,
            mode,
            ..Default::default()
        };
        let groups = |count: usize| count.div_ceil(256) as u64;
        let [base, reduce, traverse] = ["base", "reduce", "traverse"].map(|entry| s.stage(&HPYRAMID, entry));
        let p = s.uniform(&params(1, sizes[1]))?;
        s.dispatch("hp base", &base?, &p, &[values.all(), flags.all(), pyramid.all()], groups(sizes[1]), |p, b| {
            let [values, flags, pyramid] = b else { unreachable!() };
            twin::base(p, values, flags, bytemuck::cast_slice_mut(pyramid));
        })?;
        let reduce = reduce?;
        for (l, &size) in sizes.iter().enumerate().skip(2) {
            // One thread per level-l entry, summing the tuple of its 4 children.
            let p = s.uniform(&params(l, size))?;
            s.dispatch("hp reduce", &reduce, &p, &[pyramid.all()], groups(size), |p, b| {
                twin::reduce(p, bytemuck::cast_slice_mut(&mut b[0]));
            })?;
        }
        let p = s.uniform(&params(top, n))?;
        let binds = [values.all(), flags.all(), pyramid.all(), out.all()];
        s.dispatch("hp traverse", &traverse?, &p, &binds, groups(n), |p, b| {
            let [values, flags, pyramid, out] = b else { unreachable!() };
            twin::traverse(p, values, flags, bytemuck::cast_slice(pyramid), out);
        })?;
        // The total is the root, the first word of the top tuple.
        let count = s.zeroed::<u32>(1)?;
        s.copy(pyramid.cast()?, 4 * offsets[top] as usize, count, 0, 1)?;
        Ok((out, count))
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

    fn cpu_reported(&self, input: &Stream, _: &dyn Progress) -> Result<(Vec<u32>, Report)> {
        Report::timed(self.name(), || self.cpu(input))
    }

    fn upload(&self, gpu: &Gpu, input: &Stream) -> Result<GpuStream> {
        Compact { select: self.select, emit: self.emit, ..Default::default() }.upload(gpu, input)
    }

    fn record(&self, rec: &mut Recorder, input: &GpuStream) -> Result<GpuCompacted> {
        let gpu = rec.gpu().clone();
        let mut s = Stages::record(rec);
        let (values, flags) = (s.adopt(&input.values)?, s.adopt(&input.flags)?);
        let (out, count) = self.record_stages(&mut s, values, flags, input.len)?;
        GpuCompacted::with_tiles(&gpu, s.buffer(out)?, s.buffer(count)?, 0)
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
