//! Helpers shared by the integration tests: mesh loading, a small deterministic RNG, ray
//! families, and the comparison of every tree query against brute force.

#![allow(dead_code)]

pub mod obj;

use glam::Vec3;
use lumbre_kdtree::{
    Aabb, Bvh, Hit, KdTree, QueryOptions, Ray, Traversal, TriangleTest, brute_force_any, brute_force_closest,
};

pub const TRAVERSALS: [Traversal; 2] = [Traversal::Restart, Traversal::Stack];
pub const TESTS: [TriangleTest; 2] = [TriangleTest::MollerTrumbore, TriangleTest::Watertight];

/// Relative tolerance on `t` when the tree and brute force report different triangles: they
/// must then tie. Differences come only from rounding near a split plane (the tree stops at
/// the first leaf whose piece of ray holds a hit), a few ulps, far below this.
pub const T_REL_TOL: f32 = 1e-4;

/// Loads a mesh from `tests/data`.
pub fn load(name: &str) -> Vec<[Vec3; 3]> {
    let path = format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"));
    obj::parse_obj(&std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}")))
}

pub use lumbre_gpu::testing::Rng;

/// Directions and points from the tests' generator.
pub trait RngVec {
    /// Uniform on the unit sphere.
    fn unit(&mut self) -> Vec3;
    /// Uniform in `b`.
    fn in_box(&mut self, b: &Aabb) -> Vec3;
}

impl RngVec for Rng {
    fn unit(&mut self) -> Vec3 {
        loop {
            let v = Vec3::new(self.range(-1.0, 1.0), self.range(-1.0, 1.0), self.range(-1.0, 1.0));
            let l = v.length_squared();
            if l > 1e-4 && l <= 1.0 {
                return v / l.sqrt();
            }
        }
    }

    fn in_box(&mut self, b: &Aabb) -> Vec3 {
        Vec3::new(self.range(b.min.x, b.max.x), self.range(b.min.y, b.max.y), self.range(b.min.z, b.max.z))
    }
}

/// A structure under test: the kd-tree (both traversals) or the BVH (its own walk).
pub trait Structure {
    fn closest_hit(&self, tris: &[[Vec3; 3]], ray: &Ray, t_min: f32, t_max: f32, opts: &QueryOptions) -> Option<Hit>;
    fn any_hit(&self, tris: &[[Vec3; 3]], ray: &Ray, t_min: f32, t_max: f32, opts: &QueryOptions) -> bool;
    /// The traversals worth checking.
    fn traversals(&self) -> &'static [Traversal];
    /// Whether differences explained by unreliable hits must stay rare with this test (they
    /// must always be explained).
    fn strict(&self, _test: TriangleTest) -> bool {
        true
    }
}

impl Structure for KdTree {
    fn closest_hit(&self, tris: &[[Vec3; 3]], ray: &Ray, t_min: f32, t_max: f32, opts: &QueryOptions) -> Option<Hit> {
        KdTree::closest_hit(self, tris, ray, t_min, t_max, opts)
    }
    fn any_hit(&self, tris: &[[Vec3; 3]], ray: &Ray, t_min: f32, t_max: f32, opts: &QueryOptions) -> bool {
        KdTree::any_hit(self, tris, ray, t_min, t_max, opts)
    }
    fn traversals(&self) -> &'static [Traversal] {
        &TRAVERSALS
    }
}

