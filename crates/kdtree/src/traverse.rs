//! Ray queries: the stackless KD-restart traversal (Foley and Sugerman 2005, as adapted in
//! the thesis) and a classic traversal with a fixed-size stack.
//!
//! Both are written to be ported line by line to WGSL: no recursion, fixed-size arrays,
//! `f32` only, and the same order of operations. Conventions shared by both:
//!
//! - A hit counts when `t_min < t < t_max` (open interval), whatever leaf it is found in:
//!   leaves test their triangles against the whole remaining interval, not just the leaf's
//!   piece of the ray, so a triangle is found wherever the ray meets it even when rounding
//!   puts the hit a hair outside the leaf that lists it.
//! - At an interior node the ray's piece `[t0, t1]` is compared with `t_split`, where the
//!   ray crosses the plane; the *near* child is the one the ray is in before crossing
//!   (below if `dir[axis] > 0`). The stack traversal visits both children of a piece that
//!   merely touches the plane; the restart traversal cannot revisit, so after its first
//!   descent a plane exactly at the piece's start sends it to the far side.
//! - A ray parallel to the plane (direction component zero or subnormal) stays on its
//!   origin's side. A ray lying *in* the plane takes the below side only: the build puts
//!   every triangle that comes within a small margin of a split plane on both sides of it
//!   (see [`KdTree::build`]), so nothing the ray can hit is lost.
//!
use glam::Vec3;
use rayon::prelude::*;

use crate::node::{KdTree, MAX_DEPTH};
use crate::triangle::{Hit, Ray, RayPrep, TriangleTest};

/// How a query walks the tree.
///
/// The default is [`Traversal::Stack`]: on the CPU it is the faster of the two (figures in
/// `benches/RESULTS.md`), because restarting re-descends from the root for every leaf the ray
/// passes through. On the GPU the stackless version may still win, as it keeps no
/// per-thread stack.
///
/// ```
/// use lumbre_kdtree::Traversal;
/// assert_eq!(Traversal::default(), Traversal::Stack);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Traversal {
    /// KD-restart: stackless. Descend from the root to the first leaf the ray's remaining
    /// interval `[t_lo, t_end]` meets, keeping only the near part at each split; if the leaf
    /// yields no hit before its exit `t1`, set `t_lo = t1` and restart from the root.
    Restart,
    /// Front-to-back descent with a fixed stack of [`MAX_DEPTH`] entries holding the far
    /// children still to visit and their intervals; entries that start beyond the closest
    /// hit so far are dropped.
    #[default]
    Stack,
}

/// Options of a ray query: traversal and triangle test.
///
/// ```
/// use lumbre_kdtree::{QueryOptions, Traversal, TriangleTest};
///
/// let o = QueryOptions::default();
/// assert_eq!((o.traversal, o.test), (Traversal::Stack, TriangleTest::Watertight));
/// let thesis = QueryOptions { traversal: Traversal::Restart, test: TriangleTest::MollerTrumbore };
/// # let _ = thesis;
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct QueryOptions {
    /// How to walk the tree.
    pub traversal: Traversal,
    /// Which ray/triangle test to use.
    pub test: TriangleTest,
}

/// A batch of rays against one tree: what [`RayQuery`] takes.
#[derive(Clone, Debug)]
pub struct QueryBatch {
    /// The triangles.
    pub tris: Vec<[Vec3; 3]>,
    /// The tree built from them.
    pub tree: KdTree,
    /// The rays.
    pub rays: Vec<Ray>,
    /// Hits need `t_min < t < t_max`.
    pub t_min: f32,
    /// See `t_min`.
    pub t_max: f32,
}

/// Per-ray results of a [`RayQuery`]; for any-hit queries only `is_some()` matters.
#[derive(Clone, Debug, PartialEq)]
pub struct Hits(pub Vec<Option<Hit>>);

