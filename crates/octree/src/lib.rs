//! A linear sparse octree over point clouds, addressed by level-prefixed Morton keys (the
//! volumetric thesis's engine, without its dense 8^depth skeleton): nodes exist only where
//! points are, memory grows with the data, and the root grows when points leave it.
//!
//! - [`Octree::build`]: sort leaf keys, one node per distinct key per level, exact integer
//!   payload sums (count, colour, reflection, refraction), at any depth up to 21 (`u64`
//!   keys; the GPU build uses one-word keys up to depth 10). Nodes store no key:
//!   [`Octree::key`] and [`Octree::find`] follow the child masks. CPU here; the GPU build in
//!   [`GpuBuild`] matches it bit for bit, in the packed form of [`Octree::pack`].
//! - [`Octree::update`]: the thesis's in-place update when points move.
//! - [`Octree::trace`]: slab tests and a front-to-back stack descent to the first voxel.
//! - [`dense_counts`]: the thesis's own build (atomic counters over every possible node),
//!   to compare against.
//! - [`twin`]: CPU twins of the GPU build's stages; [`GpuBuild::run_stages`] runs the GPU
//!   build stage by stage with any stage on the CPU.
//!
//! ```
//! use lumbre_octree::{Attrs, Octree};
//! let points: Vec<[f32; 3]> = (0..1000).map(|i| {
//!     let t = i as f32 * 0.01;
//!     [t.cos(), t.sin(), t * 0.1]
//! }).collect();
//! let attrs = vec![Attrs::from_unit([1.0, 0.5, 0.0], 0.0, 0.0); points.len()];
//! let (tree, _) = Octree::build(&points, &attrs, 6).unwrap();
//! assert_eq!(tree.points(), 1000);
//! assert_eq!(tree.nodes[0].mean_color(), [1.0, 128.0 / 255.0, 0.0]);
//! ```

#![cfg_attr(docsrs, feature(doc_cfg))]

mod attrs;
mod build;
mod dense;
#[cfg(feature = "gpu")]
mod gpu;
mod node;
mod packed;
mod traverse;
mod update;

pub use attrs::Attrs;
pub use build::{BuildReport, GpuBuild, MAX_POINTS, OctreeError, Points, quantizer_of};
pub use dense::{DenseCounts, MAX_DENSE_DEPTH, dense_bytes, dense_counts};
#[cfg(feature = "gpu")]
pub use gpu::build::GpuCloud;
#[cfg(feature = "gpu")]
pub use gpu::packed::GpuOctree;
pub use node::{MAX_DEPTH, NO_CHILD, Node, Octree, Root};
pub use packed::{Inner, PackedOctree, Payload};
pub use traverse::{STACK_SIZE, VoxelHit, slab};
pub use update::{REBUILD_FRACTION, UpdateReport};

/// CPU twins of the GPU build's stages, one module per stage: a function per WGSL entry
/// point, named like it, and the `*Params` structs that mirror the kernels' uniforms (see
/// [`lumbre_compact::twin`] for the conventions). [`GpuBuild::run_stages`] runs the GPU
/// build with any of them in place of its dispatch.
///
/// ```
/// use lumbre_gpu::stages::Stages;
/// use lumbre_octree::{Attrs, GpuBuild, Points};
/// let cloud = Points { positions: vec![[0.0; 3], [1.0; 3], [0.9; 3]], attrs: vec![Attrs::default(); 3] };
/// let tree = GpuBuild::new(3).run_stages(&mut Stages::cpu(), &cloud)?;
/// assert_eq!(tree, GpuBuild::new(3).cpu(&cloud)?);
/// # Ok::<(), lumbre_gpu::Error>(())
/// ```
pub mod twin {
    pub use crate::build::twin as build;
    pub use crate::packed::twin as packed;
}
