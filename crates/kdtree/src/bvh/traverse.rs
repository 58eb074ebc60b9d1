//! BVH ray queries, written to be ported line by line to WGSL (`kdtree/bvh.wgsl`): a stack
//! of node indices; at each node both children's boxes are tested, leaves among them are
//! tested at once, nearer first, and of two inner children the farther waits on the stack.
//! Hits need `t_min < t < t_max`, as in the kd-tree's queries.

use glam::{Vec3, Vec3A};
use rayon::prelude::*;

use super::{BVH_MAX_DEPTH, Bvh};
use crate::traverse::QueryOptions;
use crate::triangle::{Hit, Ray, RayPrep, TriangleTest};

/// Relative widening of a box's entry and exit distances: the slab test's three roundings
/// can put a ray that touches a box just outside it.
const SLAB_SLACK: f32 = 4.0 * f32::EPSILON;

/// `1 / dir` with the parallel axes' (zero or subnormal) components replaced by a huge value
/// of the same sign: a finite product with any finite distance, never NaN, and on those
/// axes a box either holds the origin's coordinate for all t of interest or misses.
pub(crate) fn box_inverse(r: &RayPrep) -> Vec3 {
    let huge = 1.0 / f32::MIN_POSITIVE;
    Vec3::from_array(std::array::from_fn(|k| if r.parallel[k] { huge.copysign(r.dir[k]) } else { r.inv_dir[k] }))
}

/// Where the ray enters `b` within `[t0, t1]`, if it does.
#[inline]
fn enter(o: Vec3A, inv: Vec3A, lo: [f32; 3], hi: [f32; 3], t0: f32, t1: f32) -> Option<f32> {
    let lo = (Vec3A::from_array(lo) - o) * inv;
    let hi = (Vec3A::from_array(hi) - o) * inv;
    let neg = inv.cmplt(Vec3A::ZERO);
    let near = Vec3A::select(neg, hi, lo);
    let far = Vec3A::select(neg, lo, hi);
    let tn = near.x.max(near.y).max(near.z.max(t0));
    let tf = far.x.min(far.y).min(far.z.min(t1));
    let tn = tn * if tn > 0.0 { 1.0 - SLAB_SLACK } else { 1.0 + SLAB_SLACK };
    let tf = tf * if tf > 0.0 { 1.0 + SLAB_SLACK } else { 1.0 - SLAB_SLACK };
    (tn <= tf).then_some(tn)
}

impl Bvh {
    /// The closest hit of `ray` with `t_min < t < t_max` (`opts.test` picks the triangle
    /// test; the traversal is the BVH's own). `tris` must be the slice the BVH was built
    /// from. Agrees with [`brute_force_closest`](crate::brute_force_closest) as
    /// [`KdTree::closest_hit`](crate::KdTree::closest_hit) does.
    ///
    /// ```
    /// use glam::Vec3;
    /// use lumbre_kdtree::{Bvh, BvhOptions, QueryOptions, Ray};
    ///
    /// let tris: Vec<[Vec3; 3]> =
    ///     (0..10).map(|i| [Vec3::new(0.0, 0.0, i as f32), Vec3::new(1.0, 0.0, i as f32), Vec3::new(0.0, 1.0, i as f32)]).collect();
    /// let bvh = Bvh::build(&tris, &BvhOptions::default());
    /// let ray = Ray::new(Vec3::new(0.25, 0.25, 4.5), Vec3::Z);
    /// let hit = bvh.closest_hit(&tris, &ray, 0.0, f32::INFINITY, &QueryOptions::default()).unwrap();
    /// assert_eq!((hit.tri, hit.t), (5, 0.5));
    /// ```
    pub fn closest_hit(
        &self,
        tris: &[[Vec3; 3]],
        ray: &Ray,
        t_min: f32,
        t_max: f32,
        opts: &QueryOptions,
    ) -> Option<Hit> {
        self.query::<false>(tris, &RayPrep::new(ray), t_min, t_max, opts.test)
    }

