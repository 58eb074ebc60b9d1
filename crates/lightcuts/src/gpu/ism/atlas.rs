//! The atlas of depth maps on the GPU, the twin of `ism/atlas.rs`, with the uniform that
//! `lightcuts/ism_lookup.wgsl` reads beside it.

use lumbre_gpu::{Buffer, Error, Fit, Gpu, Result};

use crate::ism::atlas::{IsmAtlas, Lookup};
use crate::ism::options::SIZES;

/// The uniform of `lightcuts/ism_lookup`.
#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct IsmParams {
    size: u32,
    taps: u32,
    vpls: u32,
    bias: f32,
    per_distance: f32,
    _pad: [u32; 3],
}
const _: () = assert!(size_of::<IsmParams>() == lumbre_shaders::lightcuts::ISM_LOOKUP_QUERIES_ISM_PARAMS_SIZE);

/// An atlas of depth maps on the GPU (the layout of [`IsmAtlas`]: maps one
/// after another, f32 bits, +inf for holes), with the uniform its lookups read.
#[derive(Clone, Debug)]
pub struct GpuIsmAtlas {
    /// The depths' bits. Longer than one storage binding when there are many maps: the
    /// build binds it in pieces of whole maps.
    pub depth: Buffer<u32>,
    /// Side of each map.
    pub size: u32,
    /// Number of maps.
    pub vpls: u32,
    /// How lookups compare depths.
    pub lookup: Lookup,
    params: lumbre_gpu::wgpu::Buffer,
}

impl GpuIsmAtlas {
    /// An atlas of `vpls` maps on `gpu` (contents undefined until a build writes them).
    pub(crate) fn new(gpu: &Gpu, size: u32, vpls: u32, lookup: Lookup) -> Result<GpuIsmAtlas> {
        let len = vpls as usize * (size * size) as usize;
        let depth = gpu.zeroed_fit::<u32>(len, Fit::Pieces)?;
        let params = gpu.uniform(&IsmParams {
            size,
            taps: lookup.taps,
            vpls,
            bias: lookup.bias,
            per_distance: lookup.per_distance(size),
            _pad: [0; 3],
        })?;
        Ok(GpuIsmAtlas { depth, size, vpls, lookup, params })
    }

    /// Uploads an atlas.
    ///
    /// ```no_run
    /// use lumbre_lightcuts::ism::{GpuIsmAtlas, IsmAtlas};
    /// let gpu = lumbre_gpu::Gpu::new()?;
    /// let atlas = GpuIsmAtlas::upload(&gpu, &IsmAtlas::empty(32, 4))?;
    /// assert_eq!(atlas.vpls, 4);
    /// # Ok::<(), lumbre_gpu::Error>(())
    /// ```
    pub fn upload(gpu: &Gpu, atlas: &IsmAtlas) -> Result<GpuIsmAtlas> {
        if atlas.depth.len() != atlas.vpls as usize * atlas.texels() || !SIZES.contains(&atlas.size) {
            return Err(Error::Input(format!(
                "an atlas of {} depths for {} maps of side {} (sides allowed: {:?})",
                atlas.depth.len(),
                atlas.vpls,
                atlas.size,
                SIZES
            )));
        }
        let g = GpuIsmAtlas::new(gpu, atlas.size, atlas.vpls, atlas.lookup)?;
        let bits: &[u32] = bytemuck::cast_slice(&atlas.depth);
        gpu.write(&g.depth, 0, bits)?;
        Ok(g)
    }

    /// Reads the atlas back.
    pub fn download(&self, gpu: &Gpu) -> Result<IsmAtlas> {
        let bits = gpu.download(&self.depth)?;
        Ok(IsmAtlas {
            size: self.size,
            vpls: self.vpls,
            depth: bits.into_iter().map(f32::from_bits).collect(),
            lookup: self.lookup,
        })
    }

    /// The bindings `lightcuts/ism_lookup` reads, in its order: the `IsmParams` uniform,
    /// then the depths. An error when the depths exceed one storage binding (lookups bind
    /// the atlas whole), naming the limit.
    pub fn lookup_bindings(&self, gpu: &Gpu) -> Result<[lumbre_gpu::wgpu::BindingResource<'_>; 2]> {
        gpu.check_size("ISM atlas bound for lookups", self.depth.size_bytes(), Fit::Binding)?;
        Ok([self.params.as_entire_binding(), self.depth.binding()])
    }

    /// Maps per piece: the most whole maps that one storage binding holds.
    pub(crate) fn maps_per_piece(&self, gpu: &Gpu) -> usize {
        gpu.piece_len((self.size * self.size * 4) as usize, 1)
    }
}
