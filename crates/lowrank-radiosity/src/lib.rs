//! Low-rank radiosity with a sparse V (Fernández, Ezzatti and Nesmachnow, "Improving
//! low-rank radiosity with sparse matrices"), on the CPU and the GPU.
//!
//! Radiosity `(I - RF) B = E` over n fine elements is approximated with `RF ~ U V^T`: a
//! coarse mesh of k patches, every element in exactly one patch, `V(e, P(e)) = 1`, and
//! `U(e, p) = rho_e F_ep / c_p` per channel (c_p the elements of patch p; see [`LowRank`] for
//! why). With `Y = -U (I - V^T U)^-1`, precomputed once, every lighting is solved by
//! `B = E - Y (V^T E)`: k segmented sums, then a dense n x k product per channel.
//!
//! - **Meshes** ([`TwoMesh`]) of any triangle scene ([`Surfaces`]): elements are cells of
//!   large faces or merged small triangles, patches regular coarse cells or connected
//!   clusters of elements, with n and k near the request; 2MF ([`TwoMesh::fixed`]), the
//!   generated closed box with the paper's sizes ([`TwoMesh::closed_box`]) and 2MCE by the
//!   paper's Algorithm 1 ([`TwoMesh::coherent`], [`Coherence`]). Elements are numbered patch
//!   by patch, so V is the paper's index vector I ([`TwoMesh::patch_start`]);
//!   [`TwoMesh::v_matrix`] gives it as an `sprs` matrix.
//! - **Form factors** with visibility ([`FormFactors`]): the exact unoccluded point-to-patch
//!   factor at stratified points (over a patch's boundary where it is far, see [`Clusters`]),
//!   times a shadow-ray visible fraction (kd-tree any-hit queries), CPU and GPU; element to
//!   element too (`full`), the reference.
//! - **Precompute** ([`Precompute`]): U, `V^T U`, `(I - V^T U)^-1` (LU on the CPU,
//!   Gauss–Jordan on the GPU) and Y; or the factored form `Y_ch = -diag(rho_ch) F W_ch`
//!   ([`Form`]), which a solve reads in a third of the bytes. Saved and loaded with
//!   [`Factorization::save`] / [`Factorization::load`].
//! - **Solve** ([`Solve`]): CPU and GPU (Y in f32 or f16, in row blocks larger than a
//!   binding or a buffer, many lighting vectors per pass), placed once on a backend and run
//!   for every relighting.
//! - **Reference** ([`Jacobi`]) on the full F (`lumbre bench radiosity` measures the paper's
//!   Table 3 and the low-rank error with it).
//!
//! Units: E is emitted radiosity (`pi * Ke` for emitters), B radiosity; the radiance an
//! image shows is `B / pi`.
//!
//! ```
//! use lumbre_gpu::{Backend, Compute};
//! use lumbre_radiosity::{FormFactors, LowRank, Precompute, Solve, TwoMesh};
//!
//! // The generated box: 6 walls of 8 x 8 elements in 2 x 2 patches (n = 384, k = 24).
//! let mesh = TwoMesh::closed_box(8, 2)?;
//! let f = FormFactors::default().cpu(&mesh)?; // n x k, with visibility
//! let factor = Precompute::default().cpu(&LowRank::of_mesh(&mesh, f)?)?.factor;
//!
//! // Place Y once, then relight: the light at full and at half intensity.
//! let backend = Backend::Cpu; // or Backend::Gpu(lumbre_gpu::Gpu::new()?)
//! let placed = backend.place(&Solve::default(), &factor)?;
//! let solve = Solve::new(vec![mesh.emission.clone(), mesh.emission_scaled(0.5)]);
//! let (b, _report) = solve.run_placed(&placed, &())?;
//! let floor_middle = mesh.element_at(0, glam::Vec3::new(0.0, 0.0, 0.0)).unwrap() as usize;
//! let full = b[0][floor_middle];
//! let half = b[1][floor_middle];
//! assert!(full[0] > 0.0 && (half[0] - 0.5 * full[0]).abs() < 1e-4 * full[0]); // linear in E
//! # Ok::<(), lumbre_gpu::Error>(())
//! ```

#![cfg_attr(docsrs, feature(doc_cfg))]

mod cluster;
mod coherent;
pub mod colours;
mod display;
mod factor;
pub mod file;
mod formfactor;
#[cfg(feature = "gpu")]
mod gpu;
mod jacobi;
mod layout;
mod lowrank;
mod matrix;
mod mesh;
mod outline;
mod precompute;
mod resources;
mod shape;
mod solve;
mod surfaces;
pub mod twin;

pub use coherent::{Coherence, CoherenceReport};
pub use display::{Shading, corner_radiosity, render_radiosity};
pub use factor::{Factorization, Form};
pub use formfactor::{FormFactors, Occluders, full_form_factors, point_to_shape};
#[cfg(feature = "gpu")]
pub use gpu::{
    FactorPart, GpuFactor, GpuFactored, GpuForm, GpuFullSystem, GpuLowRank, GpuMesh, GpuPrecomputed, GpuRadiosity,
    GpuRows, GpuSystem,
};
pub use jacobi::{FullSystem, Jacobi};
pub use layout::Storage;
pub use lowrank::LowRank;
#[cfg(feature = "gpu")]
pub use matrix::BlockMatrix;
pub use matrix::Matrix;
pub use mesh::{AreaStats, MeshReport, PatchCell, TwoMesh, rows_in_parts};
pub use outline::{Bound, Clusters, Outlines, area_cdf, contour, sample};
pub use precompute::{Precompute, Precomputed};
pub use resources::Resources;
pub use shape::{Cell, Shape};
pub use solve::{Radiosity, Solve, Vte, solve_cpu, solve_tolerance};
pub use surfaces::{DOMINANT, Face, LightRect, Split, Surfaces};
