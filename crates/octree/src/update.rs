//! In-place update when points move (the volumetric thesis's chapter 4): recompute each
//! point's leaf key; for every level where its old and new ancestors differ, take it out
//! of the old node and put it into the new one; delete nodes left empty and create nodes
//! that gain their first point. Points that leave the root box grow the root (the old root
//! becomes a child of a twice larger one, keys re-prefixed) instead of being dropped. The
//! result equals a fresh build of the moved points in the same root box, bit for bit.

use crate::attrs::Attrs;
use crate::build::{Level, OctreeError, assemble, check, finite_points, leaf_code, quantizer};
use crate::node::{NO_CHILD, Node, Octree, concat_levels};

/// What an update changed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UpdateReport {
    /// Points whose leaf changed.
    pub moved: usize,
    /// Nodes deleted because they lost their last point.
    pub deleted: usize,
    /// Nodes created by a point entering empty space.
    pub created: usize,
    /// Times the root doubled to hold points that left it.
    pub root_growths: u32,
    /// Whether [`Octree::update`] rebuilt the tree instead (most points moved).
    pub rebuilt: bool,
}

/// Above this fraction of moved points, [`Octree::update`] rebuilds instead of patching:
/// each moved point touches one node per level whose ancestor changed, so when nearly all
/// move, sorting those changes costs more than sorting the points once.
pub const REBUILD_FRACTION: f64 = 0.25;

/// Signed change of one node: count and channel sums.
#[derive(Clone, Copy, Debug, Default)]
struct Delta {
    count: i64,
    sum: [i64; 5],
}

impl Octree {
    /// Doubles the root towards `p`: the old root becomes octant `o` of the new one, the old
    /// leaf level merges into its parents (the depth stays), every key gains the octant.
    /// Returns the octant, to re-key old leaf codes.
    fn grow_towards(&mut self, p: [f32; 3]) -> Result<u32, OctreeError> {
        let (root, octant) = self.root.grow_towards(p);
        let depth = self.depth;
        // Old level l becomes new level l + 1; old leaves (level depth) are dropped since
        // their parents, old level depth - 1, become the new leaves.
        let from_level = depth.saturating_sub(1);
        let mut leaves = Level { keys: self.level_keys(from_level), nodes: self.level(from_level).to_vec() };
        for (k, n) in leaves.keys.iter_mut().zip(&mut leaves.nodes) {
            let value = *k ^ (1 << (3 * from_level));
            *k = (1 << (3 * (from_level + 1))) | ((octant as u64) << (3 * from_level)) | value;
            n.first_child = NO_CHILD;
            n.child_mask = 0;
        }
        if depth == 0 {
            // A depth-0 tree is one node: the root itself is the leaf.
            leaves.keys.iter_mut().for_each(|k| *k = 1);
        }
        *self = assemble(root, depth, leaves)?;
        Ok(octant)
    }

    /// Moves the points from `old` to `new` positions (same length and order as the points
    /// the tree was built from, with their attributes) and updates the tree in place.
    ///
    /// ```
    /// use lumbre_octree::{Attrs, Octree};
    /// let old = [[0.0, 0.0, 0.0], [1.0, 1.0, 1.0]];
    /// let attrs = [Attrs::default(); 2];
    /// let (mut tree, _) = Octree::build(&old, &attrs, 3).unwrap();
    /// let new = [[0.0, 0.0, 0.0], [1.5, 1.0, 1.0]]; // leaves the root box: the root doubles
    /// let report = tree.update(&old, &new, &attrs).unwrap();
    /// assert_eq!(report.root_growths, 1);
    /// let (fresh, _) = Octree::build_in(&new, &attrs, 3, tree.root).unwrap();
    /// assert_eq!(tree, fresh);
    /// ```
    pub fn update(&mut self, old: &[[f32; 3]], new: &[[f32; 3]], attrs: &[Attrs]) -> Result<UpdateReport, OctreeError> {
        self.update_with(old, new, attrs, REBUILD_FRACTION)
    }

    /// The thesis's update, always in place (no rebuild however many points move).
    pub fn update_in_place(
        &mut self,
        old: &[[f32; 3]],
        new: &[[f32; 3]],
        attrs: &[Attrs],
    ) -> Result<UpdateReport, OctreeError> {
        self.update_with(old, new, attrs, f64::INFINITY)
    }

