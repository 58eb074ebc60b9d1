//! SAH kd-tree construction in O(N log N), after Wald and Havran, "On building fast kd-trees
//! for ray tracing, and on doing that in O(N log N)" (2006).
//!
//! Every node keeps, per axis, the sorted list of its triangles' *events*: where each
//! triangle's extent, clipped to the node's cell, starts and ends on that axis (or one
//! *planar* event when the clipped extent is flat). The lists are sorted once at the root;
//! a node sweeps them to find the plane of least SAH cost, classifies its triangles as
//! left, right or both, and splits the lists in linear time, keeping their order. Only the
//! triangles on both sides are clipped to each child cell ("perfect splits"), and only
//! their fresh events are sorted and merged in.
//!
//! One departure from the paper, for robust traversal in `f32`: a small margin `m`
//! ([`MARGIN`], 2^-20 of the scene's size). A triangle is listed in every leaf whose cell it
//! comes within `m` of (its events come from it clipped to the cell grown by `m`), so a ray finds
//! it in whichever cell near the hit point the rounded traversal visits, even past a vertex
//! on the corner of several cells or along a split plane. Candidate planes sit `2m` below
//! the places where triangles start and `2m` above those where they end (rather than on
//! them, where Wald and Havran put them), so the triangles that define a plane still fall
//! cleanly on one side, and the empty space next to an object is still cut off cleanly. A
//! triangle lying in an axis plane has the planes `2m` on either side of it as candidates:
//! it goes to the side where the split is cheaper, as with the paper's planar events.

use std::cell::RefCell;
use std::sync::Mutex;

use glam::{DVec3, Vec3};
use rayon::prelude::*;

use crate::aabb::Aabb;
use crate::node::{KdNode, KdTree, MAX_DEPTH, MAX_FIELD};
use crate::triangle::is_valid_triangle;

/// How [`KdTree::build`] builds: the costs of the surface area heuristic (SAH) and when to
/// stop splitting.
///
/// A split of a node with `N` triangles into children `L` and `R` costs
/// `bonus * (traversal_cost + intersection_cost * (SA(L)/SA(node) * N_L + SA(R)/SA(node) * N_R))`,
/// where `bonus` is [`empty_bonus`](BuildOptions::empty_bonus) when one child is empty and 1
/// otherwise. The node becomes a leaf, costing `intersection_cost * N`, when no split costs
/// less. Only the ratio of the two costs matters for the shape of the tree.
///
/// ```
/// use lumbre_kdtree::BuildOptions;
///
/// let o = BuildOptions::default();
/// assert_eq!((o.traversal_cost, o.intersection_cost, o.empty_bonus), (1.0, 1.5, 0.8));
/// assert_eq!((o.max_depth, o.max_leaf_size), (None, 10));
/// assert_eq!(o.effective_max_depth(1 << 20), 34); // 8 + 1.3 * 20, rounded
/// let shallow = BuildOptions { max_depth: Some(10), parallel: false, ..o };
/// assert_eq!(shallow.effective_max_depth(1 << 20), 10);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BuildOptions {
    /// `C_t`, the cost of visiting an interior node. Default 1.0.
    pub traversal_cost: f32,
    /// `C_i`, the cost of one ray/triangle test, relative to `traversal_cost`. Default 1.5,
    /// close to Wald and Havran's 20 : 15. On the Stanford bunny, primary-ray throughput on
    /// the CPU was the same within noise for ratios from 1.2 to 3, while larger ratios made
    /// trees with more nodes that take longer to build (ratio 3: 1.4 times the nodes of 1.5).
    pub intersection_cost: f32,
    /// Multiplier of the cost of a split that leaves one child empty, `0.8` by default, that
    /// is a 20% bonus (pbrt's `1 - emptyBonus` with `emptyBonus = 0.2`): cutting off empty
    /// space lets rays skip it. `1.0` disables the bonus.
    pub empty_bonus: f32,
    /// Deepest level a leaf may sit at (the root is level 0). `None` means
    /// `round(8 + 1.3 * log2(N))` for `N` valid triangles (Havran's rule). Always clamped to
    /// [`MAX_DEPTH`].
    pub max_depth: Option<u32>,
    /// A node with at most this many triangles becomes a leaf without looking for a split.
    /// It is a soft limit: a larger node also becomes a leaf when the SAH finds no split
    /// cheaper than intersecting all its triangles, or at the depth cap, so leaves may hold
    /// more. `0` leaves every decision to the SAH (which then also cuts empty space off
    /// single triangles). Default 10. Against `1`, 8 built a fifth of the nodes twice as
    /// fast on the bunny, with the same stack-traversal throughput within noise and 10%
    /// more with [`Traversal::Restart`](crate::Traversal::Restart) (fewer leaves to restart
    /// from); 16 was slower. Against 8, 10 builds the 1M-triangle benchmark scene 9-10%
    /// faster and traces suzanne, the teapot and the bunny within 2% (GPU and CPU), the
    /// 1M-triangle scene 3-4% slower (`benches/RESULTS.md`).
    pub max_leaf_size: u32,
    /// Build subtrees in parallel with rayon (and make and sort the root's events, and sweep
    /// and merge the lists of large nodes, in parallel). The tree is the same either way.
    /// Default `true`.
    pub parallel: bool,
}

impl Default for BuildOptions {
    fn default() -> Self {
        BuildOptions {
            traversal_cost: 1.0,
            intersection_cost: 1.5,
            empty_bonus: 0.8,
            max_depth: None,
            max_leaf_size: 10,
            parallel: true,
        }
    }
}

impl BuildOptions {
    /// The depth cap used for `n` valid triangles: [`max_depth`](BuildOptions::max_depth) if
    /// set, else `round(8 + 1.3 * log2(n))`, at most [`MAX_DEPTH`].
    ///
    /// ```
    /// use lumbre_kdtree::BuildOptions;
    /// let o = BuildOptions::default();
    /// assert_eq!(o.effective_max_depth(0), 8);
    /// assert_eq!(o.effective_max_depth(1000), 21); // 8 + 1.3 * 9.97 = 20.95
    /// assert_eq!(BuildOptions { max_depth: Some(500), ..o }.effective_max_depth(5), 64);
    /// ```
    pub fn effective_max_depth(&self, n: usize) -> u32 {
        let depth = self.max_depth.unwrap_or_else(|| (8.0 + 1.3 * (n.max(1) as f64).log2()).round() as u32);
        depth.min(MAX_DEPTH)
    }
}

/// The margin, relative to the scene's largest extent (2^-20): every leaf lists every
/// triangle that comes within this distance of its cell, and split planes keep twice this
/// distance from the triangle boundaries that define them.
///
/// A traversal computes where a ray crosses each plane in `f32`, so where it switches from
/// one cell to the next is off by the rounding of `t`, about `2^-24` of the distance the ray
/// has travelled per operation; a ray passing a vertex that sits near a cell corner may even
/// skip a sliver of a cell altogether. With the margin, whatever a ray hits lies in every
/// cell within the margin of the hit point, so the hit is found for rays starting up to
/// about ten scene sizes away. Details finer than the margin cannot be split apart (the tree
/// stays correct, just coarser there). In a scene far from the origin the margin is at least
/// 4 `f32` ulps of its largest coordinate, so that planes never round onto what they avoid.
pub(crate) const MARGIN: f32 = 1.0 / 1048576.0;

/// Nodes with at least this many triangles build their two subtrees with `rayon::join`.
const PARALLEL_MIN: usize = 1024;

/// An event: `[ordered position bits: 32 | kind: 2 | triangle: 30]`. Sorting the `u64`s
/// sorts by position, then kind, then triangle, which makes every sort deterministic; a
/// triangle's start always sorts before its end, as the classification needs.
type Event = u64;

const END: u64 = 0;
const PLANAR: u64 = 1;
const START: u64 = 2;

/// Maps `f32` bits to `u32` so that unsigned order is numeric order (`-0.0` must have been
/// made `+0.0` first).
#[inline]
fn ordered(pos: f32) -> u32 {
    let bits = pos.to_bits();
    if bits & 0x8000_0000 != 0 { !bits } else { bits | 0x8000_0000 }
}

#[inline]
fn unordered(key: u32) -> f32 {
    f32::from_bits(if key & 0x8000_0000 != 0 { key & 0x7fff_ffff } else { !key })
}

#[inline]
fn event(pos: f32, kind: u64, tri: u32) -> Event {
    // `+ 0.0` turns -0.0 into +0.0 so that equal positions have equal keys.
    ((ordered(pos + 0.0) as u64) << 32) | (kind << 30) | tri as u64
}

#[inline]
fn ev_key(e: Event) -> u32 {
    (e >> 32) as u32
}

#[inline]
fn ev_kind(e: Event) -> u64 {
    (e >> 30) & 3
}

#[inline]
fn ev_tri(e: Event) -> u32 {
    (e & MAX_FIELD as u64) as u32
}

