//! The paper's index (their sections 3 and 4), processed a whole level at a time: each node
//! of the octree holds the indices of the segments and disks that touch its box, filtered
//! from its parent's lists by stream compaction; a leaf (at the depth limit, or once its
//! lists are short) tests every disk against every segment. Each pair is counted in one
//! leaf only: the one whose cell holds the crossing point (cells are half-open, found by
//! quantizing the point at the depth limit), so a pair that touches several leaves is not
//! counted twice. Every stage here has a twin entry point in `density/octree.wgsl`, with
//! the same buffers in the same order.

use glam::{UVec3, Vec3};
use lumbre_compact::{Emit, Select, compact_cpu};
use lumbre_gpu::{Error, Report, Result};
use lumbre_kdtree::Aabb;
use rayon::prelude::*;

use crate::boxes::SegRay;
use crate::crossing::crossing;
use crate::fixed::{Acc, pow2, quantize3};
use crate::problem::{Prepared, Segment, padded};

/// How the octree filters a parent's lists into its children's.
///
/// ```
/// assert_eq!(lumbre_density::Filter::default(), lumbre_density::Filter::Compact);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Filter {
    /// `lumbre_compact::Compact`: single-pass stream compaction with decoupled look-back.
    #[default]
    Compact,
    /// `lumbre_compact::HistoPyramid`: the paper's histogram pyramid.
    HistoPyramid,
}

/// Shape of the paper's octree.
///
/// ```
/// use lumbre_density::OctreeOptions;
/// assert!(OctreeOptions::default().max_depth <= OctreeOptions::MAX_DEPTH);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OctreeOptions {
    /// Depth of the deepest leaves (the root is depth 0), at most [`OctreeOptions::MAX_DEPTH`].
    pub max_depth: u32,
    /// A node becomes a leaf once (its segments) x (its disks) is at most this.
    pub leaf_pairs: u32,
    /// The stream compaction that filters the lists (GPU path; the CPU compacts with
    /// `lumbre_compact::compact_cpu` either way).
    pub filter: Filter,
}

impl Default for OctreeOptions {
    fn default() -> Self {
        OctreeOptions { max_depth: 8, leaf_pairs: 4096, filter: Filter::Compact }
    }
}

/// The error for a level that would hold too many entries.
pub(crate) fn check_entries(depth: u32, segs: usize, disks: usize) -> Result<()> {
    let max = OctreeOptions::MAX_LEVEL_ENTRIES;
    if segs.max(disks) > max {
        return Err(Error::Input(format!(
            "octree level {depth} would hold {segs} segment and {disks} disk entries, more than {max}: \
             lower max_depth or raise leaf_pairs (or use Method::Bvh)"
        )));
    }
    Ok(())
}

impl OctreeOptions {
    /// The deepest level an octree may reach (cells are quantized to 16 bits per axis).
    ///
    /// ```
    /// assert_eq!(lumbre_density::OctreeOptions::MAX_DEPTH, 16);
    /// ```
    pub const MAX_DEPTH: u32 = 16;

    /// The most entries (segment or disk indices) one level of the octree may hold: a deep
    /// octree over long segments multiplies them level after level, and the build stops with
    /// an error naming the level rather than exhaust memory (2^26; the CPU's child flags for
    /// a level take 32 bytes per entry).
    ///
    /// ```
    /// assert_eq!(lumbre_density::OctreeOptions::MAX_LEVEL_ENTRIES, 1 << 26);
    /// ```
    pub const MAX_LEVEL_ENTRIES: usize = 1 << 26;

    /// An error unless `max_depth` is at most [`OctreeOptions::MAX_DEPTH`].
    pub(crate) fn check(&self) -> Result<()> {
        if self.max_depth > Self::MAX_DEPTH {
            return Err(Error::Input(format!(
                "octree depth {} exceeds the maximum {}",
                self.max_depth,
                Self::MAX_DEPTH
            )));
        }
        Ok(())
    }
}

