//! Clipping: the boxes of the parts of a triangle inside a cell grown by the margin, in
//! `f64` and rounded outward to `f32`, so that a triangle is never lost from a cell it
//! reaches.

use glam::{DVec3, Vec3};

use crate::aabb::Aabb;

/// A convex polygon in `f64`: a triangle clipped by up to seven planes (six cell faces and
/// one split plane) has at most ten corners.
#[derive(Clone, Copy)]
struct Polygon {
    corners: [DVec3; 10],
    len: usize,
}

impl Polygon {
    fn triangle(tri: &[Vec3; 3]) -> Polygon {
        let mut corners = [DVec3::ZERO; 10];
        corners[..3].copy_from_slice(&tri.map(|v| v.as_dvec3()));
        Polygon { corners, len: 3 }
    }

    fn corners(&self) -> &[DVec3] {
        &self.corners[..self.len]
    }

    /// Sutherland–Hodgman against the half-space `p[axis] >= bound` (`keep_above`) or
    /// `p[axis] <= bound`; points on the plane are kept and new corners land exactly on it.
    fn clip(&self, axis: usize, bound: f64, keep_above: bool) -> Polygon {
        let inside = |p: &DVec3| if keep_above { p[axis] >= bound } else { p[axis] <= bound };
        let mut out = Polygon { corners: [DVec3::ZERO; 10], len: 0 };
        let src = self.corners();
        for (i, &p0) in src.iter().enumerate() {
            let p1 = src[(i + 1) % src.len()];
            let (in0, in1) = (inside(&p0), inside(&p1));
            if in0 {
                out.corners[out.len] = p0;
                out.len += 1;
            }
            if in0 != in1 {
                let s = (bound - p0[axis]) / (p1[axis] - p0[axis]);
                let mut p = p0 + (p1 - p0) * s;
                p[axis] = bound; // exactly on the plane, whatever the rounding of `s`
                out.corners[out.len] = p;
                out.len += 1;
            }
        }
        out
    }

    /// Clipped to the box `[lo, hi]`, skipping the faces it lies inside of (most polygons
    /// cross none or one).
    fn clip_box(mut self, lo: DVec3, hi: DVec3) -> Polygon {
        for axis in 0..3 {
            let (min, max) = self
                .corners()
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| (a.min(p[axis]), b.max(p[axis])));
            if min < lo[axis] {
                self = self.clip(axis, lo[axis], true);
            }
            if max > hi[axis] {
                self = self.clip(axis, hi[axis], false);
            }
        }
        self
    }

    /// The box of the corners, rounded outward and kept within `cell` (see [`finish`]).
    #[cfg(test)]
    fn bounds(&self, tri: &[Vec3; 3], cell: &Aabb) -> Aabb {
        let (lo, hi) =
            self.corners().iter().fold((DVec3::INFINITY, DVec3::NEG_INFINITY), |(lo, hi), p| (lo.min(*p), hi.max(*p)));
        finish(tri, lo, hi, cell)
    }
}

/// The cell `[lo, hi]` grown by `margin` on every side, in `f64` and rounded outward.
fn grow(cell: &Aabb, margin: f64) -> (DVec3, DVec3, Aabb) {
    let lo = cell.min.as_dvec3() - margin;
    let hi = cell.max.as_dvec3() + margin;
    (lo, hi, Aabb::new(round_down(lo), round_up(hi)))
}

/// The box of the part of triangle `tri` inside `cell` grown by `margin` on every side,
/// conservative: computed in `f64` (Sutherland–Hodgman), rounded outward to `f32` and kept
/// within the grown cell.
#[cfg(test)]
fn clipped_box(tri: &[Vec3; 3], cell: &Aabb, margin: f64) -> Aabb {
    let (lo, hi, grown) = grow(cell, margin);
    Polygon::triangle(tri).clip_box(lo, hi).bounds(tri, &grown)
}

/// A split's cells grown by the margin: the parent's in `f64` (what triangles are clipped
/// to) and each child's rounded outward to `f32` (what their boxes are kept within).
pub(crate) struct GrownCells {
    lo: DVec3,
    hi: DVec3,
    left: Aabb,
    right: Aabb,
}

