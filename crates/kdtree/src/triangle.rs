//! Rays, hits, and the two ray/triangle tests: Möller–Trumbore and the watertight test of
//! Woop, Benthin and Wald. Both are written in `f32` with a fixed order of operations so that
//! the WGSL versions can follow them line by line.

use glam::{DVec3, Vec3, Vec4};

/// A ray `origin + t * dir`. The direction need not be normalized: `t` is measured in units
/// of `dir`. A ray with a NaN or infinite component, or whose direction has no component of
/// normal magnitude (all zero or subnormal), hits nothing.
///
/// ```
/// use glam::Vec3;
/// use lumbre_kdtree::Ray;
/// let r = Ray::new(Vec3::ZERO, Vec3::new(0.0, 2.0, 0.0));
/// assert_eq!(r.at(1.5), Vec3::new(0.0, 3.0, 0.0));
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Ray {
    /// Where the ray starts (`t = 0`).
    pub origin: Vec3,
    /// The direction; any nonzero length.
    pub dir: Vec3,
}

impl Ray {
    /// The ray from `origin` along `dir`.
    ///
    /// ```
    /// let r = lumbre_kdtree::Ray::new(glam::Vec3::ZERO, glam::Vec3::X);
    /// assert_eq!(r.dir, glam::Vec3::X);
    /// ```
    pub fn new(origin: Vec3, dir: Vec3) -> Ray {
        Ray { origin, dir }
    }

    /// The point at parameter `t`.
    ///
    /// ```
    /// let r = lumbre_kdtree::Ray::new(glam::Vec3::ONE, glam::Vec3::X);
    /// assert_eq!(r.at(2.0).x, 3.0);
    /// ```
    pub fn at(&self, t: f32) -> glam::Vec3 {
        self.origin + t * self.dir
    }
}

/// A ray/triangle intersection: the ray parameter `t`, the index of the triangle in the
/// caller's slice, and the barycentric coordinates `u`, `v` of the hit with respect to
/// vertices 1 and 2 (the hit point is `(1 - u - v) v0 + u v1 + v v2`).
///
/// ```
/// use glam::Vec3;
/// use lumbre_kdtree::{brute_force_closest, Ray, TriangleTest};
///
/// let tris = [[Vec3::ZERO, Vec3::X, Vec3::Y]];
/// let ray = Ray::new(Vec3::new(0.25, 0.5, 1.0), -Vec3::Z);
/// let hit = brute_force_closest(&tris, &ray, 0.0, 10.0, TriangleTest::Watertight).unwrap();
/// assert_eq!((hit.t, hit.tri, hit.u, hit.v), (1.0, 0, 0.25, 0.5));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Hit {
    /// Ray parameter of the hit, strictly inside the query's `(t_min, t_max)`.
    pub t: f32,
    /// Index of the triangle in the caller's slice.
    pub tri: u32,
    /// Barycentric coordinate of vertex 1.
    pub u: f32,
    /// Barycentric coordinate of vertex 2.
    pub v: f32,
}

/// Which ray/triangle test a query uses. Neither culls back faces. Both accept a hit only
/// when `t_min < t < t_max` (open at both ends), and both count points on an edge or vertex
/// as inside.
///
/// The default is [`TriangleTest::Watertight`]: it never lets a ray slip between two
/// triangles that share an edge, and it is as fast as Möller–Trumbore (the permutation and
/// shear are computed once per ray, not per triangle; figures in `benches/RESULTS.md`).
///
/// ```
/// use glam::Vec3;
/// use lumbre_kdtree::{Ray, TriangleTest};
///
/// let tri = [Vec3::ZERO, Vec3::X, Vec3::Y];
/// let ray = Ray::new(Vec3::new(0.5, 0.5, -1.0), Vec3::Z); // through the hypotenuse
/// for test in [TriangleTest::MollerTrumbore, TriangleTest::Watertight] {
///     let (t, u, v) = test.intersect(&ray, &tri, 0.0, f32::INFINITY).unwrap();
///     assert_eq!((t, u, v), (1.0, 0.5, 0.5));
/// }
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum TriangleTest {
    /// Möller and Trumbore (1997), as in the thesis: solves for `(t, u, v)` with Cramer's rule
    /// on the triangle's edge vectors. A ray exactly in the triangle's plane misses
    /// (determinant zero); rounding can let a ray pass between two triangles sharing an edge.
    MollerTrumbore,
    /// Woop, Benthin and Wald (2013), "Watertight Ray/Triangle Intersection": the vertices
    /// are translated to the ray origin, permuted so that the ray's largest direction
    /// component is z, and sheared so that the ray becomes the z axis; the 2D edge functions
    /// are then evaluated in `f32`. An edge function that rounds to zero counts as inside,
    /// so an edge shared by two triangles is never missed (a ray through it may hit both).
    /// The paper's `f64` recomputation of zero edge functions is left out to stay in `f32`
    /// (WGSL has no `f64`); it only decides which of the two triangles reports such a hit.
    #[default]
    Watertight,
}

