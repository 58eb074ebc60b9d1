//! Axis-aligned boxes.

use bytemuck::{Pod, Zeroable};
use glam::Vec3;

use crate::triangle::{Ray, RayPrep};

/// Relative widening of a slab interval: a few `f32` ulps, more than the rounding of
/// `(plane - origin) * (1 / dir)` (two roundings of at most half an ulp each, plus the
/// rounding of `1 / dir`), so that a ray through a box edge or corner is never lost to it.
const SLAB_SLACK: f32 = 4.0 * f32::EPSILON;

/// An axis-aligned box `[min, max]`, closed on every side. A box with `min > max` on some
/// axis is empty; [`Aabb::EMPTY`] is the identity of [`Aabb::union`].
///
/// ```
/// use glam::Vec3;
/// use lumbre_kdtree::Aabb;
///
/// let b = Aabb::EMPTY.grow(Vec3::ZERO).grow(Vec3::new(1.0, 2.0, 3.0));
/// assert_eq!(b, Aabb::new(Vec3::ZERO, Vec3::new(1.0, 2.0, 3.0)));
/// assert_eq!(b.surface_area(), 2.0 * (2.0 + 3.0 + 6.0));
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
pub struct Aabb {
    /// The lowest corner.
    pub min: Vec3,
    /// The highest corner.
    pub max: Vec3,
}

impl Aabb {
    /// The empty box: `min = +inf`, `max = -inf`.
    ///
    /// ```
    /// assert!(lumbre_kdtree::Aabb::EMPTY.is_empty());
    /// ```
    pub const EMPTY: Aabb = Aabb { min: Vec3::INFINITY, max: Vec3::NEG_INFINITY };

    /// The box with corners `min` and `max`.
    ///
    /// ```
    /// use glam::Vec3;
    /// assert!(!lumbre_kdtree::Aabb::new(Vec3::ZERO, Vec3::ZERO).is_empty()); // a point
    /// ```
    pub const fn new(min: Vec3, max: Vec3) -> Aabb {
        Aabb { min, max }
    }

    /// The smallest box around `points` ([`Aabb::EMPTY`] for none).
    ///
    /// ```
    /// use glam::Vec3;
    /// let b = lumbre_kdtree::Aabb::from_points([Vec3::X, -Vec3::Y]);
    /// assert_eq!((b.min, b.max), (Vec3::new(0.0, -1.0, 0.0), Vec3::new(1.0, 0.0, 0.0)));
    /// ```
    pub fn from_points(points: impl IntoIterator<Item = Vec3>) -> Aabb {
        points.into_iter().fold(Aabb::EMPTY, |b, p| b.grow(p))
    }

