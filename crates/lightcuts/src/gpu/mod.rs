//! The GPU path: each stage's kernels of `shaders/wgsl/lightcuts/` recorded, with its
//! [`Compute`](lumbre_gpu::Compute) impl, in the file named like its CPU half
//! (`vpls.rs`, `morton_tree.rs`, `gbuffer.rs`, `cuts.rs`, `instant.rs`, `render.rs`,
//! `ism/<stage>.rs`); `scene.rs` says how the kernels walk the scene.

pub(crate) mod cuts;
pub(crate) mod gbuffer;
pub(crate) mod instant;
pub(crate) mod ism;
pub(crate) mod morton_tree;
pub(crate) mod render;
pub(crate) mod scene;
pub(crate) mod shading;
pub(crate) mod tree;
pub(crate) mod vpls;

pub use cuts::HEAP_SIZES;
pub use gbuffer::GpuGBuffer;
pub use morton_tree::GpuLightTree;
pub use render::{GpuRenderScene, GpuRendering};
pub use shading::{GpuLit, GpuShading};
pub use tree::GpuLights;
pub use vpls::{GpuVpl, GpuVplList, GpuVplScene};