impl TriangleTest {
    /// Intersects one ray with one triangle: `Some((t, u, v))` if the ray hits it with
    /// `t_min < t < t_max`. Degenerate or non-finite triangles are not rejected here (that is
    /// [`is_valid_triangle`]'s job), only whatever the arithmetic makes of them.
    ///
    /// ```
    /// use glam::Vec3;
    /// use lumbre_kdtree::{Ray, TriangleTest};
    ///
    /// let tri = [Vec3::ZERO, Vec3::X, Vec3::Y];
    /// let ray = Ray::new(Vec3::new(0.2, 0.2, 1.0), -Vec3::Z);
    /// assert!(TriangleTest::MollerTrumbore.intersect(&ray, &tri, 0.0, 1.0).is_none()); // t = 1 is excluded
    /// assert!(TriangleTest::MollerTrumbore.intersect(&ray, &tri, 0.0, 1.5).is_some());
    /// ```
    pub fn intersect(self, ray: &Ray, tri: &[Vec3; 3], t_min: f32, t_max: f32) -> Option<(f32, f32, f32)> {
        let r = RayPrep::new(ray);
        if !r.valid {
            return None;
        }
        r.intersect(self, tri, t_min, t_max)
    }
}

/// Whether a triangle can be hit and so goes into a [`KdTree`](crate::KdTree): all nine
/// coordinates finite and a nonzero cross product of its edges, computed in `f64` (where the
/// products of `f32` coordinates are exact). The brute-force functions skip the same
/// triangles, so they and the tree agree on them.
///
/// ```
/// use glam::Vec3;
/// use lumbre_kdtree::is_valid_triangle;
///
/// assert!(is_valid_triangle(&[Vec3::ZERO, Vec3::X, Vec3::Y]));
/// assert!(!is_valid_triangle(&[Vec3::ZERO, Vec3::X, Vec3::X * 3.0])); // collinear
/// assert!(!is_valid_triangle(&[Vec3::ZERO, Vec3::X, Vec3::new(f32::NAN, 0.0, 0.0)]));
/// ```
pub fn is_valid_triangle(tri: &[Vec3; 3]) -> bool {
    if !tri.iter().all(|v| v.is_finite()) {
        return false;
    }
    let [a, b, c] = tri.map(|v| v.as_dvec3());
    (b - a).cross(c - a) != DVec3::ZERO
}

/// The closest hit of `ray` among all valid triangles, tested one by one: the reference
/// that every tree query must agree with. A hit needs `t_min < t < t_max`; of several hits
/// at the same `t`, the lowest triangle index wins.
///
/// ```
/// use glam::Vec3;
/// use lumbre_kdtree::{brute_force_closest, Ray, TriangleTest};
///
/// let tris = [[Vec3::Z * 2.0, Vec3::X + Vec3::Z * 2.0, Vec3::Y + Vec3::Z * 2.0], [Vec3::ZERO, Vec3::X, Vec3::Y]];
/// let ray = Ray::new(Vec3::new(0.1, 0.1, -1.0), Vec3::Z);
/// assert_eq!(brute_force_closest(&tris, &ray, 0.0, 100.0, TriangleTest::Watertight).unwrap().tri, 1);
/// assert!(brute_force_closest(&tris, &ray, 0.0, 0.5, TriangleTest::Watertight).is_none());
/// ```
pub fn brute_force_closest(tris: &[[Vec3; 3]], ray: &Ray, t_min: f32, t_max: f32, test: TriangleTest) -> Option<Hit> {
    let r = RayPrep::new(ray);
    if !r.valid {
        return None;
    }
    let mut best: Option<Hit> = None;
    let mut best_t = t_max;
    for (i, tri) in tris.iter().enumerate() {
        if !is_valid_triangle(tri) {
            continue;
        }
        if let Some((t, u, v)) = r.intersect(test, tri, t_min, best_t) {
            best_t = t;
            best = Some(Hit { t, tri: i as u32, u, v });
        }
    }
    best
}

