//! The copy kernel (the roofline every benchmark is measured against) and iota.

use std::time::Duration;

use bytemuck::Pod;

use crate::{Buffer, Compute, Fit, Gpu, Recorder, Result};

/// Copies `vec4<u32>` values; the GPU path is `runtime/copy.wgsl`. Buffers larger than one
/// storage binding are copied in binding-sized pieces.
///
/// ```
/// use lumbre_gpu::{Backend, Compute, CopyKernel};
/// let out = CopyKernel.run(&Backend::Cpu, &[[1, 2, 3, 4]]).unwrap();
/// assert_eq!(out, vec![[1, 2, 3, 4]]);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct CopyKernel;

/// Threads per workgroup of `runtime/copy.wgsl`.
pub const COPY_WORKGROUP: u64 = 256;

/// CPU twin of `runtime/copy.wgsl`, same buffer order as its bindings (src, dst).
///
/// ```
/// let mut dst = [[0u32; 4]; 2];
/// lumbre_gpu::copy_cpu(&[[1, 1, 1, 1], [2, 2, 2, 2]], &mut dst);
/// assert_eq!(dst[1], [2, 2, 2, 2]);
/// ```
pub fn copy_cpu(src: &[[u32; 4]], dst: &mut [[u32; 4]]) {
    dst.copy_from_slice(src);
}

impl CopyKernel {
    /// Records the copy of `src` into `dst` (same length), split by the binding limit.
    pub fn record_into(rec: &mut Recorder, src: &Buffer<[u32; 4]>, dst: &Buffer<[u32; 4]>) -> Result<()> {
        let gpu = rec.gpu().clone();
        let kernel = gpu.kernel(&lumbre_shaders::runtime::COPY, "main")?;
        let piece = (gpu.limits().max_storage_buffer_binding_size / 16) as usize;
        let mut at = 0;
        while at < src.len() {
            let n = piece.min(src.len() - at);
            rec.dispatch(
                "copy",
                &kernel,
                &[src.binding_range(at..at + n), dst.binding_range(at..at + n)],
                (n as u64).div_ceil(COPY_WORKGROUP),
            )?;
            at += n;
        }
        Ok(())
    }
}

impl Compute for CopyKernel {
    type Input = [[u32; 4]];
    type Output = Vec<[u32; 4]>;
    type GpuInput = Buffer<[u32; 4]>;
    type GpuOutput = Buffer<[u32; 4]>;

    fn name(&self) -> &'static str {
        "copy"
    }

    fn cpu(&self, input: &[[u32; 4]]) -> Result<Vec<[u32; 4]>> {
        let mut out = vec![[0; 4]; input.len()];
        copy_cpu(input, &mut out);
        Ok(out)
    }

    fn upload(&self, gpu: &Gpu, input: &[[u32; 4]]) -> Result<Buffer<[u32; 4]>> {
        gpu.upload_fit(input, Fit::Pieces)
    }

    fn record(&self, rec: &mut Recorder, src: &Buffer<[u32; 4]>) -> Result<Buffer<[u32; 4]>> {
        let dst = rec.gpu().zeroed_fit(src.len(), Fit::Pieces)?;
        Self::record_into(rec, src, &dst)?;
        Ok(dst)
    }

    fn download(&self, gpu: &Gpu, out: &Buffer<[u32; 4]>) -> Result<Vec<[u32; 4]>> {
        gpu.download(out)
    }
}

/// Median GPU time of copying `bytes` (rounded up to 16) from one buffer to another with the
/// copy kernel: the roofline for a kernel that reads and writes `bytes` each, measured as
/// [`busy_median_time`] does.
///
/// ```no_run
/// let gpu = lumbre_gpu::Gpu::new()?;
/// let t = lumbre_gpu::copy_time(&gpu, 64 << 20, 2, 5)?;
/// println!("{:.1} GB/s", 2.0 * (64 << 20) as f64 / t.as_secs_f64() / 1e9);
/// # Ok::<(), lumbre_gpu::Error>(())
/// ```
pub fn copy_time(gpu: &Gpu, bytes: u64, warmup: usize, repeats: usize) -> Result<Duration> {
    let n = bytes.div_ceil(16) as usize;
    let src = gpu.zeroed_fit::<[u32; 4]>(n, Fit::Pieces)?;
    let dst = gpu.zeroed_fit::<[u32; 4]>(n, Fit::Pieces)?;
    copy_time_between(gpu, &src, &dst, warmup, repeats)
}

