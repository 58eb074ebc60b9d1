//! The copy kernel (the roofline every benchmark is measured against) and iota.

use std::time::Duration;

use bytemuck::Pod;

use crate::{Buffer, Compute, Fit, Gpu, Progress, Recorder, Report, Result, busy_median_time};

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
    /// The CPU path: a copy of `input`.
    ///
    /// ```
    /// assert_eq!(lumbre_gpu::CopyKernel.cpu(&[[1, 2, 3, 4]])?, vec![[1, 2, 3, 4]]);
    /// # Ok::<(), lumbre_gpu::Error>(())
    /// ```
    pub fn cpu(&self, input: &[[u32; 4]]) -> Result<Vec<[u32; 4]>> {
        let mut out = vec![[0; 4]; input.len()];
        copy_cpu(input, &mut out);
        Ok(out)
    }

    /// Records the copy of `src` into `dst` (same length), split by the binding limit.
    pub fn record_into(rec: &mut Recorder, src: &Buffer<[u32; 4]>, dst: &Buffer<[u32; 4]>) -> Result<()> {
        let gpu = rec.gpu().clone();
        let kernel = gpu.kernel(&lumbre_shaders::runtime::COPY_VEC4, "main")?;
        let piece = gpu.piece_len(16, 1);
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

    fn cpu_reported(&self, input: &[[u32; 4]], _: &dyn Progress) -> Result<(Vec<[u32; 4]>, Report)> {
        Report::timed(self.name(), || self.cpu(input))
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
/// that a comparison cannot hinge on which buffers were used.
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

/// Median GPU time of copying `bytes` with the scalar kernel `runtime/copy.wgsl (u32 variant)` (one
/// `u32` per thread), for comparison with [`copy_time`] (16 bytes per thread).
pub fn copy_time_u32(gpu: &Gpu, bytes: u64, warmup: usize, repeats: usize) -> Result<Duration> {
    let n = bytes.div_ceil(4) as usize;
    let src = gpu.zeroed_fit::<u32>(n, Fit::Pieces)?;
    let dst = gpu.zeroed_fit::<u32>(n, Fit::Pieces)?;
    let kernel = gpu.kernel(&lumbre_shaders::runtime::COPY_U32, "main")?;
    let piece = gpu.piece_len(4, 256);
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