/// Whether `ray` hits any valid triangle with `t_min < t < t_max`, tested one by one
/// (the reference for [`KdTree::any_hit`](crate::KdTree::any_hit)).
///
/// ```
/// use glam::Vec3;
/// use lumbre_kdtree::{brute_force_any, Ray, TriangleTest};
///
/// let tris = [[Vec3::ZERO, Vec3::X, Vec3::Y]];
/// let ray = Ray::new(Vec3::new(0.1, 0.1, -1.0), Vec3::Z);
/// assert!(brute_force_any(&tris, &ray, 0.0, 2.0, TriangleTest::MollerTrumbore));
/// assert!(!brute_force_any(&tris, &ray, 0.0, 1.0, TriangleTest::MollerTrumbore));
/// ```
pub fn brute_force_any(tris: &[[Vec3; 3]], ray: &Ray, t_min: f32, t_max: f32, test: TriangleTest) -> bool {
    let r = RayPrep::new(ray);
    r.valid && tris.iter().any(|tri| is_valid_triangle(tri) && r.intersect(test, tri, t_min, t_max).is_some())
}

/// Per-ray constants shared by the box, plane and triangle tests of one query.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RayPrep {
    pub origin: Vec3,
    pub dir: Vec3,
    /// `1 / dir`, only used on axes that are not `parallel`.
    pub inv_dir: Vec3,
    /// Axes along which the direction is zero or subnormal: the ray never crosses a plane
    /// normal to them (GPUs flush subnormals to zero, so they are treated as zero here too).
    pub parallel: [bool; 3],
    /// Finite origin and direction, and a direction with some component of normal size.
    pub valid: bool,
    /// Watertight test: the axis permutation (`kz` = largest direction component) ...
    kx: usize,
    ky: usize,
    kz: usize,
    /// ... and the shear that maps the ray onto the z axis.
    sx: f32,
    sy: f32,
    sz: f32,
}

impl RayPrep {
    pub fn new(ray: &Ray) -> RayPrep {
        let (o, d) = (ray.origin, ray.dir);
        let parallel = [d.x.abs() < f32::MIN_POSITIVE, d.y.abs() < f32::MIN_POSITIVE, d.z.abs() < f32::MIN_POSITIVE];
        let valid = o.is_finite() && d.is_finite() && !(parallel[0] && parallel[1] && parallel[2]);
        let a = d.abs();
        let kz = if a.x >= a.y && a.x >= a.z {
            0
        } else if a.y >= a.z {
            1
        } else {
            2
        };
        let mut kx = (kz + 1) % 3;
        let mut ky = (kx + 1) % 3;
        // Keep the winding of the sheared triangle, as in the paper.
        if d[kz] < 0.0 {
            std::mem::swap(&mut kx, &mut ky);
        }
        RayPrep {
            origin: o,
            dir: d,
            inv_dir: Vec3::ONE / d,
            parallel,
            valid,
            kx,
            ky,
            kz,
            sx: d[kx] / d[kz],
            sy: d[ky] / d[kz],
            sz: 1.0 / d[kz],
        }
    }

    /// The triangle test for a valid ray. Comparisons are written so that NaN rejects.
    #[inline]
    pub fn intersect(&self, test: TriangleTest, tri: &[Vec3; 3], t_min: f32, t_max: f32) -> Option<(f32, f32, f32)> {
        match test {
            TriangleTest::MollerTrumbore => self.moller_trumbore(tri, t_min, t_max),
            TriangleTest::Watertight => self.watertight(tri, t_min, t_max),
        }
    }

