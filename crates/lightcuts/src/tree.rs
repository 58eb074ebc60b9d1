//! The light tree: a binary tree over VPLs whose every node is a cluster of lights with its
//! bounds (box, cone of normals), total intensity and representative light. Both builders
//! (greedy and Morton) produce this one layout, which the GPU reads as it is.

use bytemuck::{Pod, Zeroable};
use glam::Vec3;
use lumbre_gpu::{Agree, Error, Result, Tolerance};
use lumbre_raytrace::sampling::{hash_f32, hash_u32};

use crate::bounds::Cone;
use crate::vpls::Vpl;

/// `left` and `right` of a leaf.
pub const LEAF: u32 = u32::MAX;

/// A node of a [`LightTree`]: 64 bytes, four 16-byte rows, as `lightcuts/light.wgsl`'s
/// `LightNode` reads it.
///
/// | offset | fields |
/// | --- | --- |
/// | 0 | `lo`, `left` |
/// | 16 | `hi`, `right` |
/// | 32 | `axis`, `cos` (the cone of normals) |
/// | 48 | `intensity`, `rep` |
///
/// ```
/// use glam::Vec3;
/// use lumbre_lightcuts::{LightNode, Vpl, twin::LEAF};
/// let leaf = LightNode::leaf(&Vpl { position: Vec3::ONE, normal: Vec3::Y, intensity: Vec3::splat(2.0) }, 7);
/// assert_eq!((leaf.left, leaf.right, leaf.rep), (LEAF, LEAF, 7));
/// assert!(leaf.is_leaf());
/// assert_eq!(std::mem::size_of::<LightNode>(), 64);
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct LightNode {
    /// Lower corner of the box of the cluster's lights.
    pub lo: Vec3,
    /// Left child (a node index), or [`LEAF`](crate::twin::LEAF).
    pub left: u32,
    /// Upper corner of the box.
    pub hi: Vec3,
    /// Right child, or [`LEAF`](crate::twin::LEAF).
    pub right: u32,
    /// Axis of the cone holding the lights' normals.
    pub axis: Vec3,
    /// Cosine of the cone's half-angle.
    pub cos: f32,
    /// Sum of the lights' intensities.
    pub intensity: Vec3,
    /// Index of the representative light in the tree's VPL list.
    pub rep: u32,
}

const _: () = assert!(size_of::<LightNode>() == 64);

impl LightNode {
    /// The leaf of VPL `index`.
    pub fn leaf(vpl: &Vpl, index: u32) -> LightNode {
        LightNode {
            lo: vpl.position,
            left: LEAF,
            hi: vpl.position,
            right: LEAF,
            axis: vpl.normal,
            cos: 1.0,
            intensity: vpl.intensity,
            rep: index,
        }
    }

    /// Whether this is a leaf (one light).
    pub fn is_leaf(&self) -> bool {
        self.left == LEAF
    }

    /// The cone of normals.
    pub fn cone(&self) -> Cone {
        Cone { axis: self.axis, cos: self.cos }
    }

    /// The scalar intensity the representative is drawn by: the sum of the channels.
    pub fn weight(&self) -> f32 {
        self.intensity.x + self.intensity.y + self.intensity.z
    }

    /// The cluster of children `a` and `b` stored at `index` (`a` left, `b` right): the
    /// union of their boxes and cones, the sum of their intensities, and `a`'s
    /// representative with probability `weight(a) / (weight(a) + weight(b))` by
    /// [`rep_uniform`](crate::twin::rep_uniform)`(seed, index)` (`a`'s when both weigh nothing).
    ///
    /// ```
    /// use glam::Vec3;
    /// use lumbre_lightcuts::{LightNode, Vpl};
    /// let v = |x: f32, i: f32| Vpl { position: Vec3::X * x, normal: Vec3::Y, intensity: Vec3::splat(i) };
    /// let (a, b) = (LightNode::leaf(&v(0.0, 1.0), 0), LightNode::leaf(&v(2.0, 0.0), 1));
    /// let c = LightNode::merge(&a, 3, &b, 4, 0, 9);
    /// assert_eq!((c.lo, c.hi, c.intensity), (Vec3::ZERO, Vec3::X * 2.0, Vec3::ONE));
    /// assert_eq!((c.left, c.right, c.rep), (3, 4, 0)); // b weighs nothing: never drawn
    /// ```
    pub fn merge(a: &LightNode, a_index: u32, b: &LightNode, b_index: u32, index: u32, seed: u32) -> LightNode {
        let cone = Cone::union(a.cone(), b.cone());
        let (wa, wb) = (a.weight(), b.weight());
        let rep = if rep_uniform(seed, index) * (wa + wb) < wa || wa + wb <= 0.0 { a.rep } else { b.rep };
        LightNode {
            lo: a.lo.min(b.lo),
            left: a_index,
            hi: a.hi.max(b.hi),
            right: b_index,
            axis: cone.axis,
            cos: cone.cos,
            intensity: a.intensity + b.intensity,
            rep,
        }
    }
}

