//! The CPU build: the reference the GPU build must match bit for bit.

use std::fmt;
use std::ops::Range;

use lumbre_compact::radix_sort_cpu;
use lumbre_morton::Quantizer;
use rayon::prelude::*;

use crate::attrs::Attrs;
use crate::node::{MAX_DEPTH, NO_CHILD, Node, Octree, Root, concat_levels};

pub mod twin;

/// Why an octree cannot be built or updated.
#[derive(Clone, Debug, PartialEq)]
pub enum OctreeError {
    /// Depth above [`MAX_DEPTH`].
    Depth(u32),
    /// Points and attributes differ in length.
    Lengths {
        /// Points given.
        points: usize,
        /// Attributes given.
        attrs: usize,
    },
    /// A point lies outside the given root box.
    Outside {
        /// Its index.
        index: usize,
        /// The point.
        point: [f32; 3],
    },
    /// No finite point at all.
    Empty,
    /// More points than the 32-bit payload sums can hold.
    TooManyPoints(usize),
    /// A level of this many nodes could not be allocated (the host's memory is exhausted).
    OutOfMemory {
        /// Nodes of the level.
        nodes: usize,
        /// The depth of the tree.
        depth: u32,
    },
}

impl fmt::Display for OctreeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OctreeError::Depth(d) => write!(f, "depth {d} is above the maximum of {MAX_DEPTH}"),
            OctreeError::Lengths { points, attrs } => write!(f, "{points} points but {attrs} attributes"),
            OctreeError::Outside { index, point } => write!(f, "point {index} at {point:?} lies outside the root box"),
            OctreeError::Empty => write!(f, "no finite point to build an octree from"),
            OctreeError::TooManyPoints(n) => write!(
                f,
                "{n} points: an octree holds at most {MAX_POINTS} (each node sums its points' 8-bit colours \
                 in 32 bits); use fewer points (subsample the cloud, or a smaller phantom grid)"
            ),
            OctreeError::OutOfMemory { nodes, depth } => write!(
                f,
                "depth {depth}: a level of {nodes} nodes ({} bytes) could not be allocated; use a smaller depth \
                 or fewer points",
                nodes * (size_of::<Node>() + size_of::<u64>())
            ),
        }
    }
}

impl std::error::Error for OctreeError {}

/// Most points a tree may hold: 255 of them per channel must fit a `u32` sum.
pub const MAX_POINTS: usize = (u32::MAX / 255) as usize;

/// What a build kept and dropped.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BuildReport {
    /// Points in the tree.
    pub points: usize,
    /// Points dropped for a NaN or infinite coordinate.
    pub dropped_non_finite: usize,
}

/// A point cloud: positions and their attributes (same length).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Points {
    /// Positions.
    pub positions: Vec<[f32; 3]>,
    /// Attributes, one per position.
    pub attrs: Vec<Attrs>,
}

/// Builds a [`PackedOctree`](crate::PackedOctree) on the GPU (or, with [`GpuBuild::cpu`], with
/// [`Octree::build`] and [`Octree::pack`]).
///
/// ```no_run
/// use lumbre_gpu::{Compute, Gpu};
/// use lumbre_octree::{Attrs, GpuBuild, Points};
/// let cloud = Points { positions: vec![[0.0; 3], [1.0; 3]], attrs: vec![Attrs::default(); 2] };
/// let tree = GpuBuild::new(8).gpu(&Gpu::new()?, &cloud)?;
/// assert_eq!(tree.points(), 2);
/// # Ok::<(), lumbre_gpu::Error>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub struct GpuBuild {
    /// Depth of the leaves (at most [`MAX_DEPTH`]).
    pub depth: u32,
    /// The root cube; `None`: the smallest cube around the points. A given root grows
    /// (doubling, as [`Octree::update`] does) until it holds every point, so rebuilding
    /// moved points in the previous root equals the in-place update.
    pub root: Option<Root>,
}

impl GpuBuild {
    /// A build at `depth` in the cube around the points.
    pub fn new(depth: u32) -> Self {
        GpuBuild { depth, root: None }
    }

