//! Low-rank radiosity with a sparse V (Fernández, Ezzatti and Nesmachnow, "Improving low-rank
//! radiosity with sparse matrices"): two-mesh scenes (2MF, 2MCE), form factors with
//! visibility, and the fixed-geometry solve `B = E - Y (V^T E)` on the CPU and the GPU.

mod coherent;
mod formfactor;
mod gpu;
mod matrix;
mod mesh;
mod shape;

pub use coherent::{Coherence, CoherenceReport};
pub use formfactor::{FormFactors, Occluders, element_seed, full_form_factors, kernel, pair_seeds, point_to_shape};
pub use gpu::GpuMesh;
pub use matrix::{BlockMatrix, Matrix};
pub use mesh::{AreaStats, Face, GREEN, LIGHT_KD, LIGHT_KE, LightRect, PatchCell, RED, Surfaces, TwoMesh, WHITE};
pub use shape::{Cell, Shape};
