//! The emitter distribution on the GPU, in the layout `shared/emitters.wgsl` reads.

use lumbre_gpu::{Buffer, Gpu, Result, wgpu};

use crate::emitters::Emitters;

/// One [`Emitter`](crate::emitters::Emitter) as `shared/emitters.wgsl` reads it: 80 bytes, five rows of
/// a `vec3<f32>` and a scalar.
///
/// ```
/// assert_eq!(std::mem::size_of::<lumbre_raytrace::twin::GpuEmitter>(), 80);
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct GpuEmitter {
    /// First corner.
    pub a: [f32; 3],
    /// Index of the triangle into the scene's triangles.
    pub triangle: u32,
    /// Second corner.
    pub b: [f32; 3],
    /// Area.
    pub area: f32,
    /// Third corner.
    pub c: [f32; 3],
    /// Density of its points in area measure.
    pub pdf_area: f32,
    /// Unit geometric normal (the emitting side).
    pub normal: [f32; 3],
    /// Pick probability.
    pub prob: f32,
    /// Emitted radiance.
    pub radiance: [f32; 3],
    /// Zero.
    pub pad: u32,
}

/// [`Emitters`] on the GPU: the three buffers a kernel importing `shared/emitters.wgsl`
/// declares (see the module's header), and the emitter count its `em_sample` takes.
///
/// ```no_run
/// use lumbre_raytrace::twin::GpuEmitters;
/// use lumbre_raytrace::{Emitters, Scene};
/// let (scene, _) = Scene::load_obj("testdata/scenes/CornellBox-Diffuse.obj".as_ref()).unwrap();
/// let emitters = Emitters::new(&scene)?;
/// let on_gpu = GpuEmitters::upload(&lumbre_gpu::Gpu::new()?, &emitters)?;
/// assert_eq!(on_gpu.count, 2);
/// let [_emitters, _cdf, _index] = on_gpu.bindings();
/// # Ok::<(), lumbre_gpu::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct GpuEmitters {
    /// One [`GpuEmitter`] per emitter (one zeroed entry when there are none).
    pub emitters: Buffer<GpuEmitter>,
    /// The CDF, `count + 1` entries starting at 0.
    pub cdf: Buffer<f32>,
    /// Per scene triangle: its emitter or `u32::MAX` (one entry when the scene is empty).
    pub index: Buffer<u32>,
    /// Number of emitters.
    pub count: u32,
}

impl GpuEmitters {
    /// The GPU layout of `emitters`, one entry per emitter.
    pub fn layout(emitters: &Emitters) -> Vec<GpuEmitter> {
        emitters
            .emitters()
            .iter()
            .map(|e| GpuEmitter {
                a: e.corners[0].to_array(),
                triangle: e.triangle,
                b: e.corners[1].to_array(),
                area: e.area,
                c: e.corners[2].to_array(),
                pdf_area: e.pdf_area,
                normal: e.normal.to_array(),
                prob: e.prob,
                radiance: e.radiance.to_array(),
                pad: 0,
            })
            .collect()
    }

    /// Uploads `emitters`.
    pub fn upload(gpu: &Gpu, emitters: &Emitters) -> Result<GpuEmitters> {
        let list = GpuEmitters::layout(emitters);
        let list = if list.is_empty() { vec![GpuEmitter::default()] } else { list };
        let index = if emitters.index().is_empty() { &[u32::MAX][..] } else { emitters.index() };
        Ok(GpuEmitters {
            emitters: gpu.upload(&list)?,
            cdf: gpu.upload(emitters.cdf())?,
            index: gpu.upload(index)?,
            count: emitters.len() as u32,
        })
    }

    /// The bindings in the module's order: emitters, CDF, per-triangle index.
    pub fn bindings(&self) -> [wgpu::BindingResource<'_>; 3] {
        [self.emitters.binding(), self.cdf.binding(), self.index.binding()]
    }
}
