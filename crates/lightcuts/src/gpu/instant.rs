//! Instant radiosity on the GPU: `lightcuts/instant.wgsl`, the twin of `instant.rs`.

use std::sync::atomic::{AtomicU64, Ordering};

use glam::Vec3;
use lumbre_gpu::{Buffer, Compute, Error, Gpu, Progress, Recorder, Report, Result};
use lumbre_raytrace::Image;

use crate::gpu::{GpuGBuffer, GpuLightScene, GpuLights, no_ism, query_flags, record_ism, tile_dispatches};
use crate::instant::instant_cpu;
use crate::ism::GpuIsmAtlas;
use crate::shading::{GpuShading, ShadingRef, check_shading, ism_cpu, min_distance2, vis_for};
use crate::{InstantRadiosity, Lit, SHADOW_END, Shading, Visibility};

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
    size_of::<Params>() == lumbre_shaders::lightcuts::INSTANT_RAYS_PARAMS_SIZE
        && size_of::<Params>() == lumbre_shaders::lightcuts::INSTANT_MAPS_PARAMS_SIZE
);

/// An image being shaded on the GPU: radiances and shadow rays per 8x8 tile.
#[derive(Clone, Debug)]
pub struct GpuLit {
    /// Linear RGB (and 1) per pixel.
    pub image: Buffer<[f32; 4]>,
    /// Per pixel cut (lightcuts only: `CutPixel` as `vec4<u32>`), else one word.
    pub cuts: Option<Buffer<[u32; 4]>>,
    /// Visibility queries per tile (instant radiosity).
    pub tile_rays: Option<Buffer<u32>>,
    /// Width.
    pub width: u32,
    /// Height.
    pub height: u32,
}

impl GpuLit {
    /// Reads the image back.
    pub(crate) fn download_image(&self, gpu: &Gpu) -> Result<Image> {
        let px = gpu.download(&self.image)?;
        Image::from_pixels(self.width, self.height, px.iter().map(|p| Vec3::new(p[0], p[1], p[2])).collect())
            .map_err(Error::Input)
    }
}

impl InstantRadiosity {
    /// Records the shading of an uploaded G-buffer by uploaded lights, with their imperfect
    /// shadow maps when visibility is by ISM.
    pub fn record_shade(
        &self,
        rec: &mut Recorder,
        scene: &GpuLightScene,
        lights: &GpuLights,
        gbuffer: &GpuGBuffer,
        min_d2: f32,
        ism: Option<&GpuIsmAtlas>,
    ) -> Result<GpuLit> {
        let gpu = rec.gpu().clone();
        let (shader, ism) = match (&self.visibility, ism) {
            (Visibility::Ism(_), Some(atlas)) => (lumbre_shaders::lightcuts::INSTANT_MAPS, atlas.clone()),
            (Visibility::Ism(_), None) => return Err(Error::Input("ISM visibility without an atlas".into())),
            _ => (lumbre_shaders::lightcuts::INSTANT_RAYS, no_ism(&gpu)?),
        };
        let [ism_params, ism_depth] = ism.lookup_bindings(&gpu)?;
        let (w, h) = (gbuffer.width, gbuffer.height);
        let image = gpu.zeroed::<[f32; 4]>(w as usize * h as usize)?;
        let tile_rays = gpu.zeroed::<u32>((w.div_ceil(8) * h.div_ceil(8)) as usize)?;
        let kernel = gpu.kernel(&shader, "main")?;
        let b = scene.tree.bounds;
        let chunks = lights.count.div_ceil(VPLS_PER_DISPATCH);
        for (tile_base, tiles) in tile_dispatches(w, h) {
            for chunk in 0..chunks {
                let first_vpl = chunk * VPLS_PER_DISPATCH;
                let params = gpu.uniform(&Params {
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
                })?;
                let [k1, k2, k3] = scene.tree.bindings();
                let res = [
                    params.as_entire_binding(),
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

impl InstantRadiosity {
    /// The CPU pass on borrowed input (what [`Compute::cpu_reported`] runs).
    pub fn shade_cpu(&self, input: ShadingRef<'_>, progress: &dyn Progress) -> Result<(Lit, Report)> {
        check_shading(input)?;
        let min_d2 = min_distance2(input.prepared, self.clamp)?;
        let mut report = Report::default();
        let atlas = ism_cpu(&self.visibility, input, progress)?.map(|(atlas, r)| {
            report.merge(r);
            atlas
        });
        let vis = vis_for(&self.visibility, input, self.query, atlas.as_ref());
        let g = input.gbuffer;
        let total = g.pixels.len() as u64;
        let done = AtomicU64::new(0);
        let (pixels, queries) = report.time("instant radiosity", || {
            instant_cpu(&g.pixels, &input.tree.vpls, min_d2, &vis, &|k| {
                progress.update("instant radiosity", done.fetch_add(k as u64, Ordering::Relaxed) + k as u64, total)
            })
        });
        report.stat("visibility queries", queries as f64);
        let image = Image::from_pixels(g.width, g.height, pixels).map_err(Error::Input)?;
        Ok((Lit { image, cuts: Vec::new(), queries }, report))
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

    fn cpu(&self, input: &Shading) -> Result<Lit> {
        self.cpu_reported(input, &()).map(|(lit, _)| lit)
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
