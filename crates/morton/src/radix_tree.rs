//! Karras's radix tree (2012) over sorted 30-bit codes: the topology under a linear BVH or a
//! light tree built in Morton order. Internal node `i` covers a run of codes that has `i` at
//! one end and splits it where the run's common prefix ends; equal codes are told apart by
//! their positions' bits (as if each code were followed by its index), so any sorted input
//! gives `n - 1` internal nodes. The CPU half of `morton/radix_tree.wgsl`
//! (`gpu/radix_tree.rs`), bit for bit.

use lumbre_gpu::{Error, Result};
use rayon::prelude::*;

/// The parent of the root (and of the only leaf of a tree over one code).
pub const NO_PARENT: u32 = u32::MAX;

/// An internal node of a [`RadixTree`] over `n` codes, as the GPU stores it (16 bytes).
///
/// Children are node references: internal node `g` is `g`, leaf `k` (the `k`-th sorted
/// code) is `n - 1 + k` ([`RadixTree::leaf`] tells them apart).
///
/// ```
/// let tree = lumbre_morton::RadixTree::build(&[0b001, 0b010, 0b100]);
/// let root = tree.nodes[0];
/// assert_eq!((root.left, root.right, root.prefix), (1, 4, 29)); // node 1, leaf 2
/// assert_eq!(root.parent, lumbre_morton::NO_PARENT);
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, bytemuck::Pod, bytemuck::Zeroable)]
pub struct RadixNode {
    /// The child that holds the lower codes.
    pub left: u32,
    /// The child that holds the higher codes.
    pub right: u32,
    /// Length of the common prefix of the node's codes: 0 to 32 over the codes' bits, then
    /// 32 plus the common prefix of the positions where the codes are all equal. A child's is
    /// longer than its parent's.
    pub prefix: u32,
    /// The parent node ([`NO_PARENT`] for the root, node 0).
    pub parent: u32,
}

/// Karras's radix tree over `n` sorted codes: `n - 1` internal nodes (none for fewer than
/// two codes), the root first, and the parent of every leaf.
///
/// ```
/// use lumbre_morton::RadixTree;
/// // Karras 2012, figure 3.
/// let codes = [0b00001, 0b00010, 0b00100, 0b00101, 0b10011, 0b11000, 0b11001, 0b11110];
/// let tree = RadixTree::build(&codes);
/// assert_eq!((tree.nodes[0].left, tree.nodes[0].right), (3, 4));
/// assert_eq!(tree.leaf(tree.nodes[4].left), Some(4)); // node 4's left child is leaf 4
/// assert_eq!(tree.leaf_parents, [1, 1, 2, 2, 4, 6, 6, 5]);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RadixTree {
    /// The internal nodes, the root first.
    pub nodes: Vec<RadixNode>,
    /// The parent of each leaf, in the codes' order ([`NO_PARENT`] for the only leaf of a
    /// tree over one code).
    pub leaf_parents: Vec<u32>,
}

impl RadixTree {
    /// Builds the tree over `codes`, which must be sorted ascending (unsorted codes give a
    /// tree, but not the radix tree of anything).
    ///
    /// ```
    /// let tree = lumbre_morton::RadixTree::build(&[5, 5, 5, 5]);
    /// // Equal codes split by their positions' bits: (0 1) (2 3).
    /// assert_eq!(tree.nodes.iter().map(|n| [n.left, n.right]).collect::<Vec<_>>(), [[1, 2], [3, 4], [5, 6]]);
    /// assert_eq!(tree.nodes[0].prefix, 32 + 30);
    /// ```
    pub fn build(codes: &[u32]) -> RadixTree {
        debug_assert!(codes.is_sorted(), "a radix tree needs sorted codes");
        let n = codes.len();
        let mut nodes: Vec<RadixNode> = (0..n.saturating_sub(1)).into_par_iter().map(|i| node(codes, i)).collect();
        let mut leaf_parents = vec![NO_PARENT; n];
        for i in 0..nodes.len() {
            for child in [nodes[i].left, nodes[i].right] {
                match (child as usize).checked_sub(n - 1) {
                    Some(k) => leaf_parents[k] = i as u32,
                    None => nodes[child as usize].parent = i as u32,
                }
            }
        }
        RadixTree { nodes, leaf_parents }
    }