/// Closest-hit or any-hit queries of many rays, CPU ([`KdTree::closest_hits`]) or GPU
/// (`kdtree/traverse_query.wgsl`, built on `kdtree/traverse.wgsl`, a line-by-line port of this
/// file; the GPU half is in `gpu/traverse.rs`).
///
/// ```no_run
/// use lumbre_gpu::{conformance, Gpu, Tolerance};
/// use lumbre_kdtree::{scenes, BuildOptions, KdTree, QueryBatch, RayQuery};
/// let tris = scenes::generated_scene(1000);
/// let tree = KdTree::build(&tris, &BuildOptions::default());
/// let (c, r) = ((tree.bounds.min + tree.bounds.max) * 0.5, tree.bounds.size().length());
/// let rays = scenes::camera_rays(c + glam::Vec3::Z * r * 2.0, c, 0.8, 64, 64);
/// let batch = QueryBatch { tris, tree, rays, t_min: 0.0, t_max: f32::INFINITY };
/// conformance(&RayQuery::default(), &Gpu::new()?, &batch, Tolerance::relative(1e-4))?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct RayQuery {
    /// Traversal and triangle test.
    pub opts: QueryOptions,
    /// Any-hit (occlusion) instead of closest hit.
    pub any_hit: bool,
    /// A test knob, not part of the API: a 2-entry short stack instead of 16, so the stack
    /// traversal overflows and takes its restart fallback all the time.
    #[doc(hidden)]
    pub tiny_stack: bool,
}

impl RayQuery {
    /// The CPU path: each ray's closest hit ([`KdTree::closest_hits`]), or whether it hits
    /// anything ([`KdTree::any_hits`]).
    ///
    /// ```
    /// use lumbre_kdtree::{scenes, BuildOptions, KdTree, QueryBatch, RayQuery};
    /// let tris = scenes::generated_scene(100);
    /// let tree = KdTree::build(&tris, &BuildOptions::default());
    /// let c = (tree.bounds.min + tree.bounds.max) * 0.5;
    /// let rays = scenes::camera_rays(c + glam::Vec3::Z * 10.0, c, 0.8, 8, 8);
    /// let batch = QueryBatch { tris, tree, rays, t_min: 0.0, t_max: f32::INFINITY };
    /// let hits = RayQuery::default().cpu(&batch)?;
    /// assert_eq!(hits.0.len(), 64);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn cpu(&self, b: &QueryBatch) -> lumbre_gpu::Result<Hits> {
        Ok(Hits(if self.any_hit {
            let any = b.tree.any_hits(&b.tris, &b.rays, b.t_min, b.t_max, &self.opts);
            any.into_iter().map(|h| h.then_some(Hit { t: 0.0, tri: 0, u: 0.0, v: 0.0 })).collect()
        } else {
            b.tree.closest_hits(&b.tris, &b.rays, b.t_min, b.t_max, &self.opts)
        }))
    }
}

/// The closest hit so far; `t` starts at the query's `t_max` and only shrinks.
struct Best {
    t: f32,
    hit: Option<Hit>,
}

/// Size of the stack of [`Traversal::Stack`]; the depth cap keeps it from overflowing.
const STACK_SIZE: usize = MAX_DEPTH as usize;

impl KdTree {
    /// The closest hit of `ray` with `t_min < t < t_max` among the triangles of the tree.
    /// `tris` must be the slice the tree was built from. It agrees with
    /// [`brute_force_closest`](crate::brute_force_closest): the same hit or miss, the same
    /// `t` up to rounding where triangles tie, and the same triangle unless another one is
    /// hit at that `t` too, except for hits too close to call in `f32` (see the crate notes
    /// on robustness).
    ///
    /// ```
    /// use glam::Vec3;
    /// use lumbre_kdtree::{BuildOptions, KdTree, QueryOptions, Ray, Traversal, TriangleTest};
    ///
    /// let tris: Vec<[Vec3; 3]> = (0..10)
    ///     .map(|i| {
    ///         let z = i as f32;
    ///         [Vec3::new(0.0, 0.0, z), Vec3::new(1.0, 0.0, z), Vec3::new(0.0, 1.0, z)]
    ///     })
    ///     .collect();
    /// let tree = KdTree::build(&tris, &BuildOptions::default());
    /// let ray = Ray::new(Vec3::new(0.25, 0.25, 4.5), Vec3::new(0.0, 0.0, 1.0));
    /// for traversal in [Traversal::Restart, Traversal::Stack] {
    ///     for test in [TriangleTest::MollerTrumbore, TriangleTest::Watertight] {
    ///         let opts = QueryOptions { traversal, test };
    ///         let hit = tree.closest_hit(&tris, &ray, 0.0, f32::INFINITY, &opts).unwrap();
    ///         assert_eq!((hit.tri, hit.t), (5, 0.5));
    ///     }
    /// }
    /// ```
    pub fn closest_hit(
        &self,
        tris: &[[Vec3; 3]],
        ray: &Ray,
        t_min: f32,
        t_max: f32,
        opts: &QueryOptions,
    ) -> Option<Hit> {
        let r = RayPrep::new(ray);
        match opts.traversal {
            Traversal::Restart => self.restart::<false>(tris, &r, t_min, t_max, opts.test),
            Traversal::Stack => self.stack::<false>(tris, &r, t_min, t_max, opts.test),
        }
    }

