//! The shading stages' input and output on the GPU (the twins of `shading.rs`'s [`Shading`]
//! and [`Lit`](crate::shading::Lit)), and the imperfect shadow maps they record when visibility asks for them.

use glam::Vec3;
use lumbre_gpu::{Buffer, Compute, Error, Gpu, Recorder, Result};
use lumbre_raytrace::{GpuScene, Image};

use crate::gpu::gbuffer::GpuGBuffer;
use crate::gpu::ism::{GpuIsmAtlas, GpuIsmScene, GpuPoolInput};
use crate::gpu::tree::GpuLights;
use crate::ism::{Ism, IsmAtlas};
use crate::shading::{Shading, Visibility, check_shading};

/// A [`Shading`] input on the GPU.
#[derive(Clone, Debug)]
pub struct GpuShading {
    /// The scene.
    pub scene: GpuScene,
    /// The tree and its lights.
    pub lights: GpuLights,
    /// The G-buffer.
    pub gbuffer: GpuGBuffer,
    /// The scene's diagonal (for the clamp distance).
    pub diagonal: f32,
    /// The triangles the ISM's point pool is drawn from, when visibility is by ISM.
    pub ism_pool: Option<GpuPoolInput>,
}

impl GpuShading {
    /// Checks and uploads a [`Shading`] input (with the ISM's triangles for `visibility`).
    pub fn upload(gpu: &Gpu, input: &Shading, visibility: &Visibility) -> Result<GpuShading> {
        check_shading(input.by_ref())?;
        let ism_pool = match visibility {
            Visibility::Ism(o) => {
                o.validate()?;
                Some(GpuPoolInput::new(gpu, &input.prepared.tris, o.points, o.seed)?)
            }
            _ => None,
        };
        Ok(GpuShading {
            scene: GpuScene::upload(gpu, &input.prepared)?,
            lights: GpuLights::upload(gpu, &input.tree)?,
            gbuffer: GpuGBuffer::upload(gpu, &input.gbuffer)?,
            diagonal: (input.prepared.scene.bounds.1 - input.prepared.scene.bounds.0).length(),
            ism_pool,
        })
    }

    /// The squared clamp distance for `clamp` (a fraction of the diagonal), checked.
    pub fn min_d2(&self, clamp: f32) -> Result<f32> {
        let r = clamp * self.diagonal;
        if !(r > 0.0 && r.is_finite()) {
            return Err(Error::Input(format!(
                "clamp distance {clamp} x scene diagonal {} = {r}: must be finite and > 0",
                self.diagonal
            )));
        }
        Ok(r * r)
    }
}

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

/// The imperfect shadow maps of `shading`'s lights when `visibility` asks for them,
/// recorded on `rec`.
pub(crate) fn record_ism(
    rec: &mut Recorder,
    visibility: &Visibility,
    shading: &GpuShading,
) -> Result<Option<GpuIsmAtlas>> {
    let Visibility::Ism(options) = visibility else { return Ok(None) };
    let Some(pool) = &shading.ism_pool else {
        return Err(Error::Input("ISM visibility on an input uploaded without its ISM pool".into()));
    };
    let scene = GpuIsmScene { pool: pool.clone(), vpls: shading.lights.vpls.clone() };
    Ok(Some(Ism { options: *options }.record(rec, &scene)?))
}

/// A one-map atlas to fill the ISM bindings of the kernels when visibility is not by ISM.
pub(crate) fn no_ism(gpu: &Gpu) -> Result<GpuIsmAtlas> {
    GpuIsmAtlas::upload(gpu, &IsmAtlas::empty(32, 1))
}