    /// The sorted position of the leaf a child reference names, or `None` if it names an
    /// internal node.
    ///
    /// ```
    /// let tree = lumbre_morton::RadixTree::build(&[1, 2]);
    /// assert_eq!((tree.leaf(tree.nodes[0].left), tree.leaf(tree.nodes[0].right)), (Some(0), Some(1)));
    /// ```
    pub fn leaf(&self, child: u32) -> Option<usize> {
        (child as usize).checked_sub(self.nodes.len())
    }
}

/// The common prefix of sorted codes `i` and `j`, with the positions' bits after the code's
/// when the codes are equal; -1 outside `0..n`.
#[inline]
fn delta(codes: &[u32], i: i64, j: i64) -> i32 {
    if j < 0 || j >= codes.len() as i64 {
        return -1;
    }
    let (a, b) = (codes[i as usize], codes[j as usize]);
    if a != b { (a ^ b).leading_zeros() as i32 } else { 32 + ((i ^ j) as u32).leading_zeros() as i32 }
}

/// Internal node `i`: the direction of its run, the run's other end by an exponential then
/// a binary search, and the split by a binary search (Karras 2012, figure 4). Its parent is
/// set by the caller.
fn node(codes: &[u32], i: usize) -> RadixNode {
    let n = codes.len() as i64;
    let i = i as i64;
    let d: i64 = if delta(codes, i, i + 1) > delta(codes, i, i - 1) { 1 } else { -1 };
    let d_min = delta(codes, i, i - d);
    let mut l_max: i64 = 2;
    while delta(codes, i, i + l_max * d) > d_min {
        l_max *= 2;
    }
    let mut l = 0;
    let mut t = l_max / 2;
    while t >= 1 {
        if delta(codes, i, i + (l + t) * d) > d_min {
            l += t;
        }
        t /= 2;
    }
    let j = i + l * d;
    let d_node = delta(codes, i, j);
    let mut s = 0;
    let mut t = l;
    loop {
        t = (t + 1) / 2;
        if delta(codes, i, i + (s + t) * d) > d_node {
            s += t;
        }
        if t <= 1 {
            break;
        }
    }
    let gamma = i + s * d + d.min(0);
    let leaf = |k: i64| (n - 1 + k) as u32;
    let left = if i.min(j) == gamma { leaf(gamma) } else { gamma as u32 };
    let right = if i.max(j) == gamma + 1 { leaf(gamma + 1) } else { (gamma + 1) as u32 };
    RadixNode { left, right, prefix: d_node as u32, parent: NO_PARENT }
}

/// Builds the [`RadixTree`] over sorted codes, on the CPU ([`RadixTree::build`]) or the GPU,
/// bit for bit alike.
///
/// ```
/// use lumbre_gpu::{Backend, Compute};
/// use lumbre_morton::{RadixTree, RadixTreeBuild};
/// let codes = [1, 2, 2, 7];
/// assert_eq!(RadixTreeBuild.run(&Backend::Cpu, &codes).unwrap(), RadixTree::build(&codes));
/// assert!(RadixTreeBuild.run(&Backend::Cpu, &[2, 1]).is_err()); // not sorted
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RadixTreeBuild;

impl RadixTreeBuild {
    /// The CPU path: [`RadixTree::build`] over `codes`, which must be sorted.
    ///
    /// ```
    /// use lumbre_morton::{RadixTree, RadixTreeBuild};
    /// assert_eq!(RadixTreeBuild.cpu(&[1, 2, 2, 7])?, RadixTree::build(&[1, 2, 2, 7]));
    /// assert!(RadixTreeBuild.cpu(&[2, 1]).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn cpu(&self, codes: &[u32]) -> Result<RadixTree> {
        check_sorted(codes)?;
        Ok(RadixTree::build(codes))
    }
}

/// The error for codes that are not sorted.
pub(crate) fn check_sorted(codes: &[u32]) -> Result<()> {
    match codes.windows(2).position(|w| w[0] > w[1]) {
        Some(i) => Err(Error::Input(format!("a radix tree needs sorted codes: code {} > code {}", i, i + 1))),
        None => Ok(()),
    }
}
