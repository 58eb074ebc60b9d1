//! CPU Morton encoding throughput.
#![allow(missing_docs)] // criterion_group! generates an undocumented pub fn

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use lumbre_gpu::{Backend, Compute};
use lumbre_morton::{MortonEncode, Quantizer, encode_u32, encode_u64};

fn points(n: usize) -> Vec<[f32; 3]> {
    let mut s = 0x1234_5678u32;
    let mut r = || {
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        (s >> 8) as f32 / (1 << 24) as f32
    };
    (0..n).map(|_| [r(), r(), r()]).collect()
}

fn bench(c: &mut Criterion) {
    let n = 1 << 22;
    let pts = points(n);
    let mut g = c.benchmark_group("morton");
    g.throughput(Throughput::Elements(n as u64));
    g.sample_size(10);
    for bits in [10, 21] {
        let enc = MortonEncode { quantizer: Quantizer::new([0.0; 3], [1.0; 3], bits).unwrap(), clamp: false };
        g.bench_function(format!("encode points, {bits} bits/axis, parallel"), |b| {
            b.iter(|| enc.run(&Backend::Cpu, &pts).unwrap())
        });
    }
    let cells: Vec<[u32; 3]> = (0..n as u32).map(|i| [i & 1023, (i >> 10) & 1023, i.wrapping_mul(7) & 1023]).collect();
    g.bench_function("encode_u32 cells, one thread", |b| {
        b.iter(|| cells.iter().fold(0u32, |acc, c| acc ^ encode_u32(*c)))
    });
    g.bench_function("encode_u64 cells, one thread", |b| {
        b.iter(|| cells.iter().fold(0u64, |acc, c| acc ^ encode_u64(*c)))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