/// Median GPU time of the copy kernel moving the first bytes of `src` into `dst` (as many
/// whole vec4s as both hold): the roofline of a kernel measured on these very buffers, so
/// that a comparison cannot hinge on which buffers were used. (On the H200, once clocks were
/// held up by [`KeepBusy`], this matched [`copy_time`] of the same bytes.)
///
/// ```no_run
/// let gpu = lumbre_gpu::Gpu::new()?;
/// let (a, b) = (gpu.zeroed::<u32>(1 << 20)?, gpu.zeroed::<u32>(1 << 20)?);
/// let t = lumbre_gpu::copy_time_between(&gpu, &a, &b, 2, 5)?;
/// println!("{:.1} GB/s", 2.0 * (4 << 20) as f64 / t.as_secs_f64() / 1e9);
/// # Ok::<(), lumbre_gpu::Error>(())
/// ```
pub fn copy_time_between<S: Pod, D: Pod>(
    gpu: &Gpu,
    src: &Buffer<S>,
    dst: &Buffer<D>,
    warmup: usize,
    repeats: usize,
) -> Result<Duration> {
    let quads = (src.size_bytes().min(dst.size_bytes()) / 16) as usize;
    let (src, dst) = (src.quads(quads), dst.quads(quads));
    busy_median_time(gpu, warmup, repeats, || {
        let mut rec = gpu.recorder();
        CopyKernel::record_into(&mut rec, &src, &dst)?;
        Ok(rec.submit()?.gpu())
    })
}

/// Median GPU time of copying `bytes` with the scalar kernel `runtime/copy_u32.wgsl` (one
/// `u32` per thread), for comparison with [`copy_time`] (16 bytes per thread).
pub fn copy_time_u32(gpu: &Gpu, bytes: u64, warmup: usize, repeats: usize) -> Result<Duration> {
    let n = bytes.div_ceil(4) as usize;
    let src = gpu.zeroed_fit::<u32>(n, Fit::Pieces)?;
    let dst = gpu.zeroed_fit::<u32>(n, Fit::Pieces)?;
    let kernel = gpu.kernel(&lumbre_shaders::runtime::COPY_U32, "main")?;
    let piece = (gpu.limits().max_storage_buffer_binding_size / 4) as usize / 256 * 256;
    busy_median_time(gpu, warmup, repeats, || {
        let mut rec = gpu.recorder();
        let mut at = 0;
        while at < n {
            let len = piece.min(n - at);
            let bind = [src.binding_range(at..at + len), dst.binding_range(at..at + len)];
            rec.dispatch("copy u32", &kernel, &bind, (len as u64).div_ceil(256))?;
            at += len;
        }
        Ok(rec.submit()?.gpu())
    })
}

/// Median GPU times of the `runtime/copy_variants.wgsl` kernels (each a one-u32-per-thread
/// copy plus one feature real kernels use) over `bytes`: `(entry point, time)`.
pub fn copy_variant_times(
    gpu: &Gpu,
    bytes: u64,
    warmup: usize,
    repeats: usize,
) -> Result<Vec<(&'static str, Duration)>> {
    let n = (bytes / 4).min(gpu.limits().max_storage_buffer_binding_size / 4) as usize;
    let src = gpu.zeroed::<u32>(n)?;
    let dst = gpu.zeroed::<u32>(n)?;
    let counter = gpu.zeroed::<u32>(1)?;
    let params = gpu.uniform(&[n as u32, 0, 0, 0])?;
    let shader = lumbre_shaders::runtime::COPY_VARIANTS;
    let mut out = Vec::new();
    for entry in ["uniform_n", "barrier", "shared_mem", "atomic_branch", "four_strided"] {
        let kernel = gpu.kernel(&shader, entry)?;
        let groups = if entry == "four_strided" { (n as u64).div_ceil(1024) } else { (n as u64).div_ceil(256) };
        let t = busy_median_time(gpu, warmup, repeats, || {
            let mut rec = gpu.recorder();
            let res = [params.as_entire_binding(), src.binding(), dst.binding(), counter.binding()];
            rec.dispatch("copy variant", &kernel, &res, groups)?;
            Ok(rec.submit()?.gpu())
        })?;
        out.push((entry, t));
    }
    Ok(out)
}

