//! Ray traversal: slab tests against node boxes, front-to-back descent with a small explicit
//! stack (the volumetric thesis's approach), the first non-empty node at the render level.

use crate::node::{MAX_DEPTH, Node, Octree};

/// A ray hit on a voxel.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VoxelHit {
    /// Ray parameter of the entry point (`t_min` if the ray starts inside the voxel).
    pub t: f32,
    /// Index of the voxel's node.
    pub node: u32,
    /// Outward normal of the face the ray enters through (axis-aligned).
    pub normal: [f32; 3],
}

/// Stack entries: the depth bounds the number of pending siblings (7 per level).
pub const STACK_SIZE: usize = 8 * (MAX_DEPTH as usize + 1);

/// Slab test of `[lo, hi]` against the ray, clipped to `(t0, t1)`: the entry and exit
/// parameters and the axis of entry, or `None`. `inv` is `1 / dir` per axis (infinite for
/// zero components); operations are ordered as in the WGSL port so both agree bit for bit.
#[inline]
pub fn slab(
    origin: [f32; 3],
    inv: [f32; 3],
    lo: [f32; 3],
    hi: [f32; 3],
    t0: f32,
    t1: f32,
) -> Option<(f32, f32, usize)> {
    let mut tn = t0;
    let mut tf = t1;
    let mut axis = 3;
    for a in 0..3 {
        let ta = (lo[a] - origin[a]) * inv[a];
        let tb = (hi[a] - origin[a]) * inv[a];
        // NaN (0 * inf: origin on a slab plane of a parallel ray) counts as inside.
        let (near, far) = if ta <= tb { (ta, tb) } else { (tb, ta) };
        let near = if near.is_nan() { f32::NEG_INFINITY } else { near };
        let far = if far.is_nan() { f32::INFINITY } else { far };
        if near > tn {
            tn = near;
            axis = a;
        }
        if far < tf {
            tf = far;
        }
    }
    (tn <= tf).then_some((tn, tf, axis))
}

fn normal_of(axis: usize, dir: [f32; 3]) -> [f32; 3] {
    let mut n = [0.0; 3];
    if axis < 3 {
        n[axis] = if dir[axis] > 0.0 { -1.0 } else { 1.0 };
    } else {
        // Started inside: face the ray's dominant axis.
        let a = (0..3).max_by(|&a, &b| dir[a].abs().total_cmp(&dir[b].abs())).unwrap_or(0);
        n[a] = if dir[a] > 0.0 { -1.0 } else { 1.0 };
    }
    n
}

impl Octree {
    /// The first voxel at level `level` (at most the depth) that the ray `origin + t dir`
    /// enters with `t_min <= t <= t_max`.
    ///
    /// ```
    /// use lumbre_octree::{Attrs, Octree};
    /// let pts = [[0.0, 0.0, 0.0], [1.0, 1.0, 1.0]];
    /// let (tree, _) = Octree::build(&pts, &[Attrs::default(); 2], 3).unwrap();
    /// let hit = tree.trace([-1.0, 0.05, 0.05], [1.0, 0.0, 0.0], 0.0, f32::INFINITY, 3).unwrap();
    /// assert_eq!((hit.t, hit.normal), (1.0, [-1.0, 0.0, 0.0]));
    /// ```
    pub fn trace(&self, origin: [f32; 3], dir: [f32; 3], t_min: f32, t_max: f32, level: u32) -> Option<VoxelHit> {
        if self.nodes.is_empty() {
            return None;
        }
        let level = level.min(self.depth);
        let inv = dir.map(|d| 1.0 / d);
        let (lo, hi) = self.bounds(0);
        let (t0, _, axis0) = slab(origin, inv, lo, hi, t_min, t_max)?;
        // Pending nodes: index, entry t, entry axis, level and lower corner.
        let mut stack = [(0u32, 0.0f32, 0u32, 0u32, [0.0f32; 3]); STACK_SIZE];
        stack[0] = (0, t0, axis0 as u32, 0, lo);
        let mut top = 1;
        while top > 0 {
            top -= 1;
            let (i, tn, axis, l, lo) = stack[top];
            let node: &Node = &self.nodes[i as usize];
            if l == level {
                return Some(VoxelHit { t: tn, node: i, normal: normal_of(axis as usize, dir) });
            }
            // Children in order of entry, pushed far to near so the nearest pops first. Their
            // boxes come from this node's, as `NodeKey64::bounds` builds them (bit-identical).
            let half = self.root.size / (1u64 << (l + 1)) as f32;
            let mut kids = [(0u32, 0.0f32, 0u32, 0u32, [0.0f32; 3]); 8];
            let mut n = 0;
            for o in 0..8 {
                if let Some(c) = node.child(o) {
                    let clo: [f32; 3] = std::array::from_fn(|a| if (o >> a) & 1 == 1 { lo[a] + half } else { lo[a] });
                    let chi = clo.map(|v| v + half);
                    // The ray's own interval, not the parent's: the child's entry is then
                    // exactly what a test of the child box alone gives (no rounding from
                    // clipping), so results match the brute force bit for bit.
                    if let Some((cn, _, ca)) = slab(origin, inv, clo, chi, t_min, t_max) {
                        kids[n] = (c, cn, ca as u32, l + 1, clo);
                        n += 1;
                    }
                }
            }
            // Insertion sort by entry t, ties by octant order (stable).
            for a in 1..n {
                let mut b = a;
                while b > 0 && kids[b - 1].1 > kids[b].1 {
                    kids.swap(b - 1, b);
                    b -= 1;
                }
            }
            for k in (0..n).rev() {
                if top < STACK_SIZE {
                    stack[top] = kids[k];
                    top += 1;
                }
            }
        }
        None
    }

    /// Reference: the nearest voxel at `level` by testing every node of that level.
    pub fn trace_brute_force(
        &self,
        origin: [f32; 3],
        dir: [f32; 3],
        t_min: f32,
        t_max: f32,
        level: u32,
    ) -> Option<VoxelHit> {
        let level = level.min(self.depth);
        let inv = dir.map(|d| 1.0 / d);
        let start = self.levels[level as usize] as usize;
        let mut best: Option<VoxelHit> = None;
        for (k, key) in self.level_keys(level).into_iter().enumerate() {
            let (lo, hi) = lumbre_morton::NodeKey64(key).bounds(self.root.min, self.root.size);
            if let Some((tn, _, axis)) = slab(origin, inv, lo, hi, t_min, t_max)
                && best.is_none_or(|b| tn < b.t)
            {
                best = Some(VoxelHit { t: tn, node: (start + k) as u32, normal: normal_of(axis, dir) });
            }
        }
        best
    }
}
