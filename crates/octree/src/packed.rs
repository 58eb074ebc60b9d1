//! The packed form of an octree, what the GPU stores and renders: interior nodes of 12 bytes
//! (first child, child mask, payload index) and payloads of 24 bytes (count and sums) shared
//! along chains. A node with one child holds exactly its child's points, so it points at its
//! child's payload instead of repeating it; leaves are payloads only. Sparse clouds at a
//! depth finer than their spacing are mostly such chains, which is where the bytes went.

use crate::node::{NO_CHILD, Node, Octree, Root, concat_levels};

pub mod twin;

/// An interior node of a [`PackedOctree`] (12 bytes).
///
/// ```
/// use lumbre_octree::{Attrs, Octree};
/// let (tree, _) = Octree::build(&[[0.0; 3], [1.0; 3]], &[Attrs::default(); 2], 1).unwrap();
/// let root = tree.pack().nodes[0];
/// // Two leaves, octants 0 and 7: the first two payloads; the root owns the third.
/// assert_eq!((root.first_child, root.child_mask, root.payload), (0, 0b1000_0001, 2));
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, bytemuck::Pod, bytemuck::Zeroable)]
pub struct Inner {
    /// Index of the first child: into [`PackedOctree::nodes`], or for nodes one level above
    /// the leaves, into [`PackedOctree::payloads`] (leaves are payloads `0..leaf_count`).
    /// Children are contiguous, in octant order.
    pub first_child: u32,
    /// Bit `o` set if child octant `o` exists.
    pub child_mask: u32,
    /// Index of the node's payload.
    pub payload: u32,
}

/// The points of a node: their count and the sums of their attributes, as in [`Node`].
///
/// ```
/// use lumbre_octree::{Attrs, Octree, Payload};
/// let red = Attrs { rgb: [255, 0, 0], reflection: 0, refraction: 0 };
/// let (tree, _) = Octree::build(&[[0.0; 3]], &[red], 3).unwrap();
/// assert_eq!(tree.pack().payloads, [Payload { count: 1, sum: [255, 0, 0, 0, 0] }]);
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, bytemuck::Pod, bytemuck::Zeroable)]
pub struct Payload {
    /// Points inside the node.
    pub count: u32,
    /// Sums of red, green, blue, reflection and refraction (0..=255 each).
    pub sum: [u32; 5],
}

/// An [`Octree`] packed for storage and rendering (see the module docs).
///
/// Payloads come leaves first (in level order), then one per interior node with other than
/// one child, level by level from the deepest; the GPU build produces the same order.
///
/// ```
/// use lumbre_octree::{Attrs, Octree};
/// let pts = [[0.0, 0.0, 0.0], [0.01, 0.0, 0.0], [1.0, 1.0, 1.0]];
/// let (tree, _) = Octree::build(&pts, &[Attrs::default(); 3], 4).unwrap();
/// let packed = tree.pack();
/// assert_eq!(packed.leaf_count(), 2);
/// // The root branches; the two chains below it share their leaves' payloads.
/// assert_eq!(packed.payloads.len(), 3);
/// assert_eq!(packed.unpack(), tree);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct PackedOctree {
    /// The root cube.
    pub root: Root,
    /// Depth of the leaves.
    pub depth: u32,
    /// Interior nodes (levels `0..depth`), level by level, root first.
    pub nodes: Vec<Inner>,
    /// `depth + 1` offsets: interior level `l` is `nodes[levels[l]..levels[l + 1]]`.
    pub levels: Vec<u32>,
    /// Payloads: the leaves', then the branching interior nodes'.
    pub payloads: Vec<Payload>,
}

impl Node {
    fn payload(&self) -> Payload {
        Payload { count: self.count, sum: self.sum }
    }
}

impl Octree {
    /// The packed form (what [`crate::GpuBuild`] builds on the GPU).
    pub fn pack(&self) -> PackedOctree {
        let d = self.depth;
        // Payload index of every node of the level below the one being packed.
        let leaves = self.level(d);
        let mut payloads: Vec<Payload> = leaves.iter().map(Node::payload).collect();
        let mut below: Vec<u32> = (0..leaves.len() as u32).collect();
        let mut levels_rev: Vec<Vec<Inner>> = Vec::new();
        for l in (0..d).rev() {
            let child_start = self.levels[l as usize + 1];
            let mut inner = Vec::with_capacity(self.level(l).len());
            for n in self.level(l) {
                let first = n.first_child - child_start;
                let payload = if n.child_mask.count_ones() == 1 {
                    below[first as usize]
                } else {
                    payloads.push(n.payload());
                    payloads.len() as u32 - 1
                };
                inner.push(Inner { first_child: first, child_mask: n.child_mask, payload });
            }
            below = inner.iter().map(|n| n.payload).collect();
            levels_rev.push(inner);
        }
        // The last interior level's children are the leaves: payload indices, left as they are.
        let (nodes, levels) = concat_levels(levels_rev.iter().rev().map(Vec::as_slice), |n| &mut n.first_child);
        PackedOctree { root: self.root, depth: d, nodes, levels, payloads }
    }
}

impl PackedOctree {
    /// Number of leaves (the first payloads).
    ///
    /// ```
    /// use lumbre_octree::{Attrs, Octree};
    /// let (tree, _) = Octree::build(&[[0.0; 3], [1.0; 3]], &[Attrs::default(); 2], 5).unwrap();
    /// let packed = tree.pack();
    /// assert_eq!((packed.leaf_count(), packed.points()), (2, 2));
    /// // 5 interior levels: the root branches, then two chains of 4 nodes.
    /// assert_eq!(packed.nodes.len(), 9);
    /// assert_eq!(packed.bytes(), 9 * 12 + 3 * 24 + 6 * 4);
    /// ```
    pub fn leaf_count(&self) -> usize {
        // Every payload is a leaf's or a branching interior node's.
        self.payloads.len() - self.nodes.iter().filter(|n| n.child_mask.count_ones() != 1).count()
    }

    /// Number of points in the tree (the root's count).
    pub fn points(&self) -> u32 {
        let root = if self.depth == 0 { Some(0) } else { self.nodes.first().map(|n| n.payload as usize) };
        root.and_then(|p| self.payloads.get(p)).map_or(0, |p| p.count)
    }

    /// Bytes of the packed tree: nodes, payloads and level offsets.
    pub fn bytes(&self) -> usize {
        self.nodes.len() * size_of::<Inner>() + self.payloads.len() * size_of::<Payload>() + self.levels.len() * 4
    }

    /// The [`Octree`] this was packed from.
    pub fn unpack(&self) -> Octree {
        let d = self.depth;
        let leaf_count = self.leaf_count();
        // Global offsets of the unpacked levels: interior levels, then the leaves.
        let mut levels = self.levels.clone();
        levels.push(self.nodes.len() as u32 + leaf_count as u32);
        let mut nodes: Vec<Node> = self
            .nodes
            .iter()
            .map(|n| {
                let p = self.payloads[n.payload as usize];
                Node { first_child: n.first_child, child_mask: n.child_mask, count: p.count, sum: p.sum }
            })
            .collect();
        if d > 0 {
            let last = levels[d as usize - 1] as usize..levels[d as usize] as usize;
            for n in &mut nodes[last] {
                n.first_child += levels[d as usize];
            }
        }
        nodes.extend(self.payloads[..leaf_count].iter().map(|p| Node {
            first_child: NO_CHILD,
            child_mask: 0,
            count: p.count,
            sum: p.sum,
        }));
        Octree { root: self.root, depth: d, nodes, levels }
    }
}