/// Which events a plane at `x` with margin `m` leaves on one side only, as key thresholds:
/// a triangle reaches the left child if it starts at or before `x + m` (key `<= left`) and
/// stays clear of the right child if it ends before `x - m` (key `< gone`).
#[derive(Clone, Copy, Debug)]
struct Window {
    left: u32,
    gone: u32,
}

impl Window {
    fn new(x: f32, m: f64) -> Window {
        let (x, m) = (x as f64, m);
        Window { left: ordered(round_down_f32(x + m) + 0.0), gone: ordered(round_up_f32(x - m) + 0.0) }
    }
}

/// Steps a sweep may take to correct its counts for events within the margin of a
/// candidate plane before giving the candidate up (keeps dense clusters linear).
const WINDOW_STEPS: usize = 32;

/// Appends the events of triangle `id`, whose box clipped to the node's cell is `b`, to the
/// three lists: a start and an end per axis, or one planar event where the box is flat.
#[inline]
fn push_events(lists: &mut [Vec<Event>; 3], b: &Aabb, id: u32) {
    for (k, list) in lists.iter_mut().enumerate() {
        let [first, second] = axis_events(b.min[k], b.max[k], id);
        list.push(first);
        if second != Event::MAX {
            list.push(second);
        }
    }
}

/// The events of triangle `id` on one axis, where its box spans `[lo, hi]`: a start and an
/// end, or where the box is flat a planar event and `Event::MAX`, which is no event (no
/// event reaches it: positions are finite).
#[inline]
fn axis_events(lo: f32, hi: f32, id: u32) -> [Event; 2] {
    if lo == hi { [event(lo, PLANAR, id), Event::MAX] } else { [event(lo, START, id), event(hi, END, id)] }
}

/// One node's share of the work: its cell, its triangle count and its sorted events, the
/// three axes' lists in one buffer (recycled from node to node, so it may be longer than
/// the lists).
struct NodeInput {
    bounds: Aabb,
    count: usize,
    events: Vec<Event>,
    /// Where the lists of axes 0, 1 and 2 lie in `events`: start and end.
    lists: [(usize, usize); 3],
}

/// A child of a split: a node to split further, or a leaf, for which only its triangles
/// are gathered (no clipping, no events: most children near the bottom are leaves).
enum Child {
    Node(NodeInput),
    Leaf(Vec<u32>),
}

impl NodeInput {
    /// The sorted events of axis `k`.
    #[inline]
    fn axis(&self, k: usize) -> &[Event] {
        let (from, to) = self.lists[k];
        &self.events[from..to]
    }

    /// The node's triangles (each has exactly one START or PLANAR event per axis).
    fn triangles(&self) -> impl Iterator<Item = u32> + '_ {
        self.axis(0).iter().filter(|&&e| ev_kind(e) != END).map(|&e| ev_tri(e))
    }
}

/// The best split found by the sweep.
#[derive(Clone, Copy, Debug)]
struct Split {
    axis: usize,
    pos: f32,
    cost: f64,
}

/// Read-only state shared by every node.
struct Ctx<'a> {
    tris: &'a [[Vec3; 3]],
    traversal_cost: f64,
    intersection_cost: f64,
    empty_bonus: f64,
    max_depth: u32,
    max_leaf_size: usize,
    /// [`MARGIN`] in scene units.
    margin: f64,
    parallel: bool,
    /// Event buffers too large for a thread's spares, for reuse within this build.
    large: Large,
}

impl Ctx<'_> {
    /// Whether a node of `n` triangles at `depth` is a leaf without looking for a split.
    fn is_leaf(&self, n: usize, depth: u32) -> bool {
        n == 0 || n <= self.max_leaf_size || depth >= self.max_depth
    }
}

/// Nodes and primitive indices of a subtree, depth first, indices relative to its start.
/// Subtrees built on other threads are kept as pieces rather than copied in, and
/// [`Out::join`] copies every piece once into arrays of the final size (appending each
/// subtree into its parent's arrays copied most of the tree once per level of parallel
/// subtrees, into ever new pages).
#[derive(Default)]
struct Out {
    /// Finished pieces, in order, each with what its indices are shifted by.
    pieces: Vec<Piece>,
    /// Nodes and primitive indices from [`Out::len`] and [`Out::prim_len`] of the pieces on,
    /// with indices relative to this output's start.
    nodes: Vec<KdNode>,
    prims: Vec<u32>,
    /// Nodes and primitive indices in the pieces.
    node_base: usize,
    prim_base: usize,
}

/// A finished part of an [`Out`]: its child indices are to be shifted by `node_shift` and
/// its leaves' primitive offsets by `prim_shift`.
struct Piece {
    nodes: Vec<KdNode>,
    prims: Vec<u32>,
    node_shift: u32,
    prim_shift: u32,
}

impl Out {
    /// Nodes so far: the index of the next node.
    fn len(&self) -> usize {
        self.node_base + self.nodes.len()
    }

    fn prim_len(&self) -> usize {
        self.prim_base + self.prims.len()
    }

    /// Closes the arrays being written into a piece (its indices need no shift).
    fn close(&mut self) {
        (self.node_base, self.prim_base) = (self.len(), self.prim_len());
        if !self.nodes.is_empty() || !self.prims.is_empty() {
            let (nodes, prims) = (std::mem::take(&mut self.nodes), std::mem::take(&mut self.prims));
            self.pieces.push(Piece { nodes, prims, node_shift: 0, prim_shift: 0 });
        }
    }

    /// Appends a subtree built on its own: its pieces, their indices to be shifted by where
    /// it starts here.
    fn append(&mut self, mut other: Out) {
        assert!(self.len() + other.len() <= MAX_FIELD as usize, "kd-tree has more nodes than fit in 30 bits");
        self.close();
        other.close();
        let (node_shift, prim_shift) = (self.node_base as u32, self.prim_base as u32);
        self.pieces.extend(other.pieces.into_iter().map(|p| Piece {
            node_shift: p.node_shift + node_shift,
            prim_shift: p.prim_shift + prim_shift,
            ..p
        }));
        (self.node_base, self.prim_base) = (self.node_base + other.node_base, self.prim_base + other.prim_base);
    }

    /// Sets node `index`, which may lie in a piece already (with no shift: it was written
    /// here).
    fn set(&mut self, index: usize, node: KdNode) {
        if index >= self.node_base {
            self.nodes[index - self.node_base] = node;
            return;
        }
        let mut start = self.node_base;
        for piece in self.pieces.iter_mut().rev() {
            start -= piece.nodes.len();
            if index >= start {
                debug_assert_eq!((piece.node_shift, piece.prim_shift), (0, 0));
                piece.nodes[index - start] = node;
                return;
            }
        }
        unreachable!("node {index} was never pushed");
    }

    fn push_leaf(&mut self, tris: impl IntoIterator<Item = u32>) {
        let start = self.prims.len();
        self.prims.extend(tris);
        // Ascending triangle order: nearby memory for the leaf's tests, and a canonical form.
        self.prims[start..].sort_unstable();
        let count = (self.prims.len() - start) as u32;
        self.nodes.push(KdNode::leaf((self.prim_base + start) as u32, count));
    }

    /// The whole tree's node and primitive arrays, every piece shifted into place.
    fn join(mut self) -> (Vec<KdNode>, Vec<u32>) {
        self.close();
        // A tree built on one thread is one piece, already in place.
        match &mut self.pieces[..] {
            [only] if (only.node_shift, only.prim_shift) == (0, 0) => {
                return (std::mem::take(&mut only.nodes), std::mem::take(&mut only.prims));
            }
            _ => {}
        }
        // Pieces come from parallel builds: each copies into its own stretch of both arrays in
        // parallel (on one thread this took 20-30 ms of a 1M-triangle build while the other
        // waited). The arrays are zeroed by the allocator, so their pages are first touched
        // by the copies.
        let mut nodes: Vec<KdNode> = bytemuck::zeroed_vec(self.node_base);
        let mut prims = vec![0u32; self.prim_base];
        let mut jobs = Vec::with_capacity(self.pieces.len());
        let (mut node_rest, mut prim_rest) = (nodes.as_mut_slice(), prims.as_mut_slice());
        for p in &self.pieces {
            let (n, n_tail) = std::mem::take(&mut node_rest).split_at_mut(p.nodes.len());
            let (q, q_tail) = std::mem::take(&mut prim_rest).split_at_mut(p.prims.len());
            jobs.push((p, n, q));
            (node_rest, prim_rest) = (n_tail, q_tail);
        }
        jobs.into_par_iter().for_each(|(p, nodes, prims)| {
            for (to, n) in nodes.iter_mut().zip(&p.nodes) {
                *to = if n.is_leaf() {
                    KdNode { a: n.a + p.prim_shift, b: n.b }
                } else {
                    KdNode::interior(n.axis(), n.split(), n.above_child() + p.node_shift)
                };
            }
            prims.copy_from_slice(&p.prims);
        });
        (nodes, prims)
    }
}

