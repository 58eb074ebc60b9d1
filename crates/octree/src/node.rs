//! The octree's flat layout: one array of nodes, level by level, root first. Nodes hold no
//! keys: a node's key follows from where it sits (its level, and its parent's child mask),
//! which keeps nodes small and lets the depth go to 21 whatever the key width.

use lumbre_morton::NodeKey64;
use rayon::prelude::*;

/// Marks a node without children.
pub const NO_CHILD: u32 = u32::MAX;

/// Deepest level the octree supports: 21 (a 2^21 grid of leaves per axis, keys in a `u64`).
pub const MAX_DEPTH: u32 = NodeKey64::MAX_LEVEL;

/// One node of the editable [`Octree`] (32 bytes); the GPU holds the packed form
/// ([`crate::PackedOctree`]).
///
/// Payloads are exact integer sums of the points' 8-bit attributes, so any two builds of
/// the same points (CPU or GPU, fresh or updated) agree bit for bit; the mean colour is
/// `sum / (255 * count)`.
///
/// ```
/// use lumbre_octree::Node;
/// let n = Node { first_child: lumbre_octree::NO_CHILD, child_mask: 0, count: 2, sum: [510, 0, 255, 0, 0] };
/// assert_eq!(n.mean_color(), [1.0, 0.0, 0.5]);
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, bytemuck::Pod, bytemuck::Zeroable)]
pub struct Node {
    /// Index of the first child in the node array, [`NO_CHILD`] for leaves. Children are
    /// contiguous, in octant order.
    pub first_child: u32,
    /// Bit `o` set if child octant `o` exists.
    pub child_mask: u32,
    /// Points inside the node.
    pub count: u32,
    /// Sums over those points of red, green, blue, reflection and refraction (0..=255 each).
    pub sum: [u32; 5],
}

impl Node {
    /// Index of child `octant`, if it exists.
    ///
    /// ```
    /// use lumbre_octree::Node;
    /// let n = Node { child_mask: 0b1010_0000, first_child: 7, ..Default::default() };
    /// assert_eq!((n.child(5), n.child(6), n.child(7)), (Some(7), None, Some(8)));
    /// ```
    pub fn child(&self, octant: u32) -> Option<u32> {
        if octant < 8 && self.child_mask & (1 << octant) != 0 {
            Some(self.first_child + (self.child_mask & ((1 << octant) - 1)).count_ones())
        } else {
            None
        }
    }

    /// Mean colour in 0..=1.
    pub fn mean_color(&self) -> [f32; 3] {
        let c = self.count.max(1) as f32 * 255.0;
        [self.sum[0] as f32 / c, self.sum[1] as f32 / c, self.sum[2] as f32 / c]
    }

    /// Mean reflection and refraction factors in 0..=1.
    pub fn mean_factors(&self) -> [f32; 2] {
        let c = self.count.max(1) as f32 * 255.0;
        [self.sum[3] as f32 / c, self.sum[4] as f32 / c]
    }
}

/// The cubic root box: `[min, min + size]` on every axis.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Root {
    /// Lower corner.
    pub min: [f32; 3],
    /// Side length.
    pub size: f32,
}

impl Root {
    /// The smallest cube at the lower corner of the points' bounds that contains them;
    /// `None` if no point is finite.
    ///
    /// ```
    /// let r = lumbre_octree::Root::around(&[[0.0, 0.0, 0.0], [2.0, 1.0, 0.5]]).unwrap();
    /// assert_eq!((r.min, r.size), ([0.0; 3], 2.0));
    /// ```
    pub fn around(points: &[[f32; 3]]) -> Option<Root> {
        let (min, max) = lumbre_morton::Quantizer::bounds(points)?;
        let size = (0..3).map(|a| max[a] - min[a]).fold(0.0f32, f32::max);
        let mut size = if size > 0.0 { size } else { 1.0 };
        // `min + (max - min)` can round below `max`: widen by an ulp until the cube holds it.
        while (0..3).any(|a| min[a] + size < max[a]) {
            size = size.next_up();
        }
        Some(Root { min, size })
    }

