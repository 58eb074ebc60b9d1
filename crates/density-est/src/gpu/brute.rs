//! Brute force on the GPU (`density/brute.wgsl`): one thread per disk, every segment in
//! order, the segments staged through workgroup memory 256 at a time.

use lumbre_gpu::{Recorder, Report, Result, pieces};
use lumbre_shaders::density::BRUTE;

use crate::gpu::estimate::{GpuEstimate, accumulators};
use crate::gpu::problem::GpuProblem;

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    segments: u32,
    disks: u32,
    scale: f32,
    _pad: u32,
}
const _: () = assert!(size_of::<Params>() == lumbre_shaders::density::BRUTE_PARAMS_SIZE);

/// Threads per workgroup and segments per staged tile (`WG` in the shader).
const WG: usize = 256;

/// Records brute force over the segments, piece by piece when they are longer than one
/// storage binding (each piece adds to the accumulators).
pub(crate) fn record(rec: &mut Recorder, input: &GpuProblem) -> Result<GpuEstimate> {
    let gpu = rec.gpu().clone();
    let acc = accumulators(&gpu, input)?;
    let kernel = gpu.kernel(&BRUTE, "brute_force")?;
    let disks = input.disks();
    let piece = gpu.piece_len(32, WG);
    for (start, len) in pieces(input.segments, piece) {
        let params =
            gpu.uniform(&Params { segments: len as u32, disks: disks as u32, scale: input.scale(), _pad: 0 })?;
        let res = [
            params.as_entire_binding(),
            input.seg_geom.binding_range(2 * start..2 * (start + len)),
            input.seg_power.binding_range(start..start + len),
            input.disks.binding(),
            acc.binding(),
        ];
        rec.dispatch("brute force", &kernel, &res, disks.div_ceil(WG) as u64)?;
    }
    let mut report = Report::default();
    report.stat("pairs tested", input.segments as f64 * disks as f64);
    Ok(GpuEstimate::new(input, acc, report, None))
}