    /// The CPU path: [`Octree::build_in`] in the root cube, packed.
    ///
    /// ```
    /// use lumbre_octree::{Attrs, GpuBuild, Points};
    /// let cloud = Points { positions: vec![[0.0; 3], [1.0; 3]], attrs: vec![Attrs::default(); 2] };
    /// assert_eq!(GpuBuild::new(8).cpu(&cloud)?.points(), 2);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn cpu(&self, cloud: &Points) -> lumbre_gpu::Result<crate::packed::PackedOctree> {
        let root = self.root_for(&cloud.positions)?;
        Octree::build_in(&cloud.positions, &cloud.attrs, self.depth, root).map(|(t, _)| t.pack()).map_err(err)
    }

    /// The root cube for `positions`: the given one grown to hold them, or the smallest
    /// cube around them.
    pub(crate) fn root_for(&self, positions: &[[f32; 3]]) -> lumbre_gpu::Result<Root> {
        match self.root {
            Some(r) => Ok(r.grown_to_fit(positions).0),
            None => Root::around(positions).ok_or_else(|| err(OctreeError::Empty)),
        }
    }
}

/// `e` as the error of the [`Compute`](lumbre_gpu::Compute) paths.
pub(crate) fn err(e: OctreeError) -> lumbre_gpu::Error {
    lumbre_gpu::Error::Input(e.to_string())
}

/// Indices of the finite points, and how many were dropped.
pub(crate) fn finite_points(points: &[[f32; 3]]) -> (Vec<u32>, usize) {
    let keep: Vec<u32> =
        (0..points.len() as u32).filter(|&i| points[i as usize].iter().all(|c| c.is_finite())).collect();
    let dropped = points.len() - keep.len();
    (keep, dropped)
}

/// The quantiser of leaf cells for `root` at `depth` (depth >= 1), as the builds use it.
///
/// ```
/// let q = lumbre_octree::quantizer_of(lumbre_octree::Root { min: [0.0; 3], size: 2.0 }, 3);
/// assert_eq!(q.cell([1.0, 0.0, 2.0], 0).unwrap(), [4, 0, 7]);
/// ```
pub fn quantizer_of(root: Root, depth: u32) -> Quantizer {
    let depth = depth.max(1);
    Quantizer { min: root.min, max: root.max(), scale: [(1u32 << depth) as f32 / root.size; 3], bits: depth }
}

/// The quantiser of leaf cells for `root` at `depth` (`None` at depth 0: one cell).
pub(crate) fn quantizer(root: Root, depth: u32) -> Option<Quantizer> {
    (depth > 0).then(|| Quantizer {
        min: root.min,
        max: root.max(),
        scale: [(1u32 << depth) as f32 / root.size; 3],
        bits: depth,
    })
}

/// Leaf cell code (Morton code at `depth` bits per axis) of a point inside the root.
pub(crate) fn leaf_code(q: &Option<Quantizer>, p: [f32; 3]) -> u64 {
    match q {
        Some(q) => lumbre_morton::encode_u64(q.cell_clamped(p)),
        None => 0,
    }
}

/// Sorts leaf codes with their point indices; codes of depth 10 or less sort as `u32`
/// (half the radix passes of a `u64` sort).
pub(crate) fn sort_codes(codes: &mut Vec<u64>, order: &mut [u32], depth: u32) {
    if depth <= lumbre_morton::NodeKey32::MAX_LEVEL {
        let mut narrow: Vec<u32> = codes.par_iter().map(|&c| c as u32).collect();
        radix_sort_cpu(&mut narrow, Some(order));
        *codes = narrow.into_par_iter().map(u64::from).collect();
    } else {
        radix_sort_cpu(codes, Some(order));
    }
}

pub(crate) fn check(points: usize, attrs: usize, depth: u32) -> Result<(), OctreeError> {
    if depth > MAX_DEPTH {
        return Err(OctreeError::Depth(depth));
    }
    if points != attrs {
        return Err(OctreeError::Lengths { points, attrs });
    }
    if points > MAX_POINTS {
        return Err(OctreeError::TooManyPoints(points));
    }
    Ok(())
}

impl Octree {
    /// Builds the octree of `points` at `depth` in the smallest cube around them. Points with
    /// a NaN or infinite coordinate are dropped and counted.
    ///
    /// ```
    /// use lumbre_octree::{Attrs, Octree};
    /// let pts = [[0.0, 0.0, 0.0], [1.0, 1.0, 1.0], [0.9, 0.9, 0.9]];
    /// let (tree, report) = Octree::build(&pts, &[Attrs::default(); 3], 2).unwrap();
    /// assert_eq!((tree.points(), report.dropped_non_finite), (3, 0));
    /// assert_eq!(tree.level(2).len(), 2); // the two upper points share a leaf
    /// ```
    pub fn build(points: &[[f32; 3]], attrs: &[Attrs], depth: u32) -> Result<(Octree, BuildReport), OctreeError> {
        let root = Root::around(points).ok_or(OctreeError::Empty)?;
        Self::build_in(points, attrs, depth, root)
    }

