//! The geometry of light clusters: cones of normals, distances to boxes and the upper bounds
//! on cosines that Walter et al.'s cluster error bounds need.
//!
//! Only additions, multiplications, divisions, square roots, `min`, `max` and `abs` appear
//! here, each written in the order of its WGSL twin (`lightcuts/light.wgsl`), so that the
//! two agree bit for bit on a device that rounds as IEEE 754 does and does not fuse
//! multiply-adds (lavapipe), and to a few ulps elsewhere.

use glam::Vec3;

/// A cone of directions around a unit `axis`: every direction within the angle whose
/// cosine is `cos` of it. `cos = 1` is the axis alone, `cos = -1` the whole sphere.
///
/// ```
/// use glam::Vec3;
/// use lumbre_lightcuts::Cone;
/// let c = Cone::union(Cone::point(Vec3::X), Cone::point(Vec3::Y));
/// assert!((c.axis - Vec3::new(1.0, 1.0, 0.0).normalize()).length() < 1e-6);
/// assert!((c.cos - std::f32::consts::FRAC_1_SQRT_2).abs() < 1e-6); // 45 degrees
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cone {
    /// Unit axis.
    pub axis: Vec3,
    /// Cosine of the half-angle.
    pub cos: f32,
}

/// `x * x + y * y + z * z`, in that order.
#[inline]
pub(crate) fn dot(a: Vec3, b: Vec3) -> f32 {
    a.x * b.x + a.y * b.y + a.z * b.z
}

/// `|a.x| b.x + |a.y| b.y + |a.z| b.z`: the extent along `a` of a box of half-extents `b`.
#[inline]
fn abs_dot(a: Vec3, b: Vec3) -> f32 {
    a.x.abs() * b.x + a.y.abs() * b.y + a.z.abs() * b.z
}

/// `sqrt(max(0, 1 - c^2))`: the sine of an angle in `[0, pi]` from its cosine.
#[inline]
fn sine(c: f32) -> f32 {
    (1.0 - c * c).max(0.0).sqrt()
}

/// `cos(t1 + t2)` for angles `t1, t2` in `[0, pi]` given by their cosines, or -1 when
/// `t1 + t2 >= pi` (a cone that wide covers the sphere).
#[inline]
fn cos_of_sum(c1: f32, c2: f32) -> f32 {
    let c1 = c1.clamp(-1.0, 1.0);
    if c1 <= -c2 {
        return -1.0;
    }
    (c1 * c2 - sine(c1) * sine(c2)).max(-1.0)
}

impl Cone {
    /// The cone of one direction.
    pub fn point(axis: Vec3) -> Cone {
        Cone { axis, cos: 1.0 }
    }

    /// The whole sphere (around `axis`, which does not matter).
    pub fn sphere(axis: Vec3) -> Cone {
        Cone { axis, cos: -1.0 }
    }

    /// A cone holding both cones: `a` or `b` if one holds the other, else the cone around
    /// the bisector of their axes that reaches the far edge of each (optimal when their
    /// half-angles are equal; no trigonometric function, so CPU and GPU agree).
    pub fn union(a: Cone, b: Cone) -> Cone {
        if a.cos <= -1.0 || b.cos <= -1.0 {
            return Cone::sphere(a.axis);
        }
        let c = dot(a.axis, b.axis);
        if cos_of_sum(c, b.cos) >= a.cos {
            return a;
        }
        if cos_of_sum(c, a.cos) >= b.cos {
            return b;
        }
        let s = a.axis + b.axis;
        let l2 = dot(s, s);
        if l2 <= 1e-12 {
            return Cone::sphere(a.axis);
        }
        let axis = s * (1.0 / l2.sqrt());
        let ca = cos_of_sum(dot(axis, a.axis), a.cos);
        let cb = cos_of_sum(dot(axis, b.axis), b.cos);
        Cone { axis, cos: ca.min(cb) }
    }
}

