//! CPU octree build, update and traversal.
#![allow(missing_docs)] // criterion_group! generates an undocumented pub fn

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use lumbre_octree::{Attrs, Octree};

fn cloud(n: usize) -> Vec<[f32; 3]> {
    let mut s = 0x9e37_79b9u32;
    let mut r = move || {
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        (s >> 8) as f32 / (1 << 24) as f32
    };
    // A shell: points on a sphere with some thickness, like a scanned surface.
    (0..n)
        .map(|_| {
            let (u, v, w) = (r() * std::f32::consts::TAU, r() * 2.0 - 1.0, 0.95 + 0.05 * r());
            let s = (1.0 - v * v).sqrt();
            [w * s * u.cos(), w * s * u.sin(), w * v]
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("octree");
    g.sample_size(10);
    for n in [303_374usize, 3_283_639] {
        let pts = cloud(n);
        let attrs = vec![Attrs::from_unit([0.8, 0.6, 0.4], 0.2, 0.0); n];
        g.throughput(Throughput::Elements(n as u64));
        g.bench_function(format!("build {n} points, depth 10"), |b| {
            b.iter(|| Octree::build(&pts, &attrs, 10).unwrap())
        });
        let (tree, _) = Octree::build(&pts, &attrs, 10).unwrap();
        let moved: Vec<[f32; 3]> = pts.iter().map(|p| [p[0] + 0.0005, p[1] - 0.0003, p[2]]).collect();
        g.bench_function(format!("update {n} points, all moving, depth 10"), |b| {
            b.iter_batched_ref(
                || tree.clone(),
                |t| t.update(&pts, &moved, &attrs).unwrap(),
                criterion::BatchSize::LargeInput,
            )
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
