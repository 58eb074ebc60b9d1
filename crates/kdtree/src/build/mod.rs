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
//!
//! A second departure, to bound the build on input where most splits clip most triangles
//! into both children: a reference budget ([`BuildOptions::reference_budget`]), shared from
//! the root down in proportion to the children's triangles, that the sweep's candidate
//! splits must stay within.

pub(crate) mod clip;
mod events;
mod scratch;
mod split;
mod stats;
mod sweep;

use glam::Vec3;
use rayon::prelude::*;

use crate::aabb::Aabb;
use crate::node::{KdNode, KdTree, MAX_DEPTH, MAX_FIELD};
use crate::triangle::is_valid_triangle;
use events::{END, Event, ev_kind, ev_tri, root_input};
use scratch::Large;
use split::split_node;
pub use stats::BuildStats;
use stats::Counters;
use sweep::find_split;

/// How [`KdTree::build`] builds: the costs of the surface area heuristic (SAH) and when to
/// stop splitting.
///
/// A split of a node with `N` triangles into children `L` and `R` costs
/// `bonus * (traversal_cost + intersection_cost * (SA(L)/SA(node) * N_L + SA(R)/SA(node) * N_R))`,
/// where `bonus` is [`empty_bonus`](BuildOptions::empty_bonus) when one child is empty and 1
/// otherwise. The node becomes a leaf, costing `intersection_cost * N`, when no split costs
/// less. Only the ratio of the two costs matters for the shape of the tree.
///
/// Three rules bound the build: a node of at most [`max_leaf_size`](BuildOptions::max_leaf_size)
/// triangles is a leaf, no leaf lies deeper than the depth cap
/// ([`max_depth`](BuildOptions::max_depth), `8 + 1.3 log2(N)` by default), and no split may
/// take the tree past its [`reference_budget`](BuildOptions::reference_budget) (128
/// references per triangle by default), which bounds its memory and the build's work even
/// where every split clips most triangles into both children. All three decide from a
/// node's own figures, so the tree is the same on any number of threads.
///
/// ```
/// use lumbre_kdtree::BuildOptions;
///
/// let o = BuildOptions::default();
/// assert_eq!((o.traversal_cost, o.intersection_cost, o.empty_bonus), (1.0, 1.5, 0.8));
/// assert_eq!((o.max_depth, o.max_leaf_size, o.reference_budget), (None, 10, 128.0));
/// assert_eq!(o.effective_max_depth(1 << 20), 34); // 8 + 1.3 * 20, rounded
/// let shallow = BuildOptions { max_depth: Some(10), parallel: false, ..o };
/// assert_eq!(shallow.effective_max_depth(1 << 20), 10);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BuildOptions {
    /// `C_t`, the cost of visiting an interior node. Default 1.0.
    pub traversal_cost: f32,
    /// `C_i`, the cost of one ray/triangle test, relative to `traversal_cost`. Default 1.5,
    /// close to Wald and Havran's 20 : 15. Larger ratios make trees with more nodes, which
    /// take longer to build.
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
    /// single triangles). Default 10: larger leaves mean fewer nodes (a faster build, and
    /// fewer leaves for [`Traversal::Restart`](crate::Traversal::Restart) to restart from)
    /// but more triangle tests per leaf visited.
    pub max_leaf_size: u32,
    /// The reference budget `R`: the tree holds at most `R` triangle references per valid
    /// triangle (`R * N` in all), and so does every subtree: the root may hold `R * N`
    /// references, and each split shares its node's budget between its children in
    /// proportion to their triangle counts. The sweep skips the split planes whose children
    /// would hold more triangles together than the node's budget (a triangle clipped into
    /// both counts twice) and takes the cheapest of the others; the node becomes a leaf if
    /// none is cheaper than intersecting its triangles. Put another way: along every path
    /// from the root, the factors `(N_L + N_R) / N` by which the splits multiply the
    /// references come to at most `R`.
    ///
    /// On input where splits clip most triangles into both children (long thin triangles
    /// meeting at a point or crossing each other, as in [`scenes::fan`](crate::scenes::fan)
    /// and [`scenes::star_polygon`](crate::scenes::star_polygon)) the SAH would otherwise
    /// keep splitting down to the depth cap, multiplying the references at every level. With
    /// the budget the nodes of one level hold at most `R * N` triangles together, so a build
    /// sweeps at most `6 R N` events per level of the depth cap: `O(R N log N)` work.
    ///
    /// Default 128: the trees of ordinary meshes with the default options never reach it
    /// (they hold 3 to 4 references per triangle, and no path multiplies them by 128), so
    /// the budget only changes trees that would multiply their references without end.
    /// Values below 1 (and NaN) act as 1: no split may clip a triangle into both children.
    /// `f32::INFINITY` turns the budget off.
    pub reference_budget: f32,
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
            reference_budget: 128.0,
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

/// Nodes with at least this many triangles sweep their three axes, and merge the lists of
/// their two children, in parallel.
const PARALLEL_SWEEP_MIN: usize = 1 << 16;

/// One node's share of the work: its cell, its triangle count and its sorted events, the
/// three axes' lists in one buffer (recycled from node to node, so it may be longer than
/// the lists).
struct NodeInput {
    bounds: Aabb,
    count: usize,
    events: Vec<Event>,
    /// Where the lists of axes 0, 1 and 2 lie in `events`: start and end.
    lists: [(usize, usize); 3],
    /// The most triangle references the node's subtree may hold (see
    /// [`BuildOptions::reference_budget`]); at least `count`.
    budget: f64,
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