/// An orthonormal basis `(t, b)` completing the unit vector `n` (Duff et al. 2017).
#[inline]
pub(crate) fn basis(n: Vec3) -> (Vec3, Vec3) {
    let sign = if n.z >= 0.0 { 1.0 } else { -1.0 };
    let a = -1.0 / (sign + n.z);
    let b = n.x * n.y * a;
    let t = Vec3::new(1.0 + sign * n.x * n.x * a, sign * b, -sign * n.x);
    let bt = Vec3::new(b, sign + n.y * n.y * a, -n.y);
    (t, bt)
}

/// Squared distance from `p` to the box `[lo, hi]` (0 inside).
///
/// ```
/// use glam::Vec3;
/// assert_eq!(lumbre_lightcuts::twin::box_dist2(Vec3::new(3.0, 0.5, 0.0), Vec3::ZERO, Vec3::ONE), 4.0);
/// ```
#[inline]
pub fn box_dist2(p: Vec3, lo: Vec3, hi: Vec3) -> f32 {
    let dx = (lo.x - p.x).max(p.x - hi.x).max(0.0);
    let dy = (lo.y - p.y).max(p.y - hi.y).max(0.0);
    let dz = (lo.z - p.z).max(p.z - hi.z).max(0.0);
    dx * dx + dy * dy + dz * dz
}

/// An upper bound of `cos(axis, v)` over the vectors `v` of the box `[lo, hi]` (Walter et
/// al. 2005, section 4.1): the box is expressed in a frame whose z is `axis` (as the box
/// around the rotated box), then `cos <= z / sqrt(x^2 + y^2 + z^2)` is maximised over it.
/// The bound may be negative (every vector points away from the axis); 1 when the box
/// holds the origin.
///
/// ```
/// use glam::Vec3;
/// use lumbre_lightcuts::twin::cos_upper;
/// // A unit box one unit above the origin, seen along +z: its nearest corner column.
/// let c = cos_upper(Vec3::Z, Vec3::new(1.0, 1.0, 1.0), Vec3::new(2.0, 2.0, 2.0));
/// assert!((c - 2.0 / 6.0f32.sqrt()).abs() < 1e-6);
/// assert_eq!(cos_upper(Vec3::Z, Vec3::splat(-1.0), Vec3::ONE), 1.0);
/// ```
pub fn cos_upper(axis: Vec3, lo: Vec3, hi: Vec3) -> f32 {
    let (t, b) = basis(axis);
    let c = (lo + hi) * 0.5;
    let h = (hi - lo) * 0.5;
    let z = dot(axis, c) + abs_dot(axis, h);
    let cx = dot(t, c).abs();
    let hx = abs_dot(t, h);
    let cy = dot(b, c).abs();
    let hy = abs_dot(b, h);
    if z > 0.0 {
        let x = (cx - hx).max(0.0);
        let y = (cy - hy).max(0.0);
        return (z / (x * x + y * y + z * z).sqrt()).min(1.0);
    }
    let x = cx + hx;
    let y = cy + hy;
    let d = (x * x + y * y + z * z).sqrt();
    if d > 0.0 { (z / d).max(-1.0) } else { 1.0 }
}

/// Upper bound of `max(0, cos)` between the receiver normal `n` at `x` and the directions
/// from `x` to the points of the box `[lo, hi]`.
#[inline]
pub fn receiver_cos_upper(x: Vec3, n: Vec3, lo: Vec3, hi: Vec3) -> f32 {
    cos_upper(n, lo - x, hi - x).max(0.0)
}