/// Keeps the GPU at the clocks of sustained load between measurements. A GPU lowers its
/// clocks within milliseconds of idling, and benchmarks idle it between runs (allocating,
/// recording, reading back); a few warm-up runs do not help when every run starts after
/// such a gap. On the H200 the same octree build measured 4.2-9 ms that way and 1.8 ms
/// with the queue kept busy. [`KeepBusy::new`] keeps the GPU copying 64 MiB back and forth
/// without a gap for [`WARM_UP`] and learns how long one copy takes; [`KeepBusy::queue`]
/// then submits about a given span of copies without waiting, so the measured work
/// submitted right after starts on a busy GPU.
///
/// ```no_run
/// let gpu = lumbre_gpu::Gpu::new()?;
/// let busy = lumbre_gpu::KeepBusy::new(&gpu)?;
/// busy.queue(&gpu, std::time::Duration::from_millis(20))?;
/// // ... record and submit the measured work here ...
/// # Ok::<(), lumbre_gpu::Error>(())
/// ```
#[derive(Debug)]
pub struct KeepBusy {
    a: Buffer<[u32; 4]>,
    b: Buffer<[u32; 4]>,
    per_copy: Duration,
}

/// How long [`KeepBusy::new`] keeps the GPU busy before measuring. Clocks rise only under
/// sustained load, and not at once: the H200, idle for a few seconds (a benchmark's CPU
/// column), went from 345 MHz back to 1980 MHz in 0.2 to 1.8 s, sometimes pausing on the
/// way (seen with `nvidia-smi`); benchmark rows measured on the way took 1.5 to 5 times as
/// long.
///
/// ```
/// assert_eq!(lumbre_gpu::WARM_UP.as_millis(), 2000);
/// ```
pub const WARM_UP: Duration = Duration::from_millis(2000);

impl KeepBusy {
    /// Keeps the GPU busy for [`WARM_UP`] and times its copies.
    ///
    /// ```no_run
    /// let gpu = lumbre_gpu::Gpu::new()?;
    /// let busy = lumbre_gpu::KeepBusy::new(&gpu)?;
    /// # Ok::<(), lumbre_gpu::Error>(())
    /// ```
    pub fn new(gpu: &Gpu) -> Result<Self> {
        let n = (64usize << 20) / 16;
        let (a, b) = (gpu.zeroed_fit::<[u32; 4]>(n, Fit::Pieces)?, gpu.zeroed_fit::<[u32; 4]>(n, Fit::Pieces)?);
        let copies = |count: usize| -> Result<crate::Recorder> {
            let mut rec = gpu.recorder().without_timestamps();
            for k in 0..count {
                let (src, dst) = if k % 2 == 0 { (&a, &b) } else { (&b, &a) };
                CopyKernel::record_into(&mut rec, src, dst)?;
            }
            Ok(rec)
        };
        let start = std::time::Instant::now();
        copies(16)?.submit()?;
        let mut per_copy = start.elapsed() / 16;
        // Rounds of about 50 ms of copies, each recorded while the previous one runs and
        // followed by 16 waited copies, so the GPU has work at every moment; a round's wall
        // time over its copies times the copy at the clocks reached.
        let batch = |per_copy: Duration| (0.05 / per_copy.as_secs_f64().max(1e-9)).clamp(1.0, 4096.0) as usize;
        let mut queued = batch(per_copy);
        let mut next = copies(queued)?;
        while start.elapsed() < WARM_UP {
            let round = std::time::Instant::now();
            next.submit_no_wait()?;
            let ran = queued;
            queued = batch(per_copy);
            next = copies(queued)?;
            copies(16)?.submit()?;
            per_copy = round.elapsed() / (ran + 16) as u32;
        }
        Ok(KeepBusy { a, b, per_copy })
    }