/// Per-thread buffers reused from node to node (a node uses them only while it is being
/// split, never across the recursion; see [`with_scratch`] for splits that nest).
#[derive(Default)]
struct Scratch {
    /// Left/right/both flags indexed by triangle. A node sets the flags of all its triangles
    /// before reading any, so stale values never leak in.
    sides: Vec<u8>,
    /// Triangles going to both children: the first so many of its entries (it is written
    /// branch-free, every settled triangle at the next free place, so it is longer).
    both: Vec<u32>,
    /// Triangles going to the left child only and to the right child only, written the same
    /// way: with `both`, what a child that becomes a leaf holds.
    only: [Vec<u32>; 2],
    /// Fresh events of those triangles clipped to the left and the right child, per axis.
    fresh: [[Vec<Event>; 3]; 2],
    /// Event buffers of nodes already split, for their children: a buffer taken from here
    /// needs neither an allocation nor zeroing.
    spare: Spare,
}

/// Spare event buffers (see [`Scratch::spare`]).
#[derive(Default)]
struct Spare(Vec<Vec<Event>>);

impl Spare {
    /// A buffer of at least `len` events (contents arbitrary); a large one from `large`.
    fn take(&mut self, len: usize, large: &Large) -> Vec<Event> {
        let mut v = match len {
            0 => Vec::new(),
            _ if len > SPARE_MAX_EVENTS => large.take(len),
            // Best fit: taking any spare had short ones grown, and zeroed, over and over.
            _ => best_fit(&mut self.0, len),
        };
        if v.len() < len {
            v.resize(len, 0);
        }
        v
    }

    /// Keeps `v` for a later [`take`](Spare::take); a few buffers are enough, as nodes are
    /// split depth first. Large buffers go to `large`, which the build frees when it ends
    /// (a thread keeps its spares after the build).
    fn give_back(&mut self, v: Vec<Event>, large: &Large) {
        if v.capacity() > SPARE_MAX_EVENTS {
            large.give_back(v);
        } else if !v.is_empty() && self.0.len() < SPARE_BUFFERS {
            self.0.push(v);
        }
    }
}

/// How many spare event buffers a thread keeps, and how large one may be (512 KiB).
const SPARE_BUFFERS: usize = 8;
const SPARE_MAX_EVENTS: usize = 1 << 16;

/// Event buffers too large for a thread's spares, shared by one build: the nodes near the
/// root reuse them rather than have the system map and zero fresh pages for every node
/// (`perf` put several percent of a 1M-triangle build there; reuse saved about 2%). Few
/// nodes need them, so a lock is cheap.
#[derive(Default)]
struct Large(Mutex<Vec<Vec<Event>>>);

/// How many large buffers a build keeps for reuse.
const LARGE_BUFFERS: usize = 16;

impl Large {
    /// A kept buffer for `len` events (see [`best_fit`]).
    fn take(&self, len: usize) -> Vec<Event> {
        best_fit(&mut self.0.lock().unwrap_or_else(|e| e.into_inner()), len)
    }

    fn give_back(&self, v: Vec<Event>) {
        let mut kept = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if kept.len() < LARGE_BUFFERS {
            kept.push(v);
        }
    }
}

