//! The GPU path: each stage's kernel of `shaders/wgsl/morton/` recorded, with its
//! [`Compute`](lumbre_gpu::Compute) impl, in the file named like its CPU half (`encode.rs`,
//! `radix_tree.rs`).

pub(crate) mod encode;
pub(crate) mod radix_tree;

pub use encode::{GpuKeys, GpuPoints};
pub use radix_tree::GpuRadixTree;
