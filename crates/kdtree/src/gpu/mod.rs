//! The GPU path: each stage's kernel of `shaders/wgsl/kdtree/` recorded, with its
//! [`Compute`](lumbre_gpu::Compute) impl, in the file named like its CPU half (`traverse.rs`, `bvh.rs`).

pub(crate) mod bvh;
pub(crate) mod structure;
pub(crate) mod traverse;

pub use bvh::{BvhBatch, BvhQuery, GpuBvh};
pub use structure::GpuStructure;
pub use traverse::{GpuKdTree, GpuQueryBatch};
