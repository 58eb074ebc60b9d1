//! The flat, GPU-ready layout of a triangle kd-tree: 8-byte nodes in depth-first order and
//! one array of triangle indices that the leaves point into.

use bytemuck::{Pod, Zeroable};

use crate::aabb::Aabb;

/// The deepest a [`KdTree`] may be; [`BuildOptions::max_depth`](crate::BuildOptions::max_depth)
/// is clamped to it. It is also the size of the fixed stack of
/// [`Traversal::Stack`](crate::Traversal::Stack): the stack only holds far siblings of the
/// nodes on the current path, so it never needs more entries than the tree has levels.
///
/// ```
/// assert_eq!(lumbre_kdtree::MAX_DEPTH, 64);
/// ```
pub const MAX_DEPTH: u32 = 64;

/// Low 2 bits of [`KdNode::b`] that mark a leaf (0, 1 and 2 are split axes).
const LEAF_TAG: u32 = 3;

/// The largest value that fits the 30 high bits of [`KdNode::b`].
pub(crate) const MAX_FIELD: u32 = (1 << 30) - 1;

/// One node of a [`KdTree`], 8 bytes, uploaded to the GPU as is.
///
/// - Interior node: `a` is the split position as `f32` bits; `b` is the axis (0, 1, 2) in its
///   low 2 bits and the index of the *above* child (coordinates `>= split`) in the other 30.
///   The *below* child is always the next node, `index + 1` (depth-first layout).
/// - Leaf: the low 2 bits of `b` are 3 and the other 30 hold the number of triangles; `a` is
///   the offset of the leaf's first entry in [`KdTree::prim_indices`].
///
/// ```
/// use lumbre_kdtree::KdNode;
///
/// let inner = KdNode::interior(2, -0.25, 7);
/// assert!(!inner.is_leaf());
/// assert_eq!((inner.axis(), inner.split(), inner.above_child()), (2, -0.25, 7));
///
/// let leaf = KdNode::leaf(40, 3);
/// assert!(leaf.is_leaf());
/// assert_eq!((leaf.prim_offset(), leaf.prim_count()), (40, 3));
/// assert_eq!(bytemuck::bytes_of(&leaf).len(), 8);
/// ```
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable, Debug, PartialEq)]
pub struct KdNode {
    /// Split position (`f32` bits) of an interior node, or first-primitive offset of a leaf.
    pub a: u32,
    /// Axis or leaf tag in the low 2 bits; above-child index or primitive count in the rest.
    pub b: u32,
}

impl KdNode {
    /// An interior node splitting `axis` (0 = x, 1 = y, 2 = z) at `split`, whose above child
    /// is node `above`. Panics if `axis > 2` or `above` needs more than 30 bits.
    ///
    /// ```
    /// let n = lumbre_kdtree::KdNode::interior(0, 1.5, 3);
    /// assert_eq!(n.b, 3 << 2);
    /// assert_eq!(f32::from_bits(n.a), 1.5);
    /// ```
    pub fn interior(axis: u32, split: f32, above: u32) -> KdNode {
        assert!(axis < 3, "split axis {axis} is not 0, 1 or 2");
        assert!(above <= MAX_FIELD, "node index {above} does not fit in 30 bits");
        KdNode { a: split.to_bits(), b: axis | (above << 2) }
    }

    /// A leaf holding `count` triangles whose indices start at `offset` in
    /// [`KdTree::prim_indices`]. Panics if `count` needs more than 30 bits.
    ///
    /// ```
    /// let n = lumbre_kdtree::KdNode::leaf(0, 0); // an empty leaf
    /// assert!(n.is_leaf() && n.prim_count() == 0);
    /// ```
    pub fn leaf(offset: u32, count: u32) -> KdNode {
        assert!(count <= MAX_FIELD, "leaf of {count} triangles does not fit in 30 bits");
        KdNode { a: offset, b: LEAF_TAG | (count << 2) }
    }

    /// Whether this node is a leaf.
    ///
    /// ```
    /// assert!(lumbre_kdtree::KdNode::leaf(0, 1).is_leaf());
    /// ```
    #[inline]
    pub fn is_leaf(&self) -> bool {
        self.b & 3 == LEAF_TAG
    }

    /// The split axis of an interior node (0, 1 or 2); 3 for a leaf.
    ///
    /// ```
    /// assert_eq!(lumbre_kdtree::KdNode::interior(1, 0.0, 2).axis(), 1);
    /// ```
    #[inline]
    pub fn axis(&self) -> u32 {
        self.b & 3
    }

    /// The split position of an interior node (meaningless for a leaf).
    ///
    /// ```
    /// assert_eq!(lumbre_kdtree::KdNode::interior(1, 4.0, 2).split(), 4.0);
    /// ```
    #[inline]
    pub fn split(&self) -> f32 {
        f32::from_bits(self.a)
    }

