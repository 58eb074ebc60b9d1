//! The paraboloid map of a VPL's hemisphere, written operation for operation as
//! `lightcuts/ism_paraboloid.wgsl`, so both paths put a point in the same texel at the same
//! depth wherever f32 rounds the same.

use glam::Vec3;

/// An orthonormal frame around a unit normal: tangent `t`, bitangent `b`, normal `n`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Frame {
    t: [f32; 3],
    b: [f32; 3],
    n: [f32; 3],
}

/// Tangent and bitangent of the unit normal `n` (Duff et al. 2017, "Building an
/// orthonormal basis, revisited").
pub(crate) fn frame(n: Vec3) -> Frame {
    let [nx, ny, nz] = n.to_array();
    let sign = if nz >= 0.0 { 1.0f32 } else { -1.0 };
    let a = -1.0 / (sign + nz);
    let bb = nx * ny * a;
    Frame { t: [1.0 + sign * nx * nx * a, sign * bb, -sign * nx], b: [bb, sign + ny * ny * a, -ny], n: [nx, ny, nz] }
}

fn dot(a: [f32; 3], b: [f32; 3]) -> f32 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

/// A point's place in a map: texel `(x, y)` and distance from the VPL.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Texel {
    pub x: u32,
    pub y: u32,
    pub dist: f32,
}

/// The cosine below which a direction counts as behind the VPL: 2^-12, far above the
/// rounding of `d.n` for points in the VPL's own plane (whose sign would otherwise depend
/// on the device's rounding), and a power of two, so `dist * MIN_COS` is exact.
pub(crate) const MIN_COS: f32 = 1.0 / 4096.0;

/// The texel of `p` in a `size` x `size` paraboloid map around `c` oriented by `f`:
/// `(d.t, d.b) / (|d| + d.n)` with `d = p - c` lies in the unit disk, spread over the
/// square of texels. `None` unless `p` lies in front, at a cosine above [`MIN_COS`].
pub(crate) fn project(c: Vec3, f: &Frame, p: Vec3, size: u32) -> Option<Texel> {
    let d = [p.x - c.x, p.y - c.y, p.z - c.z];
    let z = dot(d, f.n);
    let dist = dot(d, d).sqrt();
    if z.is_nan() || z <= dist * MIN_COS {
        return None;
    }
    let den = dist + z;
    let u = dot(d, f.t) / den;
    let v = dot(d, f.b) / den;
    let half = size as f32 * 0.5;
    let last = (size - 1) as f32;
    let cell = |w: f32| ((w + 1.0) * half).floor().clamp(0.0, last) as u32;
    Some(Texel { x: cell(u), y: cell(v), dist })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_are_orthonormal() {
        for n in [Vec3::X, Vec3::Y, Vec3::Z, -Vec3::Z, Vec3::new(0.3, -0.5, 0.8).normalize(), Vec3::new(0.0, 0.0, -0.0)]
        {
            let n = if n == Vec3::ZERO { Vec3::Z } else { n };
            let f = frame(n);
            let (t, b) = (Vec3::from(f.t), Vec3::from(f.b));
            assert!((t.length() - 1.0).abs() < 1e-6 && (b.length() - 1.0).abs() < 1e-6, "{n}");
            assert!(t.dot(b).abs() < 1e-6 && t.dot(n).abs() < 1e-6 && b.dot(n).abs() < 1e-6, "{n}");
        }
    }

    #[test]
    fn the_axis_maps_to_the_centre_and_the_back_is_rejected() {
        let f = frame(Vec3::Y);
        let c = Vec3::new(1.0, 2.0, 3.0);
        let t = project(c, &f, c + Vec3::Y * 2.0, 64).unwrap();
        assert_eq!((t.x, t.y, t.dist), (32, 32, 2.0));
        assert!(project(c, &f, c - Vec3::Y, 64).is_none());
        assert!(project(c, &f, c + Vec3::X, 64).is_none()); // in the VPL's plane
        assert!(project(c, &f, c, 64).is_none());
        // Directions near the plane land on the rim, inside the map; nearer still, behind.
        assert!(project(c, &f, c + Vec3::new(1.0, 1e-5, 0.0), 64).is_none());
        let rim = project(c, &f, c + Vec3::new(1.0, 1e-3, 0.0), 64).unwrap();
        assert!(rim.x == 63 || rim.x == 0 || rim.y == 63 || rim.y == 0);
    }
}