impl Structure for Bvh {
    fn closest_hit(&self, tris: &[[Vec3; 3]], ray: &Ray, t_min: f32, t_max: f32, opts: &QueryOptions) -> Option<Hit> {
        Bvh::closest_hit(self, tris, ray, t_min, t_max, opts)
    }
    fn any_hit(&self, tris: &[[Vec3; 3]], ray: &Ray, t_min: f32, t_max: f32, opts: &QueryOptions) -> bool {
        Bvh::any_hit(self, tris, ray, t_min, t_max, opts)
    }
    fn traversals(&self) -> &'static [Traversal] {
        &[Traversal::Stack]
    }
    /// Möller–Trumbore's `t` on a thin triangle can be off its plane crossing by 1e-4
    /// (relative); the BVH skips a box the ray enters beyond the best hit so far, so such a
    /// hit loses to an equally close one more often than in the kd-tree, whose leaves test
    /// every triangle they list.
    fn strict(&self, test: TriangleTest) -> bool {
        test == TriangleTest::Watertight
    }
}

pub fn close(a: f32, b: f32) -> bool {
    (a - b).abs() <= T_REL_TOL * a.abs().max(b.abs()) + 1e-6
}

/// A ray with its query interval.
#[derive(Clone, Copy, Debug)]
pub struct Query {
    pub ray: Ray,
    pub t_min: f32,
    pub t_max: f32,
}

impl Query {
    pub fn new(ray: Ray) -> Query {
        Query { ray, t_min: 0.0, t_max: f32::INFINITY }
    }
}

/// Whether the `f32` test's hit of `tri` at `t32` is too close to call, judged against a
/// nearly exact `f64` recomputation from the same `f32` inputs. It is when
///
/// - its `t` is off the exact ray/plane intersection by more than the tolerance (a ray
///   grazing the triangle's plane; the test's `t` is then ill-conditioned), or
/// - the exact intersection lies within the tolerance of an end of the query interval or
///   beyond it (a tree only searches the cells along `[t_min, t_max]`), or
/// - the exact intersection point lies outside the triangle or within `DELTA` of its edges:
///   `DELTA` is 64 `f32` ulps of the largest coordinate involved, the scale of the rounding
///   in aiming the ray and in the traversal's plane crossings. A ray aimed at a vertex in
///   `f32` passes *near* it, possibly through a sliver of a cell too thin for any `f32`
///   traversal to enter.
///
/// Only such hits may make the tree and brute force differ, and only rarely (see
/// [`check_all`]: at most 1% of a family's rays): hits *exactly* at a vertex or edge are
/// found by construction (the build puts triangles touching a split plane on both sides),
/// so what remains is the resolution of `f32`.
///
/// With `exact_aim` the ray is known to pass exactly through the point it was aimed at (a
/// vertex, with coordinates on a lattice where `vertex - origin` is exact): then being near
/// an edge does not count, as the build guarantees those hits.
pub fn unreliable(ray: &Ray, tri: &[Vec3; 3], t32: f32, t_min: f32, t_max: f32, exact_aim: bool) -> bool {
    let [a, b, c] = tri.map(|v| v.as_dvec3());
    let (o, d) = (ray.origin.as_dvec3(), ray.dir.as_dvec3());
    let n = (b - a).cross(c - a);
    let t64 = n.dot(a - o) / n.dot(d);
    if !t64.is_finite() {
        return true;
    }
    let q = o + d * t64;
    // Signed distance from q to each edge's line, within the plane; positive inside.
    let inv_n = 1.0 / n.length();
    let edge = |p0: glam::DVec3, p1: glam::DVec3| (p1 - p0).cross(q - p0).dot(n) * inv_n / (p1 - p0).length();
    let inside_by = edge(a, b).min(edge(b, c)).min(edge(c, a));
    let scale = [o, q, a, b, c].iter().map(|v| v.abs().max_element()).fold(0.0, f64::max);
    let delta = if exact_aim { f64::NEG_INFINITY } else { 64.0 * f32::EPSILON as f64 * scale };
    let tol = T_REL_TOL as f64 * t64.abs().max(t32.abs() as f64) + 1e-6;
    !((t64 - t32 as f64).abs() <= tol && t64 > t_min as f64 + tol && t64 < t_max as f64 - tol && inside_by > delta)
}

