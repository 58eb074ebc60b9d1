//! Inputs to try the methods on: photon segments and query disks drawn uniformly in the unit
//! cube (the distribution of the paper's Table 1, which `lumbre bench density` times), the
//! same for a seed on every machine and thread count.

use glam::Vec3;
use lumbre_raytrace::sampling::{hash_f32, hash_u32};
use rayon::prelude::*;

use crate::problem::{Disk, Problem, Segment};

/// The size of a workload: `disks` disks and `segments` segments.
///
/// ```
/// let w = lumbre_density::workloads::Workload { disks: 100, segments: 1000 };
/// assert_eq!(lumbre_density::workloads::uniform(w, 0.01, 1).segments.len(), 1000);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Workload {
    /// Number of disks.
    pub disks: usize,
    /// Number of segments.
    pub segments: usize,
}

/// Number `k` of the stream of uniform numbers of `item` (of `stream`, under `seed`).
fn uniform01(seed: u32, stream: u32, item: usize, k: u32) -> f32 {
    hash_f32(hash_u32(seed ^ hash_u32(stream)).wrapping_add((item as u32).wrapping_mul(8).wrapping_add(k)))
}

/// Segments with both ends uniform in the unit cube (independently), power 1 in every
/// channel, bounce 0; disks with centres uniform in the unit cube, normals uniform on the
/// sphere (`z = 2u - 1`, azimuth `2 pi v`) and radius `radius`. Numbers come from the
/// integer hash ([`hash_u32`]): segment `i` draws `hash_f32(hash_u32(seed ^ hash_u32(0)) +
/// 8i + k)` for its coordinates `k = 0..6` (start xyz, end xyz), disk `j` the same with
/// stream 1 and `k = 0..5` (centre xyz, u, v).
///
/// ```
/// use lumbre_density::workloads::{Workload, uniform};
/// let p = uniform(Workload { disks: 3, segments: 5 }, 0.01, 7);
/// assert_eq!((p.disks.len(), p.segments.len()), (3, 5));
/// assert_eq!(p, uniform(Workload { disks: 3, segments: 5 }, 0.01, 7));
/// assert!(p.disks.iter().all(|d| d.radius == 0.01 && (d.normal.length() - 1.0).abs() < 1e-5));
/// ```
pub fn uniform(w: Workload, radius: f32, seed: u32) -> Problem {
    let segments = (0..w.segments)
        .into_par_iter()
        .map(|i| {
            let u = |k| uniform01(seed, 0, i, k);
            Segment { start: Vec3::new(u(0), u(1), u(2)), end: Vec3::new(u(3), u(4), u(5)), power: [1.0; 3], bounce: 0 }
        })
        .collect();
    let disks = (0..w.disks)
        .into_par_iter()
        .map(|j| {
            let u = |k| uniform01(seed, 1, j, k);
            let z = 2.0 * u(3) - 1.0;
            let phi = std::f32::consts::TAU * u(4);
            let s = (1.0 - z * z).max(0.0).sqrt();
            Disk { centre: Vec3::new(u(0), u(1), u(2)), normal: Vec3::new(s * phi.cos(), s * phi.sin(), z), radius }
        })
        .collect();
    Problem { segments, disks }
}
