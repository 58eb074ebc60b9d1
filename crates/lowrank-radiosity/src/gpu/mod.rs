//! The GPU path, stage by stage in the order of the CPU stages.

mod factor;
mod formfactor;
mod jacobi;
mod precompute;
mod solve;

pub use factor::GpuFactored;
pub use formfactor::GpuMesh;
pub use jacobi::GpuFullSystem;
pub use precompute::{GpuLowRank, GpuPrecomputed, GpuSystem};
pub use solve::{GpuFactor, GpuForm, GpuRadiosity, GpuRows, RHS_PER_PASS};
