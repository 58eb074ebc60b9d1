//! BVH ray queries on the CPU, through the tree's eight-wide form (`wide.rs`): a stack of node
//! indices; at each node the eight children's boxes are tested at once, the leaves among them
//! tested nearest first, and of the inner children the nearest is walked next while the others
//! wait on the stack. `kdtree/bvh.wgsl` walks the same tree two children at a time; the boxes'
//! slab test is the same arithmetic, so both test the same triangles' boxes. Hits need
//! `t_min < t < t_max`, as in the kd-tree's queries.

use glam::Vec3;
use rayon::prelude::*;

use super::wide::{LANES, enter};
use super::{BVH_MAX_DEPTH, Bvh};
use crate::traverse::QueryOptions;
use crate::triangle::{Hit, Ray, RayPrep, TriangleTest};

/// Relative widening of a box's entry and exit distances: the slab test's three roundings
/// can put a ray that touches a box just outside it.
const SLAB_SLACK: f32 = 4.0 * f32::EPSILON;

/// The wide walk's stack for most trees (the build's bound, `Bvh::stack_need`, decides).
const SHORT_STACK: usize = 64;
/// The wide walk's stack for any tree: at most `LANES - 1` entries a wide node, and a wide
/// node spans at least one of the binary tree's levels.
const FULL_STACK: usize = (LANES - 1) * (BVH_MAX_DEPTH as usize + 1);

/// `1 / dir` with the parallel axes' (zero or subnormal) components replaced by a huge value
/// of the same sign: a finite product with any finite distance, never NaN, and on those
/// axes a box either holds the origin's coordinate for all t of interest or misses.
pub(crate) fn box_inverse(r: &RayPrep) -> Vec3 {
    let huge = 1.0 / f32::MIN_POSITIVE;
    Vec3::from_array(std::array::from_fn(|k| if r.parallel[k] { huge.copysign(r.dir[k]) } else { r.inv_dir[k] }))
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
        let r = RayPrep::new(ray);
        if self.stack_need <= SHORT_STACK {
            self.query::<false, SHORT_STACK>(tris, &r, t_min, t_max, opts.test)
        } else {
            self.query::<false, FULL_STACK>(tris, &r, t_min, t_max, opts.test)
        }
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
        let r = RayPrep::new(ray);
        if self.stack_need <= SHORT_STACK {
            self.query::<true, SHORT_STACK>(tris, &r, t_min, t_max, opts.test).is_some()
        } else {
            self.query::<true, FULL_STACK>(tris, &r, t_min, t_max, opts.test).is_some()
        }
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

    /// The walk with a stack of `STACK` entries (at least `Bvh::stack_need`: a zeroed
    /// array no larger than needed); with `ANY`, the first hit found instead of the closest.
    fn query<const ANY: bool, const STACK: usize>(
        &self,
        tris: &[[Vec3; 3]],
        r: &RayPrep,
        t_min: f32,
        t_max: f32,
        test: TriangleTest,
    ) -> Option<Hit> {
        if !r.valid || self.wide.is_empty() {
            return None;
        }
        let (o, inv) = (r.origin, box_inverse(r));
        let near_lo = [inv.x >= 0.0, inv.y >= 0.0, inv.z >= 0.0];
        let mut best: Option<Hit> = None;
        let mut best_t = t_max;
        let mut stack = [0u32; STACK];
        let mut sp = 0;
        let mut node = 0usize;
        loop {
            let n = &self.wide[node];
            let t = enter(n, o, inv, near_lo, t_min, best_t, SLAB_SLACK);
            // The entered children, nearest first.
            let mut kids = [0usize; LANES];
            let mut entered = 0;
            for k in 0..LANES {
                if t[k] != f32::INFINITY {
                    let mut at = entered;
                    while at > 0 && t[kids[at - 1]] > t[k] {
                        kids[at] = kids[at - 1];
                        at -= 1;
                    }
                    kids[at] = k;
                    entered += 1;
                }
            }
            let mut inner = [0u32; LANES];
            let mut inners = 0;
            for &k in &kids[..entered] {
                let (child, count) = (n.child[k], n.count[k]);
                if count == 0 {
                    inner[inners] = child;
                    inners += 1;
                } else if t[k] <= best_t && test == TriangleTest::Watertight {
                    let first = n.block[k] as usize;
                    for b in &self.blocks[first..first + count.div_ceil(4) as usize] {
                        let (mut hits, t, u, v) = r.watertight4(&b.v, t_min, best_t);
                        // The nearest lane, the first of equals (the scalar loop's choice).
                        while hits != 0 {
                            let lane = hits.trailing_zeros() as usize;
                            hits &= hits - 1;
                            if t[lane] < best_t {
                                best_t = t[lane];
                                best = Some(Hit { t: t[lane], tri: b.tri[lane], u: u[lane], v: v[lane] });
                                if ANY {
                                    return best;
                                }
                            }
                        }
                    }
                } else if t[k] <= best_t {
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
            if inners == 0 {
                if sp == 0 {
                    return best;
                }
                sp -= 1;
                node = stack[sp] as usize;
                continue;
            }
            // The farther inner children wait on the stack, the farthest deepest.
            for &c in inner[1..inners].iter().rev() {
                stack[sp] = c;
                sp += 1;
            }
            node = inner[0] as usize;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bvh::BvhOptions;
    use crate::scenes;

    /// The walk gives the same hits with either stack (the long one serves trees whose bound
    /// passes the short one's).
    #[test]
    fn both_stacks_walk_alike() {
        let tris = scenes::generated_scene(20_000);
        let bvh = Bvh::build(&tris, &BvhOptions::default());
        let mut hits = 0;
        for i in 0..2000 {
            let a = i as f32 * 0.618_034;
            let ray = Ray::new(Vec3::new(a.sin(), a.cos(), -5.0), Vec3::new(0.1 * a.cos(), 0.1 * a.sin(), 1.0));
            let r = RayPrep::new(&ray);
            for test in [TriangleTest::Watertight, TriangleTest::MollerTrumbore] {
                let short = bvh.query::<false, SHORT_STACK>(&tris, &r, 0.0, f32::INFINITY, test);
                assert_eq!(short, bvh.query::<false, FULL_STACK>(&tris, &r, 0.0, f32::INFINITY, test));
                let any = bvh.query::<true, SHORT_STACK>(&tris, &r, 0.0, f32::INFINITY, test).is_some();
                assert_eq!(any, bvh.query::<true, FULL_STACK>(&tris, &r, 0.0, f32::INFINITY, test).is_some());
                assert_eq!(any, short.is_some());
                hits += any as usize;
            }
        }
        assert!(hits > 1000, "{hits} hits of 4000");
    }
}