    #[inline]
    fn moller_trumbore(&self, tri: &[Vec3; 3], t_min: f32, t_max: f32) -> Option<(f32, f32, f32)> {
        let e1 = tri[1] - tri[0];
        let e2 = tri[2] - tri[0];
        let p = self.dir.cross(e2);
        let det = e1.dot(p);
        // Exactly zero only: a threshold would depend on the scene's scale.
        if det == 0.0 {
            return None;
        }
        let inv_det = 1.0 / det;
        let s = self.origin - tri[0];
        let u = s.dot(p) * inv_det;
        // `contains` is false for NaN, which must miss.
        if !(0.0..=1.0).contains(&u) {
            return None;
        }
        let q = s.cross(e1);
        let v = self.dir.dot(q) * inv_det;
        if !(v >= 0.0 && u + v <= 1.0) {
            return None;
        }
        let t = e2.dot(q) * inv_det;
        if !(t > t_min && t < t_max) {
            return None;
        }
        Some((t, u, v))
    }

    /// [`watertight`](RayPrep::watertight) on four triangles at once, lane `k` being the
    /// triangle whose vertex `i` has coordinate `axis` at `v[i][axis][k]`: the same arithmetic
    /// lane by lane, so the same bits. Which lanes hit within `(t_min, t_max)`, and their `t`,
    /// `u` and `v`; a lane of NaN vertices never hits.
    #[inline]
    pub fn watertight4(&self, v: &[[Vec4; 3]; 3], t_min: f32, t_max: f32) -> (u32, Vec4, Vec4, Vec4) {
        let (kx, ky, kz) = (self.kx, self.ky, self.kz);
        let o = |k: usize| Vec4::splat(self.origin[k]);
        let (ox, oy, oz) = (o(kx), o(ky), o(kz));
        let (sx, sy, sz) = (Vec4::splat(self.sx), Vec4::splat(self.sy), Vec4::splat(self.sz));
        let sheared = |p: &[Vec4; 3]| {
            let (px, py, pz) = (p[kx] - ox, p[ky] - oy, p[kz] - oz);
            (px - sx * pz, py - sy * pz, pz)
        };
        let (ax, ay, az) = sheared(&v[0]);
        let (bx, by, bz) = sheared(&v[1]);
        let (cx, cy, cz) = sheared(&v[2]);
        let u = cx * by - cy * bx;
        let vv = ax * cy - ay * cx;
        let w = bx * ay - by * ax;
        let zero = Vec4::ZERO;
        let neg = u.cmplt(zero) | vv.cmplt(zero) | w.cmplt(zero);
        let pos = u.cmpgt(zero) | vv.cmpgt(zero) | w.cmpgt(zero);
        let det = u + vv + w;
        let t_scaled = u * (sz * az) + vv * (sz * bz) + w * (sz * cz);
        let inv_det = Vec4::ONE / det;
        let t = t_scaled * inv_det;
        let inside = !(neg & pos).bitmask() & 0xf;
        let hit = det.cmpne(zero) & t.cmpgt(Vec4::splat(t_min)) & t.cmplt(Vec4::splat(t_max));
        (inside & hit.bitmask(), t, vv * inv_det, w * inv_det)
    }

