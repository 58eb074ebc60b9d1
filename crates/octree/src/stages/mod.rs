//! CPU twins of the GPU build's stages (`octree/build.wgsl` and `octree/gather.wgsl`), one
//! function per entry point in a module named like its shader, taking the entry point's
//! uniform and the buffers it binds as slices in binding order, and computing what one
//! dispatch computes, bit for bit (see [`lumbre_compact::stages`] for the conventions).
//! [`run_build`] is the whole GPU build on a
//! [`StageRunner`](lumbre_compact::stages::StageRunner), any stage of which may run as its
//! twin.
//!
//! ```
//! use lumbre_compact::stages::StageRunner;
//! use lumbre_gpu::Compute;
//! use lumbre_octree::{Attrs, GpuBuild, Points};
//! let cloud = Points { positions: vec![[0.0; 3], [1.0; 3], [0.9; 3]], attrs: vec![Attrs::default(); 3] };
//! let tree = lumbre_octree::stages::run_build(&mut StageRunner::cpu(), &GpuBuild::new(3), &cloud)?;
//! assert_eq!(tree, GpuBuild::new(3).cpu(&cloud)?);
//! # Ok::<(), lumbre_gpu::Error>(())
//! ```

pub mod build;
pub mod gather;
mod run;

pub use run::run_build;

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

/// Threads of a dispatch sized for `n` items, 256 per workgroup.
fn threads(n: u32) -> usize {
    (n as usize).div_ceil(256) * 256
}

/// Element `i` of `s`, or zero past its end (a robust out-of-bounds read).
fn get<T: Copy + Default>(s: &[T], i: usize) -> T {
    s.get(i).copied().unwrap_or_default()
}

/// Writes `v` to element `i` of `s` unless it lies past the end.
fn put<T>(s: &mut [T], i: usize, v: T) {
    if let Some(x) = s.get_mut(i) {
        *x = v;
    }
}