    /// The index of the above child of an interior node; the below child is `index + 1`.
    ///
    /// ```
    /// assert_eq!(lumbre_kdtree::KdNode::interior(1, 4.0, 9).above_child(), 9);
    /// ```
    #[inline]
    pub fn above_child(&self) -> u32 {
        self.b >> 2
    }

    /// The number of triangles of a leaf.
    ///
    /// ```
    /// assert_eq!(lumbre_kdtree::KdNode::leaf(5, 2).prim_count(), 2);
    /// ```
    #[inline]
    pub fn prim_count(&self) -> u32 {
        self.b >> 2
    }

    /// The offset of a leaf's first triangle index in [`KdTree::prim_indices`].
    ///
    /// ```
    /// assert_eq!(lumbre_kdtree::KdNode::leaf(5, 2).prim_offset(), 5);
    /// ```
    #[inline]
    pub fn prim_offset(&self) -> u32 {
        self.a
    }
}

/// A kd-tree over a caller's triangles, in the flat layout the GPU traversal reads.
///
/// The tree stores no triangles: leaves list indices into the slice given to
/// [`KdTree::build`], and every query takes that same slice again. Node 0 is the root;
/// `bounds` is the box of every triangle in the tree (all zeros for an empty tree, whose
/// root is one empty leaf). A built tree guarantees what a GPU traversal relies on: nodes in
/// depth-first order (below child at `index + 1`, above child further on), leaves' index
/// ranges following each other in that order, no leaf deeper than [`MAX_DEPTH`], finite
/// split positions strictly inside their cells, and every index valid in the triangle
/// slice. The fields are public so the arrays can be uploaded or stored as they are; the
/// queries assume a tree made by [`KdTree::build`] (a tree edited into breaking these rules
/// can make them panic).
///
/// ```
/// use glam::Vec3;
/// use lumbre_kdtree::{BuildOptions, KdTree, QueryOptions, Ray};
///
/// let tris = vec![[Vec3::ZERO, Vec3::X, Vec3::Y], [Vec3::Z, Vec3::X + Vec3::Z, Vec3::Y + Vec3::Z]];
/// let tree = KdTree::build(&tris, &BuildOptions::default());
/// let ray = Ray::new(Vec3::new(0.2, 0.2, -1.0), Vec3::Z);
/// let hit = tree.closest_hit(&tris, &ray, 0.0, f32::INFINITY, &QueryOptions::default()).unwrap();
/// assert_eq!((hit.tri, hit.t), (0, 1.0));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct KdTree {
    /// The nodes, depth first; node 0 is the root.
    pub nodes: Vec<KdNode>,
    /// Triangle indices (into the caller's slice) of every leaf, leaf after leaf.
    pub prim_indices: Vec<u32>,
    /// The box of all triangles in the tree: the root cell.
    pub bounds: Aabb,
    /// Input triangles left out of the tree (degenerate or not finite).
    pub(crate) skipped: usize,
    /// The SAH costs the tree was built with, for [`KdTree::stats`].
    pub(crate) traversal_cost: f32,
    pub(crate) intersection_cost: f32,
}

/// Figures about a built [`KdTree`], from [`KdTree::stats`].
///
/// ```
/// use glam::Vec3;
/// use lumbre_kdtree::{BuildOptions, KdTree};
///
/// let tree = KdTree::build(&[[Vec3::ZERO, Vec3::X, Vec3::Y]], &BuildOptions::default());
/// let s = tree.stats();
/// assert_eq!((s.nodes, s.leaves, s.prim_refs), (1, 1, 1));
/// assert_eq!(s.bytes, 8 + 4);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KdStats {
    /// Number of nodes, interior and leaves.
    pub nodes: usize,
    /// Number of leaves.
    pub leaves: usize,
    /// Leaves without triangles (the empty space the SAH cut off).
    pub empty_leaves: usize,
    /// Depth of the deepest leaf (the root is at depth 0).
    pub max_depth: u32,
    /// Mean number of triangles in the leaves that have any.
    pub avg_prims_per_leaf: f32,
    /// Length of [`KdTree::prim_indices`]: triangle references, counting duplicates.
    pub prim_refs: usize,
    /// The tree's SAH cost: `sum over interior nodes of C_t * SA(node) / SA(root)` plus
    /// `sum over leaves of C_i * count * SA(leaf) / SA(root)`, with the costs it was built with.
    pub sah_cost: f32,
    /// Bytes of the GPU arrays: 8 per node plus 4 per triangle reference.
    pub bytes: usize,
}

impl KdTree {
    /// How many input triangles were left out of the tree: those with a NaN or infinite
    /// coordinate and those of zero area (see [`is_valid_triangle`](crate::is_valid_triangle)).
    /// No query ever hits them, and neither do the brute-force functions.
    ///
    /// ```
    /// use glam::Vec3;
    /// use lumbre_kdtree::{BuildOptions, KdTree};
    ///
    /// let tris = [[Vec3::ZERO, Vec3::X, Vec3::Y], [Vec3::ZERO, Vec3::X, 2.0 * Vec3::X], [Vec3::NAN; 3]];
    /// assert_eq!(KdTree::build(&tris, &BuildOptions::default()).skipped(), 2);
    /// ```
    pub fn skipped(&self) -> usize {
        self.skipped
    }