    #[inline]
    fn watertight(&self, tri: &[Vec3; 3], t_min: f32, t_max: f32) -> Option<(f32, f32, f32)> {
        let (kx, ky, kz) = (self.kx, self.ky, self.kz);
        let a = tri[0] - self.origin;
        let b = tri[1] - self.origin;
        let c = tri[2] - self.origin;
        // Shear the vertices so that the ray runs along +z through the origin.
        let ax = a[kx] - self.sx * a[kz];
        let ay = a[ky] - self.sy * a[kz];
        let bx = b[kx] - self.sx * b[kz];
        let by = b[ky] - self.sy * b[kz];
        let cx = c[kx] - self.sx * c[kz];
        let cy = c[ky] - self.sy * c[kz];
        // Scaled barycentrics: 2D edge functions of the sheared triangle at the origin.
        let u = cx * by - cy * bx;
        let v = ax * cy - ay * cx;
        let w = bx * ay - by * ax;
        // Inside when all have one sign; zeros count as inside (no culling).
        if (u < 0.0 || v < 0.0 || w < 0.0) && (u > 0.0 || v > 0.0 || w > 0.0) {
            return None;
        }
        let det = u + v + w;
        if det == 0.0 {
            return None;
        }
        let az = self.sz * a[kz];
        let bz = self.sz * b[kz];
        let cz = self.sz * c[kz];
        let t_scaled = u * az + v * bz + w * cz;
        let inv_det = 1.0 / det;
        let t = t_scaled * inv_det;
        if !(t > t_min && t < t_max) {
            return None;
        }
        Some((t, v * inv_det, w * inv_det))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TESTS: [TriangleTest; 2] = [TriangleTest::MollerTrumbore, TriangleTest::Watertight];

    fn tri() -> [Vec3; 3] {
        [Vec3::new(0.0, 0.0, 1.0), Vec3::new(2.0, 0.0, 1.0), Vec3::new(0.0, 2.0, 1.0)]
    }

    #[test]
    fn both_faces_are_hit_with_the_same_t_and_barycentrics() {
        for test in TESTS {
            let from_below = Ray::new(Vec3::new(0.5, 0.25, 0.0), Vec3::new(0.0, 0.0, 2.0));
            let from_above = Ray::new(Vec3::new(0.5, 0.25, 3.0), Vec3::new(0.0, 0.0, -1.0));
            let (t, u, v) = test.intersect(&from_below, &tri(), 0.0, f32::INFINITY).unwrap();
            assert_eq!((t, u, v), (0.5, 0.25, 0.125), "{test:?}");
            let (t, u, v) = test.intersect(&from_above, &tri(), 0.0, f32::INFINITY).unwrap();
            assert_eq!((t, u, v), (2.0, 0.25, 0.125), "{test:?}");
        }
    }

    #[test]
    fn interval_is_open_at_both_ends() {
        let ray = Ray::new(Vec3::new(0.5, 0.5, 0.0), Vec3::Z);
        for test in TESTS {
            assert!(test.intersect(&ray, &tri(), 1.0, 2.0).is_none(), "t = t_min is excluded");
            assert!(test.intersect(&ray, &tri(), 0.0, 1.0).is_none(), "t = t_max is excluded");
            assert!(test.intersect(&ray, &tri(), 0.999, 1.001).is_some());
            // Negative parameters are fine when the interval allows them.
            let back = Ray::new(Vec3::new(0.5, 0.5, 3.0), Vec3::Z);
            assert_eq!(test.intersect(&back, &tri(), -10.0, 0.0).unwrap().0, -2.0);
        }
    }

    #[test]
    fn edges_and_vertices_count_as_inside_and_outside_misses() {
        for test in TESTS {
            for p in
                [Vec3::new(0.0, 0.0, 0.0), Vec3::new(2.0, 0.0, 0.0), Vec3::new(1.0, 1.0, 0.0), Vec3::new(0.0, 1.0, 0.0)]
            {
                let ray = Ray::new(p, Vec3::Z);
                assert!(test.intersect(&ray, &tri(), 0.0, 5.0).is_some(), "{test:?} at {p}");
            }
            for p in [Vec3::new(-1e-3, 0.5, 0.0), Vec3::new(1.001, 1.0, 0.0), Vec3::new(0.5, -1e-3, 0.0)] {
                let ray = Ray::new(p, Vec3::Z);
                assert!(test.intersect(&ray, &tri(), 0.0, 5.0).is_none(), "{test:?} at {p}");
            }
        }
    }

    #[test]
    fn rays_in_the_triangle_plane_and_invalid_rays_miss() {
        for test in TESTS {
            let in_plane = Ray::new(Vec3::new(-1.0, 0.5, 1.0), Vec3::X);
            assert!(test.intersect(&in_plane, &tri(), 0.0, 10.0).is_none(), "{test:?}");
            for bad in [
                Ray::new(Vec3::new(0.5, 0.5, 0.0), Vec3::ZERO),
                Ray::new(Vec3::new(0.5, 0.5, 0.0), Vec3::splat(1e-39)),
                Ray::new(Vec3::new(f32::NAN, 0.5, 0.0), Vec3::Z),
                Ray::new(Vec3::new(0.5, 0.5, 0.0), Vec3::new(0.0, 0.0, f32::INFINITY)),
            ] {
                assert!(test.intersect(&bad, &tri(), 0.0, 10.0).is_none(), "{test:?} {bad:?}");
            }
        }
    }

    proptest::proptest! {
        /// The four-lane test gives each lane the scalar test's bits: the same hits, `t`, `u`, `v`.
        #[test]
        fn four_lanes_are_four_scalar_tests(
            corners in proptest::collection::vec(-2.0f32..2.0, 36),
            origin in proptest::array::uniform3(-3.0f32..3.0),
            dir in proptest::array::uniform3(-1.0f32..1.0),
            t_max in 0.1f32..10.0,
        ) {
            let r = RayPrep::new(&Ray::new(Vec3::from(origin), Vec3::from(dir)));
            proptest::prop_assume!(r.valid);
            let tris: Vec<[Vec3; 3]> =
                corners.chunks(9).map(|c| [0, 3, 6].map(|i| Vec3::new(c[i], c[i + 1], c[i + 2]))).collect();
            let mut v = [[Vec4::ZERO; 3]; 3];
            for (k, tri) in tris.iter().enumerate() {
                for (i, p) in tri.iter().enumerate() {
                    for axis in 0..3 {
                        v[i][axis][k] = p[axis];
                    }
                }
            }
            let (hits, t, u, w) = r.watertight4(&v, 0.0, t_max);
            for (k, tri) in tris.iter().enumerate() {
                let lane = (hits >> k & 1 == 1).then(|| (t[k].to_bits(), u[k].to_bits(), w[k].to_bits()));
                let scalar = r.watertight(tri, 0.0, t_max).map(|(t, u, v)| (t.to_bits(), u.to_bits(), v.to_bits()));
                proptest::prop_assert_eq!(lane, scalar, "lane {}", k);
            }
        }
    }

    #[test]
    fn watertight_never_leaks_through_a_shared_edge() {
        // Two triangles sharing the diagonal of a skewed quad; rays aimed at points on the
        // shared edge must hit at least one of them.
        let a = Vec3::new(0.1, 0.3, 0.7);
        let b = Vec3::new(1.3, 0.2, 0.9);
        let c = Vec3::new(0.2, 1.7, 1.1);
        let d = Vec3::new(1.9, 1.3, 0.8);
        let quad = [[a, b, c], [b, d, c]];
        let origin = Vec3::new(0.33, 0.71, -2.9);
        let mut leaks = Vec::new();
        for i in 0..=1000 {
            let s = i as f32 / 1000.0;
            // Interpolate from the nearer end so that both ends are exact vertices.
            let target = if s <= 0.5 { b + (c - b) * s } else { c + (b - c) * (1.0 - s) };
            let ray = Ray::new(origin, target - origin);
            if brute_force_closest(&quad, &ray, 0.0, f32::INFINITY, TriangleTest::Watertight).is_none() {
                leaks.push(i);
            }
        }
        assert_eq!(leaks, []);
    }

    #[test]
    fn validity_predicate() {
        assert!(is_valid_triangle(&tri()));
        assert!(!is_valid_triangle(&[Vec3::ONE; 3]));
        assert!(!is_valid_triangle(&[Vec3::ZERO, Vec3::ONE, Vec3::splat(2.0)]));
        assert!(!is_valid_triangle(&[Vec3::ZERO, Vec3::X, Vec3::new(0.0, f32::INFINITY, 0.0)]));
        // Tiny but not degenerate.
        assert!(is_valid_triangle(&[Vec3::ZERO, Vec3::X * 1e-30, Vec3::Y * 1e-30]));
    }

    #[test]
    fn brute_force_skips_invalid_triangles_and_breaks_ties_by_index() {
        let nan = [Vec3::new(f32::NAN, 0.0, 0.0), Vec3::X, Vec3::Y];
        let tris = [nan, tri(), tri()];
        let ray = Ray::new(Vec3::new(0.5, 0.5, 0.0), Vec3::Z);
        for test in TESTS {
            let hit = brute_force_closest(&tris, &ray, 0.0, 10.0, test).unwrap();
            assert_eq!(hit.tri, 1);
            assert!(brute_force_any(&tris, &ray, 0.0, 10.0, test));
            assert!(!brute_force_any(&tris[..1], &ray, 0.0, 10.0, test));
        }
    }
}