    /// Events in the node's three lists.
    fn event_count(&self) -> usize {
        self.lists.iter().map(|(from, to)| to - from).sum()
    }

    /// The node's triangles (each has exactly one START or PLANAR event per axis).
    fn triangles(&self) -> impl Iterator<Item = u32> + '_ {
        self.axis(0).iter().filter(|&&e| ev_kind(e) != END).map(|&e| ev_tri(e))
    }
}

impl Child {
    /// The child's triangles.
    fn count(&self) -> usize {
        match self {
            Child::Node(input) => input.count,
            Child::Leaf(tris) => tris.len(),
        }
    }

    /// Events in the child's lists (a leaf has none).
    fn event_count(&self) -> usize {
        match self {
            Child::Node(input) => input.event_count(),
            Child::Leaf(_) => 0,
        }
    }
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
    /// What [`KdTree::build_with_stats`] reports.
    counters: Counters,
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
        // parallel. The arrays are zeroed by the allocator, so their pages are first touched
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
        Self::build_with_stats(triangles, opts).0
    }

    /// [`KdTree::build`], also returning figures about the build's work and memory
    /// ([`BuildStats`]).
    ///
    /// ```
    /// use lumbre_kdtree::{scenes::generated_scene, BuildOptions, KdTree};
    ///
    /// let (tree, stats) = KdTree::build_with_stats(&generated_scene(1000), &BuildOptions::default());
    /// assert!(stats.swept >= tree.nodes.len() / 2, "every interior node was swept");
    /// // Every reference beyond one per triangle comes from a clip into both children.
    /// assert_eq!(1000 + stats.clipped as usize, tree.prim_indices.len());
    /// ```
    pub fn build_with_stats(triangles: &[[Vec3; 3]], opts: &BuildOptions) -> (KdTree, BuildStats) {
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
            return (empty, BuildStats::default());
        }

        let mut input = root_input(triangles, &valid, opts.parallel);
        input.budget = opts.reference_budget.max(1.0) as f64 * valid.len() as f64;
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
            counters: Counters::default(),
        };
        let mut out = Out::default();
        build_node(&ctx, input, 0, 0, &mut out);
        let (nodes, prim_indices) = out.join();
        (KdTree { nodes, prim_indices, bounds, ..empty }, ctx.counters.get())
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

/// Builds the subtree of one node into `out`, depth first. `pending` counts the events of
/// the above children waiting on the path from the root (for [`BuildStats::peak_events`]).
fn build_node(ctx: &Ctx<'_>, input: NodeInput, depth: u32, pending: usize, out: &mut Out) {
    let n = input.count;
    if ctx.is_leaf(n, depth) {
        if n > ctx.max_leaf_size {
            ctx.counters.depth_capped();
        }
        out.push_leaf(input.triangles());
        return;
    }
    let events = input.event_count();
    let found = find_split(ctx, &input);
    let leaf_cost = ctx.intersection_cost * n as f64;
    if found.over_budget < found.best.map_or(leaf_cost, |s| s.cost.min(leaf_cost)) {
        ctx.counters.budget_limited();
    }
    let split = match found.best {
        Some(s) if s.cost < leaf_cost => s,
        _ => {
            ctx.counters.swept(events, pending + events);
            out.push_leaf(input.triangles());
            return;
        }
    };
    let (left, right) = split_node(ctx, input, &split, depth + 1);
    let (left_events, right_events) = (left.event_count(), right.event_count());
    debug_assert_eq!([left.count(), right.count()], split.counts, "the sweep counted the children right");
    ctx.counters.swept(events, pending + events + left_events + right_events);
    ctx.counters.clipped(left.count() + right.count() - n);

    let index = out.len();
    out.nodes.push(KdNode::leaf(0, 0)); // set below, once the above child's index is known
    let pending_left = pending + right_events;
    if ctx.parallel && n >= PARALLEL_MIN {
        let mut right_out = Out::default();
        rayon::join(
            || build_child(ctx, left, depth + 1, pending_left, out),
            || build_child(ctx, right, depth + 1, pending, &mut right_out),
        );
        let above = out.len() as u32;
        out.append(right_out);
        out.set(index, KdNode::interior(split.axis as u32, split.pos, above));
    } else {
        build_child(ctx, left, depth + 1, pending_left, out);
        let above = out.len() as u32;
        assert!(above <= MAX_FIELD, "kd-tree has more nodes than fit in 30 bits");
        build_child(ctx, right, depth + 1, pending, out);
        out.set(index, KdNode::interior(split.axis as u32, split.pos, above));
    }
}

fn build_child(ctx: &Ctx<'_>, child: Child, depth: u32, pending: usize, out: &mut Out) {
    match child {
        Child::Node(input) => build_node(ctx, input, depth, pending, out),
        Child::Leaf(tris) => out.push_leaf(tris),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn parallel_and_sequential_builds_are_identical() {
        // Large enough that the root also sweeps and merges in parallel.
        let tris = crate::scenes::generated_scene(PARALLEL_SWEEP_MIN + 4_000);
        let a = KdTree::build(&tris, &BuildOptions { parallel: true, ..Default::default() });
        let b = KdTree::build(&tris, &BuildOptions { parallel: false, ..Default::default() });
        assert!(a.nodes.len() > 1000);
        assert_eq!(a, b);
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