    /// Builds the octree of `points` in a given root cube; a finite point outside it is an
    /// error.
    pub fn build_in(
        points: &[[f32; 3]],
        attrs: &[Attrs],
        depth: u32,
        root: Root,
    ) -> Result<(Octree, BuildReport), OctreeError> {
        check(points.len(), attrs.len(), depth)?;
        let (keep, dropped) = finite_points(points);
        if let Some(&i) = keep.iter().find(|&&i| !root.contains(points[i as usize])) {
            return Err(OctreeError::Outside { index: i as usize, point: points[i as usize] });
        }
        let q = quantizer(root, depth);
        let mut codes: Vec<u64> = keep.par_iter().map(|&i| leaf_code(&q, points[i as usize])).collect();
        let mut order = keep;
        sort_codes(&mut codes, &mut order, depth);
        let leaves = leaf_level(&codes, &order, attrs, depth)?;
        let tree = assemble(root, depth, leaves)?;
        let report = BuildReport { points: codes.len(), dropped_non_finite: dropped };
        Ok((tree, report))
    }
}

/// One level under construction: its nodes and, in step, their keys.
pub(crate) struct Level {
    pub keys: Vec<u64>,
    pub nodes: Vec<Node>,
}

impl Level {
    /// The level with one node per run of equal keys among `0..n` (`key` sorted), each made
    /// by `node` from its run. Built in parallel: chunks of indices count the runs that
    /// start in them, then write those runs' nodes in place after the earlier chunks'. A
    /// level the allocator refuses is [`OctreeError::OutOfMemory`] (`depth` names the tree's).
    fn from_runs(
        n: usize,
        depth: u32,
        key: impl Fn(usize) -> u64 + Sync,
        node: impl Fn(Range<usize>) -> Node + Sync,
    ) -> Result<Level, OctreeError> {
        const CHUNK: usize = 1 << 14;
        let starts_run = |i: usize| i == 0 || key(i) != key(i - 1);
        let chunk = |c: usize| c * CHUNK..((c + 1) * CHUNK).min(n);
        let counts: Vec<usize> =
            (0..n.div_ceil(CHUNK)).into_par_iter().map(|c| chunk(c).filter(|&i| starts_run(i)).count()).collect();
        let total = counts.iter().sum();
        // Zeroed by the allocator (fresh pages), not by a pass over them; a refusal is an
        // error, not a panic.
        let refused = |()| OctreeError::OutOfMemory { nodes: total, depth };
        let mut level = Level {
            keys: bytemuck::try_zeroed_vec(total).map_err(refused)?,
            nodes: bytemuck::try_zeroed_vec(total).map_err(refused)?,
        };
        let mut parts = Vec::with_capacity(counts.len());
        let (mut keys, mut nodes) = (level.keys.as_mut_slice(), level.nodes.as_mut_slice());
        for &count in &counts {
            let (k, k_rest) = std::mem::take(&mut keys).split_at_mut(count);
            let (n, n_rest) = std::mem::take(&mut nodes).split_at_mut(count);
            parts.push((k, n));
            (keys, nodes) = (k_rest, n_rest);
        }
        parts.into_par_iter().enumerate().for_each(|(c, (keys, nodes))| {
            let mut i = chunk(c).start;
            // Skip the end of a run that began in an earlier chunk.
            while i < chunk(c).end && !starts_run(i) {
                i += 1;
            }
            for (k, node_out) in keys.iter_mut().zip(nodes) {
                let mut end = i + 1;
                while end < n && !starts_run(end) {
                    end += 1;
                }
                (*k, *node_out) = (key(i), node(i..end));
                i = end;
            }
        });
        Ok(level)
    }
}

/// Leaf nodes from sorted leaf codes and the point index of each.
pub(crate) fn leaf_level(codes: &[u64], order: &[u32], attrs: &[Attrs], depth: u32) -> Result<Level, OctreeError> {
    let marker = 1u64 << (3 * depth);
    Level::from_runs(
        codes.len(),
        depth,
        |i| marker | codes[i],
        |run| {
            let mut leaf = Node { first_child: NO_CHILD, count: run.len() as u32, ..Default::default() };
            for &i in &order[run] {
                for (s, c) in leaf.sum.iter_mut().zip(attrs[i as usize].channels()) {
                    *s += c;
                }
            }
            leaf
        },
    )
}