/// A node's state once classified.
pub(crate) const DEAD: u32 = 0;
pub(crate) const LEAF: u32 = 1;
pub(crate) const SPLIT: u32 = 2;

/// A node of one level, as the GPU stores it (two `vec4<u32>`): its cell at that level, its
/// state, and the ranges `[start, end)` of its segment and disk entries.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
pub(crate) struct Node {
    pub cell: [u32; 3],
    pub state: u32,
    pub seg: [u32; 2],
    pub disk: [u32; 2],
}

impl Node {
    fn segs(&self) -> u32 {
        self.seg[1] - self.seg[0]
    }
    fn disks(&self) -> u32 {
        self.disk[1] - self.disk[0]
    }
}

/// The cells of the octree: the root box cut in `2^level` along each axis.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Grid {
    pub lo: Vec3,
    pub size: Vec3,
    /// The depth limit, at which crossing points are quantized.
    pub depth: u32,
    /// `2^depth / size`.
    pub inv_finest: Vec3,
    /// The padding of every cell box.
    pub pad: f32,
}

impl Grid {
    pub fn new(prep: &Prepared, depth: u32) -> Grid {
        Grid::of_root(&prep.root, prep.pad, depth)
    }

    /// The grid of a root box and padding.
    pub fn of_root(root: &Aabb, pad: f32, depth: u32) -> Grid {
        let size = root.max - root.min;
        Grid { lo: root.min, size, depth, inv_finest: Vec3::splat((1u32 << depth) as f32) / size, pad }
    }

    /// The padded box of `cell` at `level`.
    pub fn cell_box(&self, level: u32, cell: [u32; 3]) -> Aabb {
        let step = self.size * pow2(-(level as i32));
        let c = UVec3::from(cell).as_vec3();
        padded(Aabb::new(self.lo + c * step, self.lo + (c + Vec3::ONE) * step), self.pad)
    }

    /// The finest cell holding `p` (clamped into the grid).
    pub fn finest(&self, p: Vec3) -> UVec3 {
        let max = ((1u32 << self.depth) - 1) as f32;
        ((p - self.lo) * self.inv_finest).floor().clamp(Vec3::ZERO, Vec3::splat(max)).as_uvec3()
    }

    /// Whether `p` belongs to `cell` at `level` (each point belongs to one cell per level).
    pub fn owns(&self, level: u32, cell: [u32; 3], p: Vec3) -> bool {
        (self.finest(p) >> (self.depth - level)) == UVec3::from(cell)
    }
}

/// One level: its nodes, and its segment and disk entries (item index and node index),
/// grouped by node.
#[derive(Clone, Debug, Default)]
pub(crate) struct Level {
    pub nodes: Vec<Node>,
    pub seg_items: Vec<u32>,
    pub seg_node: Vec<u32>,
    pub disk_items: Vec<u32>,
    pub disk_node: Vec<u32>,
}

impl Level {
    /// The root: one node with every segment and every disk.
    pub fn root(segments: usize, disks: usize) -> Level {
        Level {
            nodes: vec![Node { cell: [0; 3], state: DEAD, seg: [0, segments as u32], disk: [0, disks as u32] }],
            seg_items: (0..segments as u32).collect(),
            seg_node: vec![0; segments],
            disk_items: (0..disks as u32).collect(),
            disk_node: vec![0; disks],
        }
    }
}

/// Stage `classify`: each node's state (dead without segments or disks; a leaf at the depth
/// limit or with few pairs; else split) and its split flag.
pub(crate) fn classify(nodes: &mut [Node], split: &mut [u32], level: u32, opts: &OctreeOptions) {
    nodes.par_iter_mut().zip(split.par_iter_mut()).for_each(|(n, f)| {
        n.state = node_state(n.segs(), n.disks(), level, opts);
        *f = (n.state == SPLIT) as u32;
    });
}

/// The state of a node with `s` segments and `d` disks (`s * d > leaf_pairs` written
/// without overflow, as the GPU does it).
pub(crate) fn node_state(s: u32, d: u32, level: u32, opts: &OctreeOptions) -> u32 {
    if s == 0 || d == 0 {
        DEAD
    } else if level < opts.max_depth && s > opts.leaf_pairs / d {
        SPLIT
    } else {
        LEAF
    }
}

