//! 3D Morton codes and level-prefixed octree node keys, on the CPU and the GPU.
//!
//! - [`encode_u32`] / [`decode_u32`]: 30-bit codes (10 bits per axis);
//!   [`encode_u64`] / [`decode_u64`]: 63-bit codes (21 bits per axis). Portable magic-bit
//!   code; x is bit 0 of each triplet, as in the volumetric thesis.
//! - [`Quantizer`]: f32 points in a box to grid cells (points on the max face land in the
//!   last cell; points outside are an error, or clamped on request).
//! - [`NodeKey32`] / [`NodeKey64`]: the thesis's node keys (a marker bit, then one triplet per
//!   level), with parent, child, ancestor, containment, bounds and the key <-> array index
//!   mapping `index = sum(8^i, i < level) + value`.
//! - [`MortonEncode`]: encoding a point buffer, CPU and GPU (`morton/encode.wgsl`),
//!   bit-exact with each other.
//! - [`RadixTree`]: Karras's radix tree over sorted codes, the topology of a linear BVH or
//!   a light tree, CPU and GPU ([`RadixTreeBuild`], `morton/radix_tree.wgsl`), bit-exact.
//!
//! Each stage has its CPU half in `src/<stage>.rs`, its GPU half in `src/gpu/<stage>.rs` and
//! its kernel in `morton/<stage>.wgsl` of `lumbre-shaders`; `morton/code.wgsl` holds the
//! WGSL twins of [`encode_u32`] and [`encode_u64`] that other kernels import.
//!
//! ```
//! use lumbre_morton::{NodeKey32, Quantizer, encode_u32};
//! let q = Quantizer::cube([0.0; 3], [1.0; 3], 10).unwrap();
//! let cell = q.cell([0.25, 0.5, 0.75], 0).unwrap();
//! let leaf = NodeKey32::new(10, encode_u32(cell)).unwrap();
//! let ancestors: Vec<u64> = (0..=3).map(|l| leaf.ancestor(l).unwrap().index()).collect();
//! assert_eq!(ancestors[0], 0);
//! ```

#![cfg_attr(docsrs, feature(doc_cfg))]

mod code;
mod encode;
#[cfg(feature = "gpu")]
mod gpu;
mod key;
mod quantize;
mod radix_tree;

pub use code::{
    BITS_32, BITS_64, compact_u32, compact_u64, decode_u32, decode_u64, encode_u32, encode_u64, spread_u32, spread_u64,
};
pub use encode::{Keys, MortonEncode};
#[cfg(feature = "gpu")]
pub use gpu::{GpuKeys, GpuPoints, GpuRadixTree};
pub use key::{NodeKey32, NodeKey64, level_offset};
pub use quantize::{QuantizeError, Quantizer};
pub use radix_tree::{NO_PARENT, RadixNode, RadixTree, RadixTreeBuild};
