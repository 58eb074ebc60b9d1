//! The CPU twins of the GPU stages (each computes what its shader does, bit for bit where
//! the tests say so) and the constants the WGSL shares: for bisecting a pipeline stage by
//! stage and for the conformance tests.

pub use crate::formfactor::{element_seed, kernel, pair_seeds};
#[cfg(feature = "gpu")]
pub use crate::gpu::solve::RHS_PER_PASS;
pub use crate::jacobi::jacobi_sweep_cpu;
pub use crate::layout::{f16_bits, f16_scale, f16_value, layout_cpu, padded_k};
pub use crate::outline::{FAR, FEW_PIECES};
pub use crate::precompute::{inverse_cpu, u_cpu, vtu_cpu, y_cpu};
pub use crate::solve::{SEGMENT_LANES, segment_sum, vte_cpu};