/// Removes from `kept` the shortest buffer of at least `len` events, else the longest (to be
/// grown); an empty one if `kept` is empty.
fn best_fit(kept: &mut Vec<Vec<Event>>, len: usize) -> Vec<Event> {
    let fits = kept.iter().enumerate().filter(|(_, v)| v.len() >= len).min_by_key(|(_, v)| v.len());
    let pick = fits.or_else(|| kept.iter().enumerate().max_by_key(|(_, v)| v.len())).map(|(i, _)| i);
    pick.map(|i| kept.swap_remove(i)).unwrap_or_default()
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// Runs `f` with this thread's scratch buffers, borrowed in place (moving them out and back
/// copied a few hundred bytes per split). A thread waiting in a `rayon::join` (the parallel
/// merge of a large split) runs other jobs meanwhile, so a split may start inside another on
/// the same thread: it then gets fresh buffers of its own, not a borrow error.
fn with_scratch<R>(f: impl FnOnce(&mut Scratch) -> R) -> R {
    SCRATCH.with(|cell| match cell.try_borrow_mut() {
        Ok(mut scratch) => f(&mut scratch),
        Err(_) => f(&mut Scratch::default()),
    })
}

// Sides as bits: BOTH includes RIGHT, which the classification's mask relies on.
const LEFT: u8 = 1;
const RIGHT: u8 = 2;
const BOTH: u8 = LEFT | RIGHT;

impl KdTree {
    /// Builds the SAH kd-tree of `triangles` (see [`BuildOptions`] for the cost model).
    ///
    /// Triangles with a NaN or infinite coordinate and triangles of zero area are left out
    /// and counted by [`KdTree::skipped`]. Candidate planes and child events come from each
    /// triangle clipped to the node's cell, so a triangle straddling a cell only counts with
    /// the part inside it. Triangles lying in an axis plane go to the side where the split is
    /// cheaper. For robust traversal every leaf lists every triangle that comes within a tiny
    /// margin (2^-20 of the scene's size) of its cell, and split planes keep twice that
    /// distance from the triangle boundaries that define them. Empty input gives an empty
    /// tree (one empty leaf).
    ///
    /// Panics if there are more than 2^30 triangles or the tree needs more than 2^30 nodes.
    ///
    /// ```
    /// use glam::Vec3;
    /// use lumbre_kdtree::{BuildOptions, KdTree};
    ///
    /// // Two clusters far apart: the SAH cuts the empty space between them.
    /// let mut tris = Vec::new();
    /// for i in 0..50 {
    ///     let o = Vec3::new(if i % 2 == 0 { 0.0 } else { 100.0 }, i as f32 * 0.01, 0.0);
    ///     tris.push([o, o + Vec3::X, o + Vec3::Y]);
    /// }
    /// let tree = KdTree::build(&tris, &BuildOptions::default());
    /// assert!(!tree.nodes[0].is_leaf());
    /// assert_eq!(tree.nodes[0].axis(), 0);
    /// assert_eq!(tree.skipped(), 0);
    /// ```
    pub fn build(triangles: &[[Vec3; 3]], opts: &BuildOptions) -> KdTree {
        assert!(triangles.len() <= MAX_FIELD as usize, "a kd-tree holds at most 2^30 - 1 triangles");
        let valid: Vec<u32> = if opts.parallel {
            (0..triangles.len() as u32).into_par_iter().filter(|&i| is_valid_triangle(&triangles[i as usize])).collect()
        } else {
            (0..triangles.len() as u32).filter(|&i| is_valid_triangle(&triangles[i as usize])).collect()
        };
        let skipped = triangles.len() - valid.len();
        let empty = KdTree {
            nodes: vec![KdNode::leaf(0, 0)],
            prim_indices: Vec::new(),
            bounds: Aabb::new(Vec3::ZERO, Vec3::ZERO),
            skipped,
            traversal_cost: opts.traversal_cost,
            intersection_cost: opts.intersection_cost,
        };
        if valid.is_empty() {
            return empty;
        }

        let input = root_input(triangles, &valid, opts.parallel);
        let bounds = input.bounds;
        let ctx = Ctx {
            tris: triangles,
            traversal_cost: opts.traversal_cost as f64,
            intersection_cost: opts.intersection_cost as f64,
            empty_bonus: opts.empty_bonus as f64,
            max_depth: opts.effective_max_depth(valid.len()),
            max_leaf_size: opts.max_leaf_size as usize,
            margin: margin(&bounds),
            parallel: opts.parallel,
            large: Large::default(),
        };
        let mut out = Out::default();
        build_node(&ctx, input, 0, &mut out);
        let (nodes, prim_indices) = out.join();
        KdTree { nodes, prim_indices, bounds, ..empty }
    }
}

/// The margin for a scene whose box is `bounds`: [`MARGIN`] of its largest extent, and at
/// least 4 `f32` ulps of its largest coordinate, so that planes `2m` beside a coordinate
/// never round back onto it in scenes far from the origin.
fn margin(bounds: &Aabb) -> f64 {
    let extent = bounds.size().max_element() as f64;
    let largest = bounds.min.abs().max(bounds.max.abs()).max_element() as f64;
    (extent * MARGIN as f64).max(largest * 4.0 * f32::EPSILON as f64)
}

/// The root's cell (the box of the valid triangles) and its events, sorted once. Each axis
/// has a stretch of two events per triangle, written in place by chunks of triangles in
/// parallel; a triangle flat on the axis writes one PLANAR event and a hole (`Event::MAX`),
/// which sorts past the list's end. (Made on one thread, the 1M-triangle scene's events
/// took 50-60 ms while every other thread waited; made in parts and copied together, 30 ms.)
fn root_input(triangles: &[[Vec3; 3]], valid: &[u32], parallel: bool) -> NodeInput {
    let box_of = |i: &u32| Aabb::from_points(triangles[*i as usize]);
    let union = |a: Aabb, b: Aabb| a.union(&b);
    let bounds = if parallel {
        valid.par_iter().map(box_of).reduce(|| Aabb::EMPTY, union)
    } else {
        valid.iter().map(box_of).fold(Aabb::EMPTY, union)
    };
    const CHUNK: usize = 1 << 14;
    let n = valid.len();
    // Writes the events of chunk `chunk` on `axis` into `out`; returns its holes.
    let fill = |axis: usize, chunk: usize, out: &mut [Event]| {
        let mut holes = 0;
        for (pair, &i) in out.chunks_exact_mut(2).zip(&valid[chunk * CHUNK..]) {
            let c = triangles[i as usize].map(|v| v[axis]);
            let (lo, hi) = (c[0].min(c[1]).min(c[2]), c[0].max(c[1]).max(c[2]));
            pair.copy_from_slice(&axis_events(lo, hi, i));
            holes += (lo == hi) as usize;
        }
        holes
    };
    let mut events = vec![0; 6 * n];
    // Fills and sorts the list of one axis; returns its holes.
    let axis_list = |(axis, list): (usize, &mut [Event])| {
        let chunk = |(c, out): (usize, &mut [Event])| fill(axis, c, out);
        if parallel {
            let holes = list.par_chunks_mut(2 * CHUNK).enumerate().map(chunk).sum();
            list.par_sort_unstable();
            holes
        } else {
            let holes = list.chunks_mut(2 * CHUNK).enumerate().map(chunk).sum();
            list.sort_unstable();
            holes
        }
    };
    let holes: Vec<usize> = if parallel {
        events.par_chunks_mut(2 * n).enumerate().map(axis_list).collect()
    } else {
        events.chunks_mut(2 * n).enumerate().map(axis_list).collect()
    };
    let lists = [0, 1, 2].map(|axis| (axis * 2 * n, (axis + 1) * 2 * n - holes[axis]));
    NodeInput { bounds, count: n, events, lists }
}

/// Builds the subtree of one node into `out`, depth first.
fn build_node(ctx: &Ctx<'_>, input: NodeInput, depth: u32, out: &mut Out) {
    let n = input.count;
    if ctx.is_leaf(n, depth) {
        out.push_leaf(input.triangles());
        return;
    }
    let split = match find_split(ctx, &input) {
        Some(s) if s.cost < ctx.intersection_cost * n as f64 => s,
        _ => {
            out.push_leaf(input.triangles());
            return;
        }
    };
    let (left, right) = split_node(ctx, input, &split, depth + 1);

    let index = out.len();
    out.nodes.push(KdNode::leaf(0, 0)); // set below, once the above child's index is known
    if ctx.parallel && n >= PARALLEL_MIN {
        let mut right_out = Out::default();
        rayon::join(|| build_child(ctx, left, depth + 1, out), || build_child(ctx, right, depth + 1, &mut right_out));
        let above = out.len() as u32;
        out.append(right_out);
        out.set(index, KdNode::interior(split.axis as u32, split.pos, above));
    } else {
        build_child(ctx, left, depth + 1, out);
        let above = out.len() as u32;
        assert!(above <= MAX_FIELD, "kd-tree has more nodes than fit in 30 bits");
        build_child(ctx, right, depth + 1, out);
        out.set(index, KdNode::interior(split.axis as u32, split.pos, above));
    }
}

fn build_child(ctx: &Ctx<'_>, child: Child, depth: u32, out: &mut Out) {
    match child {
        Child::Node(input) => build_node(ctx, input, depth, out),
        Child::Leaf(tris) => out.push_leaf(tris),
    }
}

/// Sweeps the sorted events of every axis and returns the cheapest split plane (on ties, the
/// first found, axes in order). Candidates sit `2m` below each position where triangles
/// start or lie and `2m` above each position where they end or lie, at least `m` inside the
/// cell. A triangle counts on the left of a plane `x` if it starts at or before `x + m`, on
/// the right if it ends at or after `x - m`. Large nodes sweep their axes in parallel (the
/// nodes near the root are what keeps the other threads waiting).
fn find_split(ctx: &Ctx<'_>, input: &NodeInput) -> Option<Split> {
    let size = input.bounds.max.as_dvec3() - input.bounds.min.as_dvec3();
    let area = size.x * size.y + size.x * size.z + size.y * size.z; // half the surface area
    if area <= 0.0 {
        return None;
    }
    let sweep = |axis| sweep_axis(ctx, input, axis, area);
    let [x, y, z] = if ctx.parallel && input.count >= PARALLEL_SWEEP_MIN {
        let (x, (y, z)) = rayon::join(|| sweep(0), || rayon::join(|| sweep(1), || sweep(2)));
        [x, y, z]
    } else {
        [0, 1, 2].map(sweep)
    };
    [y, z].into_iter().flatten().fold(x, |best, s| match best {
        Some(b) if b.cost <= s.cost => Some(b),
        _ => Some(s),
    })
}

/// Nodes with at least this many triangles sweep their three axes, and merge the lists of
/// their two children, in parallel.
const PARALLEL_SWEEP_MIN: usize = 1 << 16;

/// The cheapest split plane on one axis of a node whose cell has half surface area `area`
/// (see [`find_split`]).
fn sweep_axis(ctx: &Ctx<'_>, input: &NodeInput, axis: usize, area: f64) -> Option<Split> {
    let lo = input.bounds.min.as_dvec3();
    let hi = input.bounds.max.as_dvec3();
    let size = hi - lo;
    let n = input.count;
    let m = ctx.margin;
    // Costs scaled by the intersection cost over the cell's area, to save work per candidate.
    let scale = ctx.intersection_cost / area;
    let mut best: Option<Split> = None;
    // A candidate beats the best so far when its weighted count is below these (with the
    // empty-space bonus or without).
    let thresholds =
        |cost: f64| ((cost - ctx.traversal_cost) / scale, (cost / ctx.empty_bonus - ctx.traversal_cost) / scale);
    let (mut beat, mut beat_empty) = (f64::INFINITY, f64::INFINITY);
    let (lo_k, hi_k) = (lo[axis], hi[axis]);
    if lo_k >= hi_k {
        return None;
    }
    // A child's area as a function of the plane: e * (a + b) + a * b, where `a` and `b`
    // are the other two extents.
    let (a, b) = (size[(axis + 1) % 3], size[(axis + 2) % 3]);
    let (sum, prod) = (a + b, a * b);
    let mut consider = |x: f32, n_left: usize, n_gone: usize| {
        let n_right = n - n_gone;
        let xd = x as f64;
        // The area-weighted count; the full cost is only computed for a new best.
        // (Counts convert through `i64`: one instruction, where `usize` takes several.)
        let weighted =
            ((xd - lo_k) * sum + prod) * n_left as i64 as f64 + ((hi_k - xd) * sum + prod) * n_right as i64 as f64;
        let empty = (n_left == 0) | (n_right == 0);
        if weighted < if empty { beat_empty } else { beat } {
            let bonus = if empty { ctx.empty_bonus } else { 1.0 };
            let cost = bonus * (ctx.traversal_cost + scale * weighted);
            best = Some(Split { axis, pos: x, cost });
            (beat, beat_empty) = thresholds(cost);
        }
    };
    let events = input.axis(axis);
    let len = events.len();
    let position = |i: usize| if i < len { unordered(ev_key(events[i])) as f64 } else { f64::INFINITY };
    // START and PLANAR events (one per triangle) and END and PLANAR events (one per
    // triangle) before the current group of equal positions.
    let (mut sp_before, mut ep_before) = (0usize, 0usize);
    let (mut prev, mut p) = (f64::NEG_INFINITY, position(0));
    let mut g = 0;
    while g < len {
        let key = ev_key(events[g]);
        let (mut planars, mut starts) = (0usize, 0usize);
        let mut h = g;
        while h < len && ev_key(events[h]) == key {
            // Branch-free: kinds come in no predictable order. The kind's low bit marks
            // PLANAR, its high bit START; the rest are ENDs.
            planars += (events[h] >> 30) as usize & 1;
            starts += (events[h] >> 31) as usize & 1;
            h += 1;
        }
        let ends = h - g - planars - starts;
        let next = position(h);
        // With no other event within `3m` (and a few ulps) of `p`, the running totals
        // give a candidate's counts exactly; otherwise the window is counted.
        let clear = 3.0 * m + 4.0 * f32::EPSILON as f64 * p.abs();
        // A plane `2m` below where triangles start (or lie): this group is right of it.
        if starts + planars > 0 {
            let x = (p - 2.0 * m) as f32;
            if x as f64 - lo_k >= m {
                let counts = if p - prev > clear { Some((0, 0)) } else { count_backward(events, g, Window::new(x, m)) };
                if let Some((sp, ep)) = counts {
                    consider(x, sp_before - sp, ep_before - ep);
                }
            }
        }
        // A plane `2m` above where triangles end (or lie): this group is left of it.
        if ends + planars > 0 {
            let x = (p + 2.0 * m) as f32;
            if hi_k - x as f64 >= m {
                let counts = if next - p > clear { Some((0, 0)) } else { count_forward(events, h, Window::new(x, m)) };
                if let Some((sp, ep)) = counts {
                    consider(x, sp_before + starts + planars + sp, ep_before + ends + planars + ep);
                }
            }
        }
        sp_before += starts + planars;
        ep_before += ends + planars;
        (prev, p) = (p, next);
        g = h;
    }
    best
}

/// For a plane above the events before index `from`: how many START/PLANAR events from
/// `from` on still reach the left child and how many END/PLANAR events from `from` on are
/// already clear of the right one. `None` if that takes more than [`WINDOW_STEPS`] steps.
#[inline]
fn count_forward(events: &[Event], from: usize, w: Window) -> Option<(usize, usize)> {
    let (mut sp, mut ep) = (0, 0);
    for (steps, &e) in events[from..].iter().enumerate() {
        if ev_key(e) > w.left {
            return Some((sp, ep));
        }
        if steps == WINDOW_STEPS {
            return None;
        }
        sp += (ev_kind(e) != END) as usize;
        ep += (ev_kind(e) != START && ev_key(e) < w.gone) as usize;
    }
    Some((sp, ep))
}

/// For a plane below the events from index `to` on: how many START/PLANAR events before
/// `to` do not reach the left child after all, and how many END/PLANAR events before `to`
/// are not yet clear of the right one. `None` if that takes more than [`WINDOW_STEPS`] steps.
#[inline]
fn count_backward(events: &[Event], to: usize, w: Window) -> Option<(usize, usize)> {
    let (mut sp, mut ep) = (0, 0);
    for (steps, &e) in events[..to].iter().rev().enumerate() {
        if ev_key(e) < w.gone {
            return Some((sp, ep));
        }
        if steps == WINDOW_STEPS {
            return None;
        }
        sp += (ev_kind(e) != END && ev_key(e) > w.left) as usize;
        ep += (ev_kind(e) != START) as usize;
    }
    Some((sp, ep))
}

/// Classifies the node's triangles against the split (left if the clipped extent ends more
/// than the margin before the plane, right if it starts more than the margin after it, both
/// otherwise) and divides the events between the children in linear time; triangles on both
/// sides are clipped to each child cell (grown by the margin) and their new events sorted
/// and merged in. Children at `depth` that will be leaves get only their triangles.
fn split_node(ctx: &Ctx<'_>, input: NodeInput, split: &Split, depth: u32) -> (Child, Child) {
    let (axis, pos) = (split.axis, split.pos);
    let mut left_bounds = input.bounds;
    left_bounds.max[axis] = pos;
    let mut right_bounds = input.bounds;
    right_bounds.min[axis] = pos;
    let m = ctx.margin;
    let w = Window::new(pos, m);

    with_scratch(|scratch| {
        let Scratch { sides, both, only, fresh, spare } = scratch;
        if sides.len() < ctx.tris.len() {
            sides.resize(ctx.tris.len(), BOTH);
        }
        // A triangle is on one side only when it stays beyond the margin of the other. Its
        // START comes before its END, and its END or PLANAR event settles its side. The
        // events are sorted, so those before the plane's window, in it and past it are three
        // runs: events before it settle LEFT (a START there says BOTH until its END decides),
        // events in it say BOTH, a START or PLANAR past it says RIGHT and an END there keeps
        // what its START said. Branch-free within a run: kinds and sides come in no
        // predictable order. Every settled triangle is written to `both` and to its side's
        // `only`, kept where it belongs.
        let [only_left, only_right] = only;
        for list in [&mut *both, &mut *only_left, &mut *only_right] {
            if list.len() <= input.count {
                list.resize(input.count + 1, 0);
            }
        }
        let events = input.axis(axis);
        let gone_at = events.partition_point(|&e| ev_key(e) < w.gone);
        let past_at = gone_at + events[gone_at..].partition_point(|&e| ev_key(e) <= w.left);
        let (mut n_left, mut n_right, mut n_both) = (0usize, 0usize, 0usize);
        for &e in &events[..gone_at] {
            let (tri, start) = (ev_tri(e), ev_kind(e) == START);
            sides[tri as usize] = if start { BOTH } else { LEFT };
            only_left[n_left] = tri;
            n_left += !start as usize;
        }
        for &e in &events[gone_at..past_at] {
            let tri = ev_tri(e);
            sides[tri as usize] = BOTH;
            both[n_both] = tri;
            n_both += (ev_kind(e) != START) as usize;
        }
        for &e in &events[past_at..] {
            let (tri, kind) = (ev_tri(e), ev_kind(e));
            // An END's START said BOTH or RIGHT: both include RIGHT (a mask, not a branch).
            let side = RIGHT | (sides[tri as usize] & ((kind == END) as u8).wrapping_neg());
            sides[tri as usize] = side;
            both[n_both] = tri;
            n_both += ((kind == END) & (side == BOTH)) as usize;
            only_right[n_right] = tri;
            n_right += ((kind != START) & (side == RIGHT)) as usize;
        }
        let both = &both[..n_both];
        let only = [&only_left[..n_left], &only_right[..n_right]];

        // Children that will be leaves need only their triangles.
        let counts = [n_left + n_both, n_right + n_both];
        let split = counts.map(|n| !ctx.is_leaf(n, depth));
        let leaf = |k: usize| {
            // (Copied element by element: `extend_from_slice` would call `memcpy` for a few.)
            let mut tris = Vec::with_capacity(counts[k]);
            tris.extend(only[k].iter().copied());
            tris.extend(both.iter().copied());
            Child::Leaf(tris)
        };

        // Triangles on both sides: events of their parts in each child cell that is split
        // further, sorted.
        for list in fresh.iter_mut().flatten() {
            list.clear();
        }
        if split[0] || split[1] {
            let cells = GrownCells::new(&input.bounds, axis, pos, m);
            for &tri in both {
                let (l, r) = clipped_boxes(&ctx.tris[tri as usize], &cells, axis, pos, m);
                if split[0] {
                    push_events(&mut fresh[0], &l, tri);
                }
                if split[1] {
                    push_events(&mut fresh[1], &r, tri);
                }
            }
            for list in fresh.iter_mut().flatten() {
                list.sort_unstable();
            }
        }
        // Each child split further gets its lists: the parent's events of its triangles that
        // are on its side only, in order, merged on the way with the fresh ones. A child of
        // `n` triangles keeps each axis's list in its own stretch of `2 n + 1` events (at most
        // two events per triangle, plus one slot that the branch-free merge may write past the
        // end), so that large nodes make all six lists in parallel. A child that becomes a
        // leaf takes no events.
        let stretch = counts.map(|n| 2 * n + 1);
        let [mut left, mut right] =
            [0, 1].map(|k| if split[k] { spare.take(3 * stretch[k], &ctx.large) } else { Vec::new() });
        let (sides, fresh) = (&*sides, &*fresh);
        let mut merges = Vec::with_capacity(6);
        for (k, out) in [&mut left, &mut right].into_iter().enumerate() {
            if split[k] {
                merges.extend(out.chunks_mut(stretch[k]).take(3).enumerate().map(|(axis, out)| (k, axis, out)));
            }
        }
        // On the split axis a triangle on the left only has all its events before the plane's
        // window, one on the right only all its events past it: each child reads its part.
        let split_axis = axis;
        let part = |k: usize, axis: usize| {
            let events = input.axis(axis);
            if axis == split_axis { if k == 0 { &events[..gone_at] } else { &events[past_at..] } } else { events }
        };
        // Child `k` (0 left, 1 right), list of `axis`: its length.
        let merge = |(k, axis, out): (usize, usize, &mut [Event])| {
            (k, axis, merge_side(part(k, axis), &fresh[k][axis], sides, [LEFT, RIGHT][k], out))
        };
        let mut lists = [[(0, 0); 3]; 2];
        if ctx.parallel && input.count >= PARALLEL_SWEEP_MIN {
            let merged: Vec<_> = merges.into_par_iter().map(merge).collect();
            for (k, axis, len) in merged {
                lists[k][axis] = (axis * stretch[k], axis * stretch[k] + len);
            }
        } else if split[0] && split[1] {
            // Both children at once: one read of the parent's events and their sides (on the
            // split axis, where each reads its own part, one after the other).
            for ((axis, l), r) in left.chunks_mut(stretch[0]).take(3).enumerate().zip(right.chunks_mut(stretch[1])) {
                let (nl, nr) = if axis == split_axis {
                    (
                        merge_side(part(0, axis), &fresh[0][axis], sides, LEFT, l),
                        merge_side(part(1, axis), &fresh[1][axis], sides, RIGHT, r),
                    )
                } else {
                    merge_both(input.axis(axis), [&fresh[0][axis], &fresh[1][axis]], sides, [l, r])
                };
                lists[0][axis] = (axis * stretch[0], axis * stretch[0] + nl);
                lists[1][axis] = (axis * stretch[1], axis * stretch[1] + nr);
            }
        } else {
            for (k, axis, len) in merges.into_iter().map(merge) {
                lists[k][axis] = (axis * stretch[k], axis * stretch[k] + len);
            }
        }
        let left = if split[0] {
            Child::Node(NodeInput { bounds: left_bounds, count: counts[0], events: left, lists: lists[0] })
        } else {
            leaf(0)
        };
        let right = if split[1] {
            Child::Node(NodeInput { bounds: right_bounds, count: counts[1], events: right, lists: lists[1] })
        } else {
            leaf(1)
        };
        spare.give_back(input.events, &ctx.large);
        (left, right)
    })
}

/// Writes to `out` the events of `events` whose triangle is on `side` only, merged with the
/// sorted `fresh` events, and returns their number. `out` must have room for
/// all of them plus one slot: every event is written and kept only if it belongs (sides come
/// in no predictable order, so a branch would mispredict half the time). Fresh events are
/// few, so the loop that puts them in place rarely runs.
#[inline]
fn merge_side(events: &[Event], fresh: &[Event], sides: &[u8], side: u8, out: &mut [Event]) -> usize {
    let mut fresh = fresh.iter().copied();
    let mut n = 0;
    // No event reaches `u64::MAX` (positions are finite), so it ends the fresh ones.
    let mut next = fresh.next().unwrap_or(Event::MAX);
    for &e in events {
        while next < e {
            out[n] = next;
            n += 1;
            next = fresh.next().unwrap_or(Event::MAX);
        }
        out[n] = e;
        n += (sides[ev_tri(e) as usize] == side) as usize;
    }
    while next != Event::MAX {
        out[n] = next;
        n += 1;
        next = fresh.next().unwrap_or(Event::MAX);
    }
    n
}

/// [`merge_side`] for both children at once: the events of triangles on one side only go to
/// that side's list, merged with its fresh events; returns both lengths. (One function
/// generic over the number of children, looping over them, took 4% more instructions for
/// the whole build than these two.)
#[inline]
fn merge_both(events: &[Event], fresh: [&[Event]; 2], sides: &[u8], out: [&mut [Event]; 2]) -> (usize, usize) {
    let [out_l, out_r] = out;
    let (mut fresh_l, mut fresh_r) = (fresh[0].iter().copied(), fresh[1].iter().copied());
    let (mut next_l, mut next_r) = (fresh_l.next().unwrap_or(Event::MAX), fresh_r.next().unwrap_or(Event::MAX));
    let (mut nl, mut nr) = (0, 0);
    for &e in events {
        while next_l < e {
            out_l[nl] = next_l;
            nl += 1;
            next_l = fresh_l.next().unwrap_or(Event::MAX);
        }
        while next_r < e {
            out_r[nr] = next_r;
            nr += 1;
            next_r = fresh_r.next().unwrap_or(Event::MAX);
        }
        let side = sides[ev_tri(e) as usize];
        out_l[nl] = e;
        nl += (side == LEFT) as usize;
        out_r[nr] = e;
        nr += (side == RIGHT) as usize;
    }
    for (next, fresh, out, n) in [(next_l, fresh_l, out_l, &mut nl), (next_r, fresh_r, out_r, &mut nr)] {
        if next != Event::MAX {
            out[*n] = next;
            *n += 1;
            for e in fresh {
                out[*n] = e;
                *n += 1;
            }
        }
    }
    (nl, nr)
}

/// A convex polygon in `f64`: a triangle clipped by up to seven planes (six cell faces and
/// one split plane) has at most ten corners.
#[derive(Clone, Copy)]
struct Polygon {
    corners: [DVec3; 10],
    len: usize,
}

impl Polygon {
    fn triangle(tri: &[Vec3; 3]) -> Polygon {
        let mut corners = [DVec3::ZERO; 10];
        corners[..3].copy_from_slice(&tri.map(|v| v.as_dvec3()));
        Polygon { corners, len: 3 }
    }

    fn corners(&self) -> &[DVec3] {
        &self.corners[..self.len]
    }

    /// Sutherland–Hodgman against the half-space `p[axis] >= bound` (`keep_above`) or
    /// `p[axis] <= bound`; points on the plane are kept and new corners land exactly on it.
    fn clip(&self, axis: usize, bound: f64, keep_above: bool) -> Polygon {
        let inside = |p: &DVec3| if keep_above { p[axis] >= bound } else { p[axis] <= bound };
        let mut out = Polygon { corners: [DVec3::ZERO; 10], len: 0 };
        let src = self.corners();
        for (i, &p0) in src.iter().enumerate() {
            let p1 = src[(i + 1) % src.len()];
            let (in0, in1) = (inside(&p0), inside(&p1));
            if in0 {
                out.corners[out.len] = p0;
                out.len += 1;
            }
            if in0 != in1 {
                let s = (bound - p0[axis]) / (p1[axis] - p0[axis]);
                let mut p = p0 + (p1 - p0) * s;
                p[axis] = bound; // exactly on the plane, whatever the rounding of `s`
                out.corners[out.len] = p;
                out.len += 1;
            }
        }
        out
    }

    /// Clipped to the box `[lo, hi]`, skipping the faces it lies inside of (most polygons
    /// cross none or one).
    fn clip_box(mut self, lo: DVec3, hi: DVec3) -> Polygon {
        for axis in 0..3 {
            let (min, max) = self
                .corners()
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| (a.min(p[axis]), b.max(p[axis])));
            if min < lo[axis] {
                self = self.clip(axis, lo[axis], true);
            }
            if max > hi[axis] {
                self = self.clip(axis, hi[axis], false);
            }
        }
        self
    }

    /// The box of the corners, rounded outward and kept within `cell` (see [`finish`]).
    #[cfg(test)]
    fn bounds(&self, tri: &[Vec3; 3], cell: &Aabb) -> Aabb {
        let (lo, hi) =
            self.corners().iter().fold((DVec3::INFINITY, DVec3::NEG_INFINITY), |(lo, hi), p| (lo.min(*p), hi.max(*p)));
        finish(tri, lo, hi, cell)
    }
}

