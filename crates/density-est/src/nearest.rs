//! Radii from the nearest photon hits: each disk's radius becomes the distance of its `k`-th
//! nearest flight end (a point kd-tree over the ends). The GPU twin is `gpu/nearest.rs`.

use glam::Vec3;
use lumbre_gpu::{Error, Result};
use lumbre_kdtree::PointKdTree;
use rayon::prelude::*;

use crate::problem::{Disk, Segment};

/// Sets each disk's radius to the distance of its `k`-th nearest photon hit (the segments'
/// end points), clamped to `[min, max]`; `max` when there are fewer than `k` hits.
///
/// ```
/// use glam::Vec3;
/// use lumbre_density::{Disk, Segment, nearest_radii};
/// let seg = |x: f32| Segment { start: Vec3::Y, end: Vec3::new(x, 0.0, 0.0), power: [1.0; 3], bounce: 0 };
/// let mut disks = vec![Disk { centre: Vec3::ZERO, normal: Vec3::Y, radius: 1.0 }];
/// nearest_radii(&mut disks, &[seg(0.1), seg(0.3), seg(0.2)], 2, 0.0, 1.0)?;
/// assert!((disks[0].radius - 0.2).abs() < 1e-6);
/// # Ok::<(), lumbre_gpu::Error>(())
/// ```
pub fn nearest_radii(disks: &mut [Disk], segments: &[Segment], k: usize, min: f32, max: f32) -> Result<()> {
    check(k, min, max)?;
    let ends: Vec<Vec3> = segments.iter().map(|s| s.end).collect();
    let tree = PointKdTree::build(&ends);
    disks.par_iter_mut().for_each(|d| {
        let near = tree.k_nearest(d.centre, k);
        let r = if near.len() < k { max } else { near[k - 1].1.sqrt() };
        d.radius = r.clamp(min.max(f32::MIN_POSITIVE), max);
    });
    Ok(())
}

/// An error unless `k` is at least 1 and `[min, max]` a finite range with
/// `0 <= min <= max`, `max > 0`.
pub(crate) fn check(k: usize, min: f32, max: f32) -> Result<()> {
    if k == 0 {
        return Err(Error::Input("k nearest photons: k must be at least 1".into()));
    }
    if !(min.is_finite() && max.is_finite() && min >= 0.0 && max > 0.0 && min <= max) {
        return Err(Error::Input(format!("radius range [{min}, {max}] must be finite, with 0 <= min <= max, max > 0")));
    }
    Ok(())
}
