//! Long thin overlapping triangles: the fan (a disc triangulated from its centre) and the
//! self-overlapping star polygon of `lumbre_kdtree::scenes`. Every split of a cell holding
//! the fan's centre, and most splits of the star, clip most of a node's triangles into both
//! children: these tests measure how the build's references, nodes and events grow, and
//! check queries against brute force.

mod common;

use common::check_families;
use glam::Vec3;
use lumbre_kdtree::{BuildOptions, BuildStats, KdStats, KdTree, scenes};

type Shape = (&'static str, fn(usize) -> Vec<[Vec3; 3]>);

const SHAPES: [Shape; 2] = [("fan", scenes::fan), ("star polygon", scenes::star_polygon)];

/// Builds on one thread (so that `peak_events` is that of a depth-first build) and prints
/// the figures.
fn measure(name: &str, tris: &[[Vec3; 3]]) -> (KdTree, KdStats, BuildStats) {
    let (tree, build) = KdTree::build_with_stats(tris, &BuildOptions { parallel: false, ..Default::default() });
    let s = tree.stats();
    let n = tris.len() as f64;
    eprintln!(
        "{name} of {} triangles: {} nodes, {} references ({:.1} per triangle), depth {}, SAH cost {:.1}; \
         {} events swept ({:.1} per triangle), peak {} events ({:.1} per triangle), {} nodes at the depth cap",
        tris.len(),
        s.nodes,
        s.prim_refs,
        s.prim_refs as f64 / n,
        s.max_depth,
        s.sah_cost,
        build.events,
        build.events as f64 / n,
        build.peak_events,
        build.peak_events as f64 / n,
        build.depth_capped,
    );
    (tree, s, build)
}

#[test]
fn references_multiply_on_fans_and_star_polygons() {
    // Doubling the input multiplies the references per triangle: the SAH keeps
    // splitting cells around the fan's centre and across the star's crossings, clipping
    // most triangles into both children, down to the depth cap.
    for (name, make) in SHAPES {
        let (_, small, small_build) = measure(name, &make(500));
        let (_, large, large_build) = measure(name, &make(1000));
        let per_tri = |s: &KdStats, n: f64| s.prim_refs as f64 / n;
        assert!(per_tri(&large, 1000.0) > 1.5 * per_tri(&small, 500.0), "{name}");
        // So does the work: the events swept per triangle.
        assert!(large_build.events as f64 / 1000.0 > 1.5 * small_build.events as f64 / 500.0, "{name}");
        let cap = BuildOptions::default().effective_max_depth(make(1000).len());
        assert_eq!(large.max_depth, cap, "{name}: splits go on down to the depth cap");
    }
}

#[test]
fn queries_on_fans_and_star_polygons_agree_with_brute_force() {
    for (name, make) in SHAPES {
        let tris = make(400);
        let (tree, _, _) = measure(name, &tris);
        check_families(name, &tree, &tris, 21, 150, false);
    }
}