/// The cell `[lo, hi]` grown by `margin` on every side, in `f64` and rounded outward.
fn grow(cell: &Aabb, margin: f64) -> (DVec3, DVec3, Aabb) {
    let lo = cell.min.as_dvec3() - margin;
    let hi = cell.max.as_dvec3() + margin;
    (lo, hi, Aabb::new(round_down(lo), round_up(hi)))
}

/// The box of the part of triangle `tri` inside `cell` grown by `margin` on every side,
/// conservative: computed in `f64` (Sutherland–Hodgman), rounded outward to `f32` and kept
/// within the grown cell.
#[cfg(test)]
fn clipped_box(tri: &[Vec3; 3], cell: &Aabb, margin: f64) -> Aabb {
    let (lo, hi, grown) = grow(cell, margin);
    Polygon::triangle(tri).clip_box(lo, hi).bounds(tri, &grown)
}

/// A split's cells grown by the margin: the parent's in `f64` (what triangles are clipped
/// to) and each child's rounded outward to `f32` (what their boxes are kept within).
struct GrownCells {
    lo: DVec3,
    hi: DVec3,
    left: Aabb,
    right: Aabb,
}

impl GrownCells {
    fn new(cell: &Aabb, axis: usize, pos: f32, margin: f64) -> GrownCells {
        // A child's cell is the parent's but for one face, the split plane: grown, only that
        // face differs from the parent's grown cell.
        let (lo, hi, grown) = grow(cell, margin);
        let (mut left, mut right) = (grown, grown);
        left.max[axis] = round_up_f32(pos as f64 + margin);
        right.min[axis] = round_down_f32(pos as f64 - margin);
        GrownCells { lo, hi, left, right }
    }
}

