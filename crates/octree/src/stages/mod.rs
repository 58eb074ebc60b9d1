//! CPU twins of the GPU build's stages (`octree/build.wgsl` and `octree/gather.wgsl`), one
//! function per entry point in a module named like its shader, taking the entry point's
//! uniform and the buffers it binds as slices in binding order, and computing what one
//! dispatch computes, bit for bit (see [`lumbre_compact::twin`] for the conventions).
//! [`GpuBuild::run_stages`](crate::GpuBuild::run_stages) runs the GPU build stage by stage,
//! any stage of which may run as its twin.
//!
//! ```
//! use lumbre_gpu::{Compute, stages::Stages};
//! use lumbre_octree::{Attrs, GpuBuild, Points};
//! let cloud = Points { positions: vec![[0.0; 3], [1.0; 3], [0.9; 3]], attrs: vec![Attrs::default(); 3] };
//! let tree = GpuBuild::new(3).run_stages(&mut Stages::cpu(), &cloud)?;
//! assert_eq!(tree, GpuBuild::new(3).cpu(&cloud)?);
//! # Ok::<(), lumbre_gpu::Error>(())
//! ```

pub mod build;
pub mod gather;
/// The uniform of `octree/build.wgsl` (`Params`).
///
/// ```
/// let p = lumbre_octree::stages::BuildParams { n: 10, depth: 4, level: 4, out_cap: 10 };
/// assert_eq!(p.level, p.depth); // the leaf stages
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct BuildParams {
    /// Sorted codes (leaf stages) or child nodes' capacity (parent stages: the stride of the
    /// children's word planes).
    pub n: u32,
    /// Depth of the tree; above 10 keys take two words (the `BUILD_KEY64` variant).
    pub depth: u32,
    /// The level being built.
    pub level: u32,
    /// Capacity of the level being built: the stride of its word planes.
    pub out_cap: u32,
}
const _: () = assert!(
    size_of::<BuildParams>() == lumbre_shaders::octree::BUILD_KEY32_PARAMS_SIZE
        && size_of::<BuildParams>() == lumbre_shaders::octree::BUILD_KEY64_PARAMS_SIZE
);

/// The uniform of `octree/gather.wgsl` (`Params`).
///
/// ```
/// let p = lumbre_octree::stages::GatherParams { n: 8, depth: 3, level: 3, key_words: 1, ..Default::default() };
/// assert_eq!(p._pad, [0; 2]);
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct GatherParams {
    /// Capacity of the level: the stride of its word planes.
    pub n: u32,
    /// Depth of the tree.
    pub depth: u32,
    /// The level.
    pub level: u32,
    /// Words of the key planes that lead each level's planes (1 or 2).
    pub key_words: u32,
    /// Where the level's flags start in `owner` (and `payload_of`).
    pub seg: u32,
    /// Where the next deeper level's flags start.
    pub seg_below: u32,
    /// Zero (padding).
    pub _pad: [u32; 2],
}
const _: () = assert!(size_of::<GatherParams>() == lumbre_shaders::octree::GATHER_PARAMS_SIZE);