/// Parents of a sorted level of a tree of `depth`; `first_child` holds the index within
/// `children`.
pub(crate) fn parent_level(children: &Level, depth: u32) -> Result<Level, OctreeError> {
    Level::from_runs(
        children.keys.len(),
        depth,
        |i| children.keys[i] >> 3,
        |run| {
            let mut parent = Node { first_child: run.start as u32, ..Default::default() };
            for (&key, c) in children.keys[run.clone()].iter().zip(&children.nodes[run]) {
                parent.count += c.count;
                parent.child_mask |= 1 << (key & 7);
                for (s, x) in parent.sum.iter_mut().zip(c.sum) {
                    *s += x;
                }
            }
            parent
        },
    )
}

/// The whole tree from its leaf level: parents up to the root, root first, with global
/// child indices.
pub(crate) fn assemble(root: Root, depth: u32, leaves: Level) -> Result<Octree, OctreeError> {
    let mut levels_rev = vec![leaves];
    for _ in 0..depth {
        let parents = parent_level(levels_rev.last().expect("at least the leaves"), depth)?;
        levels_rev.push(parents);
    }
    let (nodes, levels) = concat_levels(levels_rev.iter().rev().map(|l| l.nodes.as_slice()), |n| &mut n.first_child);
    Ok(Octree { root, depth, nodes, levels })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn too_many_points_says_what_to_change() {
        assert!(check(MAX_POINTS, MAX_POINTS, 8).is_ok());
        let e = check(MAX_POINTS + 1, MAX_POINTS + 1, 8).unwrap_err().to_string();
        assert!(e.contains(&format!("at most {MAX_POINTS}")) && e.contains("use fewer points"), "{e}");
    }

    /// One node per run, by a plain sequential fold: the reference for `Level::from_runs`.
    fn sequential(keys: &[u64], node: impl Fn(Range<usize>) -> Node) -> Level {
        let mut level = Level { keys: Vec::new(), nodes: Vec::new() };
        let mut start = 0;
        for i in 1..=keys.len() {
            if i == keys.len() || keys[i] != keys[start] {
                level.keys.push(keys[start]);
                level.nodes.push(node(start..i));
                start = i;
            }
        }
        level
    }

    #[test]
    fn levels_built_in_chunks_match_a_sequential_fold() {
        // Runs of 1 to 40000 equal codes, so that some span several chunks of 16384.
        let mut codes = Vec::new();
        let mut s = 7u64;
        for code in 0..400u64 {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let len = if code % 50 == 7 { 20_000 + (s >> 50) as usize } else { 1 + (s >> 58) as usize };
            codes.extend(std::iter::repeat_n(code * 3, len));
        }
        let order: Vec<u32> = (0..codes.len() as u32).rev().collect();
        let attrs: Vec<Attrs> = (0..codes.len())
            .map(|i| Attrs { rgb: [i as u8, (i >> 8) as u8, 3], reflection: (i % 7) as u8, refraction: 1 })
            .collect();
        let depth = 10;
        let leaves = leaf_level(&codes, &order, &attrs, depth).unwrap();
        let marked: Vec<u64> = codes.iter().map(|c| (1 << 30) | c).collect();
        let want = sequential(&marked, |run| {
            let mut n = Node { first_child: NO_CHILD, count: run.len() as u32, ..Default::default() };
            for &i in &order[run] {
                for (s, c) in n.sum.iter_mut().zip(attrs[i as usize].channels()) {
                    *s += c;
                }
            }
            n
        });
        assert_eq!((&leaves.keys, &leaves.nodes), (&want.keys, &want.nodes));

        let parents = parent_level(&leaves, depth).unwrap();
        let shifted: Vec<u64> = leaves.keys.iter().map(|k| k >> 3).collect();
        let want = sequential(&shifted, |run| Node {
            first_child: run.start as u32,
            child_mask: leaves.keys[run.clone()].iter().fold(0, |m, k| m | 1 << (k & 7)),
            count: leaves.nodes[run.clone()].iter().map(|n| n.count).sum(),
            sum: std::array::from_fn(|ch| leaves.nodes[run.clone()].iter().map(|n| n.sum[ch]).sum()),
        });
        assert_eq!((&parents.keys, &parents.nodes), (&want.keys, &want.nodes));
        assert!(parents.keys.len() < leaves.keys.len() && leaves.keys.len() == 400);
    }
}