impl GrownCells {
    pub(crate) fn new(cell: &Aabb, axis: usize, pos: f32, margin: f64) -> GrownCells {
        // A child's cell is the parent's but for one face, the split plane: grown, only that
        // face differs from the parent's grown cell.
        let (lo, hi, grown) = grow(cell, margin);
        let (mut left, mut right) = (grown, grown);
        left.max[axis] = round_up_f32(pos as f64 + margin);
        right.min[axis] = round_down_f32(pos as f64 - margin);
        GrownCells { lo, hi, left, right }
    }
}

/// The boxes of the parts of triangle `tri` inside the two children of a split at `pos` on
/// `axis`, each child grown by `margin` on every side (`cells`). Conservative: clipped in
/// `f64` (Sutherland–Hodgman, first against the grown parent cell, then by each child's
/// plane), rounded outward to `f32` and kept within the grown child cell.
pub(crate) fn clipped_boxes(tri: &[Vec3; 3], cells: &GrownCells, axis: usize, pos: f32, margin: f64) -> (Aabb, Aabb) {
    let corners = tri.map(|v| v.as_dvec3());
    let inside_cell = corners.iter().all(|p| p.cmpge(cells.lo).all() && p.cmple(cells.hi).all());
    // Most triangles lie inside the parent cell: their corners need no clipping.
    let clipped;
    let corners: &[DVec3] = if inside_cell {
        &corners
    } else {
        clipped = Polygon::triangle(tri).clip_box(cells.lo, cells.hi);
        clipped.corners()
    };
    let (x, m) = (pos as f64, margin);
    let (left_bound, right_bound) = (x + m, x - m);
    // One walk around the polygon collects the corners and plane crossings of both halves.
    let (mut left_lo, mut left_hi) = (DVec3::INFINITY, DVec3::NEG_INFINITY);
    let (mut right_lo, mut right_hi) = (DVec3::INFINITY, DVec3::NEG_INFINITY);
    let crossing = |p0: DVec3, p1: DVec3, bound: f64| {
        let mut p = p0 + (p1 - p0) * ((bound - p0[axis]) / (p1[axis] - p0[axis]));
        p[axis] = bound; // exactly on the plane, whatever the rounding
        p
    };
    // (Clipping may leave nothing of a triangle that only touches the cell: then `finish`
    // falls back to the triangle's own box.)
    let mut p0 = corners.last().copied().unwrap_or_default();
    for &p1 in corners {
        let (l0, l1) = (p0[axis] <= left_bound, p1[axis] <= left_bound);
        if l0 {
            (left_lo, left_hi) = (left_lo.min(p0), left_hi.max(p0));
        }
        if l0 != l1 {
            let p = crossing(p0, p1, left_bound);
            (left_lo, left_hi) = (left_lo.min(p), left_hi.max(p));
        }
        let (r0, r1) = (p0[axis] >= right_bound, p1[axis] >= right_bound);
        if r0 {
            (right_lo, right_hi) = (right_lo.min(p0), right_hi.max(p0));
        }
        if r0 != r1 {
            let p = crossing(p0, p1, right_bound);
            (right_lo, right_hi) = (right_lo.min(p), right_hi.max(p));
        }
        p0 = p1;
    }
    (finish(tri, left_lo, left_hi, &cells.left), finish(tri, right_lo, right_hi, &cells.right))
}

/// The box `[lo, hi]` (empty if `lo > hi`) rounded outward to `f32` and kept within `cell`;
/// when nothing is left (rounding having cut off a triangle that only touches the cell), the
/// triangle's own box within `cell`, which can only add the triangle to a leaf, never lose it.
fn finish(tri: &[Vec3; 3], lo: DVec3, hi: DVec3, cell: &Aabb) -> Aabb {
    let b = Aabb::new(round_down(lo), round_up(hi)).intersection(cell);
    if b.is_empty() { fallback(tri, cell) } else { b }
}

fn fallback(tri: &[Vec3; 3], cell: &Aabb) -> Aabb {
    let b = Aabb::from_points(*tri).intersection(cell);
    if b.is_empty() { *cell } else { b }
}