    /// The root twice as large that holds this one as a child and extends towards `p`
    /// (below on each axis where `p` is below), with the octant this root becomes.
    ///
    /// ```
    /// let r = lumbre_octree::Root { min: [0.0; 3], size: 1.0 };
    /// let (g, octant) = r.grow_towards([-0.5, 0.5, 2.0]);
    /// assert_eq!((g.min, g.size, octant), ([-1.0, 0.0, 0.0], 2.0, 0b001));
    /// ```
    pub fn grow_towards(&self, p: [f32; 3]) -> (Root, u32) {
        let mut octant = 0;
        let mut min = self.min;
        for a in 0..3 {
            if p[a] < self.min[a] {
                min[a] -= self.size;
                octant |= 1 << a;
            }
        }
        (Root { min, size: 2.0 * self.size }, octant)
    }

    /// This root grown (doubling, as [`Root::grow_towards`]) until it holds every finite
    /// point, and how many times it grew; at most 64 doublings.
    pub fn grown_to_fit(&self, points: &[[f32; 3]]) -> (Root, u32) {
        let mut root = *self;
        let mut growths = 0;
        while growths < 64 {
            match points.iter().find(|p| p.iter().all(|c| c.is_finite()) && !root.contains(**p)) {
                Some(p) => {
                    root = root.grow_towards(*p).0;
                    growths += 1;
                }
                None => break,
            }
        }
        (root, growths)
    }

    /// Upper corner.
    pub fn max(&self) -> [f32; 3] {
        std::array::from_fn(|a| self.min[a] + self.size)
    }

    /// Whether `p` is inside (boundary included).
    pub fn contains(&self, p: [f32; 3]) -> bool {
        (0..3).all(|a| p[a] >= self.min[a] && p[a] <= self.min[a] + self.size)
    }
}

/// A linear sparse octree: nodes exist only where points are.
///
/// `nodes` holds every level in turn, root first; within a level nodes are sorted by key,
/// so `levels[l]..levels[l + 1]` is level `l` and children of a node are contiguous in the
/// next level.
#[derive(Clone, Debug, PartialEq)]
pub struct Octree {
    /// The root cube.
    pub root: Root,
    /// Depth of the leaves (the root is level 0).
    pub depth: u32,
    /// All nodes, level by level.
    pub nodes: Vec<Node>,
    /// `depth + 2` offsets: level `l` is `nodes[levels[l]..levels[l + 1]]`.
    pub levels: Vec<u32>,
}

impl Octree {
    /// The nodes of level `l`.
    pub fn level(&self, l: u32) -> &[Node] {
        &self.nodes[self.levels[l as usize] as usize..self.levels[l as usize + 1] as usize]
    }

    /// Number of points in the tree.
    pub fn points(&self) -> u32 {
        self.nodes.first().map_or(0, |n| n.count)
    }

    /// Bytes of the node array and level offsets (the GPU holds the packed form instead:
    /// [`crate::PackedOctree::bytes`]).
    pub fn bytes(&self) -> usize {
        self.nodes.len() * size_of::<Node>() + self.levels.len() * 4
    }

    /// The level of node `i`.
    ///
    /// ```
    /// use lumbre_octree::{Attrs, Octree};
    /// let (tree, _) = Octree::build(&[[0.0; 3], [1.0; 3]], &[Attrs::default(); 2], 2).unwrap();
    /// assert_eq!((0..tree.nodes.len()).map(|i| tree.level_of(i)).collect::<Vec<_>>(), [0, 1, 1, 2, 2]);
    /// ```
    pub fn level_of(&self, i: usize) -> u32 {
        (self.levels.partition_point(|&start| start as usize <= i) - 1) as u32
    }