    /// Whether `ray` hits any triangle with `t_min < t < t_max`, stopping at the first found.
    ///
    /// ```
    /// use glam::Vec3;
    /// use lumbre_kdtree::{Bvh, BvhOptions, QueryOptions, Ray};
    /// let tris = [[Vec3::new(-1.0, -1.0, 1.0), Vec3::new(1.0, -1.0, 1.0), Vec3::new(0.0, 1.0, 1.0)]];
    /// let bvh = Bvh::build(&tris, &BvhOptions::default());
    /// let to_light = Ray::new(Vec3::ZERO, Vec3::new(0.0, 0.0, 2.0));
    /// assert!(bvh.any_hit(&tris, &to_light, 0.0, 1.0, &QueryOptions::default()));
    /// assert!(!bvh.any_hit(&tris, &to_light, 0.0, 0.5, &QueryOptions::default()));
    /// ```
    pub fn any_hit(&self, tris: &[[Vec3; 3]], ray: &Ray, t_min: f32, t_max: f32, opts: &QueryOptions) -> bool {
        self.query::<true>(tris, &RayPrep::new(ray), t_min, t_max, opts.test).is_some()
    }

    /// [`Bvh::closest_hit`] for many rays, in parallel with rayon.
    ///
    /// ```
    /// use glam::Vec3;
    /// use lumbre_kdtree::{Bvh, BvhOptions, QueryOptions, Ray};
    /// let tris = [[Vec3::ZERO, Vec3::X, Vec3::Y]];
    /// let bvh = Bvh::build(&tris, &BvhOptions::default());
    /// let rays: Vec<Ray> = (0..4).map(|i| Ray::new(Vec3::new(0.3 * i as f32, 0.1, 1.0), -Vec3::Z)).collect();
    /// let hits = bvh.closest_hits(&tris, &rays, 0.0, f32::INFINITY, &QueryOptions::default());
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

    /// [`Bvh::any_hit`] for many rays, in parallel with rayon.
    ///
    /// ```
    /// use glam::Vec3;
    /// use lumbre_kdtree::{Bvh, BvhOptions, QueryOptions, Ray};
    /// let tris = [[Vec3::ZERO, Vec3::X, Vec3::Y]];
    /// let bvh = Bvh::build(&tris, &BvhOptions::default());
    /// let rays = [Ray::new(Vec3::new(0.1, 0.1, 1.0), -Vec3::Z), Ray::new(Vec3::new(0.1, 0.1, 1.0), Vec3::Z)];
    /// assert_eq!(bvh.any_hits(&tris, &rays, 0.0, 10.0, &QueryOptions::default()), [true, false]);
    /// ```
    pub fn any_hits(&self, tris: &[[Vec3; 3]], rays: &[Ray], t_min: f32, t_max: f32, opts: &QueryOptions) -> Vec<bool> {
        rays.par_iter().with_min_len(64).map(|ray| self.any_hit(tris, ray, t_min, t_max, opts)).collect()
    }

    /// The walk; with `ANY`, the first hit found instead of the closest.
    fn query<const ANY: bool>(
        &self,
        tris: &[[Vec3; 3]],
        r: &RayPrep,
        t_min: f32,
        t_max: f32,
        test: TriangleTest,
    ) -> Option<Hit> {
        if !r.valid || self.nodes.is_empty() {
            return None;
        }
        // SIMD lanes for the slab tests (the same arithmetic, lane by lane).
        let (o, inv) = (Vec3A::from(r.origin), Vec3A::from(box_inverse(r)));
        let mut best: Option<Hit> = None;
        let mut best_t = t_max;
        let mut stack = [0u32; BVH_MAX_DEPTH as usize];
        let mut sp = 0;
        let mut node = 0usize;
        loop {
            let n = &self.nodes[node];
            let ta = enter(o, inv, n.a_min, n.a_max, t_min, best_t);
            let tb = enter(o, inv, n.b_min, n.b_max, t_min, best_t);
            // The nearer child first.
            let mut kids = [(ta, n.a_ref, n.a_count), (tb, n.b_ref, n.b_count)];
            if let (Some(x), Some(y)) = (ta, tb)
                && y < x
            {
                kids.swap(0, 1);
            }
            let mut inner = [0u32; 2];
            let mut inners = 0;
            for (t, child, count) in kids {
                let Some(t) = t else { continue };
                if count == 0 {
                    inner[inners] = child;
                    inners += 1;
                } else if t <= best_t {
                    for &tri in &self.prim_indices[child as usize..(child + count) as usize] {
                        if let Some((t, u, v)) = r.intersect(test, &tris[tri as usize], t_min, best_t) {
                            best_t = t;
                            best = Some(Hit { t, tri, u, v });
                            if ANY {
                                return best;
                            }
                        }
                    }
                }
            }
            match inners {
                2 => {
                    stack[sp] = inner[1];
                    sp += 1;
                    node = inner[0] as usize;
                }
                1 => node = inner[0] as usize,
                _ => {
                    if sp == 0 {
                        return best;
                    }
                    sp -= 1;
                    node = stack[sp] as usize;
                }
            }
        }
    }
}
