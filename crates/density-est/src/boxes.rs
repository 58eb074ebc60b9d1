//! Box tests of the indices, conservative by the box padding (twin of `density/boxes.wgsl`).

use glam::{BVec3A, Vec3, Vec3A};

use lumbre_kdtree::Aabb;

/// A segment prepared for slab tests: its start, the inverse of its direction, and the axes
/// along which it moves less than `tau` (half the box padding), tested by its start alone
/// (so no division by a tiny number, and slab parameters stay far from overflow).
#[derive(Clone, Copy, Debug)]
pub(crate) struct SegRay {
    pub a: Vec3A,
    pub inv: Vec3A,
    pub flat: BVec3A,
}

impl SegRay {
    pub fn new(a: Vec3, b: Vec3, tau: f32) -> SegRay {
        let (a, d) = (Vec3A::from(a), Vec3A::from(b - a));
        let flat = d.abs().cmplt(Vec3A::splat(tau));
        let inv = Vec3A::select(flat, Vec3A::ZERO, Vec3A::ONE / Vec3A::select(flat, Vec3A::ONE, d));
        SegRay { a, inv, flat }
    }

    /// Whether the segment (parameters in `[0, 1]`) meets the closed box.
    pub fn hits(&self, b: &Aabb) -> bool {
        let (lo, hi) = (Vec3A::from(b.min), Vec3A::from(b.max));
        let t0 = (lo - self.a) * self.inv;
        let t1 = (hi - self.a) * self.inv;
        let near = Vec3A::select(self.flat, Vec3A::ZERO, t0.min(t1));
        let far = Vec3A::select(self.flat, Vec3A::ONE, t0.max(t1));
        let inside = self.a.cmpge(lo) & self.a.cmple(hi);
        let flat_ok = (inside | !self.flat).all();
        flat_ok && near.max_element().max(0.0) <= far.min_element().min(1.0)
    }
}