/// Stage `leaves`: every disk entry of a leaf against the leaf's segments, counting the
/// crossings whose point lies in the leaf's cell. Returns (disk, partial result) per entry
/// that found some, and the pairs tested.
pub(crate) fn leaves(
    level: &Level,
    level_index: u32,
    grid: &Grid,
    segments: &[Segment],
    prep: &Prepared,
) -> (Vec<(u32, Acc)>, u64) {
    let scale = pow2(prep.scale_exp);
    let per_entry: Vec<(u32, Acc, u64)> = (0..level.disk_items.len())
        .into_par_iter()
        .filter_map(|e| {
            let node = &level.nodes[level.disk_node[e] as usize];
            if node.state != LEAF {
                return None;
            }
            let d = level.disk_items[e];
            let disk = &prep.disks[d as usize];
            let mut acc = Acc::default();
            for k in node.seg[0]..node.seg[1] {
                let s = &segments[level.seg_items[k as usize] as usize];
                if let Some(p) = crossing(s.start, s.end, disk)
                    && grid.owns(level_index, node.cell, p)
                {
                    acc.add(quantize3(s.power, scale));
                }
            }
            Some((d, acc, node.segs() as u64))
        })
        .collect();
    let tested = per_entry.iter().map(|(_, _, t)| t).sum();
    (per_entry.into_iter().filter(|(_, a, _)| a.count > 0).map(|(d, a, _)| (d, a)).collect(), tested)
}

/// Stage `child_flags`: for each child octant `c` and entry `e`, at `c * E + e`, whether
/// the entry's item touches that child of its (split) node. `touches(item, box)`.
pub(crate) fn child_flags(
    nodes: &[Node],
    items: &[u32],
    item_node: &[u32],
    level: u32,
    grid: &Grid,
    touches: impl Fn(u32, &Aabb) -> bool + Sync,
) -> Vec<u32> {
    let e_count = items.len();
    let mut flags = vec![0u32; 8 * e_count];
    flags.par_chunks_mut(e_count.max(1)).enumerate().for_each(|(c, part)| {
        for (e, f) in part.iter_mut().enumerate() {
            let node = &nodes[item_node[e] as usize];
            if node.state == SPLIT {
                let cell = child_cell(node.cell, c as u32);
                *f = touches(items[e], &grid.cell_box(level + 1, cell)) as u32;
            }
        }
    });
    flags
}

/// The cell of child octant `c` (x in bit 0, y in bit 1, z in bit 2).
pub(crate) fn child_cell(cell: [u32; 3], c: u32) -> [u32; 3] {
    [2 * cell[0] + (c & 1), 2 * cell[1] + ((c >> 1) & 1), 2 * cell[2] + ((c >> 2) & 1)]
}

/// Stage `gather`: the kept positions `j = c * E + e` of the compaction become the next
/// level's entries: item `items[e]`, node `c * S + rank[node(e)]`.
pub(crate) fn gather(
    kept: &[u32],
    items: &[u32],
    item_node: &[u32],
    rank: &[u32],
    splits: u32,
) -> (Vec<u32>, Vec<u32>) {
    let e_count = items.len() as u32;
    kept.par_iter()
        .map(|&j| {
            let (c, e) = (j / e_count, (j % e_count) as usize);
            (items[e], c * splits + rank[item_node[e] as usize])
        })
        .unzip()
}

/// Stage `children`: the next level's nodes (`c * S + r` is octant `c` of the `r`-th split
/// node), with empty ranges.
pub(crate) fn children(nodes: &[Node], split_list: &[u32]) -> Vec<Node> {
    let s = split_list.len();
    (0..8 * s)
        .into_par_iter()
        .map(|m| {
            let parent = &nodes[split_list[m % s] as usize];
            Node { cell: child_cell(parent.cell, (m / s) as u32), ..Node::default() }
        })
        .collect()
}