/// The boxes of the parts of triangle `tri` inside the two children of a split at `pos` on
/// `axis`, each child grown by `margin` on every side (`cells`). Conservative: clipped in
/// `f64` (Sutherland–Hodgman, first against the grown parent cell, then by each child's
/// plane), rounded outward to `f32` and kept within the grown child cell.
fn clipped_boxes(tri: &[Vec3; 3], cells: &GrownCells, axis: usize, pos: f32, margin: f64) -> (Aabb, Aabb) {
    let corners = tri.map(|v| v.as_dvec3());
    let inside_cell = corners.iter().all(|p| p.cmpge(cells.lo).all() && p.cmple(cells.hi).all());
    // Most triangles lie inside the parent cell: their corners need no clipping.
    let clipped;
    let corners: &[DVec3] = if inside_cell {
        &corners
    } else {
        clipped = Polygon::triangle(tri).clip_box(cells.lo, cells.hi);
        clipped.corners()
    };
    let (x, m) = (pos as f64, margin);
    let (left_bound, right_bound) = (x + m, x - m);
    // One walk around the polygon collects the corners and plane crossings of both halves.
    let (mut left_lo, mut left_hi) = (DVec3::INFINITY, DVec3::NEG_INFINITY);
    let (mut right_lo, mut right_hi) = (DVec3::INFINITY, DVec3::NEG_INFINITY);
    let crossing = |p0: DVec3, p1: DVec3, bound: f64| {
        let mut p = p0 + (p1 - p0) * ((bound - p0[axis]) / (p1[axis] - p0[axis]));
        p[axis] = bound; // exactly on the plane, whatever the rounding
        p
    };
    // (Clipping may leave nothing of a triangle that only touches the cell: then `finish`
    // falls back to the triangle's own box.)
    let mut p0 = corners.last().copied().unwrap_or_default();
    for &p1 in corners {
        let (l0, l1) = (p0[axis] <= left_bound, p1[axis] <= left_bound);
        if l0 {
            (left_lo, left_hi) = (left_lo.min(p0), left_hi.max(p0));
        }
        if l0 != l1 {
            let p = crossing(p0, p1, left_bound);
            (left_lo, left_hi) = (left_lo.min(p), left_hi.max(p));
        }
        let (r0, r1) = (p0[axis] >= right_bound, p1[axis] >= right_bound);
        if r0 {
            (right_lo, right_hi) = (right_lo.min(p0), right_hi.max(p0));
        }
        if r0 != r1 {
            let p = crossing(p0, p1, right_bound);
            (right_lo, right_hi) = (right_lo.min(p), right_hi.max(p));
        }
        p0 = p1;
    }
    (finish(tri, left_lo, left_hi, &cells.left), finish(tri, right_lo, right_hi, &cells.right))
}

