//! The BVH's types: child references, the 32-byte inner node the GPU reads, the grid its
//! boxes are quantized in, and the built tree.

use glam::Vec3;
use lumbre_kdtree::Aabb;

use crate::problem::{DiskData, Prepared};

/// A child reference that is a disk (its sorted position in the low 31 bits).
pub(crate) const LEAF_BIT: u32 = 1 << 31;
/// The disks a tree can hold (2^31: leaf references keep 31 bits).
pub(crate) const MAX_DISKS: usize = 1 << 31;
/// No child (the one-disk tree's second child).
pub(crate) const NONE: u32 = u32::MAX;

/// An inner node as the GPU stores it (two vec4<u32>): both children's boxes as 16-bit
/// coordinates in the [`QuantGrid`] (three words per box: lo.x | lo.y << 16,
/// lo.z | hi.x << 16, hi.y | hi.z << 16), and the child references.
#[repr(C, align(32))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
pub(crate) struct BvhNode {
    pub boxes: [u32; 6],
    pub left: u32,
    pub right: u32,
}

/// The root box cut in 65535 steps per axis, in which node boxes are stored.
#[derive(Clone, Copy, Debug)]
pub(crate) struct QuantGrid {
    pub lo: Vec3,
    pub step: Vec3,
    pub inv: Vec3,
}

impl QuantGrid {
    pub fn new(prep: &Prepared) -> QuantGrid {
        QuantGrid::of_root(&prep.root)
    }

    /// The grid of a root box.
    pub fn of_root(root: &Aabb) -> QuantGrid {
        let size = root.max - root.min;
        QuantGrid { lo: root.min, step: size / 65535.0, inv: Vec3::splat(65535.0) / size }
    }

    /// Three words holding `b` rounded outwards by one step more than needed (so the decoded
    /// box holds `b` whatever the rounding of the decoding).
    pub fn encode(&self, b: &Aabb) -> [u32; 3] {
        let max = Vec3::splat(65535.0);
        let lo = ((b.min - self.lo) * self.inv).floor() - Vec3::ONE;
        let hi = ((b.max - self.lo) * self.inv).ceil() + Vec3::ONE;
        let lo = lo.clamp(Vec3::ZERO, max).as_uvec3();
        let hi = hi.clamp(Vec3::ZERO, max).as_uvec3();
        [lo.x | lo.y << 16, lo.z | hi.x << 16, hi.y | hi.z << 16]
    }

    /// The box of three words.
    pub fn decode(&self, w: &[u32]) -> Aabb {
        let lo = Vec3::new((w[0] & 0xffff) as f32, (w[0] >> 16) as f32, (w[1] & 0xffff) as f32);
        let hi = Vec3::new((w[1] >> 16) as f32, (w[2] & 0xffff) as f32, (w[2] >> 16) as f32);
        Aabb::new(self.lo + lo * self.step, self.lo + hi * self.step)
    }
}

/// The tree: inner nodes (the root first; a one-disk tree is one node whose second child is
/// [`NONE`]; no disk, no node), the disks in tree order, and `order` (sorted position ->
/// disk).
#[derive(Clone, Debug, Default)]
pub(crate) struct Bvh {
    pub nodes: Vec<BvhNode>,
    pub disks: Vec<DiskData>,
    pub order: Vec<u32>,
    pub grid: Option<QuantGrid>,
}