    fn update_with(
        &mut self,
        old: &[[f32; 3]],
        new: &[[f32; 3]],
        attrs: &[Attrs],
        rebuild_above: f64,
    ) -> Result<UpdateReport, OctreeError> {
        check(old.len(), attrs.len(), self.depth)?;
        check(new.len(), attrs.len(), self.depth)?;
        let mut report = UpdateReport::default();
        // Old leaf codes: from the old positions in the root the tree was built with.
        let (old_keep, _) = finite_points(old);
        let q_old = quantizer(self.root, self.depth);
        let mut old_code: Vec<Option<u64>> = vec![None; old.len()];
        for &i in &old_keep {
            old_code[i as usize] = Some(leaf_code(&q_old, old[i as usize]));
        }
        // Grow the root until every new point fits, re-keying the old codes each time.
        let (new_keep, _) = finite_points(new);
        while let Some(&i) = new_keep.iter().find(|&&i| !self.root.contains(new[i as usize])) {
            if report.root_growths >= 64 {
                return Err(OctreeError::Outside { index: i as usize, point: new[i as usize] });
            }
            let octant = self.grow_towards(new[i as usize])?;
            report.root_growths += 1;
            let d = self.depth;
            for c in old_code.iter_mut().flatten() {
                *c = if d == 0 { 0 } else { ((octant as u64) << (3 * (d - 1))) | (*c >> 3) };
            }
        }
        let q_new = quantizer(self.root, self.depth);
        let mut new_code: Vec<Option<u64>> = vec![None; new.len()];
        for &i in &new_keep {
            new_code[i as usize] = Some(leaf_code(&q_new, new[i as usize]));
        }
        let moved = (0..new.len()).filter(|&i| old_code[i] != new_code[i]).count();
        if moved as f64 > rebuild_above * new.len().max(1) as f64 {
            let (fresh, _) = Octree::build_in(new, attrs, self.depth, self.root)?;
            *self = fresh;
            report.moved = moved;
            report.rebuilt = true;
            return Ok(report);
        }
        // Per-level deltas, keyed by level-prefixed node key.
        let d = self.depth;
        // (node key, point index, +1 or -1) for every ancestor a moved point leaves or enters;
        // sorted and summed per key below (a sort beats a map here).
        let mut changes: Vec<(u64, u32, i8)> = Vec::new();
        let mut apply = |key: u64, sign: i8, i: usize| changes.push((key, i as u32, sign));
        for i in 0..new.len() {
            let (o, n) = (old_code[i], new_code[i]);
            if o == n {
                continue;
            }
            report.moved += 1;
            for l in 0..=d {
                let shift = 3 * (d - l);
                let anc = |c: u64| (1u64 << (3 * l)) | (c >> shift);
                let (oa, na) = (o.map(anc), n.map(anc));
                if oa != na {
                    if let Some(k) = oa {
                        apply(k, -1, i);
                    }
                    if let Some(k) = na {
                        apply(k, 1, i);
                    }
                }
            }
        }
        if changes.is_empty() {
            return Ok(report);
        }
        changes.sort_unstable_by_key(|c| c.0);
        let mut deltas: Vec<(u64, Delta)> = Vec::new();
        for &(key, i, sign) in &changes {
            if deltas.last().is_none_or(|d| d.0 != key) {
                deltas.push((key, Delta::default()));
            }
            let d = &mut deltas.last_mut().expect("pushed above").1;
            let sign = sign as i64;
            d.count += sign;
            for (s, c) in d.sum.iter_mut().zip(attrs[i as usize].channels()) {
                *s += sign * c as i64;
            }
        }
        // Merge the deltas into each level, deepest first, then relink parents.
        let mut pending = deltas.into_iter().peekable();
        let mut merged_levels: Vec<Level> = Vec::new();
        let mut keys = self.level_keys(0);
        for l in 0..=d {
            if l > 0 {
                keys = self.child_keys(l - 1, &keys);
            }
            let level_end = 1u128 << (3 * (l + 1)); // keys of level l are below this
            let mut out = Level { keys: Vec::with_capacity(keys.len()), nodes: Vec::with_capacity(keys.len()) };
            let mut existing = keys.iter().copied().zip(self.level(l).iter().copied()).peekable();
            loop {
                let next_delta = pending.peek().filter(|(k, _)| (*k as u128) < level_end).map(|(k, _)| *k);
                let next_node = existing.peek().map(|(k, _)| *k);
                let (key, node, delta) = match (next_node, next_delta) {
                    (None, None) => break,
                    (Some(a), Some(b)) if a == b => (a, existing.next().map(|e| e.1), pending.next().map(|p| p.1)),
                    (Some(a), Some(b)) if a < b => (a, existing.next().map(|e| e.1), None),
                    (Some(a), None) => (a, existing.next().map(|e| e.1), None),
                    (_, Some(b)) => (b, None, pending.next().map(|p| p.1)),
                };
                let mut n = node.unwrap_or(Node { first_child: NO_CHILD, ..Default::default() });
                if let Some(dl) = delta {
                    let count = n.count as i64 + dl.count;
                    if count <= 0 {
                        report.deleted += node.is_some() as usize;
                        continue;
                    }
                    report.created += node.is_none() as usize;
                    n.count = count as u32;
                    for (s, x) in n.sum.iter_mut().zip(dl.sum) {
                        *s = (*s as i64 + x) as u32;
                    }
                }
                out.keys.push(key);
                out.nodes.push(n);
            }
            merged_levels.push(out);
        }
        // Relink: the children of a level-l node are the run of level l + 1 whose keys
        // have it as parent; positions shift where nodes were created or deleted.
        for l in 0..d as usize {
            let (upper, lower) = merged_levels.split_at_mut(l + 1);
            let (parents, children) = (&mut upper[l], &lower[0].keys);
            let mut c = 0;
            for (&key, p) in parents.keys.iter().zip(&mut parents.nodes) {
                while c < children.len() && children[c] >> 3 < key {
                    c += 1;
                }
                p.first_child = c as u32;
                p.child_mask = 0;
                let mut k = c;
                while k < children.len() && children[k] >> 3 == key {
                    p.child_mask |= 1 << (children[k] & 7);
                    k += 1;
                }
            }
        }
        (self.nodes, self.levels) =
            concat_levels(merged_levels.iter().map(|l| l.nodes.as_slice()), |n| &mut n.first_child);
        Ok(report)
    }
}