/// Stage `ranges`: where each node's run of entries starts and ends (entries are grouped by
/// node; nodes without entries keep empty ranges). `which` picks the segment or disk range.
pub(crate) fn ranges(item_node: &[u32], nodes: &mut [Node], which: fn(&mut Node) -> &mut [u32; 2]) {
    let n = item_node.len();
    for k in 0..n {
        let node = item_node[k];
        if k == 0 || item_node[k - 1] != node {
            which(&mut nodes[node as usize])[0] = k as u32;
        }
        if k + 1 == n || item_node[k + 1] != node {
            which(&mut nodes[node as usize])[1] = k as u32 + 1;
        }
    }
}

/// The whole octree on the CPU: per-disk results, and statistics per level.
pub(crate) fn octree(
    segments: &[Segment],
    prep: &Prepared,
    opts: &OctreeOptions,
    report: &mut Report,
) -> Result<Vec<Acc>> {
    opts.check()?;
    let grid = Grid::new(prep, opts.max_depth);
    let tau = prep.pad * 0.5;
    let rays: Vec<SegRay> = segments.par_iter().map(|s| SegRay::new(s.start, s.end, tau)).collect();
    let mut accs = vec![Acc::default(); prep.disks.len()];
    let mut level = Level::root(segments.len(), prep.disks.len());
    let (mut tested, mut leaf_count) = (0u64, 0u64);
    for depth in 0..=opts.max_depth {
        let mut split = vec![0u32; level.nodes.len()];
        report.time("octree build", || classify(&mut level.nodes, &mut split, depth, opts));
        let leaves_here = level.nodes.iter().filter(|n| n.state == LEAF).count() as u64;
        report.stat(&format!("octree level {depth} nodes"), level.nodes.len() as f64);
        report.stat(&format!("octree level {depth} leaves"), leaves_here as f64);
        report.stat(&format!("octree level {depth} segment entries"), level.seg_items.len() as f64);
        report.stat(&format!("octree level {depth} disk entries"), level.disk_items.len() as f64);
        leaf_count += leaves_here;
        let (found, t) = report.time("octree leaves", || leaves(&level, depth, &grid, segments, prep));
        tested += t;
        for (d, a) in found {
            accs[d as usize].merge(&a);
        }
        let split_list = compact_cpu(&[], &split, Select::Flags, Emit::Indices);
        if split_list.is_empty() {
            break;
        }
        let next = report.time("octree build", || -> Result<Level> {
            let mut rank = vec![0u32; level.nodes.len()];
            for (r, &n) in split_list.iter().enumerate() {
                rank[n as usize] = r as u32;
            }
            let s = split_list.len() as u32;
            let seg_flags = child_flags(&level.nodes, &level.seg_items, &level.seg_node, depth, &grid, |i, b| {
                rays[i as usize].hits(b)
            });
            let disk_flags = child_flags(&level.nodes, &level.disk_items, &level.disk_node, depth, &grid, |i, b| {
                prep.disk_boxes[i as usize].overlaps(b)
            });
            let seg_kept = compact_cpu(&[], &seg_flags, Select::Flags, Emit::Indices);
            let disk_kept = compact_cpu(&[], &disk_flags, Select::Flags, Emit::Indices);
            check_entries(depth + 1, seg_kept.len(), disk_kept.len())?;
            let (seg_items, seg_node) = gather(&seg_kept, &level.seg_items, &level.seg_node, &rank, s);
            let (disk_items, disk_node) = gather(&disk_kept, &level.disk_items, &level.disk_node, &rank, s);
            let mut nodes = children(&level.nodes, &split_list);
            ranges(&seg_node, &mut nodes, |n| &mut n.seg);
            ranges(&disk_node, &mut nodes, |n| &mut n.disk);
            Ok(Level { nodes, seg_items, seg_node, disk_items, disk_node })
        })?;
        level = next;
    }
    report.stat("octree leaves", leaf_count as f64);
    report.stat("pairs tested", tested as f64);
    Ok(accs)
}
