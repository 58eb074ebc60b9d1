//! The GPU path: each stage's kernel of `shaders/wgsl/kdtree/` recorded, with its
//! [`Compute`](lumbre_gpu::Compute) impl, in the file named like its CPU half (`traverse.rs`).

pub(crate) mod traverse;

pub use traverse::{GpuKdTree, GpuQueryBatch};