/// The box `[lo, hi]` (empty if `lo > hi`) rounded outward to `f32` and kept within `cell`;
/// when nothing is left (rounding having cut off a triangle that only touches the cell), the
/// triangle's own box within `cell`, which can only add the triangle to a leaf, never lose it.
fn finish(tri: &[Vec3; 3], lo: DVec3, hi: DVec3, cell: &Aabb) -> Aabb {
    let b = Aabb::new(round_down(lo), round_up(hi)).intersection(cell);
    if b.is_empty() { fallback(tri, cell) } else { b }
}

fn fallback(tri: &[Vec3; 3], cell: &Aabb) -> Aabb {
    let b = Aabb::from_points(*tri).intersection(cell);
    if b.is_empty() { *cell } else { b }
}

/// The largest `f32` at or below `x`. Branch-free: whether rounding to nearest went up is a
/// coin toss, and as branches these roundings took a few percent of a build.
fn round_down_f32(x: f64) -> f32 {
    let r = x as f32;
    let bits = r.to_bits();
    // One step towards -inf is one unit less in the bits of a positive value and one more
    // in those of a negative one; rounding up to zero gives -0.0 (the sign survives the
    // cast), whose next step is the smallest negative subnormal, one more in the bits.
    let step = ((bits >> 31) << 1).wrapping_sub(1);
    f32::from_bits(bits.wrapping_add(step.wrapping_mul((r as f64 > x) as u32)))
}

/// The smallest `f32` at or above `x` (branch-free, as [`round_down_f32`]).
fn round_up_f32(x: f64) -> f32 {
    let r = x as f32;
    let bits = r.to_bits();
    let step = 1u32.wrapping_sub((bits >> 31) << 1);
    f32::from_bits(bits.wrapping_add(step.wrapping_mul(((r as f64) < x) as u32)))
}

fn round_down(v: DVec3) -> Vec3 {
    Vec3::new(round_down_f32(v.x), round_down_f32(v.y), round_down_f32(v.z))
}

