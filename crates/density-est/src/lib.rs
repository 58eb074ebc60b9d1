//! Ray-based density estimation on the tangent plane (Lastra, Ureña, Bittner, García,
//! Montes, "Ray-based density estimation on the GPU"): the irradiance at a point is the
//! power of the photon segments that cross a small disk there, over the disk's area,
//! `E(x) = (1 / (pi r^2)) * sum(phi_i)` (their eq. 1).
//!
//! - [`Problem`]: photon [`Segment`]s and query [`Disk`]s, validated (errors name the index).
//! - [`twin::crossing`]: the one crossing test (front side only; a segment ending on the
//!   disk counts, the one leaving it does not); [`twin`] holds it with the rest of what the
//!   CPU path shares with the WGSL bit for bit.
//! - [`Density`]: the estimate through [`lumbre_gpu::Compute`], CPU and GPU, by one of
//!   three [`Method`]s: brute force, the paper's octree (processed a level at a time, its
//!   lists filtered by stream compaction or the paper's histogram pyramid), or a BVH over
//!   the disks that every segment traverses (the default).
//! - Query disks: [`camera_disks`] (one per pixel at the camera's first hits), [`disks_at`],
//!   radii from the nearest photon hits ([`nearest_radii`]).
//! - [`PhotonTracer`]: photons from the scene's emitters, diffuse bounces, flights as
//!   segments, CPU and GPU with the same random numbers.
//! - [`Progressive`]: pass after pass of new photons with each disk's radius shrinking
//!   (Hachisuka's progressive photon mapping, alpha 0.7), so the estimate converges; on the
//!   GPU, [`GpuProgressive`].
//! - [`CameraDensity`]: all of it seen from a camera (photons, [`CameraDiskPass`], the
//!   estimate, progressive passes). On the GPU the flights and disks are made and consumed
//!   on the device ([`GpuProblem::resident`]): no download-then-upload between stages.
//! - Runs in parts: a one-pass [`CameraDensity`] traces any range of its run's photons
//!   ([`PhotonRange`]) with the numbers and power they have in the whole run, and returns
//!   raw [`DensitySums`] in a unit every part shares, so the parts, run on other devices or
//!   machines, [`merge`](DensitySums::merge) into the one-piece run's bits
//!   ([`CameraEstimate::from_sums`]).
//! - [`workloads`]: inputs to try the methods on, drawn as in the paper's Table 1 (which
//!   `lumbre bench density` times).
//!
//! Power sums are 64-bit fixed-point integers (see [`Estimate`]): they do not depend on the
//! order of the additions, so all methods and both paths agree bit for bit.
//!
//! Each stage keeps one name for its three halves: the CPU path in `src/<stage>.rs` (the
//! BVH, larger, in `src/bvh/`), the GPU path and the stage's `Compute` impl in
//! `src/gpu/<stage>.rs`, the WGSL in `lumbre-shaders`' `density/<stage>.wgsl`.
//!
//! ```
//! use glam::Vec3;
//! use lumbre_density::{Density, Disk, Method, Problem, Segment};
//! use lumbre_gpu::{Backend, Compute};
//! // A photon falling straight down onto a disk on the floor, and one leaving it upwards.
//! let problem = Problem {
//!     segments: vec![
//!         Segment { start: Vec3::new(0.1, 1.0, 0.0), end: Vec3::new(0.1, 0.0, 0.0), power: [1.0; 3], bounce: 0 },
//!         Segment { start: Vec3::new(0.1, 0.0, 0.0), end: Vec3::new(0.5, 1.0, 0.0), power: [0.5; 3], bounce: 1 },
//!     ],
//!     disks: vec![Disk { centre: Vec3::ZERO, normal: Vec3::Y, radius: 0.25 }],
//! };
//! let est = Density { method: Method::BruteForce, ..Default::default() }.run(&Backend::Cpu, &problem)?;
//! assert_eq!(est.count, vec![1]);
//! let e = 1.0 / (std::f32::consts::PI * 0.25 * 0.25);
//! assert!((est.irradiance[0][0] - e).abs() < 1e-6 * e);
//! # Ok::<(), lumbre_gpu::Error>(())
//! ```

#![cfg_attr(docsrs, feature(doc_cfg))]

mod boxes;
mod brute;
mod bvh;
mod camera;
mod crossing;
mod density;
mod disks;
mod estimate;
mod fixed;
#[cfg(feature = "gpu")]
mod gpu;
mod nearest;
mod octree;
mod ordered;
mod photons;
mod problem;
mod progressive;
mod sums;
pub mod workloads;

pub use camera::{CameraDensity, CameraEstimate};
pub use density::{Density, Method};
pub use disks::{CameraDiskPass, CameraDisks, NO_DISK, camera_disks, disks_at};
pub use estimate::{Estimate, MAX_FLIP_RATE};
#[cfg(feature = "gpu")]
pub use gpu::camera::GpuCameraEstimate;
#[cfg(feature = "gpu")]
pub use gpu::disks::{GpuCameraDisks, GpuDisks};
#[cfg(feature = "gpu")]
pub use gpu::estimate::GpuEstimate;
#[cfg(feature = "gpu")]
pub use gpu::photons::{GpuPhotonScene, GpuPhotons};
#[cfg(feature = "gpu")]
pub use gpu::problem::GpuProblem;
#[cfg(feature = "gpu")]
pub use gpu::progressive::GpuProgressive;
pub use nearest::nearest_radii;
pub use octree::{Filter, OctreeOptions};
pub use photons::{Bounces, PATH_MISMATCH_RATE, PhotonOptions, PhotonRange, PhotonTracer, Photons};
pub use problem::{Disk, MAX_COORD, Problem, Segment};
pub use progressive::Progressive;
pub use sums::{DensitySums, DiskSums};

/// What the CPU path shares with the WGSL, bit for bit: the crossing test (twin of
/// `density/crossing.wgsl`), a disk as both paths read it and as the GPU stores it, its
/// plane tolerance, and the random numbers of photon tracing (twin of the hash in
/// `density/photons.wgsl`). A user needs none of it to estimate density; it is the
/// contract a change to either side must keep.
pub mod twin {
    pub use crate::crossing::crossing;
    pub use crate::photons::photon_random;
    pub use crate::problem::{DiskData, PLANE_EPS, disk_data};
}