/// The closest `f32` hit among the triangles whose hit is reliable (see [`unreliable`]).
fn reliable_closest(tris: &[[Vec3; 3]], q: &Query, test: TriangleTest, exact_aim: bool) -> (Option<Hit>, usize) {
    let mut best: Option<Hit> = None;
    let mut shaky = 0;
    for (i, tri) in tris.iter().enumerate() {
        if !lumbre_kdtree::is_valid_triangle(tri) {
            continue;
        }
        if let Some((t, u, v)) = test.intersect(&q.ray, tri, q.t_min, q.t_max) {
            if unreliable(&q.ray, tri, t, q.t_min, q.t_max, exact_aim) {
                shaky += 1;
            } else if best.is_none_or(|b| t < b.t) {
                best = Some(Hit { t, tri: i as u32, u, v });
            }
        }
    }
    (best, shaky)
}

/// Checks one tree closest hit against the brute-force one.
fn agree(
    tris: &[[Vec3; 3]],
    q: &Query,
    test: TriangleTest,
    brute: Option<Hit>,
    got: Option<Hit>,
) -> Result<(), String> {
    if let Some(g) = got {
        // Whatever the tree returns must be a hit of its triangle, with the same numbers.
        let own = test.intersect(&q.ray, &tris[g.tri as usize], q.t_min, q.t_max);
        if own != Some((g.t, g.u, g.v)) {
            return Err(format!("tree hit {g:?} is not a hit of its triangle: {own:?}"));
        }
    }
    match (brute, got) {
        (None, None) => Ok(()),
        // The same triangle through the same f32 code: bit-identical.
        (Some(b), Some(g)) if g.tri == b.tri => {
            if g == b {
                Ok(())
            } else {
                Err(format!("same triangle, different hit: brute {b:?} tree {g:?}"))
            }
        }
        // Different triangles: they must tie.
        (Some(b), Some(g)) if close(g.t, b.t) => Ok(()),
        _ => Err(format!("brute {brute:?} tree {got:?}")),
    }
}

/// How one query compared.
#[derive(Clone, Copy, Debug, Default)]
pub struct Outcome {
    /// Brute force found a hit (watertight test).
    pub hit: bool,
    /// A difference was accepted because it came from an unreliable hit (see [`unreliable`]).
    pub relaxed: bool,
}

/// The weaker check applied when the tree and brute force differ: every disagreement must be
/// explained by unreliable hits. The tree's answer must then lie between brute force over
/// the reliable hits only and brute force over all of them.
fn relaxed(
    tris: &[[Vec3; 3]],
    q: &Query,
    test: TriangleTest,
    opts: &QueryOptions,
    tree: &dyn Structure,
    exact_aim: bool,
) -> Result<(), String> {
    let (reliable, shaky) = reliable_closest(tris, q, test, exact_aim);
    if shaky == 0 {
        return Err("no unreliable hit explains the difference".into());
    }
    let got = tree.closest_hit(tris, &q.ray, q.t_min, q.t_max, opts);
    if let Some(g) = got {
        let own = test.intersect(&q.ray, &tris[g.tri as usize], q.t_min, q.t_max);
        if own != Some((g.t, g.u, g.v)) {
            return Err(format!("tree hit {g:?} is not a hit of its triangle: {own:?}"));
        }
    }
    match (reliable, got) {
        (Some(r), None) => return Err(format!("tree misses the reliable hit {r:?}")),
        (Some(r), Some(g)) if g.t > r.t && !close(g.t, r.t) => {
            return Err(format!("tree hit {g:?} is beyond the reliable hit {r:?}"));
        }
        _ => {}
    }
    if reliable.is_some() && !tree.any_hit(tris, &q.ray, q.t_min, q.t_max, opts) {
        return Err("any_hit misses a reliable hit".into());
    }
    Ok(())
}