/// The largest `f32` at or below `x`. Branch-free: whether rounding to nearest went up is a
/// coin toss.
pub(super) fn round_down_f32(x: f64) -> f32 {
    let r = x as f32;
    let bits = r.to_bits();
    // One step towards -inf is one unit less in the bits of a positive value and one more
    // in those of a negative one; rounding up to zero gives -0.0 (the sign survives the
    // cast), whose next step is the smallest negative subnormal, one more in the bits.
    let step = ((bits >> 31) << 1).wrapping_sub(1);
    f32::from_bits(bits.wrapping_add(step.wrapping_mul((r as f64 > x) as u32)))
}

/// The smallest `f32` at or above `x` (branch-free, as [`round_down_f32`]).
pub(super) fn round_up_f32(x: f64) -> f32 {
    let r = x as f32;
    let bits = r.to_bits();
    let step = 1u32.wrapping_sub((bits >> 31) << 1);
    f32::from_bits(bits.wrapping_add(step.wrapping_mul(((r as f64) < x) as u32)))
}

fn round_down(v: DVec3) -> Vec3 {
    Vec3::new(round_down_f32(v.x), round_down_f32(v.y), round_down_f32(v.z))
}

fn round_up(v: DVec3) -> Vec3 {
    Vec3::new(round_up_f32(v.x), round_up_f32(v.y), round_up_f32(v.z))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roundings_step_to_the_next_f32_exactly() {
        let mut values = vec![0.0, -0.0, 1e-50, -1e-50, 1e-40, -1e-40, 1.0, -1.0, 3.4e38, -3.4e38, 1e39, -1e39];
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..100_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Random signs, exponents across the f32 range and beyond, random mantissas.
            values.push(f64::from_bits((x & 0x800f_ffff_ffff_ffff) | ((x >> 52) % 340 + 1023 - 170) << 52));
        }
        for x in values {
            let r = x as f32;
            let down = if r as f64 > x { r.next_down() } else { r };
            let up = if (r as f64) < x { r.next_up() } else { r };
            assert_eq!(round_down_f32(x).to_bits(), down.to_bits(), "{x:e}");
            assert_eq!(round_up_f32(x).to_bits(), up.to_bits(), "{x:e}");
        }
    }

    #[test]
    fn clipping_keeps_only_the_part_inside_the_cell() {
        let tri = [Vec3::new(0.0, 0.0, 0.0), Vec3::new(4.0, 0.0, 0.0), Vec3::new(0.0, 4.0, 0.0)];
        let cell = Aabb::new(Vec3::new(2.0, 0.0, -1.0), Vec3::new(4.0, 4.0, 1.0));
        let b = clipped_box(&tri, &cell, 0.0);
        assert_eq!(b, Aabb::new(Vec3::new(2.0, 0.0, 0.0), Vec3::new(4.0, 2.0, 0.0)));
        // A cell the triangle does not enter falls back to its box within the cell.
        let away = Aabb::new(Vec3::new(3.0, 3.0, -1.0), Vec3::new(5.0, 5.0, 1.0));
        assert_eq!(clipped_box(&tri, &away, 0.0), Aabb::new(Vec3::new(3.0, 3.0, 0.0), Vec3::new(4.0, 4.0, 0.0)));
        // Touching a face at a vertex gives a point.
        let touching = Aabb::new(Vec3::new(4.0, -1.0, -1.0), Vec3::new(6.0, 1.0, 1.0));
        assert_eq!(clipped_box(&tri, &touching, 0.0), Aabb::new(Vec3::new(4.0, 0.0, 0.0), Vec3::new(4.0, 0.0, 0.0)));
        // With a margin, the part within the margin of the cell counts.
        let near = Aabb::new(Vec3::new(4.5, -1.0, -1.0), Vec3::new(6.0, 1.0, 1.0));
        assert_eq!(clipped_box(&tri, &near, 1.0), Aabb::new(Vec3::new(3.5, 0.0, 0.0), Vec3::new(4.0, 0.5, 0.0)));
        // Inexact intersection points round outward.
        let tri = [Vec3::new(0.0, 0.0, 0.0), Vec3::new(3.0, 1.0, 0.0), Vec3::new(0.0, 1.0, 0.0)];
        let cell = Aabb::new(Vec3::new(1.0, -1.0, -1.0), Vec3::new(5.0, 5.0, 1.0));
        let b = clipped_box(&tri, &cell, 0.0);
        assert!(b.min.y <= 1.0 / 3.0 && (b.min.y - 1.0 / 3.0).abs() < 1e-7, "{b:?}");
    }
}