    /// Whether `ray` hits any triangle of the tree with `t_min < t < t_max`: the occlusion
    /// test of shadow rays, which stops at the first hit found. Agrees with
    /// [`brute_force_any`](crate::brute_force_any).
    ///
    /// ```
    /// use glam::Vec3;
    /// use lumbre_kdtree::{BuildOptions, KdTree, QueryOptions, Ray};
    ///
    /// let tris = [[Vec3::new(-1.0, -1.0, 1.0), Vec3::new(1.0, -1.0, 1.0), Vec3::new(0.0, 1.0, 1.0)]];
    /// let tree = KdTree::build(&tris, &BuildOptions::default());
    /// let to_light = Ray::new(Vec3::ZERO, Vec3::new(0.0, 0.0, 2.0)); // light at t = 1
    /// assert!(tree.any_hit(&tris, &to_light, 0.0, 1.0, &QueryOptions::default()));
    /// assert!(!tree.any_hit(&tris, &to_light, 0.0, 0.5, &QueryOptions::default()));
    /// ```
    pub fn any_hit(&self, tris: &[[Vec3; 3]], ray: &Ray, t_min: f32, t_max: f32, opts: &QueryOptions) -> bool {
        let r = RayPrep::new(ray);
        match opts.traversal {
            Traversal::Restart => self.restart::<true>(tris, &r, t_min, t_max, opts.test).is_some(),
            Traversal::Stack => self.stack::<true>(tris, &r, t_min, t_max, opts.test).is_some(),
        }
    }

    /// [`KdTree::closest_hit`] for many rays sharing one interval, in parallel with rayon.
    ///
    /// ```
    /// use glam::Vec3;
    /// use lumbre_kdtree::{BuildOptions, KdTree, QueryOptions, Ray};
    ///
    /// let tris = [[Vec3::ZERO, Vec3::X, Vec3::Y]];
    /// let tree = KdTree::build(&tris, &BuildOptions::default());
    /// let rays: Vec<Ray> = (0..4).map(|i| Ray::new(Vec3::new(0.3 * i as f32, 0.1, 1.0), -Vec3::Z)).collect();
    /// let hits = tree.closest_hits(&tris, &rays, 0.0, f32::INFINITY, &QueryOptions::default());
    /// assert_eq!(hits.iter().map(|h| h.is_some()).collect::<Vec<_>>(), [true, true, true, false]);
    /// ```
    pub fn closest_hits(
        &self,
        tris: &[[Vec3; 3]],
        rays: &[Ray],
        t_min: f32,
        t_max: f32,
        opts: &QueryOptions,
    ) -> Vec<Option<Hit>> {
        rays.par_iter().with_min_len(64).map(|ray| self.closest_hit(tris, ray, t_min, t_max, opts)).collect()
    }

    /// [`KdTree::any_hit`] for many rays sharing one interval, in parallel with rayon.
    ///
    /// ```
    /// use glam::Vec3;
    /// use lumbre_kdtree::{BuildOptions, KdTree, QueryOptions, Ray};
    ///
    /// let tris = [[Vec3::ZERO, Vec3::X, Vec3::Y]];
    /// let tree = KdTree::build(&tris, &BuildOptions::default());
    /// let rays = [Ray::new(Vec3::new(0.1, 0.1, 1.0), -Vec3::Z), Ray::new(Vec3::new(0.1, 0.1, 1.0), Vec3::Z)];
    /// assert_eq!(tree.any_hits(&tris, &rays, 0.0, 10.0, &QueryOptions::default()), [true, false]);
    /// ```
    pub fn any_hits(&self, tris: &[[Vec3; 3]], rays: &[Ray], t_min: f32, t_max: f32, opts: &QueryOptions) -> Vec<bool> {
        rays.par_iter().with_min_len(64).map(|ray| self.any_hit(tris, ray, t_min, t_max, opts)).collect()
    }