    /// The key of node `i`: its parent is the node of the level above whose children hold
    /// `i` (a binary search, children being in key order), up to the root.
    ///
    /// ```
    /// use lumbre_octree::{Attrs, Octree};
    /// use lumbre_morton::NodeKey64;
    /// let (tree, _) = Octree::build(&[[0.0; 3], [1.0; 3]], &[Attrs::default(); 2], 2).unwrap();
    /// let last = tree.nodes.len() - 1;
    /// assert_eq!(tree.key(last), NodeKey64::from_cell(2, [3, 3, 3]).unwrap());
    /// assert_eq!(tree.find(tree.key(last)), Some(last));
    /// ```
    pub fn key(&self, i: usize) -> NodeKey64 {
        let l = self.level_of(i);
        if l == 0 {
            return NodeKey64::ROOT;
        }
        let parents = self.level(l - 1);
        let p = parents.partition_point(|n| n.first_child as usize <= i) - 1;
        let parent = &parents[p];
        // The octant is the (k+1)-th set bit of the mask, k = i - first_child.
        let k = i as u32 - parent.first_child;
        let octant =
            (0..8).filter(|&o| parent.child_mask & (1 << o) != 0).nth(k as usize).expect("child of its parent");
        let parent_key = self.key(self.levels[l as usize - 1] as usize + p);
        parent_key.child(octant).expect("within MAX_DEPTH")
    }

    /// The keys of level `l`, in order (each level from the one above, root down); none
    /// for an empty tree or a level below the leaves.
    ///
    /// ```
    /// use lumbre_octree::{Attrs, Octree};
    /// let (tree, _) = Octree::build(&[[0.0; 3], [1.0; 3]], &[Attrs::default(); 2], 1).unwrap();
    /// assert_eq!(tree.level_keys(1), [0b1_000, 0b1_111]);
    /// ```
    pub fn level_keys(&self, l: u32) -> Vec<u64> {
        if self.nodes.is_empty() || l > self.depth {
            return Vec::new();
        }
        let mut keys = vec![NodeKey64::ROOT.0];
        for upper in 0..l {
            keys = self.child_keys(upper, &keys);
        }
        keys
    }

    /// The keys of level `upper + 1`, given those of level `upper`.
    pub(crate) fn child_keys(&self, upper: u32, keys: &[u64]) -> Vec<u64> {
        let mut next = Vec::with_capacity(self.level(upper + 1).len());
        for (n, &k) in self.level(upper).iter().zip(keys) {
            next.extend((0..8).filter(|o| n.child_mask & (1 << o) != 0).map(|o| (k << 3) | o as u64));
        }
        next
    }

    /// The box of node `i`.
    pub fn bounds(&self, i: usize) -> ([f32; 3], [f32; 3]) {
        self.key(i).bounds(self.root.min, self.root.size)
    }

    /// Index of the node with `key`, by descent from the root through the child masks.
    pub fn find(&self, key: NodeKey64) -> Option<usize> {
        let l = key.level();
        if l > self.depth || self.nodes.is_empty() {
            return None;
        }
        let mut i = 0;
        for upper in 1..=l {
            i = self.nodes[i].child(key.ancestor(upper)?.octant())? as usize;
        }
        Some(i)
    }
}

/// Levels laid one after another, root first, and the offset of each (plus the total);
/// `first_child` (reached through `first`) goes from an index within the next level to a
/// global one on every level but the last given, whose children live elsewhere or nowhere.
/// Copied and rewritten in parallel (hundreds of MB for millions of points: on one thread
/// this copy held up the other cores).
pub(crate) fn concat_levels<'a, T: Copy + Send + Sync + 'a>(
    levels: impl IntoIterator<Item = &'a [T]>,
    first: impl Fn(&mut T) -> &mut u32 + Sync,
) -> (Vec<T>, Vec<u32>) {
    let levels: Vec<&[T]> = levels.into_iter().collect();
    let mut offsets = vec![0u32];
    let mut nodes = Vec::with_capacity(levels.iter().map(|l| l.len()).sum());
    for level in &levels {
        nodes.par_extend(level.par_iter().copied());
        offsets.push(nodes.len() as u32);
    }
    for l in 0..offsets.len().saturating_sub(2) {
        let next = offsets[l + 1];
        nodes[offsets[l] as usize..next as usize].par_iter_mut().for_each(|n| *first(n) += next);
    }
    (nodes, offsets)
}
