//! Kd-tree benchmarks: SAH build time for the test meshes, a generated 1M-triangle scene and
//! two inputs of long thin overlapping triangles (a 20k fan, a 5k-vertex star polygon), and
//! CPU ray casting throughput (primary rays on the Stanford bunny) for both traversals
//! and both triangle tests.
//!
//! `cargo bench -p lumbre-kdtree --bench kdtree`. Meshes are looked up in `$LUMBRE_SCENES`,
//! then the workspace's `testdata/` and `testdata/scenes/` (where every mesh it names is
//! bundled); a mesh that is not found is skipped with a note.

use std::path::PathBuf;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_main};
use glam::Vec3;
use lumbre_kdtree::scenes::{camera_rays, fan, generated_scene, star_polygon};
use lumbre_kdtree::{BuildOptions, KdTree, QueryOptions, Traversal, TriangleTest};

#[path = "../tests/common/obj.rs"]
mod obj;

/// The triangles of mesh `name`, or `None` (with a note) where no scene folder has it.
fn mesh(name: &str) -> Option<Vec<[Vec3; 3]>> {
    let crate_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let workspace = crate_dir.join("../..");
    let mut dirs: Vec<PathBuf> = std::env::var_os("LUMBRE_SCENES").map(PathBuf::from).into_iter().collect();
    dirs.extend([workspace.join("testdata"), workspace.join("testdata/scenes"), crate_dir.join("tests/data")]);
    for dir in dirs {
        if let Ok(text) = std::fs::read_to_string(dir.join(name)) {
            return Some(obj::parse_obj(&text));
        }
    }
    eprintln!("note: {name} not found (set LUMBRE_SCENES to its folder); skipped");
    None
}

fn build(c: &mut Criterion) {
    let mut group = c.benchmark_group("build");
    group.sample_size(10).warm_up_time(Duration::from_secs(1));
    let opts = BuildOptions::default();
    for name in ["suzanne.obj", "teapot.obj", "stanford-bunny.obj"] {
        let Some(tris) = mesh(name) else { continue };
        group.throughput(Throughput::Elements(tris.len() as u64));
        group.bench_function(BenchmarkId::new(name.trim_end_matches(".obj"), tris.len()), |b| {
            b.iter(|| KdTree::build(&tris, &opts))
        });
    }
    for (name, tris) in [("fan", fan(20_000)), ("star polygon", star_polygon(5000))] {
        group.throughput(Throughput::Elements(tris.len() as u64));
        group.bench_function(BenchmarkId::new(name, tris.len()), |b| b.iter(|| KdTree::build(&tris, &opts)));
    }
    let tris = generated_scene(1_000_000);
    group.throughput(Throughput::Elements(tris.len() as u64));
    group.measurement_time(Duration::from_secs(40));
    group.bench_function(BenchmarkId::new("generated", tris.len()), |b| b.iter(|| KdTree::build(&tris, &opts)));
    group.finish();
}

fn trace(c: &mut Criterion) {
    let Some(tris) = mesh("stanford-bunny.obj") else { return };
    let tree = KdTree::build(&tris, &BuildOptions::default());
    // A 512 x 512 camera looking at the bunny from the front-right, about a third hitting.
    let center = (tree.bounds.min + tree.bounds.max) * 0.5;
    let extent = tree.bounds.size().length();
    let eye = center + Vec3::new(0.3, 0.4, 1.0).normalize() * extent * 1.2;
    let rays = camera_rays(eye, center, 0.9, 512, 512);
    let mut group = c.benchmark_group("trace_bunny");
    group.sample_size(20).throughput(Throughput::Elements(rays.len() as u64));
    for traversal in [Traversal::Stack, Traversal::Restart] {
        for test in [TriangleTest::Watertight, TriangleTest::MollerTrumbore] {
            let opts = QueryOptions { traversal, test };
            group.bench_function(format!("{traversal:?}/{test:?}"), |b| {
                b.iter(|| tree.closest_hits(&tris, &rays, 0.0, f32::INFINITY, &opts))
            });
        }
    }
    group.finish();
}

/// `criterion_group!` defines an undocumented public function.
#[allow(missing_docs)]
mod group {
    criterion::criterion_group!(benches, super::build, super::trace);
}
criterion_main!(group::benches);