fn round_up(v: DVec3) -> Vec3 {
    Vec3::new(round_up_f32(v.x), round_up_f32(v.y), round_up_f32(v.z))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roundings_step_to_the_next_f32_exactly() {
        let mut values = vec![0.0, -0.0, 1e-50, -1e-50, 1e-40, -1e-40, 1.0, -1.0, 3.4e38, -3.4e38, 1e39, -1e39];
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..100_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Random signs, exponents across the f32 range and beyond, random mantissas.
            values.push(f64::from_bits((x & 0x800f_ffff_ffff_ffff) | ((x >> 52) % 340 + 1023 - 170) << 52));
        }
        for x in values {
            let r = x as f32;
            let down = if r as f64 > x { r.next_down() } else { r };
            let up = if (r as f64) < x { r.next_up() } else { r };
            assert_eq!(round_down_f32(x).to_bits(), down.to_bits(), "{x:e}");
            assert_eq!(round_up_f32(x).to_bits(), up.to_bits(), "{x:e}");
        }
    }

    #[test]
    fn event_keys_sort_by_position_then_kind() {
        let positions = [-3.5f32, -1e-30, -0.0, 0.0, 1e-40, 2.0, f32::MAX];
        for w in positions.windows(2) {
            assert!(ordered(w[0] + 0.0) <= ordered(w[1] + 0.0), "{} {}", w[0], w[1]);
            assert_eq!(unordered(ordered(w[1])), w[1]);
        }
        assert_eq!(event(-0.0, END, 5), event(0.0, END, 5));
        assert!(event(1.0, END, 9) < event(1.0, PLANAR, 0));
        assert!(event(1.0, PLANAR, 9) < event(1.0, START, 0));
        assert!(event(1.0, START, 9) < event(1.5, END, 0));
        let e = event(-2.25, START, MAX_FIELD);
        assert_eq!((unordered(ev_key(e)), ev_kind(e), ev_tri(e)), (-2.25, START, MAX_FIELD));
    }

    #[test]
    fn clipping_keeps_only_the_part_inside_the_cell() {
        let tri = [Vec3::new(0.0, 0.0, 0.0), Vec3::new(4.0, 0.0, 0.0), Vec3::new(0.0, 4.0, 0.0)];
        let cell = Aabb::new(Vec3::new(2.0, 0.0, -1.0), Vec3::new(4.0, 4.0, 1.0));
        let b = clipped_box(&tri, &cell, 0.0);
        assert_eq!(b, Aabb::new(Vec3::new(2.0, 0.0, 0.0), Vec3::new(4.0, 2.0, 0.0)));
        // A cell the triangle does not enter falls back to its box within the cell.
        let away = Aabb::new(Vec3::new(3.0, 3.0, -1.0), Vec3::new(5.0, 5.0, 1.0));
        assert_eq!(clipped_box(&tri, &away, 0.0), Aabb::new(Vec3::new(3.0, 3.0, 0.0), Vec3::new(4.0, 4.0, 0.0)));
        // Touching a face at a vertex gives a point.
        let touching = Aabb::new(Vec3::new(4.0, -1.0, -1.0), Vec3::new(6.0, 1.0, 1.0));
        assert_eq!(clipped_box(&tri, &touching, 0.0), Aabb::new(Vec3::new(4.0, 0.0, 0.0), Vec3::new(4.0, 0.0, 0.0)));
        // With a margin, the part within the margin of the cell counts.
        let near = Aabb::new(Vec3::new(4.5, -1.0, -1.0), Vec3::new(6.0, 1.0, 1.0));
        assert_eq!(clipped_box(&tri, &near, 1.0), Aabb::new(Vec3::new(3.5, 0.0, 0.0), Vec3::new(4.0, 0.5, 0.0)));
        // Inexact intersection points round outward.
        let tri = [Vec3::new(0.0, 0.0, 0.0), Vec3::new(3.0, 1.0, 0.0), Vec3::new(0.0, 1.0, 0.0)];
        let cell = Aabb::new(Vec3::new(1.0, -1.0, -1.0), Vec3::new(5.0, 5.0, 1.0));
        let b = clipped_box(&tri, &cell, 0.0);
        assert!(b.min.y <= 1.0 / 3.0 && (b.min.y - 1.0 / 3.0).abs() < 1e-7, "{b:?}");
    }

    #[test]
    fn sweep_finds_the_gap_between_two_clusters() {
        let mut tris = Vec::new();
        for i in 0..20 {
            let x = if i < 10 { 0.0 } else { 10.0 };
            let o = Vec3::new(x, i as f32 * 0.1, 0.0);
            tris.push([o, o + Vec3::new(1.0, 0.0, 0.0), o + Vec3::new(0.0, 1.0, 1.0)]);
        }
        let tree = KdTree::build(&tris, &BuildOptions { parallel: false, ..Default::default() });
        let root = tree.nodes[0];
        assert_eq!(root.axis(), 0);
        assert!(root.split() >= 1.0 && root.split() <= 10.0, "{}", root.split());
    }

    #[test]
    fn high_intersection_cost_splits_deeper_and_huge_traversal_cost_never_splits() {
        let tris = crate::scenes::generated_scene(3000);
        let base = KdTree::build(&tris, &BuildOptions { max_leaf_size: 1, ..Default::default() }).stats();
        let deep =
            KdTree::build(&tris, &BuildOptions { intersection_cost: 8.0, max_leaf_size: 1, ..Default::default() })
                .stats();
        assert!(deep.nodes > base.nodes, "{} vs {}", deep.nodes, base.nodes);
        let flat = KdTree::build(&tris, &BuildOptions { traversal_cost: 1e9, ..Default::default() });
        assert_eq!(flat.nodes.len(), 1);
        assert_eq!(flat.prim_indices.len(), 3000);
    }

    #[test]
    fn empty_bonus_cuts_empty_space_off_a_single_cluster() {
        // One small cluster in the corner of a big cell: the bonus makes cutting the empty
        // part off worthwhile even when splitting the cluster itself is not.
        let mut tris = vec![[Vec3::ZERO, Vec3::new(100.0, 0.0, 0.0), Vec3::new(0.0, 0.0, 100.0)]];
        for i in 0..8 {
            let o = Vec3::new(90.0 + i as f32 * 0.1, 90.0, 90.0);
            tris.push([o, o + Vec3::X, o + Vec3::Y]);
        }
        let opts = BuildOptions { max_leaf_size: 0, parallel: false, ..Default::default() };
        let with_bonus = KdTree::build(&tris, &opts).stats();
        assert!(with_bonus.empty_leaves > 0);
        let without = KdTree::build(&tris, &BuildOptions { empty_bonus: 1.0, ..opts }).stats();
        assert!(without.empty_leaves <= with_bonus.empty_leaves);
        assert!(with_bonus.sah_cost < 1.5 * tris.len() as f32);
    }

    #[test]
    fn planar_triangles_go_to_the_cheaper_side() {
        // Every triangle spans the whole cell in y and z, so only x splits make sense. A wall
        // lies in x = 1, between a triangle spanning x in [lo, 0.9] and one spanning
        // [1.1, hi]. The best planes are just beside the wall, and putting the wall on the
        // narrower (cheaper) side wins.
        fn spanning(x0: f32, x1: f32) -> [Vec3; 3] {
            [Vec3::new(x0, 0.0, 0.0), Vec3::new(x1, 10.0, 0.0), Vec3::new(x0, 10.0, 10.0)]
        }
        let wall = [
            [Vec3::new(1.0, 0.0, 0.0), Vec3::new(1.0, 10.0, 0.0), Vec3::new(1.0, 0.0, 10.0)],
            [Vec3::new(1.0, 10.0, 10.0), Vec3::new(1.0, 10.0, 0.0), Vec3::new(1.0, 0.0, 10.0)],
        ];
        let opts = BuildOptions { max_leaf_size: 1, parallel: false, ..Default::default() };
        for (lo, hi, wall_below) in [(0.0, 3.0, true), (-1.0, 2.0, false)] {
            let tris = [wall[0], wall[1], spanning(lo, 0.9), spanning(1.1, hi)];
            let tree = KdTree::build(&tris, &opts);
            let root = tree.nodes[0];
            // Twice the margin (10 * 2^-20 here) beside the wall, away from where it goes.
            let m = 10.0 * MARGIN;
            let plane = if wall_below { 1.0 + 2.0 * m } else { 1.0 - 2.0 * m };
            assert_eq!((root.is_leaf(), root.axis()), (false, 0));
            assert!((root.split() - plane).abs() < 1e-6, "{} vs {plane}", root.split());
            let leaf_prims = |i: usize| {
                let n = tree.nodes[i];
                assert!(n.is_leaf());
                let mut p = tree.prim_indices[n.prim_offset() as usize..][..n.prim_count() as usize].to_vec();
                p.sort_unstable();
                p
            };
            let (below, above) = (leaf_prims(1), leaf_prims(root.above_child() as usize));
            if wall_below {
                assert_eq!((below, above), (vec![0, 1, 2], vec![3]));
            } else {
                assert_eq!((below, above), (vec![2], vec![0, 1, 3]));
            }
        }
    }

    #[test]
    fn triangles_within_the_margin_of_the_plane_go_to_both_sides() {
        // Slivers ending at distances of 0.5 and 1.5 margins left of a forced plane x = 0,
        // and starting 0.5 and 1.5 margins right of it; the cell is [-1, 1]^3, so m = 2^-15.
        let m = 2.0 * MARGIN;
        let sliver = |x0: f32, x1: f32| [Vec3::new(x0, -1.0, -1.0), Vec3::new(x1, 1.0, -1.0), Vec3::new(x0, 1.0, 1.0)];
        let tris = [
            sliver(-1.0, -0.5 * m),
            sliver(-1.0, -1.5 * m),
            sliver(0.5 * m, 1.0),
            sliver(1.5 * m, 1.0),
            sliver(-1.0, 1.0),
        ];
        let valid: Vec<u32> = (0..5).collect();
        let input = root_input(&tris, &valid, false);
        let ctx = Ctx {
            tris: &tris,
            traversal_cost: 1.0,
            intersection_cost: 1.5,
            empty_bonus: 0.8,
            max_depth: 10,
            max_leaf_size: 0,
            margin: m as f64,
            parallel: false,
            large: Large::default(),
        };
        let node = |c: Child| match c {
            Child::Node(n) => n,
            Child::Leaf(_) => panic!("max_leaf_size 0 splits any node with triangles"),
        };
        let (left, right) = split_node(&ctx, input, &Split { axis: 0, pos: 0.0, cost: 0.0 }, 1);
        let (left, right) = (node(left), node(right));
        let ids = |n: &NodeInput| {
            let mut ids: Vec<u32> = n.axis(0).iter().filter(|&&e| ev_kind(e) != END).map(|&e| ev_tri(e)).collect();
            ids.sort_unstable();
            ids
        };
        assert_eq!(ids(&left), [0, 1, 2, 4]);
        assert_eq!(ids(&right), [0, 2, 3, 4]);
        assert_eq!((left.count, right.count), (4, 4));
        // The near ones reach into the other child only within the margin.
        let max_x = |n: &NodeInput, tri: u32| {
            n.axis(0)
                .iter()
                .filter(|&&e| ev_tri(e) == tri && ev_kind(e) != START)
                .map(|&e| unordered(ev_key(e)))
                .fold(f32::MIN, f32::max)
        };
        assert!(max_x(&right, 0) <= -0.5 * m && max_x(&right, 0) >= -0.5 * m * 1.001);
    }

    #[test]
    fn parallel_and_sequential_builds_are_identical() {
        // Large enough that the root also sweeps and merges in parallel.
        let tris = crate::scenes::generated_scene(PARALLEL_SWEEP_MIN + 4_000);
        let a = KdTree::build(&tris, &BuildOptions { parallel: true, ..Default::default() });
        let b = KdTree::build(&tris, &BuildOptions { parallel: false, ..Default::default() });
        assert!(a.nodes.len() > 1000);
        assert_eq!(a, b);
    }

    #[test]
    fn a_split_inside_another_on_the_same_thread_gets_its_own_scratch() {
        with_scratch(|outer| {
            outer.both.push(7);
            with_scratch(|inner| {
                assert!(inner.both.is_empty());
                inner.both.push(8);
            });
            assert_eq!(outer.both, [7]);
        });
        // The outer buffers are the ones kept.
        with_scratch(|again| assert_eq!(again.both, [7]));
    }

    #[test]
    fn many_threads_stealing_during_a_split_build_the_same_tree() {
        // With many threads stealing, a thread waiting inside a split (for its parallel
        // merge) may run another node's split meanwhile (on 16 cores that panicked before
        // `with_scratch`; on 2 cores it rarely happens, so the test above pins that down).
        let tris = crate::scenes::generated_scene(2 * PARALLEL_SWEEP_MIN + 8_000);
        let serial = KdTree::build(&tris, &BuildOptions { parallel: false, ..Default::default() });
        let pool = rayon::ThreadPoolBuilder::new().num_threads(16).build().unwrap();
        for _ in 0..4 {
            let tree = pool.install(|| KdTree::build(&tris, &BuildOptions::default()));
            assert!(tree == serial);
        }
    }

    #[test]
    fn depth_cap_is_respected() {
        let tris = crate::scenes::generated_scene(5000);
        for cap in [0, 1, 3, 7] {
            let tree = KdTree::build(&tris, &BuildOptions { max_depth: Some(cap), ..Default::default() });
            assert!(tree.stats().max_depth <= cap);
            if cap > 0 {
                assert_eq!(tree.stats().max_depth, cap, "this scene splits at every level it may");
            }
        }
        let default = KdTree::build(&tris, &BuildOptions::default());
        assert!(default.stats().max_depth <= BuildOptions::default().effective_max_depth(5000));
    }
}