/// Compares `closest_hit` and `any_hit` of both traversals and both triangle tests with brute
/// force, plus shadow rays ending at and just beyond the closest hit.
pub fn check_query(tree: &dyn Structure, tris: &[[Vec3; 3]], q: &Query) -> Result<Outcome, String> {
    check_query_aimed(tree, tris, q, false)
}

/// [`check_query`] for a ray that passes exactly through the vertex it was aimed at (see
/// [`unreliable`]).
pub fn check_query_aimed(
    tree: &dyn Structure,
    tris: &[[Vec3; 3]],
    q: &Query,
    exact_aim: bool,
) -> Result<Outcome, String> {
    let mut out = Outcome::default();
    for test in TESTS {
        let brute = brute_force_closest(tris, &q.ray, q.t_min, q.t_max, test);
        let brute_any = brute_force_any(tris, &q.ray, q.t_min, q.t_max, test);
        if brute_any != brute.is_some() {
            return Err(format!("{test:?}: brute-force closest and any disagree"));
        }
        out.hit = brute.is_some();
        let mut queries = vec![*q];
        if let Some(b) = brute {
            // Shadow rays: up to the hit (exclusive) nothing is in the way; a bit beyond, the hit is.
            for t_end in [b.t, b.t + b.t.abs() * 1e-3 + 1e-6] {
                queries.push(Query { t_max: t_end, ..*q });
            }
        }
        for &traversal in tree.traversals() {
            let opts = QueryOptions { traversal, test };
            for (k, q) in queries.iter().enumerate() {
                let ctx = |e: String| format!("{traversal:?}/{test:?} {q:?}: {e}");
                let brute = if k == 0 { brute } else { brute_force_closest(tris, &q.ray, q.t_min, q.t_max, test) };
                let got = tree.closest_hit(tris, &q.ray, q.t_min, q.t_max, &opts);
                let any = tree.any_hit(tris, &q.ray, q.t_min, q.t_max, &opts);
                if agree(tris, q, test, brute, got).is_err() || any != brute.is_some() {
                    let exact = agree(tris, q, test, brute, got).err().unwrap_or_else(|| format!("any_hit {any}"));
                    relaxed(tris, q, test, &opts, tree, exact_aim).map_err(|e| ctx(format!("{exact}; {e}")))?;
                    out.relaxed |= tree.strict(test);
                }
            }
        }
    }
    Ok(out)
}

/// Checks a batch of queries; panics listing the first mismatches. Returns the number of
/// hits and the number of differences accepted as unreliable hits (which must be rare).
pub fn check_all(name: &str, tree: &dyn Structure, tris: &[[Vec3; 3]], queries: &[Query]) -> usize {
    let (mut hits, mut relaxed) = (0, 0);
    let mut failures = Vec::new();
    for q in queries {
        match check_query(tree, tris, q) {
            Ok(o) => {
                hits += o.hit as usize;
                relaxed += o.relaxed as usize;
            }
            Err(e) => failures.push(e),
        }
    }
    assert!(
        failures.is_empty(),
        "{name}: {} of {} queries disagree with brute force, first ones:\n{}",
        failures.len(),
        queries.len(),
        failures.iter().take(5).cloned().collect::<Vec<_>>().join("\n")
    );
    let rare = lumbre_gpu::Tolerance::EXACT.beyond(0.01);
    assert!(
        rare.allows(relaxed, queries.len()),
        "{name}: {relaxed} of {} queries needed the relaxed check",
        queries.len()
    );
    eprintln!("{name}: {} queries, {hits} hit, {relaxed} accepted as unreliable", queries.len());
    hits
}

/// Cell, axis and position of every interior node.
pub fn split_planes(tree: &KdTree) -> Vec<(Aabb, usize, f32)> {
    let mut out = Vec::new();
    let mut stack = vec![(0usize, tree.bounds)];
    while let Some((i, cell)) = stack.pop() {
        let n = tree.nodes[i];
        if n.is_leaf() {
            continue;
        }
        let (axis, split) = (n.axis() as usize, n.split());
        out.push((cell, axis, split));
        let (mut below, mut above) = (cell, cell);
        below.max[axis] = split;
        above.min[axis] = split;
        stack.push((i + 1, below));
        stack.push((n.above_child() as usize, above));
    }
    out
}

