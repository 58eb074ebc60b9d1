//! The GPU path: each stage's kernels of `shaders/wgsl/radiosity/` recorded, with its
//! [`Compute`](lumbre_gpu::Compute) impl, in the file named like its CPU half
//! (`formfactor.rs`, `precompute.rs`, `factor.rs`, `solve.rs`, `jacobi.rs`); a stage of
//! several kernels names them `<stage>_<part>.wgsl`.

pub(crate) mod factor;
pub(crate) mod formfactor;
pub(crate) mod jacobi;
pub(crate) mod precompute;
pub(crate) mod solve;

pub use factor::{FactorPart, GpuFactored};
pub use formfactor::GpuMesh;
pub use jacobi::GpuFullSystem;
pub use precompute::{GpuLowRank, GpuPrecomputed, GpuSystem};
pub use solve::{GpuFactor, GpuForm, GpuRadiosity, GpuRows};
