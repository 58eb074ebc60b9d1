//! CPU throughput of the primitives.
#![allow(missing_docs)] // criterion_group! generates an undocumented pub fn

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use lumbre_compact::{ScanKind, scan_cpu};

fn bench(c: &mut Criterion) {
    let n = 1 << 24;
    let input: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(2654435761) >> 28).collect();
    let mut out = vec![0u32; n];
    let mut g = c.benchmark_group("primitives");
    g.sample_size(10);
    g.throughput(Throughput::Bytes(8 * n as u64));
    g.bench_function("memcpy u32 (read+write bytes)", |b| b.iter(|| out.copy_from_slice(&input)));
    g.bench_function("scan u32 exclusive", |b| b.iter(|| scan_cpu(&input, &mut out, ScanKind::Exclusive)));
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
