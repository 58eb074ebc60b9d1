//! Box tests of the indices, conservative by the box padding (twin of `density/boxes.wgsl`).

use glam::{BVec3, Vec3};

use crate::problem::Aabb;

/// A segment prepared for slab tests: its start, the inverse of its direction, and the axes
/// along which it moves less than `tau` (half the box padding), tested by its start alone
/// (so no division by a tiny number, and slab parameters stay far from overflow).
#[derive(Clone, Copy, Debug)]
pub(crate) struct SegRay {
    pub a: Vec3,
    pub inv: Vec3,
    pub flat: BVec3,
}

impl SegRay {
    pub fn new(a: Vec3, b: Vec3, tau: f32) -> SegRay {
        let d = b - a;
        let flat = d.abs().cmplt(Vec3::splat(tau));
        let inv = Vec3::select(flat, Vec3::ZERO, Vec3::ONE / Vec3::select(flat, Vec3::ONE, d));
        SegRay { a, inv, flat }
    }

    /// Whether the segment (parameters in `[0, 1]`) meets the closed box.
    pub fn hits(&self, b: &Aabb) -> bool {
        let t0 = (b.lo - self.a) * self.inv;
        let t1 = (b.hi - self.a) * self.inv;
        let near = Vec3::select(self.flat, Vec3::ZERO, t0.min(t1));
        let far = Vec3::select(self.flat, Vec3::ONE, t0.max(t1));
        let inside = self.a.cmpge(b.lo) & self.a.cmple(b.hi);
        let flat_ok = (inside | !self.flat).all();
        flat_ok && near.max_element().max(0.0) <= far.min_element().min(1.0)
    }
}
