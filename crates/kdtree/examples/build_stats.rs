//! Builds the kd-tree of a generated input once and prints the tree's figures and the
//! build's (time, references, nodes, events): a quick look at how the build copes with an
//! input, in a process of its own so that its peak memory can be measured.
//!
//! `cargo run --release -p lumbre-kdtree --example build_stats -- <sphere|fan|star> <n> [budget]`
//! (`budget`: `BuildOptions::reference_budget`, `inf` to turn it off).

use std::time::Instant;

use lumbre_kdtree::{BuildOptions, KdTree, scenes};

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: build_stats <sphere|fan|star> <n> [budget]";
    let (shape, n) = match args.as_slice() {
        [shape, n] | [shape, n, _] => (shape.as_str(), n.parse::<usize>().map_err(|e| format!("n {n:?}: {e}"))?),
        _ => return Err(usage.into()),
    };
    let mut opts = BuildOptions::default();
    if let Some(b) = args.get(2) {
        opts.reference_budget = b.parse().map_err(|e| format!("budget {b:?}: {e}"))?;
    }
    let tris = match shape {
        "sphere" => scenes::generated_scene(n),
        "fan" => scenes::fan(n),
        "star" => scenes::star_polygon(n),
        _ => return Err(format!("unknown shape {shape:?}; {usage}")),
    };
    let start = Instant::now();
    let (tree, build) = KdTree::build_with_stats(&tris, &opts);
    let time = start.elapsed();
    let s = tree.stats();
    println!("{shape} {n}: {} triangles, reference budget {}", tris.len(), opts.reference_budget);
    println!("build: {:.1} ms on {} threads", time.as_secs_f64() * 1e3, rayon::current_num_threads());
    println!(
        "tree: {} nodes, {} references ({:.2} per triangle), depth {}, SAH cost {:.2}, {:.1} MB",
        s.nodes,
        s.prim_refs,
        s.prim_refs as f64 / tris.len().max(1) as f64,
        s.max_depth,
        s.sah_cost,
        s.bytes as f64 / 1e6
    );
    println!("{build:?}");
    Ok(())
}