/// Upper bound of `max(0, cos)` between the normals of lights in the box `[lo, hi]`, all
/// within `cone`, and their directions to the receiver `x`: with `t` the smallest angle
/// between the cone's axis and those directions and `a` the cone's half-angle,
/// `cos(max(0, t - a))`.
#[inline]
pub fn light_cos_upper(x: Vec3, cone: Cone, lo: Vec3, hi: Vec3) -> f32 {
    let c = cos_upper(cone.axis, x - hi, x - lo);
    if c >= cone.cos {
        return 1.0;
    }
    (c * cone.cos + sine(c) * sine(cone.cos)).clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grid(n: usize) -> impl Iterator<Item = Vec3> {
        (0..n * n * n).map(move |i| {
            let f = |k: usize| (k as f32 + 0.5) / n as f32;
            Vec3::new(f(i % n), f(i / n % n), f(i / (n * n)))
        })
    }

    #[test]
    fn cos_upper_bounds_every_vector_of_the_box() {
        let axes = [Vec3::X, -Vec3::Y, Vec3::new(0.3, -0.5, 0.8).normalize(), Vec3::new(-0.6, 0.0, -0.8)];
        let boxes = [
            (Vec3::new(1.0, 1.0, 1.0), Vec3::new(2.0, 3.0, 1.5)),
            (Vec3::new(-2.0, -1.0, -3.0), Vec3::new(-1.0, 0.5, -2.0)),
            (Vec3::new(-0.5, 2.0, -0.5), Vec3::new(0.5, 2.0, 0.5)),
            (Vec3::new(0.1, 0.1, 0.1), Vec3::new(0.1, 0.1, 0.1)),
        ];
        for axis in axes {
            for (lo, hi) in boxes {
                let bound = cos_upper(axis, lo, hi);
                for f in grid(9) {
                    let v = lo + (hi - lo) * f;
                    let cos = axis.dot(v) / v.length();
                    assert!(cos <= bound + 1e-5, "axis {axis} box {lo}..{hi}: cos {cos} > bound {bound}");
                }
            }
        }
    }

    #[test]
    fn cone_union_holds_both_cones() {
        let dirs = [Vec3::X, Vec3::Y, -Vec3::X, Vec3::new(1.0, 1.0, 1.0).normalize(), Vec3::new(0.2, -0.9, 0.1)];
        for &a in &dirs {
            for &b in &dirs {
                for (ca, cb) in [(1.0, 1.0), (0.9, 0.5), (0.0, 0.99)] {
                    let (a, b) = (a.normalize(), b.normalize());
                    let u = Cone::union(Cone { axis: a, cos: ca }, Cone { axis: b, cos: cb });
                    // The far edge of each input cone lies within the union (the sphere holds all).
                    for (axis, cos) in [(a, ca), (b, cb)] {
                        let edge = axis.dot(u.axis).clamp(-1.0, 1.0).acos() + f32::acos(cos);
                        assert!(u.cos <= -1.0 || edge <= u.cos.acos() + 1e-4, "{a} {ca} | {b} {cb}: {u:?}");
                    }
                }
            }
        }
        let opposite = Cone::union(Cone::point(Vec3::Z), Cone::point(-Vec3::Z));
        assert_eq!(opposite.cos, -1.0);
        let inner = Cone { axis: Vec3::Y, cos: 0.99 };
        let outer = Cone { axis: Vec3::Y, cos: 0.5 };
        assert_eq!(Cone::union(inner, outer), outer);
    }

    #[test]
    fn light_bound_holds_for_lights_in_the_cone() {
        let cone = Cone { axis: Vec3::new(0.0, -1.0, 0.2).normalize(), cos: 0.8 };
        let (lo, hi) = (Vec3::new(-0.5, 1.8, -0.5), Vec3::new(0.5, 2.0, 0.5));
        for x in [Vec3::ZERO, Vec3::new(3.0, 1.9, 0.0), Vec3::new(0.0, 2.5, 0.0), Vec3::new(0.0, 1.9, 0.0)] {
            let bound = light_cos_upper(x, cone, lo, hi);
            let (t, b) = basis(cone.axis);
            for f in grid(5) {
                let y = lo + (hi - lo) * f;
                for k in 0..16 {
                    // Normals on the cone's edge and inside it.
                    let phi = k as f32 * std::f32::consts::FRAC_PI_8;
                    let s = (1.0 - cone.cos * cone.cos).sqrt() * (k % 3) as f32 / 2.0;
                    let n = (cone.axis * (1.0 - s * s).sqrt() + (t * phi.cos() + b * phi.sin()) * s).normalize();
                    let d = x - y;
                    if d.length() == 0.0 {
                        continue;
                    }
                    let cos = n.dot(d / d.length()).max(0.0);
                    assert!(cos <= bound + 1e-5, "x {x} y {y}: {cos} > {bound}");
                }
            }
        }
    }
}