/// The uniform number in `[0, 1)` that draws the representative of node `index` of a tree
/// built with `seed` (the WGSL twin is `rep_uniform` in `lightcuts/light.wgsl`).
///
/// ```
/// let u = lumbre_lightcuts::twin::rep_uniform(1, 2);
/// assert!((0.0..1.0).contains(&u));
/// assert_ne!(u, lumbre_lightcuts::twin::rep_uniform(1, 3));
/// ```
pub fn rep_uniform(seed: u32, index: u32) -> f32 {
    hash_f32(hash_u32(index) ^ hash_u32(seed.wrapping_mul(0x9e37_79b9) ^ 0x5bd1_e995))
}

/// A light tree over `n` VPLs: `2n - 1` nodes, the `n - 1` clusters first (the root at 0,
/// every child after its parent's index is not required) and then the leaves, leaf `k` at
/// `n - 1 + k`. Each node's `rep` indexes [`LightTree::vpls`].
///
/// ```
/// use glam::Vec3;
/// use lumbre_lightcuts::{LightTree, Vpl};
/// let vpls = vec![Vpl { position: Vec3::ZERO, normal: Vec3::Y, intensity: Vec3::ONE }];
/// let tree = LightTree::single(vpls).unwrap();
/// assert_eq!(tree.nodes.len(), 1);
/// assert!(tree.nodes[0].is_leaf());
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LightTree {
    /// The nodes.
    pub nodes: Vec<LightNode>,
    /// The lights, in the order `rep` indexes.
    pub vpls: Vec<Vpl>,
}

impl LightTree {
    /// The tree of a single light (its leaf is the root).
    pub fn single(vpls: Vec<Vpl>) -> Result<LightTree> {
        if vpls.len() != 1 {
            return Err(Error::Input(format!("a one-light tree of {} lights", vpls.len())));
        }
        Ok(LightTree { nodes: vec![LightNode::leaf(&vpls[0], 0)], vpls })
    }

    /// Number of lights.
    pub fn lights(&self) -> usize {
        self.vpls.len()
    }

    /// Index of the first leaf (`n - 1`).
    pub fn first_leaf(&self) -> usize {
        self.vpls.len().saturating_sub(1)
    }

    /// Depth of the deepest leaf (0 for a single light).
    pub fn depth(&self) -> usize {
        let mut deepest = 0;
        let mut stack = vec![(0u32, 0usize)];
        while let Some((i, d)) = stack.pop() {
            let n = &self.nodes[i as usize];
            deepest = deepest.max(d);
            if !n.is_leaf() {
                stack.push((n.left, d + 1));
                stack.push((n.right, d + 1));
            }
        }
        deepest
    }