    /// Whether the box contains no point (`min > max` on some axis, or a NaN corner).
    ///
    /// ```
    /// use glam::Vec3;
    /// assert!(lumbre_kdtree::Aabb::new(Vec3::X, Vec3::ZERO).is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        !(self.min.x <= self.max.x && self.min.y <= self.max.y && self.min.z <= self.max.z)
    }

    /// The smallest box containing both boxes.
    ///
    /// ```
    /// use glam::Vec3;
    /// use lumbre_kdtree::Aabb;
    /// let a = Aabb::new(Vec3::ZERO, Vec3::ONE);
    /// assert_eq!(a.union(&Aabb::EMPTY), a);
    /// assert_eq!(a.union(&Aabb::new(Vec3::splat(2.0), Vec3::splat(3.0))).max, Vec3::splat(3.0));
    /// ```
    pub fn union(&self, other: &Aabb) -> Aabb {
        Aabb { min: self.min.min(other.min), max: self.max.max(other.max) }
    }

    /// The box grown to contain `p`.
    ///
    /// ```
    /// use glam::Vec3;
    /// assert_eq!(lumbre_kdtree::Aabb::EMPTY.grow(Vec3::ONE).min, Vec3::ONE);
    /// ```
    pub fn grow(&self, p: Vec3) -> Aabb {
        Aabb { min: self.min.min(p), max: self.max.max(p) }
    }

    /// The common part of two boxes (empty if they are disjoint).
    ///
    /// ```
    /// use glam::Vec3;
    /// use lumbre_kdtree::Aabb;
    /// let a = Aabb::new(Vec3::ZERO, Vec3::splat(2.0));
    /// let b = Aabb::new(Vec3::ONE, Vec3::splat(3.0));
    /// assert_eq!(a.intersection(&b), Aabb::new(Vec3::ONE, Vec3::splat(2.0)));
    /// ```
    pub fn intersection(&self, other: &Aabb) -> Aabb {
        Aabb { min: self.min.max(other.min), max: self.max.min(other.max) }
    }

    /// Whether the closed box contains `p`.
    ///
    /// ```
    /// use glam::Vec3;
    /// assert!(lumbre_kdtree::Aabb::new(Vec3::ZERO, Vec3::ONE).contains(Vec3::ONE));
    /// ```
    pub fn contains(&self, p: Vec3) -> bool {
        self.min.cmple(p).all() && p.cmple(self.max).all()
    }

    /// Whether the two closed boxes share a point (touching counts).
    ///
    /// ```
    /// use glam::Vec3;
    /// use lumbre_kdtree::Aabb;
    /// let a = Aabb::new(Vec3::ZERO, Vec3::ONE);
    /// assert!(a.overlaps(&Aabb::new(Vec3::ONE, Vec3::splat(2.0))));
    /// ```
    pub fn overlaps(&self, other: &Aabb) -> bool {
        !self.intersection(other).is_empty()
    }

    /// The extent `max - min`.
    ///
    /// ```
    /// use glam::Vec3;
    /// assert_eq!(lumbre_kdtree::Aabb::new(Vec3::ZERO, Vec3::X).size(), Vec3::X);
    /// ```
    pub fn size(&self) -> Vec3 {
        self.max - self.min
    }

    /// The surface area `2 (xy + xz + yz)`; 0 for an empty box.
    ///
    /// ```
    /// use glam::Vec3;
    /// assert_eq!(lumbre_kdtree::Aabb::new(Vec3::ZERO, Vec3::ONE).surface_area(), 6.0);
    /// ```
    pub fn surface_area(&self) -> f32 {
        if self.is_empty() {
            return 0.0;
        }
        let d = self.size();
        2.0 * (d.x * d.y + d.x * d.z + d.y * d.z)
    }

    /// The part `[t0, t1]` of the ray's parameter interval `[t_min, t_max]` inside the box,
    /// or `None` when they do not meet (touching counts as meeting).
    ///
    /// Slab test: for an axis where the direction is zero (or subnormal) the origin must lie
    /// within the slab; the interval is widened by a few ulps so that rays through an edge or
    /// corner of the box are not lost to rounding. A ray that is not finite or has a zero
    /// direction misses, and so does a NaN bound.
    ///
    /// ```
    /// use glam::Vec3;
    /// use lumbre_kdtree::{Aabb, Ray};
    ///
    /// let b = Aabb::new(Vec3::ZERO, Vec3::ONE);
    /// let (t0, t1) = b.intersect_ray(&Ray::new(Vec3::new(-1.0, 0.5, 0.5), Vec3::X), 0.0, 10.0).unwrap();
    /// assert!((t0 - 1.0).abs() < 1e-6 && (t1 - 2.0).abs() < 1e-6);
    /// assert!(b.intersect_ray(&Ray::new(Vec3::new(-1.0, 2.0, 0.5), Vec3::X), 0.0, 10.0).is_none());
    /// ```
    pub fn intersect_ray(&self, ray: &Ray, t_min: f32, t_max: f32) -> Option<(f32, f32)> {
        self.clip(&RayPrep::new(ray), t_min, t_max)
    }

    /// [`Aabb::intersect_ray`] with the per-ray constants already computed.
    #[inline]
    pub(crate) fn clip(&self, r: &RayPrep, t_min: f32, t_max: f32) -> Option<(f32, f32)> {
        if !r.valid {
            return None;
        }
        let mut t0 = t_min;
        let mut t1 = t_max;
        for k in 0..3 {
            let o = r.origin[k];
            if r.parallel[k] {
                if !(o >= self.min[k] && o <= self.max[k]) {
                    return None;
                }
                continue;
            }
            // Sign-based slab (no swap): an empty box (min > max) then yields t_near > t_far.
            let inv = r.inv_dir[k];
            let (near, far) = if inv >= 0.0 { (self.min[k], self.max[k]) } else { (self.max[k], self.min[k]) };
            let tn = (near - o) * inv;
            let tf = (far - o) * inv;
            // Widen by scaling (an infinite `t` of an empty box stays infinite, never NaN).
            let tn = tn * if tn > 0.0 { 1.0 - SLAB_SLACK } else { 1.0 + SLAB_SLACK };
            let tf = tf * if tf > 0.0 { 1.0 + SLAB_SLACK } else { 1.0 - SLAB_SLACK };
            if tn > t0 {
                t0 = tn;
            }
            if tf < t1 {
                t1 = tf;
            }
        }
        if t0 <= t1 { Some((t0, t1)) } else { None }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slab_handles_zero_direction_components() {
        let b = Aabb::new(Vec3::ZERO, Vec3::ONE);
        // Parallel to x and y, inside both slabs: the z slab decides.
        let r = Ray::new(Vec3::new(0.5, 1.0, -2.0), Vec3::new(0.0, -0.0, 2.0));
        let (t0, t1) = b.intersect_ray(&r, 0.0, f32::INFINITY).unwrap();
        assert!((t0 - 1.0).abs() < 1e-6 && (t1 - 1.5).abs() < 1e-6, "{t0} {t1}");
        // Parallel and outside the x slab.
        let r = Ray::new(Vec3::new(1.0 + 1e-6, 0.5, -2.0), Vec3::Z);
        assert!(b.intersect_ray(&r, 0.0, f32::INFINITY).is_none());
    }

    #[test]
    fn slab_clips_to_the_ray_interval_and_accepts_flat_boxes() {
        let flat = Aabb::new(Vec3::new(0.0, 0.0, 0.5), Vec3::new(1.0, 1.0, 0.5));
        let r = Ray::new(Vec3::new(0.5, 0.5, 0.0), Vec3::Z);
        let (t0, t1) = flat.intersect_ray(&r, 0.0, 1.0).unwrap();
        assert!(t0 <= 0.5 && 0.5 <= t1 && t1 - t0 < 1e-6);
        assert!(flat.intersect_ray(&r, 0.6, 1.0).is_none());
        assert!(flat.intersect_ray(&r, 0.0, 0.4).is_none());
        // A ray through the corner of a box touches it.
        let unit = Aabb::new(Vec3::ZERO, Vec3::ONE);
        let r = Ray::new(Vec3::new(-1.0, -1.0, 0.5), Vec3::new(1.0, 1.0, 0.0));
        assert!(unit.intersect_ray(&r, 0.0, 10.0).is_some());
    }

    #[test]
    fn empty_boxes_and_nan_bounds_miss() {
        let r = Ray::new(Vec3::new(0.5, 0.5, -1.0), Vec3::new(0.1, 0.2, 1.0));
        assert!(Aabb::EMPTY.intersect_ray(&r, 0.0, f32::INFINITY).is_none());
        assert!(Aabb::new(Vec3::ONE, Vec3::ZERO).intersect_ray(&r, 0.0, f32::INFINITY).is_none());
        let unit = Aabb::new(Vec3::ZERO, Vec3::ONE);
        assert!(unit.intersect_ray(&r, f32::NAN, 10.0).is_none());
        assert!(unit.intersect_ray(&r, 0.0, f32::NAN).is_none());
        assert!(unit.intersect_ray(&r, 0.0, 10.0).is_some());
    }
}
