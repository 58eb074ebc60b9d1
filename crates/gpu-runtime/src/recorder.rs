//! Recording several GPU stages into one submission, with per-stage timing.

use std::time::{Duration, Instant};

use bytemuck::Pod;

use crate::transfers::Direction;
use crate::{Buffer, Error, Gpu, Kernel, Result, Timings, timing::TimingSource};

const QUERIES_PER_SET: u32 = 512;

/// Records compute passes and copies into one command buffer; [`Recorder::submit`] runs them
/// all with no host round trip between stages and reports how long each took.
///
/// ```no_run
/// # use lumbre_gpu::Gpu;
/// let gpu = Gpu::new()?;
/// let src = gpu.upload(&[[1u32; 4]; 1000])?;
/// let dst = gpu.zeroed::<[u32; 4]>(1000)?;
/// let copy = gpu.kernel(&lumbre_shaders::runtime::COPY_VEC4, "main")?;
/// let mut rec = gpu.recorder();
/// rec.dispatch("copy", &copy, &[src.binding(), dst.binding()], 1000u64.div_ceil(256))?;
/// let timings = rec.submit()?;
/// println!("{timings}");
/// # Ok::<(), lumbre_gpu::Error>(())
/// ```
pub struct Recorder {
    gpu: Gpu,
    encoder: wgpu::CommandEncoder,
    queries: Vec<wgpu::QuerySet>,
    labels: Vec<&'static str>,
    timestamps: bool,
    /// The timings of what [`Recorder::flush`] submitted so far.
    flushed: Option<Timings>,
    /// The encoder is the application's ([`Gpu::recorder_on`]): only it submits.
    borrowed: bool,
}

impl Gpu {
    /// A recorder that times each pass with timestamp queries when the device has them.
    pub fn recorder(&self) -> Recorder {
        Recorder {
            gpu: self.clone(),
            encoder: self.device().create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("lumbre") }),
            queries: Vec::new(),
            labels: Vec::new(),
            timestamps: self.has(wgpu::Features::TIMESTAMP_QUERY),
            flushed: None,
            borrowed: false,
        }
    }

    /// A recorder on the application's own `encoder` (of this context's device): stages
    /// record into it after what the application recorded, and [`Recorder::finish`] hands it
    /// back for the application to record more and submit. Passes are not timed, and a
    /// pipeline that reads a value back between its stages fails (only the application
    /// submits its encoder).
    ///
    /// ```no_run
    /// let gpu = lumbre_gpu::Gpu::new()?;
    /// let (src, dst) = (gpu.upload(&[[1u32; 4]; 1000])?, gpu.zeroed::<[u32; 4]>(1000)?);
    /// let encoder = gpu.device().create_command_encoder(&Default::default());
    /// let mut rec = gpu.recorder_on(encoder);
    /// lumbre_gpu::CopyKernel::record_into(&mut rec, &src, &dst)?;
    /// let encoder = rec.finish(); // ... the application's own passes ...
    /// gpu.queue().submit([encoder.finish()]);
    /// # Ok::<(), lumbre_gpu::Error>(())
    /// ```
    pub fn recorder_on(&self, encoder: wgpu::CommandEncoder) -> Recorder {
        let (queries, labels) = (Vec::new(), Vec::new());
        Recorder { gpu: self.clone(), encoder, queries, labels, timestamps: false, flushed: None, borrowed: true }
    }
}

impl Recorder {
    /// The context this recorder belongs to.
    pub fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    /// Turns per-pass timestamps off (they cost a little; benchmarks of many tiny passes may
    /// prefer one wall-clock figure).
    pub fn without_timestamps(mut self) -> Self {
        self.timestamps = false;
        self
    }

