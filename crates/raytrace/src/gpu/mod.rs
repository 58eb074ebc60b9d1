//! The GPU paths, one module per stage named like its CPU module: the scene as the renderers
//! read it (`scene`), the integrators (`whitted`, `path`), the voxel renderer (`volume`) and
//! the emitter distribution (`emitters`), the path tracer as a wavefront (`wavefront`); then what they share: images (`image`) and the
//! cutting of a render into dispatches (`batch`).

mod batch;
mod emitters;
mod image;
mod path;
mod scene;
mod volume;
mod wavefront;
mod whitted;

pub use batch::SAMPLES_PER_DISPATCH;
pub use emitters::{GpuEmitter, GpuEmitters};
pub use path::{GpuPathImage, GpuPathScene};
pub use scene::GpuScene;
pub use volume::GpuVolumeImage;
pub use whitted::GpuImage;

use lumbre_gpu::{Compute, Gpu, Report, Result};

use crate::sums::SampleSums;

/// A sampled render's GPU path to its sums: records and submits `alg` on `input`, then reads
/// the sums back with `download` and the statistics with `gpu_stats` (the GPU half of the
/// renderers' `sums_placed`).
fn gpu_sums<C: Compute>(
    alg: &C,
    gpu: &Gpu,
    input: &C::GpuInput,
    download: impl FnOnce(&Gpu, &C::GpuOutput) -> Result<SampleSums>,
) -> Result<(SampleSums, Report)> {
    let mut rec = gpu.recorder();
    let out = alg.record(&mut rec, input)?;
    let timings = rec.submit()?;
    let mut report = Report::from_timings(alg.name(), &timings);
    let sums = report.time("download", || download(gpu, &out))?;
    report.merge(alg.gpu_stats(gpu, &out)?);
    Ok((sums, report))
}