    /// Submits about `span` of copies without waiting.
    ///
    /// ```no_run
    /// let gpu = lumbre_gpu::Gpu::new()?;
    /// let busy = lumbre_gpu::KeepBusy::new(&gpu)?;
    /// busy.queue(&gpu, lumbre_gpu::BUSY_SPAN)?;
    /// let mut rec = gpu.recorder();
    /// // ... record the work to measure ...
    /// let timings = rec.submit()?;
    /// # Ok::<(), lumbre_gpu::Error>(())
    /// ```
    pub fn queue(&self, gpu: &Gpu, span: Duration) -> Result<()> {
        let copies = (span.as_secs_f64() / self.per_copy.as_secs_f64().max(1e-9)).ceil().clamp(1.0, 4096.0) as usize;
        let mut rec = gpu.recorder().without_timestamps();
        for k in 0..copies {
            let (src, dst) = if k % 2 == 0 { (&self.a, &self.b) } else { (&self.b, &self.a) };
            CopyKernel::record_into(&mut rec, src, dst)?;
        }
        rec.submit_no_wait()
    }
}

/// Median of the GPU times `f` reports, each run submitted right behind [`KeepBusy`] work
/// (20 ms of copies), after `warmup` unmeasured runs.
///
/// ```no_run
/// let gpu = lumbre_gpu::Gpu::new()?;
/// let (src, dst) = (gpu.zeroed::<[u32; 4]>(1 << 20)?, gpu.zeroed::<[u32; 4]>(1 << 20)?);
/// let t = lumbre_gpu::busy_median_time(&gpu, 2, 5, || {
///     let mut rec = gpu.recorder();
///     lumbre_gpu::CopyKernel::record_into(&mut rec, &src, &dst)?;
///     Ok(rec.submit()?.gpu())
/// })?;
/// # Ok::<(), lumbre_gpu::Error>(())
/// ```
pub fn busy_median_time(
    gpu: &Gpu,
    warmup: usize,
    repeats: usize,
    mut f: impl FnMut() -> Result<Duration>,
) -> Result<Duration> {
    let busy = KeepBusy::new(gpu)?;
    median_time(warmup, repeats, || {
        busy.queue(gpu, BUSY_SPAN)?;
        f()
    })
}

/// How much GPU work [`busy_median_time`] queues ahead of each measured run: more than the
/// CPU takes to record a large submission.
///
/// ```
/// assert!(lumbre_gpu::BUSY_SPAN > std::time::Duration::ZERO);
/// ```
pub const BUSY_SPAN: Duration = Duration::from_millis(20);

/// Runs `f` `warmup` times unmeasured, then `repeats` times, and returns the median of the
/// durations it reports.
///
/// ```
/// let t = lumbre_gpu::median_time(1, 3, || Ok(std::time::Duration::from_millis(2))).unwrap();
/// assert_eq!(t.as_millis(), 2);
/// ```
pub fn median_time(warmup: usize, repeats: usize, mut f: impl FnMut() -> Result<Duration>) -> Result<Duration> {
    for _ in 0..warmup {
        f()?;
    }
    let mut times = (0..repeats.max(1)).map(|_| f()).collect::<Result<Vec<_>>>()?;
    times.sort();
    Ok(times[times.len() / 2])
}

/// Records `dst[i] = start + i` for every element of `dst` (`runtime/iota.wgsl`).
///
/// ```no_run
/// let gpu = lumbre_gpu::Gpu::new()?;
/// let buf = gpu.zeroed::<u32>(5)?;
/// let mut rec = gpu.recorder();
/// lumbre_gpu::record_iota(&mut rec, &buf, 10)?;
/// rec.submit()?;
/// assert_eq!(gpu.download(&buf)?, vec![10, 11, 12, 13, 14]);
/// # Ok::<(), lumbre_gpu::Error>(())
/// ```
pub fn record_iota(rec: &mut Recorder, dst: &Buffer<u32>, start: u32) -> Result<()> {
    let gpu = rec.gpu().clone();
    let kernel = gpu.kernel(&lumbre_shaders::runtime::IOTA, "main")?;
    let params = gpu.uniform(&[dst.len() as u32, start])?;
    rec.dispatch("iota", &kernel, &[params.as_entire_binding(), dst.binding()], (dst.len() as u64).div_ceil(64))
}

/// CPU twin of `runtime/iota.wgsl`.
///
/// ```
/// let mut v = [0u32; 3];
/// lumbre_gpu::iota_cpu(&mut v, 7);
/// assert_eq!(v, [7, 8, 9]);
/// ```
pub fn iota_cpu(dst: &mut [u32], start: u32) {
    for (i, d) in dst.iter_mut().enumerate() {
        *d = start.wrapping_add(i as u32);
    }
}