    /// The query set and first index for the next pass's timestamps, if timing is on.
    fn next_queries(&mut self) -> Option<(wgpu::QuerySet, u32)> {
        if !self.timestamps {
            return None;
        }
        let index = self.labels.len() as u32 * 2;
        let set = (index / QUERIES_PER_SET) as usize;
        if set == self.queries.len() {
            self.queries.push(self.gpu.device().create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("lumbre timestamps"),
                ty: wgpu::QueryType::Timestamp,
                count: QUERIES_PER_SET,
            }));
        }
        Some((self.queries[set].clone(), index % QUERIES_PER_SET))
    }

    /// Records one compute pass running `kernel` over `groups` workgroups (folded to 2D when
    /// needed) with `resources` bound at 0, 1, 2, ...
    pub fn dispatch(
        &mut self,
        label: &'static str,
        kernel: &Kernel,
        resources: &[wgpu::BindingResource<'_>],
        groups: u64,
    ) -> Result<()> {
        if groups == 0 {
            return Ok(());
        }
        let (x, y, z) = self.gpu.grid(groups)?;
        let bind = self.gpu.bind(kernel, resources);
        self.dispatch_bound(label, kernel, &bind, (x, y, z));
        Ok(())
    }

    /// Records one compute pass running `kernel` over the grid `(x, y, z)` with the bind
    /// group `bind`.
    pub(crate) fn dispatch_bound(
        &mut self,
        label: &'static str,
        kernel: &Kernel,
        bind: &wgpu::BindGroup,
        (x, y, z): (u32, u32, u32),
    ) {
        self.pass(label, |pass| {
            pass.set_pipeline(&kernel.pipeline);
            pass.set_bind_group(0, bind, &[]);
            pass.dispatch_workgroups(x, y, z);
        });
    }

    /// Records an arbitrary compute pass (several dispatches sharing one timing entry).
    pub fn pass(&mut self, label: &'static str, f: impl FnOnce(&mut wgpu::ComputePass<'_>)) {
        let queries = self.next_queries();
        let mut pass = self.encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some(label),
            timestamp_writes: queries.as_ref().map(|(set, i)| wgpu::ComputePassTimestampWrites {
                query_set: set,
                beginning_of_pass_write_index: Some(*i),
                end_of_pass_write_index: Some(*i + 1),
            }),
        });
        f(&mut pass);
        drop(pass);
        self.labels.push(label);
    }

    /// Records a buffer-to-buffer copy of all of `src` into the start of `dst`.
    pub fn copy<T: Pod>(&mut self, src: &Buffer<T>, dst: &Buffer<T>) -> Result<()> {
        self.copy_range(src, 0, dst, 0, src.len())
    }

    /// Records a copy of `len` values from `src[src_at..]` to `dst[dst_at..]`.
    pub fn copy_range<T: Pod>(
        &mut self,
        src: &Buffer<T>,
        src_at: usize,
        dst: &Buffer<T>,
        dst_at: usize,
        len: usize,
    ) -> Result<()> {
        if src_at + len > src.len() || dst_at + len > dst.len() {
            return Err(Error::Input(format!(
                "copy of {len} values from {src_at} (of {}) to {dst_at} (of {})",
                src.len(),
                dst.len()
            )));
        }
        let t = size_of::<T>() as u64;
        let bytes = len as u64 * t;
        if bytes == 0 {
            return Ok(());
        }
        if !bytes.is_multiple_of(4) || !(src_at as u64 * t).is_multiple_of(4) || !(dst_at as u64 * t).is_multiple_of(4)
        {
            return Err(Error::Input("buffer copies must be 4-byte aligned".into()));
        }
        self.encoder.copy_buffer_to_buffer(src.raw(), src_at as u64 * t, dst.raw(), dst_at as u64 * t, bytes);
        Ok(())
    }

    /// Records zero-filling of `buf`.
    pub fn clear<T: Pod>(&mut self, buf: &Buffer<T>) {
        self.encoder.clear_buffer(buf.raw(), 0, None);
    }

    /// Direct access to the command encoder, for anything not covered above.
    pub fn encoder(&mut self) -> &mut wgpu::CommandEncoder {
        &mut self.encoder
    }

    /// The encoder with everything recorded, unsubmitted: the application's own from
    /// [`Gpu::recorder_on`], or a new one from [`Gpu::recorder`] (whose timestamps are then
    /// not read).
    pub fn finish(self) -> wgpu::CommandEncoder {
        self.encoder
    }

    /// Submits without waiting and without timings: work queued only to keep the GPU busy
    /// while the CPU records what comes next (see [`crate::KeepBusy`]).
    ///
    /// ```no_run
    /// let gpu = lumbre_gpu::Gpu::new()?;
    /// let (a, b) = (gpu.zeroed::<[u32; 4]>(1 << 20)?, gpu.zeroed::<[u32; 4]>(1 << 20)?);
    /// let mut rec = gpu.recorder().without_timestamps();
    /// lumbre_gpu::CopyKernel::record_into(&mut rec, &a, &b)?;
    /// rec.submit_no_wait()?; // returns at once; the copy runs behind whatever comes next
    /// # Ok::<(), lumbre_gpu::Error>(())
    /// ```
    pub fn submit_no_wait(self) -> Result<()> {
        let Recorder { gpu, encoder, .. } = self;
        gpu.scoped(|| {
            gpu.queue().submit([encoder.finish()]);
            Ok(())
        })
    }

    /// Submits everything recorded, waits for it, and reports per-pass GPU times (timestamp
    /// queries) or the wall-clock time of the whole submission.
    pub fn submit(self) -> Result<Timings> {
        let Recorder { gpu, encoder, queries, labels, timestamps, flushed, .. } = self;
        let last = submit_timed(&gpu, encoder, &queries, &labels, timestamps)?;
        Ok(match flushed {
            Some(earlier) => merge(earlier, last),
            None => last,
        })
    }

    /// Submits what was recorded so far and waits for it; recording goes on with an empty
    /// encoder, and [`Recorder::submit`] reports the passes of both submissions. Pipelines
    /// that read a value back to place their next stage use it (through
    /// [`Stages::read`](crate::stages::Stages::read)).
    pub(crate) fn flush(&mut self) -> Result<()> {
        if self.borrowed {
            return Err(Error::Input(
                "this pipeline reads a value back between stages, which a recorder on the application's \
                 encoder cannot (only the application submits it): record it with Gpu::recorder"
                    .into(),
            ));
        }
        let earlier = self.flushed.take();
        let fresh = Recorder { timestamps: self.timestamps, ..self.gpu.recorder() };
        let Recorder { gpu, encoder, queries, labels, timestamps, .. } = std::mem::replace(self, fresh);
        let done = submit_timed(&gpu, encoder, &queries, &labels, timestamps)?;
        self.flushed = Some(match earlier {
            Some(earlier) => merge(earlier, done),
            None => done,
        });
        Ok(())
    }
}