/// Cell and triangle indices of every leaf.
pub fn leaves(tree: &KdTree) -> Vec<(Aabb, Vec<u32>)> {
    let mut out = Vec::new();
    let mut stack = vec![(0usize, tree.bounds)];
    while let Some((i, cell)) = stack.pop() {
        let n = tree.nodes[i];
        if n.is_leaf() {
            let start = n.prim_offset() as usize;
            out.push((cell, tree.prim_indices[start..start + n.prim_count() as usize].to_vec()));
            continue;
        }
        let (axis, split) = (n.axis() as usize, n.split());
        let (mut below, mut above) = (cell, cell);
        below.max[axis] = split;
        above.min[axis] = split;
        stack.push((i + 1, below));
        stack.push((n.above_child() as usize, above));
    }
    out
}

/// What a ray family must produce, so that a generator gone wrong cannot pass silently.
#[derive(Clone, Copy, Debug)]
pub enum Expect {
    /// At least this fraction of the rays hit something.
    SomeHits(f32),
    /// No ray hits anything.
    NoHits,
}

/// Families of hard rays for a mesh and its tree, `n` rays each (fewer where the tree has
/// no split planes).
/// `surface`: the triangles enclose space (a mesh), so that rays from inside and from its
/// vertices are expected to hit.
pub fn ray_families(
    tree: &KdTree,
    tris: &[[Vec3; 3]],
    seed: u64,
    n: usize,
    surface: bool,
) -> Vec<(&'static str, Vec<Query>, Expect)> {
    let surface_hits = |f: f32| Expect::SomeHits(if surface { f } else { 0.0 });
    let mut rng = Rng::new(seed as u32);
    let b = tree.bounds;
    let center = (b.min + b.max) * 0.5;
    let radius = (b.max - b.min).length().max(f32::MIN_POSITIVE);
    let planes = split_planes(tree);
    let verts: Vec<Vec3> = tris.iter().flatten().copied().filter(|v| v.is_finite()).collect();
    let mut fams = Vec::new();

    let q: Vec<Query> = (0..n)
        .map(|_| {
            let o = center + rng.unit() * radius * 1.5;
            Query::new(Ray::new(o, (rng.in_box(&b) - o) * rng.range(0.1, 10.0)))
        })
        .collect();
    fams.push(("from outside towards the box", q, Expect::SomeHits(0.2)));

    let q: Vec<Query> =
        (0..n).map(|_| Query::new(Ray::new(rng.in_box(&b), rng.unit() * rng.range(0.5, 2.0)))).collect();
    fams.push(("from inside the box", q, surface_hits(0.1)));

    if !planes.is_empty() {
        let q: Vec<Query> = (0..n)
            .map(|_| {
                let (cell, axis, split) = planes[rng.below(planes.len())];
                let mut o = rng.in_box(&cell);
                o[axis] = split;
                Query::new(Ray::new(o, rng.unit()))
            })
            .collect();
        fams.push(("starting on a split plane", q, Expect::SomeHits(0.1)));

        let q: Vec<Query> = (0..n)
            .map(|i| {
                let (cell, axis, split) = planes[rng.below(planes.len())];
                let mut o = rng.in_box(&cell);
                let mut d = rng.unit();
                d[axis] = if i % 4 == 0 { -0.0 } else { 0.0 };
                if i % 2 == 0 {
                    o[axis] = split; // in the plane
                }
                Query::new(Ray::new(o, d))
            })
            .collect();
        fams.push(("parallel to a split plane, half of them in it", q, Expect::SomeHits(0.05)));

        let q: Vec<Query> = (0..n)
            .map(|i| {
                // Axis-aligned rays lying in two split planes at once where possible.
                let (_, a, sa) = planes[rng.below(planes.len())];
                let (_, c, sc) = planes[rng.below(planes.len())];
                let mut o = rng.in_box(&b);
                o[a] = sa;
                o[c] = sc;
                let free = (0..3).find(|&k| k != a && k != c).unwrap_or((a + 1) % 3);
                let mut d = Vec3::ZERO;
                d[free] = if i % 2 == 0 { 1.0 } else { -1.0 };
                o[free] = if i % 2 == 0 { b.min[free] - 1.0 } else { b.max[free] + 1.0 };
                Query::new(Ray::new(o, d))
            })
            .collect();
        fams.push(("axis-aligned in split planes", q, Expect::SomeHits(0.02)));
    }

    if !verts.is_empty() {
        let q: Vec<Query> = (0..n)
            .map(|_| {
                let v = verts[rng.below(verts.len())];
                let o = center + rng.unit() * radius * 1.5;
                Query::new(Ray::new(o, v - o))
            })
            .collect();
        fams.push(("aimed at vertices", q, Expect::SomeHits(0.5)));

        let q: Vec<Query> = (0..n)
            .map(|i| {
                let tri = tris[rng.below(tris.len())];
                let (p, r) = (tri[i % 3], tri[(i + 1) % 3]);
                if i % 3 == 0 {
                    // Along the edge itself, starting before it.
                    Query::new(Ray::new(p - (r - p), r - p))
                } else {
                    let o = center + rng.unit() * radius * 1.5;
                    Query::new(Ray::new(o, p + (r - p) * rng.f32() - o))
                }
            })
            .collect();
        fams.push(("along and across edges", q, Expect::SomeHits(0.3)));

        let q: Vec<Query> = (0..n).map(|_| Query::new(Ray::new(verts[rng.below(verts.len())], rng.unit()))).collect();
        fams.push(("starting at a vertex", q, surface_hits(0.2)));
    }

    let q: Vec<Query> = (0..n)
        .map(|_| {
            let o = center + rng.unit() * radius * 1.5;
            let mut d = rng.unit();
            if d.dot(center - o) > 0.0 {
                d = -d;
            }
            Query::new(Ray::new(o, d))
        })
        .collect();
    fams.push(("pointing away from the scene", q, Expect::NoHits));

    let q: Vec<Query> = (0..n)
        .map(|_| {
            let o = center + rng.unit() * radius * 1.5;
            let d = rng.in_box(&b) - o;
            let t_min = rng.range(-0.5, 0.8);
            Query { ray: Ray::new(o, d), t_min, t_max: t_min + rng.range(0.0, 1.0) }
        })
        .collect();
    fams.push(("bounded intervals, some starting behind the origin", q, Expect::SomeHits(0.05)));
    fams
}

/// Runs every family against brute force and checks its expectation.
pub fn check_families(label: &str, tree: &KdTree, tris: &[[Vec3; 3]], seed: u64, n: usize, surface: bool) {
    check_families_of(label, tree, tree, tris, seed, n, surface);
}

/// [`check_families`] of `under_test` with the families of `tree`'s split planes.
pub fn check_families_of(
    label: &str,
    tree: &KdTree,
    under_test: &dyn Structure,
    tris: &[[Vec3; 3]],
    seed: u64,
    n: usize,
    surface: bool,
) {
    for (name, queries, expect) in ray_families(tree, tris, seed, n, surface) {
        let hits = check_all(&format!("{label}, {name}"), under_test, tris, &queries);
        match expect {
            Expect::SomeHits(f) => assert!(
                hits as f32 >= f * queries.len() as f32,
                "{label}, {name}: only {hits} of {} rays hit",
                queries.len()
            ),
            Expect::NoHits => assert_eq!(hits, 0, "{label}, {name}"),
        }
    }
}
