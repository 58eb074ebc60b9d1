//! The whole build of imperfect shadow maps on the GPU: the pool, splatting and pull-push
//! recorded one after another; the twin of `ism/build.rs`.

use lumbre_gpu::{Buffer, Compute, Gpu, Progress, Recorder, Report, Result};

use crate::gpu::ism::atlas::GpuIsmAtlas;
use crate::gpu::ism::points::{GpuPoolInput, GpuScenePoints, record_points};
use crate::gpu::ism::pull_push::record_pull_push;
use crate::gpu::ism::splat::{record_splat, upload_vpls};
use crate::gpu::vpls::GpuVpl;
use crate::ism::atlas::IsmAtlas;
use crate::ism::build::{Ism, IsmScene};
use crate::ism::options::check_pool;

/// [`IsmScene`] on the GPU: the triangles with their area CDF, and the VPLs.
#[derive(Clone, Debug)]
pub struct GpuIsmScene {
    /// Triangles and CDF.
    pub pool: GpuPoolInput,
    /// The VPLs.
    pub vpls: Buffer<GpuVpl>,
}

impl Ism {
    /// Records the build from a pool and VPLs already on the GPU (48-byte [`GpuVpl`]s, one
    /// map each): splatting, then pull-push, into a new atlas. The atlas may be longer than
    /// one storage binding; it is processed in pieces of whole maps.
    pub fn record_build(
        &self,
        rec: &mut Recorder,
        points: &GpuScenePoints,
        vpls: &Buffer<GpuVpl>,
    ) -> Result<GpuIsmAtlas> {
        check_pool(points.len(), &self.options)?;
        let atlas = record_splat(rec, points, vpls, &self.options, points.diagonal())?;
        record_pull_push(rec, &atlas, self.options.pull_push_levels)?;
        Ok(atlas)
    }
}

impl Compute for Ism {
    type Input = IsmScene;
    type Output = IsmAtlas;
    type GpuInput = GpuIsmScene;
    type GpuOutput = GpuIsmAtlas;

    fn name(&self) -> &'static str {
        "ism"
    }

    fn cpu_reported(&self, scene: &IsmScene, progress: &dyn Progress) -> Result<(IsmAtlas, Report)> {
        self.run_cpu(scene, progress)
    }

    fn upload(&self, gpu: &Gpu, scene: &IsmScene) -> Result<GpuIsmScene> {
        self.options.validate()?;
        Ok(GpuIsmScene {
            pool: GpuPoolInput::new(gpu, &scene.triangles, self.options.points, self.options.seed)?,
            vpls: upload_vpls(gpu, &scene.vpls)?,
        })
    }

    fn record(&self, rec: &mut Recorder, scene: &GpuIsmScene) -> Result<GpuIsmAtlas> {
        let points = record_points(rec, &scene.pool)?;
        self.record_build(rec, &points, &scene.vpls)
    }

    fn download(&self, gpu: &Gpu, out: &GpuIsmAtlas) -> Result<IsmAtlas> {
        out.download(gpu)
    }

    fn gpu_stats(&self, _gpu: &Gpu, out: &GpuIsmAtlas) -> Result<Report> {
        let mut report = Report::default();
        self.atlas_stats(out.vpls, &mut report);
        Ok(report)
    }
}
