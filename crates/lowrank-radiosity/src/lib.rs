//! Low-rank radiosity with a sparse V (Fernández, Ezzatti and Nesmachnow, "Improving low-rank
//! radiosity with sparse matrices"): two-mesh scenes (2MF, 2MCE), form factors with
//! visibility, and the fixed-geometry solve `B = E - Y (V^T E)` on the CPU and the GPU.

pub mod bench;
mod coherent;
mod factor;
mod formfactor;
mod gpu;
mod jacobi;
mod layout;
mod lowrank;
mod matrix;
mod mesh;
mod precompute;
mod shape;
mod solve;

pub use coherent::{Coherence, CoherenceReport};
pub use factor::{Factorization, Form, MAGIC, VERSION, checksum};
pub use formfactor::{FormFactors, Occluders, element_seed, full_form_factors, kernel, pair_seeds, point_to_shape};
pub use gpu::{
    GpuFactor, GpuForm, GpuFullSystem, GpuLowRank, GpuMesh, GpuPrecomputed, GpuRadiosity, GpuRows, GpuSystem,
    RHS_PER_PASS,
};
pub use jacobi::{FullSystem, Jacobi, jacobi_sweep_cpu};
pub use layout::{Storage, f16_bits, f16_scale, f16_value, layout_cpu, padded_k};
pub use lowrank::LowRank;
pub use matrix::{BlockMatrix, Matrix};
pub use mesh::{AreaStats, Face, GREEN, LIGHT_KD, LIGHT_KE, LightRect, PatchCell, RED, Surfaces, TwoMesh, WHITE};
pub use precompute::{Precompute, Precomputed, inverse_cpu, u_cpu, vtu_cpu, y_cpu};
pub use shape::{Cell, Shape};
pub use solve::{Radiosity, SEGMENT_LANES, Solve, Vte, segment_sum, solve_cpu, solve_tolerance, vte_cpu};
