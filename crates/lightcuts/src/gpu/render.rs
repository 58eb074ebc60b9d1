//! The whole renderer on the GPU: the VPLs in a submission of their own (the host reads
//! their count), then the tree, the G-buffer, the ISM and the shading in one; the twin of
//! `render.rs`.

use glam::Vec3;
use lumbre_gpu::{Compute, Error, Gpu, Progress, Recorder, Report, Result};
use lumbre_raytrace::Prepared;

use crate::gbuffer::GBufferPass;
use crate::gpu::ism::GpuPoolInput;
use crate::gpu::shading::{GpuLit, GpuShading, record_ism};
use crate::gpu::tree::GpuLights;
use crate::gpu::vpls::{GpuVpl, GpuVplScene};
use crate::render::{Method, Render, Rendering, ShadeWith, TreeBuilder};
use crate::shading::Visibility;
use crate::tree::LightNode;
use crate::vpls::{Vpl, VplPass};

/// A scene on the GPU ready to render.
#[derive(Clone, Debug)]
pub struct GpuRenderScene {
    /// The scene and its emitters.
    pub scene: GpuVplScene,
    /// The scene's box.
    pub bounds: (Vec3, Vec3),
    /// The ISM's triangles, when visibility is by ISM.
    pub ism_pool: Option<GpuPoolInput>,
}

/// A render on the GPU, and the report of what ran before its last submission (the VPLs,
/// whose count the host reads to size the rest, and a greedy tree).
#[derive(Clone, Debug)]
pub struct GpuRendering {
    /// The image and cuts.
    pub lit: GpuLit,
    /// Number of VPLs.
    pub vpls: u32,
    /// Stages run before the last submission.
    pub before: Report,
}

impl Compute for Render {
    type Input = Prepared;
    type Output = Rendering;
    type GpuInput = GpuRenderScene;
    type GpuOutput = GpuRendering;

    fn name(&self) -> &'static str {
        "lightcuts render"
    }

    /// Stages `vpls`, `tree`, `gbuffer`, the ISM's, then `lightcuts` or
    /// `instant radiosity`, with their statistics.
    fn cpu_reported(&self, p: &Prepared, progress: &dyn Progress) -> Result<(Rendering, Report)> {
        self.run_cpu(p, progress)
    }

    fn upload(&self, gpu: &Gpu, p: &Prepared) -> Result<GpuRenderScene> {
        let ism_pool = match &self.visibility {
            Visibility::Ism(o) => {
                o.validate()?;
                Some(GpuPoolInput::new(gpu, &p.tris, o.points, o.seed)?)
            }
            _ => None,
        };
        Ok(GpuRenderScene { scene: GpuVplScene::upload(gpu, p)?, bounds: p.scene.bounds, ism_pool })
    }

    /// Makes the VPLs in a submission of its own (the host reads their count), then records
    /// the tree, the G-buffer, the ISM and the shading on `rec`.
    fn record(&self, rec: &mut Recorder, s: &GpuRenderScene) -> Result<GpuRendering> {
        let band = self.band()?;
        let gpu = rec.gpu().clone();
        let mut before = Report::default();
        let mut first = gpu.recorder();
        let list = VplPass { options: self.vpls, query: self.query }.record_vpls(&mut first, &s.scene)?;
        let timings = first.submit()?;
        before.add_stage("vpls", timings.gpu());
        let count = list.read_count(&gpu)?;
        if count == 0 {
            return Err(Error::Input("no VPL was made: every light path left the scene".into()));
        }
        before.stat("vpls", count as f64);
        let vpls = gpu.zeroed::<GpuVpl>(count as usize)?;
        rec.copy_range(&list.vpls, 0, &vpls, 0, count as usize)?;
        let lights = match (self.method, self.tree) {
            (Method::Instant, _) => GpuLights { nodes: gpu.zeroed::<LightNode>(1)?, vpls, count },
            (Method::Lightcuts(_), TreeBuilder::Morton(m)) => {
                m.record_build(rec, &vpls, count, m.bounds.unwrap_or(s.bounds))?
            }
            (Method::Lightcuts(_), builder @ TreeBuilder::Greedy(_)) => {
                let host: Vec<Vpl> =
                    gpu.download_range(&list.vpls, 0..count as usize)?.iter().map(Vpl::from_gpu).collect();
                let tree = before.time("tree", || builder.build(&host, s.bounds))?;
                GpuLights::upload(&gpu, &tree)?
            }
        };
        let pass = GBufferPass { view: self.view, query: self.query };
        let gbuffer = pass.record_gbuffer_rows(rec, &s.scene.scene, band)?;
        let shading = GpuShading {
            scene: s.scene.scene.clone(),
            lights,
            gbuffer,
            diagonal: (s.bounds.1 - s.bounds.0).length(),
            ism_pool: s.ism_pool.clone(),
        };
        let ism = record_ism(rec, &self.visibility, &shading)?;
        let lit = match self.shade() {
            ShadeWith::Cuts(lc) => lc.record_cuts(
                rec,
                &shading.scene,
                &shading.lights,
                &shading.gbuffer,
                shading.min_d2(self.clamp_for(s.bounds))?,
                ism.as_ref(),
            )?,
            ShadeWith::Instant(ir) => ir.record_shade(
                rec,
                &shading.scene,
                &shading.lights,
                &shading.gbuffer,
                shading.min_d2(self.clamp_for(s.bounds))?,
                ism.as_ref(),
            )?,
        };
        Ok(GpuRendering { lit, vpls: count, before })
    }

    fn download(&self, gpu: &Gpu, out: &GpuRendering) -> Result<Rendering> {
        let lit = match self.shade() {
            ShadeWith::Cuts(lc) => lc.download(gpu, &out.lit)?,
            ShadeWith::Instant(ir) => ir.download(gpu, &out.lit)?,
        };
        Ok(Rendering {
            image: lit.image,
            cuts: lit.cuts,
            vpls: out.vpls,
            queries: lit.queries,
            first_row: self.band()?.start,
        })
    }

    fn gpu_stats(&self, gpu: &Gpu, out: &GpuRendering) -> Result<Report> {
        let mut report = out.before.clone();
        report.merge(match self.shade() {
            ShadeWith::Cuts(lc) => lc.gpu_stats(gpu, &out.lit)?,
            ShadeWith::Instant(ir) => ir.gpu_stats(gpu, &out.lit)?,
        });
        Ok(report)
    }
}
