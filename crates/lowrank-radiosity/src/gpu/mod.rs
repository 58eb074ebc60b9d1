//! The GPU path, stage by stage in the order of the CPU stages.

mod formfactor;

pub use formfactor::GpuMesh;
