//! Stage 3 on the GPU, pull-push hole filling: `lightcuts/ism_pull_push.wgsl`, the twin of
//! `ism/pull_push.rs`.

use lumbre_gpu::{Compute, Error, Gpu, Progress, Recorder, Report, Result, pieces};

use crate::gpu::ism::atlas::GpuIsmAtlas;
use crate::ism::atlas::IsmAtlas;
use crate::ism::pull_push::{PullPush, scratch_texels};

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct PullPushParams {
    size: u32,
    levels: u32,
    maps: u32,
    scratch_per_map: u32,
}
const _: () = assert!(size_of::<PullPushParams>() == lumbre_shaders::lightcuts::ISM_PULL_PUSH_PARAMS_SIZE);

/// Records pull-push over `levels` levels on every map of `atlas`, in place
/// (`lightcuts/ism_pull_push`), piece by piece.
pub(crate) fn record_pull_push(rec: &mut Recorder, atlas: &GpuIsmAtlas, levels: u32) -> Result<()> {
    let max = atlas.size.trailing_zeros();
    if levels > max {
        return Err(Error::Input(format!(
            "pull-push over {levels} levels of maps of side {}: at most {max}",
            atlas.size
        )));
    }
    if levels == 0 || atlas.vpls == 0 {
        return Ok(());
    }
    let gpu = rec.gpu().clone();
    let kernel = gpu.kernel(&lumbre_shaders::lightcuts::ISM_PULL_PUSH, "main")?;
    let per_map = scratch_texels(atlas.size, levels);
    let piece = atlas.maps_per_piece(&gpu).min(atlas.vpls as usize);
    let scratch = gpu.zeroed::<u32>(piece * per_map)?;
    let texels = (atlas.size * atlas.size) as usize;
    for (first, len) in pieces(atlas.vpls as usize, piece) {
        let params = gpu.uniform(&PullPushParams {
            size: atlas.size,
            levels,
            maps: len as u32,
            scratch_per_map: per_map as u32,
        })?;
        let bind = [
            params.as_entire_binding(),
            atlas.depth.binding_range(first * texels..(first + len) * texels),
            scratch.binding(),
        ];
        rec.dispatch("ism pull-push", &kernel, &bind, len as u64)?;
    }
    Ok(())
}

impl Compute for PullPush {
    type Input = IsmAtlas;
    type Output = IsmAtlas;
    type GpuInput = GpuIsmAtlas;
    type GpuOutput = GpuIsmAtlas;

    fn name(&self) -> &'static str {
        "ism pull-push"
    }

    fn cpu_reported(&self, atlas: &IsmAtlas, _: &dyn Progress) -> Result<(IsmAtlas, Report)> {
        Report::timed(self.name(), || self.cpu(atlas))
    }

    fn upload(&self, gpu: &Gpu, atlas: &IsmAtlas) -> Result<GpuIsmAtlas> {
        self.check(atlas.size)?;
        GpuIsmAtlas::upload(gpu, atlas)
    }

    fn record(&self, rec: &mut Recorder, atlas: &GpuIsmAtlas) -> Result<GpuIsmAtlas> {
        let gpu = rec.gpu().clone();
        let out = GpuIsmAtlas::new(&gpu, atlas.size, atlas.vpls, atlas.lookup)?;
        rec.copy(&atlas.depth, &out.depth)?;
        record_pull_push(rec, &out, self.levels)?;
        Ok(out)
    }

    fn download(&self, gpu: &Gpu, out: &GpuIsmAtlas) -> Result<IsmAtlas> {
        out.download(gpu)
    }
}