    /// Whether the tree holds no triangle, so that every query misses.
    ///
    /// ```
    /// use lumbre_kdtree::{BuildOptions, KdTree};
    /// assert!(KdTree::build(&[], &BuildOptions::default()).is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.prim_indices.is_empty()
    }

    /// Counts nodes, leaves and references, and evaluates the tree's SAH cost.
    ///
    /// ```
    /// use lumbre_kdtree::{scenes::generated_scene, BuildOptions, KdTree};
    ///
    /// let tree = KdTree::build(&generated_scene(2000), &BuildOptions::default());
    /// let s = tree.stats();
    /// assert_eq!(s.nodes, tree.nodes.len());
    /// assert!(s.leaves > 1 && s.max_depth > 1);
    /// assert!(s.sah_cost < 1.5 * 2000.0, "better than one leaf of every triangle");
    /// ```
    pub fn stats(&self) -> KdStats {
        let mut s = KdStats {
            nodes: self.nodes.len(),
            leaves: 0,
            empty_leaves: 0,
            max_depth: 0,
            avg_prims_per_leaf: 0.0,
            prim_refs: self.prim_indices.len(),
            sah_cost: 0.0,
            bytes: self.nodes.len() * size_of::<KdNode>() + self.prim_indices.len() * size_of::<u32>(),
        };
        let root_area = self.bounds.surface_area() as f64;
        let mut cost = 0.0f64;
        let mut full_leaves = 0usize;
        let mut refs_in_full = 0usize;
        self.walk(|node, bounds, depth| {
            // A flat root (all triangles in one axis plane) still has positive area; an empty
            // tree has none, and then every relative area is taken as 1.
            let rel = if root_area > 0.0 { bounds.surface_area() as f64 / root_area } else { 1.0 };
            if node.is_leaf() {
                s.leaves += 1;
                s.max_depth = s.max_depth.max(depth);
                let n = node.prim_count() as usize;
                if n == 0 {
                    s.empty_leaves += 1;
                } else {
                    full_leaves += 1;
                    refs_in_full += n;
                }
                cost += self.intersection_cost as f64 * n as f64 * rel;
            } else {
                cost += self.traversal_cost as f64 * rel;
            }
        });
        s.avg_prims_per_leaf = if full_leaves > 0 { refs_in_full as f32 / full_leaves as f32 } else { 0.0 };
        s.sah_cost = cost as f32;
        s
    }

    /// Calls `f(node, cell, depth)` for every node, depth first, without recursion.
    pub(crate) fn walk(&self, mut f: impl FnMut(&KdNode, &Aabb, u32)) {
        let mut stack = vec![(0u32, self.bounds, 0u32)];
        while let Some((index, bounds, depth)) = stack.pop() {
            let node = &self.nodes[index as usize];
            f(node, &bounds, depth);
            if !node.is_leaf() {
                let (axis, split) = (node.axis() as usize, node.split());
                let (mut below, mut above) = (bounds, bounds);
                below.max[axis] = split;
                above.min[axis] = split;
                stack.push((node.above_child(), above, depth + 1));
                stack.push((index + 1, below, depth + 1));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoding_round_trips_at_the_extremes() {
        for axis in 0..3 {
            for split in [0.0f32, -0.0, 1.0, -3.5e-38, f32::MAX, f32::MIN, 1e-45] {
                for above in [0, 1, 12345, MAX_FIELD] {
                    let n = KdNode::interior(axis, split, above);
                    assert!(!n.is_leaf());
                    assert_eq!(n.axis(), axis);
                    assert_eq!(n.split().to_bits(), split.to_bits());
                    assert_eq!(n.above_child(), above);
                }
            }
        }
        for offset in [0, 1, u32::MAX] {
            for count in [0, 1, 7, MAX_FIELD] {
                let n = KdNode::leaf(offset, count);
                assert!(n.is_leaf());
                assert_eq!(n.axis(), 3);
                assert_eq!((n.prim_offset(), n.prim_count()), (offset, count));
            }
        }
    }

    #[test]
    #[should_panic(expected = "30 bits")]
    fn oversized_child_index_is_refused() {
        KdNode::interior(0, 0.0, MAX_FIELD + 1);
    }

    #[test]
    #[should_panic(expected = "not 0, 1 or 2")]
    fn axis_three_is_not_an_interior_node() {
        KdNode::interior(3, 0.0, 1);
    }

    #[test]
    fn node_is_eight_bytes_and_pod() {
        assert_eq!(size_of::<KdNode>(), 8);
        let nodes = [KdNode::interior(1, 2.0, 2), KdNode::leaf(3, 4)];
        let words: &[u32] = bytemuck::cast_slice(&nodes);
        assert_eq!(words, &[2.0f32.to_bits(), 1 | (2 << 2), 3, 3 | (4 << 2)]);
    }
}
