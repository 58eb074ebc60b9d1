//! Instant radiosity on the GPU: `lightcuts/instant.wgsl`, the twin of `instant.rs`.

use lumbre_gpu::{Compute, Error, Gpu, Progress, Recorder, Report, Result};
use lumbre_raytrace::GpuScene;

use crate::gpu::gbuffer::{GpuGBuffer, tile_dispatches};
use crate::gpu::ism::GpuIsmAtlas;
use crate::gpu::scene::query_flags;
use crate::gpu::shading::{GpuLit, GpuShading, no_ism, record_ism};
use crate::gpu::tree::GpuLights;
use crate::instant::InstantRadiosity;
use crate::shading::{Lit, SHADOW_END, Shading, Visibility};

/// VPLs per dispatch of `instant.wgsl`. Lavapipe (llvmpipe) ends any loop nest after
/// 65535 iterations per invocation to stop runaway shaders, so one dispatch over thousands
/// of VPLs, each with a kd-tree walk, would silently drop lights there; 128 VPLs with walks
/// of up to a few hundred steps stay well below that, and other GPUs lose little.
pub(crate) const VPLS_PER_DISPATCH: u32 = 128;

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    bmin: [f32; 3],
    width: u32,
    bmax: [f32; 3],
    height: u32,
    min_d2: f32,
    n_vpls: u32,
    flags: u32,
    tile_base: u32,
    shadow_end: f32,
    first_vpl: u32,
    stage: u32,
    _pad: u32,
}
const _: () = assert!(
    size_of::<Params>() == lumbre_shaders::lightcuts::INSTANT_RAYS_KD_PARAMS_SIZE
        && size_of::<Params>() == lumbre_shaders::lightcuts::INSTANT_MAPS_BVH_PARAMS_SIZE
);

impl InstantRadiosity {
    /// Records the shading of an uploaded G-buffer by uploaded lights, with their imperfect
    /// shadow maps when visibility is by ISM.
    pub fn record_shade(
        &self,
        rec: &mut Recorder,
        scene: &GpuScene,
        lights: &GpuLights,
        gbuffer: &GpuGBuffer,
        min_d2: f32,
        ism: Option<&GpuIsmAtlas>,
    ) -> Result<GpuLit> {
        use lumbre_shaders::lightcuts::{INSTANT_MAPS_BVH, INSTANT_MAPS_KD, INSTANT_RAYS_BVH, INSTANT_RAYS_KD};
        let gpu = rec.gpu().clone();
        let (shader, ism) = match (&self.visibility, ism) {
            (Visibility::Ism(_), Some(atlas)) => {
                (scene.structure.pick(INSTANT_MAPS_KD, INSTANT_MAPS_BVH), atlas.clone())
            }
            (Visibility::Ism(_), None) => return Err(Error::Input("ISM visibility without an atlas".into())),
            _ => (scene.structure.pick(INSTANT_RAYS_KD, INSTANT_RAYS_BVH), no_ism(&gpu)?),
        };
        let [ism_params, ism_depth] = ism.lookup_bindings(&gpu)?;
        let (w, h) = (gbuffer.width, gbuffer.height);
        let image = gpu.zeroed::<[f32; 4]>(w as usize * h as usize)?;
        let tile_rays = gpu.zeroed::<u32>((w.div_ceil(8) * h.div_ceil(8)) as usize)?;
        let kernel = gpu.kernel(&shader, "main")?;
        let b = scene.bounds();
        let chunks = lights.count.div_ceil(VPLS_PER_DISPATCH);
        for (tile_base, tiles) in tile_dispatches(w, h) {
            for chunk in 0..chunks {
                let first_vpl = chunk * VPLS_PER_DISPATCH;
                let params = gpu.upload(&[Params {
                    bmin: b.min.to_array(),
                    width: w,
                    bmax: b.max.to_array(),
                    height: h,
                    min_d2,
                    n_vpls: VPLS_PER_DISPATCH.min(lights.count - first_vpl),
                    flags: query_flags(&self.query) | self.visibility.ray_flag(),
                    tile_base,
                    shadow_end: SHADOW_END,
                    first_vpl,
                    stage: (chunk == 0) as u32 | ((chunk + 1 == chunks) as u32) << 1,
                    _pad: 0,
                }])?;
                let [k1, k2, k3] = scene.structure.bindings();
                let res = [
                    params.binding(),
                    k1,
                    k2,
                    k3,
                    gbuffer.pixels.binding(),
                    lights.vpls.binding(),
                    image.binding(),
                    tile_rays.binding(),
                    ism_params.clone(),
                    ism_depth.clone(),
                ];
                rec.dispatch("instant radiosity", &kernel, &res, tiles as u64)?;
            }
        }
        Ok(GpuLit { image, cuts: None, tile_rays: Some(tile_rays), width: w, height: h })
    }
}

impl Compute for InstantRadiosity {
    type Input = Shading;
    type Output = Lit;
    type GpuInput = GpuShading;
    type GpuOutput = GpuLit;

    fn name(&self) -> &'static str {
        "instant radiosity"
    }

    /// Progress in pixels; reports the visibility queries (and the ISM build's stages).
    fn cpu_reported(&self, input: &Shading, progress: &dyn Progress) -> Result<(Lit, Report)> {
        self.shade_cpu(input.by_ref(), progress)
    }

    fn upload(&self, gpu: &Gpu, input: &Shading) -> Result<GpuShading> {
        GpuShading::upload(gpu, input, &self.visibility)
    }

    fn record(&self, rec: &mut Recorder, input: &GpuShading) -> Result<GpuLit> {
        let ism = record_ism(rec, &self.visibility, input)?;
        self.record_shade(rec, &input.scene, &input.lights, &input.gbuffer, input.min_d2(self.clamp)?, ism.as_ref())
    }

    fn download(&self, gpu: &Gpu, out: &GpuLit) -> Result<Lit> {
        let queries = match &out.tile_rays {
            Some(t) => gpu.download(t)?.iter().map(|&r| r as u64).sum(),
            None => 0,
        };
        Ok(Lit { image: out.download_image(gpu)?, cuts: Vec::new(), queries })
    }

    fn gpu_stats(&self, gpu: &Gpu, out: &GpuLit) -> Result<Report> {
        let mut report = Report::default();
        if let Some(t) = &out.tile_rays {
            report.stat("visibility queries", gpu.download(t)?.iter().map(|&r| r as f64).sum());
        }
        Ok(report)
    }
}
