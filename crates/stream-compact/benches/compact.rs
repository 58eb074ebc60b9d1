//! CPU throughput of the primitives.
#![allow(missing_docs)] // criterion_group! generates an undocumented pub fn

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use lumbre_compact::{Emit, ScanKind, Select, compact_cpu, radix_sort_cpu, scan_cpu};

fn bench(c: &mut Criterion) {
    let n = 1 << 24;
    let input: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(2654435761) >> 28).collect();
    let mut out = vec![0u32; n];
    let mut g = c.benchmark_group("primitives");
    g.sample_size(10);
    g.throughput(Throughput::Bytes(8 * n as u64));
    g.bench_function("memcpy u32 (read+write bytes)", |b| b.iter(|| out.copy_from_slice(&input)));
    g.bench_function("scan u32 exclusive", |b| b.iter(|| scan_cpu(&input, &mut out, ScanKind::Exclusive)));
    let flags: Vec<u32> = input.iter().map(|x| x & 1).collect();
    g.throughput(Throughput::Elements(n as u64));
    g.bench_function("compact by flag, values, half kept", |b| {
        b.iter(|| compact_cpu(&input, &flags, Select::Flags, Emit::Values))
    });
    let keys: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(2654435761).rotate_left(11)).collect();
    g.bench_function("radix sort u32 keys", |b| {
        b.iter_batched_ref(|| keys.clone(), |k| radix_sort_cpu(k, None), criterion::BatchSize::LargeInput)
    });
    g.bench_function("std sort_unstable u32 (reference)", |b| {
        b.iter_batched_ref(|| keys.clone(), |k| k.sort_unstable(), criterion::BatchSize::LargeInput)
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
