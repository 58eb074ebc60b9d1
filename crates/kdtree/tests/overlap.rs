//! Long thin overlapping triangles: the fan (a disc triangulated from its centre) and the
//! self-overlapping star polygon of `lumbre_kdtree::scenes`. Every split of a cell holding
//! the fan's centre, and most splits of the star, clip most of a node's triangles into both
//! children: without a bound the SAH multiplies the references at every level down to the
//! depth cap. These tests check the bound the reference budget sets on the tree and on the
//! build's work, that it leaves ordinary meshes alone, and queries against brute force.

mod common;

use common::{check_all, check_families, load, ray_families};
use glam::Vec3;
use lumbre_kdtree::{BuildOptions, BuildStats, KdStats, KdTree, scenes};

type Shape = (&'static str, fn(usize) -> Vec<[Vec3; 3]>);

const FAN: Shape = ("fan", scenes::fan);
const STAR: Shape = ("star polygon", scenes::star_polygon);

/// Builds on one thread (so that `peak_events` is that of a depth-first build) and prints
/// the figures.
fn measure(name: &str, tris: &[[Vec3; 3]], opts: &BuildOptions) -> (KdTree, KdStats, BuildStats) {
    let (tree, build) = KdTree::build_with_stats(tris, &BuildOptions { parallel: false, ..*opts });
    let s = tree.stats();
    let n = tris.len() as f64;
    eprintln!(
        "{name} of {} triangles, budget {}: {} nodes, {} references ({:.1} per triangle), depth {}, \
         SAH cost {:.1}; {} events swept ({:.1} per triangle), peak {} events ({:.1} per triangle), \
         {} nodes limited by the budget",
        tris.len(),
        opts.reference_budget,
        s.nodes,
        s.prim_refs,
        s.prim_refs as f64 / n,
        s.max_depth,
        s.sah_cost,
        build.events,
        build.events as f64 / n,
        build.peak_events,
        build.peak_events as f64 / n,
        build.budget_limited,
    );
    (tree, s, build)
}

#[test]
fn without_the_budget_references_multiply() {
    // What the budget is for, at sizes that build quickly without it: the references per
    // triangle grow with the input and pass the default budget.
    let off = BuildOptions { reference_budget: f32::INFINITY, ..Default::default() };
    let budget = BuildOptions::default().reference_budget as f64;
    for ((name, make), sizes) in [(FAN, [1000, 2000]), (STAR, [250, 500])] {
        let per_tri = sizes.map(|size| {
            let tris = make(size);
            let (_, s, b) = measure(name, &tris, &off);
            assert_eq!(b.budget_limited, 0);
            s.prim_refs as f64 / tris.len() as f64
        });
        assert!(per_tri[1] > 1.5 * per_tri[0], "{name}: {per_tri:?}");
        assert!(per_tri[1] > budget, "{name}: {per_tri:?}");
    }
}

#[test]
fn the_budget_bounds_references_and_work_on_a_20k_fan_and_a_5k_star_polygon() {
    // Without the budget these took 10 to 40 s and over 1 GB (2000 and 23500 references per
    // triangle). With it: at most `R N` references, at most `6 R N` events swept per level.
    let opts = BuildOptions::default();
    let r = opts.reference_budget as f64;
    for ((name, make), size) in [(FAN, 20_000), (STAR, 5000)] {
        let tris = make(size);
        let n = tris.len() as f64;
        let (tree, s, b) = measure(name, &tris, &opts);
        let levels = opts.effective_max_depth(tris.len()) as f64 + 1.0;
        assert!(s.prim_refs as f64 <= r * n, "{name}: {} references", s.prim_refs);
        assert!(b.events as f64 <= 6.0 * r * n * levels, "{name}: {} events", b.events);
        assert!(b.budget_limited > 0, "{name}: the budget is what stopped the splits");
        // What these two come to (42 and 100 references per triangle, 16k and 14k nodes): far
        // from the bound on the fan, whose references multiply mostly around its centre, where
        // the budget runs out first. A tree still far cheaper to trace than one leaf.
        let per_tri = s.prim_refs as f64 / n;
        assert!(per_tri < if name == "fan" { 50.0 } else { 110.0 }, "{name}: {per_tri} references per triangle");
        assert!(s.nodes < 20_000, "{name}: {} nodes", s.nodes);
        assert!(s.sah_cost < 0.05 * 1.5 * n as f32, "{name}: SAH cost {}", s.sah_cost);
        assert!(b.peak_events < 20 * tris.len(), "{name}: peak {} events", b.peak_events);
        // The same tree on any number of threads.
        assert!(KdTree::build(&tris, &opts) == tree, "{name}: parallel build differs");
        let pool = rayon::ThreadPoolBuilder::new().num_threads(7).build().unwrap();
        assert!(pool.install(|| KdTree::build(&tris, &opts)) == tree, "{name}: 7 threads differ");
    }
}

#[test]
fn references_stay_within_any_budget() {
    let tris = scenes::star_polygon(600);
    let n = tris.len();
    let mut last = 0;
    for budget in [1.0, 1.5, 4.0, 16.0, 64.0] {
        let (tree, s, b) =
            measure("star polygon", &tris, &BuildOptions { reference_budget: budget, ..Default::default() });
        assert!(s.prim_refs as f64 <= budget as f64 * n as f64, "budget {budget}: {} references", s.prim_refs);
        assert!(s.prim_refs >= last, "a larger budget never gives fewer references here");
        last = s.prim_refs;
        if budget == 1.0 {
            // No split may clip a triangle into both children: only clean cuts.
            assert_eq!((b.clipped, s.prim_refs), (0, n));
        }
        // (A tree of a few nodes has few split planes to aim rays at: no hit counts expected.)
        for (family, queries, _) in ray_families(&tree, &tris, 22, 40, false) {
            check_all(&format!("star polygon, budget {budget}, {family}"), &tree, &tris, &queries);
        }
    }
    // Below 1 and NaN act as 1.
    let one = KdTree::build(&tris, &BuildOptions { reference_budget: 1.0, ..Default::default() });
    for budget in [0.0, -3.0, f32::NAN] {
        assert!(KdTree::build(&tris, &BuildOptions { reference_budget: budget, ..Default::default() }) == one);
    }
}

#[test]
fn ordinary_meshes_never_reach_the_budget() {
    // The budget rules out no split of these meshes, so their trees are the ones built
    // without it, for every option set of the other tests.
    let meshes = [
        ("suzanne", load("suzanne.obj")),
        ("teapot", load("teapot-quarter.obj")),
        ("generated", scenes::generated_scene(20_000)),
    ];
    for (name, tris) in &meshes {
        for opts in [
            BuildOptions::default(),
            BuildOptions { intersection_cost: 8.0, max_leaf_size: 0, ..Default::default() },
            BuildOptions { max_leaf_size: 1, ..Default::default() },
        ] {
            let (tree, b) = KdTree::build_with_stats(tris, &opts);
            assert_eq!(b.budget_limited, 0, "{name} {opts:?}");
            let off = KdTree::build(tris, &BuildOptions { reference_budget: f32::INFINITY, ..opts });
            assert!(tree == off, "{name} {opts:?}");
        }
    }
}

#[test]
fn queries_on_fans_and_star_polygons_agree_with_brute_force() {
    for ((name, make), size) in [(FAN, 20_000), (STAR, 5000), (FAN, 300), (STAR, 300)] {
        let tris = make(size);
        let (tree, _, _) = measure(name, &tris, &BuildOptions::default());
        check_families(&format!("{name} of {size}"), &tree, &tris, 21, if size > 1000 { 40 } else { 150 }, false);
    }
}
