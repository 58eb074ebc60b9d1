//! The crossing test of a segment and a disk, the one function every method and both paths
//! share (its WGSL twin is `density/crossing.wgsl`).

use glam::Vec3;

use crate::problem::DiskData;

/// Where segment `a -> b` crosses `disk`, if it does.
///
/// With `da` and `db` the signed distances of `a` and `b` to the disk's plane (positive on
/// the side the normal faces) and `eps` the disk's plane tolerance
/// ([`PLANE_EPS`](crate::twin::PLANE_EPS)), the segment crosses when
///
/// - it arrives from the front: `da > eps` and `db <= eps` (so `dot(b - a, n) < 0`): a
///   segment from behind never lights the front, and a zero-length segment crosses nothing;
/// - the crossing point `p = a + t (b - a)`, `t = min(da / (da - db), 1)`, lies within the
///   radius: `|p - c|^2 - dot(p - c, n)^2 <= r^2` (the boundary circle counts).
///
/// So the crossing parameter lies in `(0, 1]` with the plane thickened by `eps` on both
/// sides: a segment that ends on the disk's surface (within `eps`, as photon paths end on
/// surfaces up to rounding) counts there, at its end point; the next segment, which leaves
/// from that point (`|da| <= eps`), does not.
///
/// ```
/// use glam::Vec3;
/// use lumbre_density::Disk;
/// use lumbre_density::twin::{crossing, disk_data};
/// let disk = disk_data(&Disk { centre: Vec3::ZERO, normal: Vec3::Y, radius: 0.5 });
/// // Arriving from above, ending on the disk: counts at its end.
/// assert_eq!(crossing(Vec3::Y, Vec3::ZERO, &disk), Some(Vec3::ZERO));
/// // Leaving from the disk upwards: does not count.
/// assert_eq!(crossing(Vec3::ZERO, Vec3::Y, &disk), None);
/// // Crossing from below (the back side): does not count.
/// assert_eq!(crossing(Vec3::NEG_Y, Vec3::Y, &disk), None);
/// ```
#[inline]
pub fn crossing(a: Vec3, b: Vec3, disk: &DiskData) -> Option<Vec3> {
    let c = Vec3::from(disk.centre);
    let n = Vec3::from(disk.normal);
    let da = (a - c).dot(n);
    let db = (b - c).dot(n);
    if !(da > disk.eps && db <= disk.eps) {
        return None;
    }
    let t = (da / (da - db)).min(1.0);
    let p = a + (b - a) * t;
    let q = p - c;
    let h = q.dot(n);
    (q.dot(q) - h * h <= disk.radius * disk.radius).then_some(p)
}
