//! Lightcuts on the GPU: `lightcuts/cuts.wgsl`, the twin of `cuts.rs`.

use lumbre_gpu::{Compute, Error, Gpu, Progress, Recorder, Report, Result};
use lumbre_raytrace::GpuScene;

use crate::cuts::{CutPixel, Lightcuts, cut_stats};
use crate::gpu::gbuffer::{GpuGBuffer, tile_dispatches};
use crate::gpu::ism::GpuIsmAtlas;
use crate::gpu::scene::query_flags;
use crate::gpu::shading::{GpuLit, GpuShading, no_ism, record_ism};
use crate::gpu::tree::GpuLights;
use crate::shading::{Lit, SHADOW_END, Shading, Visibility};

/// The heap sizes the GPU kernel is compiled for (entries per pixel, 12 bytes each, in
/// private memory).
pub const HEAP_SIZES: [u32; 3] = [32, 64, 128];

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    bmin: [f32; 3],
    width: u32,
    bmax: [f32; 3],
    height: u32,
    min_d2: f32,
    error: f32,
    max_cut: u32,
    flags: u32,
    tile_base: u32,
    shadow_end: f32,
    _pad: [u32; 2],
}
const _: () = assert!(
    size_of::<Params>() == lumbre_shaders::lightcuts::CUTS_RAYS32_KD_PARAMS_SIZE
        && size_of::<Params>() == lumbre_shaders::lightcuts::CUTS_RAYS64_KD_PARAMS_SIZE
        && size_of::<Params>() == lumbre_shaders::lightcuts::CUTS_RAYS128_KD_PARAMS_SIZE
        && size_of::<Params>() == lumbre_shaders::lightcuts::CUTS_MAPS32_KD_PARAMS_SIZE
        && size_of::<Params>() == lumbre_shaders::lightcuts::CUTS_MAPS64_KD_PARAMS_SIZE
        && size_of::<Params>() == lumbre_shaders::lightcuts::CUTS_MAPS128_KD_PARAMS_SIZE
);

impl Lightcuts {
    /// The kernel variant for the heap size and visibility; an error for heap sizes it is
    /// not compiled for.
    fn shader(&self, scene: &GpuScene) -> Result<lumbre_shaders::Shader> {
        use lumbre_shaders::lightcuts::*;
        let ism = matches!(self.visibility, Visibility::Ism(_));
        let pick = |kd, bvh| scene.structure.pick(kd, bvh);
        Ok(match (self.cut.heap, ism) {
            (32, false) => pick(CUTS_RAYS32_KD, CUTS_RAYS32_BVH),
            (64, false) => pick(CUTS_RAYS64_KD, CUTS_RAYS64_BVH),
            (128, false) => pick(CUTS_RAYS128_KD, CUTS_RAYS128_BVH),
            (32, true) => pick(CUTS_MAPS32_KD, CUTS_MAPS32_BVH),
            (64, true) => pick(CUTS_MAPS64_KD, CUTS_MAPS64_BVH),
            (128, true) => pick(CUTS_MAPS128_KD, CUTS_MAPS128_BVH),
            (h, _) => {
                return Err(Error::Input(format!(
                    "lightcuts on the GPU: heap of {h} entries; the kernel has {HEAP_SIZES:?}"
                )));
            }
        })
    }

    /// Records the cuts of an uploaded G-buffer over an uploaded tree, with the lights'
    /// imperfect shadow maps when visibility is by ISM.
    pub fn record_cuts(
        &self,
        rec: &mut Recorder,
        scene: &GpuScene,
        lights: &GpuLights,
        gbuffer: &GpuGBuffer,
        min_d2: f32,
        ism: Option<&GpuIsmAtlas>,
    ) -> Result<GpuLit> {
        self.cut.validate()?;
        let gpu = rec.gpu().clone();
        let ism = match (&self.visibility, ism) {
            (Visibility::Ism(_), Some(atlas)) => atlas.clone(),
            (Visibility::Ism(_), None) => return Err(Error::Input("ISM visibility without an atlas".into())),
            _ => no_ism(&gpu)?,
        };
        let [ism_params, ism_depth] = ism.lookup_bindings(&gpu)?;
        let kernel = gpu.kernel(&self.shader(scene)?, "main")?;
        let (w, h) = (gbuffer.width, gbuffer.height);
        let n = w as usize * h as usize;
        let image = gpu.zeroed::<[f32; 4]>(n)?;
        let cuts = gpu.zeroed::<[u32; 4]>(n)?;
        let b = scene.bounds();
        for (tile_base, tiles) in tile_dispatches(w, h) {
            let params = gpu.uniform(&Params {
                bmin: b.min.to_array(),
                width: w,
                bmax: b.max.to_array(),
                height: h,
                min_d2,
                error: self.cut.error,
                max_cut: self.cut.max_cut,
                flags: query_flags(&self.query) | self.visibility.ray_flag(),
                tile_base,
                shadow_end: SHADOW_END,
                _pad: [0; 2],
            })?;
            let [k1, k2, k3] = scene.structure.bindings();
            let res = [
                params.as_entire_binding(),
                k1,
                k2,
                k3,
                gbuffer.pixels.binding(),
                lights.nodes.binding(),
                lights.vpls.binding(),
                image.binding(),
                cuts.binding(),
                ism_params.clone(),
                ism_depth.clone(),
            ];
            rec.dispatch("lightcuts", &kernel, &res, tiles as u64)?;
        }
        Ok(GpuLit { image, cuts: Some(cuts), tile_rays: None, width: w, height: h })
    }
}

impl Compute for Lightcuts {
    type Input = Shading;
    type Output = Lit;
    type GpuInput = GpuShading;
    type GpuOutput = GpuLit;

    fn name(&self) -> &'static str {
        "lightcuts"
    }

    /// Progress in pixels; reports the average and largest cut, visibility queries and
    /// flagged pixels (and the ISM build's stages).
    fn cpu_reported(&self, input: &Shading, progress: &dyn Progress) -> Result<(Lit, Report)> {
        self.shade_cpu(input.by_ref(), progress)
    }

    fn upload(&self, gpu: &Gpu, input: &Shading) -> Result<GpuShading> {
        GpuShading::upload(gpu, input, &self.visibility)
    }

    fn record(&self, rec: &mut Recorder, input: &GpuShading) -> Result<GpuLit> {
        let ism = record_ism(rec, &self.visibility, input)?;
        self.record_cuts(rec, &input.scene, &input.lights, &input.gbuffer, input.min_d2(self.clamp)?, ism.as_ref())
    }

    fn download(&self, gpu: &Gpu, out: &GpuLit) -> Result<Lit> {
        let cuts: Vec<CutPixel> = match &out.cuts {
            Some(c) => bytemuck::cast_slice(&gpu.download(c)?).to_vec(),
            None => Vec::new(),
        };
        let queries = cuts.iter().map(|c| c.queries as u64).sum();
        Ok(Lit { image: out.download_image(gpu)?, cuts, queries })
    }

    fn gpu_stats(&self, gpu: &Gpu, out: &GpuLit) -> Result<Report> {
        let mut report = Report::default();
        if let Some(c) = &out.cuts {
            cut_stats(bytemuck::cast_slice(&gpu.download(c)?), &mut report);
        }
        Ok(report)
    }
}