    /// Checks the tree's invariants: `2n - 1` nodes, leaves where they belong and
    /// holding their light, every node reached exactly once from the root, every cluster's
    /// box, intensity and representative made of its children's. For tests and for trees
    /// that come from elsewhere.
    ///
    /// ```
    /// use glam::Vec3;
    /// use lumbre_lightcuts::{GreedyTree, Vpl};
    /// let vpls: Vec<Vpl> = (0..10).map(|i| Vpl { position: Vec3::X * i as f32, normal: Vec3::Y, intensity: Vec3::ONE }).collect();
    /// let mut tree = GreedyTree::default().build(&vpls).unwrap();
    /// assert!(tree.validate().is_ok());
    /// tree.nodes[0].rep = 99;
    /// assert!(tree.validate().is_err());
    /// ```
    pub fn validate(&self) -> Result<()> {
        let n = self.vpls.len();
        let bad = |what: String| Err(Error::Input(format!("light tree: {what}")));
        if n == 0 || self.nodes.len() != 2 * n - 1 {
            return bad(format!("{} nodes for {n} lights (need 2n - 1 and n > 0)", self.nodes.len()));
        }
        let mut seen = vec![false; self.nodes.len()];
        let mut stack = vec![0u32];
        while let Some(i) = stack.pop() {
            let Some(node) = self.nodes.get(i as usize) else { return bad(format!("child {i} out of range")) };
            if std::mem::replace(&mut seen[i as usize], true) {
                return bad(format!("node {i} reached twice"));
            }
            let leaf_slot = i as usize >= n - 1;
            if node.is_leaf() != leaf_slot || (node.left == LEAF) != (node.right == LEAF) {
                return bad(format!("node {i}: leaves are exactly the nodes from {}", n - 1));
            }
            if node.is_leaf() {
                if node.rep as usize >= n || *node != LightNode::leaf(&self.vpls[node.rep as usize], node.rep) {
                    return bad(format!("leaf {i} does not hold the data of light {}", node.rep));
                }
                continue;
            }
            let (Some(a), Some(b)) = (self.nodes.get(node.left as usize), self.nodes.get(node.right as usize)) else {
                return bad(format!("node {i}: children out of range"));
            };
            if node.lo != a.lo.min(b.lo) || node.hi != a.hi.max(b.hi) || node.intensity != a.intensity + b.intensity {
                return bad(format!("node {i}: box or intensity is not its children's"));
            }
            if node.rep != a.rep && node.rep != b.rep {
                return bad(format!("node {i}: representative {} is neither child's", node.rep));
            }
            stack.push(node.left);
            stack.push(node.right);
        }
        if let Some(i) = seen.iter().position(|s| !s) {
            return bad(format!("node {i} is not reached from the root"));
        }
        let mut lights: Vec<u32> = self.nodes[n - 1..].iter().map(|l| l.rep).collect();
        lights.sort_unstable();
        if lights.iter().enumerate().any(|(k, &r)| r as usize != k) {
            return bad("the leaves do not hold every light once".into());
        }
        Ok(())
    }
}

impl Agree for LightTree {
    /// Children and representatives exactly; boxes, cones and intensities within `tol` for
    /// all but the fraction `tol.beyond` of nodes (a cone around nearly opposite children
    /// has the normalised sum of their axes as its axis, which amplifies the last bits), and
    /// never the axis of a cone that is the whole sphere on both sides (it does not matter).
    fn disagreement(&self, gpu: &Self, tol: Tolerance) -> Option<String> {
        if self.nodes.len() != gpu.nodes.len() || self.vpls != gpu.vpls {
            return Some(format!("{} vs {} nodes, or different lights", self.nodes.len(), gpu.nodes.len()));
        }
        let topology = |i: usize| {
            let (a, b) = (&self.nodes[i], &gpu.nodes[i]);
            (a.left, a.right, a.rep) != (b.left, b.right, b.rep)
        };
        if let Some(i) = (0..self.nodes.len()).find(|&i| topology(i)) {
            return Some(format!("node {i} has other children: cpu {:?} gpu {:?}", self.nodes[i], gpu.nodes[i]));
        }
        let close = |a: Vec3, b: Vec3| (0..3).all(|k| tol.accepts(a[k] as f64, b[k] as f64));
        let bad: Vec<usize> = (0..self.nodes.len())
            .filter(|&i| {
                let (a, b) = (&self.nodes[i], &gpu.nodes[i]);
                !close(a.lo, b.lo)
                    || !close(a.hi, b.hi)
                    || !close(a.intensity, b.intensity)
                    || !((a.cos <= -1.0 && b.cos <= -1.0) || close(a.axis, b.axis))
                    || !tol.accepts(a.cos as f64, b.cos as f64)
            })
            .collect();
        (!bad.is_empty() && !tol.allows(bad.len(), self.nodes.len())).then(|| {
            let i = bad[0];
            format!(
                "{} of {} nodes differ; node {i}: cpu {:?} gpu {:?}",
                bad.len(),
                self.nodes.len(),
                self.nodes[i],
                gpu.nodes[i]
            )
        })
    }
}