    /// Tests the triangles of leaf `node` against `(t_min, best.t)`, keeping the closest
    /// hit. Returns whether any triangle was hit.
    #[inline]
    fn test_leaf(
        &self,
        tris: &[[Vec3; 3]],
        r: &RayPrep,
        test: TriangleTest,
        node: usize,
        t_min: f32,
        best: &mut Best,
    ) -> bool {
        let leaf = self.nodes[node];
        let first = leaf.prim_offset() as usize;
        let mut found = false;
        for &tri in &self.prim_indices[first..first + leaf.prim_count() as usize] {
            if let Some((t, u, v)) = r.intersect(test, &tris[tri as usize], t_min, best.t) {
                *best = Best { t, hit: Some(Hit { t, tri, u, v }) };
                found = true;
            }
        }
        found
    }

    /// KD-restart. With `ANY`, returns the first hit found instead of the closest.
    fn restart<const ANY: bool>(
        &self,
        tris: &[[Vec3; 3]],
        r: &RayPrep,
        t_min: f32,
        t_max: f32,
        test: TriangleTest,
    ) -> Option<Hit> {
        let (seg_lo, seg_hi) = self.bounds.clip(r, t_min, t_max)?;
        let mut best = Best { t: t_max, hit: None };
        let mut t_lo = seg_lo;
        let mut first = true;
        loop {
            let mut node = 0usize;
            let t0 = t_lo;
            let mut t1 = seg_hi;
            loop {
                let n = self.nodes[node];
                if n.is_leaf() {
                    break;
                }
                let axis = n.axis() as usize;
                let split = n.split();
                let below = node + 1;
                let above = n.above_child() as usize;
                let o = r.origin[axis];
                if r.parallel[axis] {
                    node = if o <= split { below } else { above };
                    continue;
                }
                let t_split = (split - o) * r.inv_dir[axis];
                let (near, far) = if r.dir[axis] > 0.0 { (below, above) } else { (above, below) };
                // The piece starts at or beyond the plane: only the far side is left. On a
                // restart a plane exactly at `t0` is the one the previous leaf ended at, so it
                // also goes far; only the first descent visits a near side of zero length.
                if t_split < t0 || (t_split == t0 && !first) {
                    node = far;
                } else {
                    node = near;
                    if t_split < t1 {
                        t1 = t_split;
                    }
                }
            }
            if self.test_leaf(tris, r, test, node, t_min, &mut best) && ANY {
                return best.hit;
            }
            // Done when the closest hit lies within this leaf's piece (no later leaf can beat
            // it) or the ray has left the tree.
            if best.t <= t1 || t1 >= seg_hi {
                return best.hit;
            }
            t_lo = t1;
            first = false;
        }
    }

    /// Stack traversal. With `ANY`, returns the first hit found instead of the closest.
    fn stack<const ANY: bool>(
        &self,
        tris: &[[Vec3; 3]],
        r: &RayPrep,
        t_min: f32,
        t_max: f32,
        test: TriangleTest,
    ) -> Option<Hit> {
        let (seg_lo, seg_hi) = self.bounds.clip(r, t_min, t_max)?;
        let mut best = Best { t: t_max, hit: None };
        let mut stack_node = [0u32; STACK_SIZE];
        let mut stack_t0 = [0f32; STACK_SIZE];
        let mut stack_t1 = [0f32; STACK_SIZE];
        let mut sp = 0usize;
        let mut node = 0usize;
        let mut t0 = seg_lo;
        let mut t1 = seg_hi;
        loop {
            loop {
                let n = self.nodes[node];
                if n.is_leaf() {
                    break;
                }
                let axis = n.axis() as usize;
                let split = n.split();
                let below = node + 1;
                let above = n.above_child() as usize;
                let o = r.origin[axis];
                if r.parallel[axis] {
                    node = if o <= split { below } else { above };
                    continue;
                }
                let t_split = (split - o) * r.inv_dir[axis];
                let (near, far) = if r.dir[axis] > 0.0 { (below, above) } else { (above, below) };
                if t_split > t1 {
                    node = near;
                } else if t_split < t0 {
                    node = far;
                } else {
                    stack_node[sp] = far as u32;
                    stack_t0[sp] = t_split;
                    stack_t1[sp] = t1;
                    sp += 1;
                    node = near;
                    t1 = t_split;
                }
            }
            if self.test_leaf(tris, r, test, node, t_min, &mut best) && ANY {
                return best.hit;
            }
            // Next: the most recently pushed subtree that could still hold a closer hit (an
            // entry's piece starts at its plane, at or after everything visited so far).
            loop {
                if sp == 0 {
                    return best.hit;
                }
                sp -= 1;
                if stack_t0[sp] <= best.t {
                    break;
                }
            }
            node = stack_node[sp] as usize;
            t0 = stack_t0[sp];
            t1 = stack_t1[sp];
        }
    }
}