/// Submits `encoder`, whose passes `labels` wrote timestamps into `queries` if `timestamps`
/// is on, waits for it, and reads the passes' times (or the wall clock).
fn submit_timed(
    gpu: &Gpu,
    mut encoder: wgpu::CommandEncoder,
    queries: &[wgpu::QuerySet],
    labels: &[&'static str],
    timestamps: bool,
) -> Result<Timings> {
    let passes = labels.len();
    let resolve = if timestamps && passes > 0 {
        let n = passes as u64 * 2;
        let size = n * wgpu::QUERY_SIZE as u64;
        let resolve = gpu.device().create_buffer(&wgpu::BufferDescriptor {
            label: Some("timestamps"),
            size,
            usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        for (s, set) in queries.iter().enumerate() {
            let first = s as u64 * QUERIES_PER_SET as u64;
            let count = (n - first).min(QUERIES_PER_SET as u64) as u32;
            encoder.resolve_query_set(set, 0..count, &resolve, first * wgpu::QUERY_SIZE as u64);
        }
        Some(resolve)
    } else {
        None
    };
    let start = Instant::now();
    gpu.scoped(|| {
        gpu.queue().submit([encoder.finish()]);
        Ok(())
    })?;
    gpu.wait()?;
    let wall = start.elapsed();
    let Some(resolve) = resolve else {
        return Ok(Timings { passes: Vec::new(), span: Duration::ZERO, wall, source: TimingSource::WallClock });
    };
    let raw = gpu.read_back(&resolve, 0..resolve.size(), Direction::Timestamps)?;
    let ticks: &[u64] = bytemuck::cast_slice(&raw);
    let period = gpu.queue().get_timestamp_period() as f64;
    let nanos = |a: u64, b: u64| Duration::from_nanos((b.saturating_sub(a) as f64 * period) as u64);
    let per_pass =
        labels.iter().enumerate().map(|(i, l)| (l.to_string(), nanos(ticks[2 * i], ticks[2 * i + 1]))).collect();
    let span = if labels.is_empty() { Duration::ZERO } else { nanos(ticks[0], ticks[2 * labels.len() - 1]) };
    Ok(Timings { passes: per_pass, span, wall, source: TimingSource::Timestamps })
}

/// The timings of two submissions one after the other: their passes in order, their spans
/// and wall times added.
fn merge(earlier: Timings, later: Timings) -> Timings {
    let source = if later.passes.is_empty() { earlier.source } else { later.source };
    let mut passes = earlier.passes;
    passes.extend(later.passes);
    Timings { passes, span: earlier.span + later.span, wall: earlier.wall + later.wall, source }
}
