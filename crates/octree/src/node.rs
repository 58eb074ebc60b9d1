//! The octree's flat layout: one array of nodes, level by level, root first.

use lumbre_morton::NodeKey32;

/// Marks a node without children.
pub const NO_CHILD: u32 = u32::MAX;

/// Deepest level the octree supports: 10 (keys in a `u32`, a 1024³ grid of leaves).
pub const MAX_DEPTH: u32 = NodeKey32::MAX_LEVEL;

/// One octree node (36 bytes), uploaded to the GPU as is.
///
/// Payloads are exact integer sums of the points' 8-bit attributes, so any two builds of
/// the same points (CPU or GPU, fresh or updated) agree bit for bit; the mean colour is
/// `sum / (255 * count)`.
///
/// ```
/// use lumbre_octree::Node;
/// let n = Node { key: 1, first_child: lumbre_octree::NO_CHILD, child_mask: 0, count: 2, sum: [510, 0, 255, 0, 0] };
/// assert_eq!(n.mean_color(), [1.0, 0.0, 0.5]);
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, bytemuck::Pod, bytemuck::Zeroable)]
pub struct Node {
    /// Level-prefixed Morton key ([`NodeKey32`]).
    pub key: u32,
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
    /// The node's key.
    pub fn node_key(&self) -> NodeKey32 {
        NodeKey32(self.key)
    }

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

    /// Bytes of the node array (what lives on the GPU for rendering).
    pub fn bytes(&self) -> usize {
        self.nodes.len() * size_of::<Node>() + self.levels.len() * 4
    }

    /// The box of node `i`.
    pub fn bounds(&self, i: usize) -> ([f32; 3], [f32; 3]) {
        self.nodes[i].node_key().bounds(self.root.min, self.root.size)
    }

    /// Index of the node with `key`, by binary search in its level.
    pub fn find(&self, key: lumbre_morton::NodeKey32) -> Option<usize> {
        let l = key.level();
        if l > self.depth {
            return None;
        }
        let start = self.levels[l as usize] as usize;
        self.level(l).binary_search_by_key(&key.0, |n| n.key).ok().map(|i| start + i)
    }
}
