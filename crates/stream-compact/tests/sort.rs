//! Radix sort: CPU against GPU, bit-exact and stable, for u32 and u64 keys.

mod common;

use common::{describe, gpus};
use lumbre_compact::{
    Lookback, RadixSort, RadixSortPairs, SORT_TILE, SWEEP_TILE, SortKey, SortMethod, radix_sort_cpu, record_sort_with,
};
use lumbre_gpu::stages::Stages;
use lumbre_gpu::{Compute, Gpu, Tolerance, conformance};
use proptest::prelude::*;

fn keys32(n: usize, mask: u32) -> Vec<u32> {
    (0..n as u32).map(|i| i.wrapping_mul(0x9e37_79b9).rotate_left(7) & mask).collect()
}

#[test]
fn cpu_sort_is_stable_and_sorted() {
    // Masks leave some digits constant: those passes are skipped, and an odd number of
    // real passes leaves the result in the scratch buffer until the final copy. Above 2^16
    // keys the sort splits by the top varying digit first; 0x01ff_ffff makes two buckets
    // too large for the cache, which are split again.
    for (n, mask) in [
        (0usize, !0u32),
        (1, !0),
        (2, !0),
        (1000, 0xff),
        ((1 << 16) + 7, 0xff00_00ff),
        (300_000, 0xff),
        (300_000, !0),
        (600_000, 0x01ff_ffff),
    ] {
        let keys = keys32(n, mask);
        let mut k = keys.clone();
        let mut v: Vec<u32> = (0..n as u32).collect();
        radix_sort_cpu(&mut k, Some(&mut v));
        let mut want: Vec<(u32, u32)> = keys.iter().copied().zip(0..).collect();
        want.sort_by_key(|p| p.0); // std's sort_by_key is stable
        assert_eq!(k, want.iter().map(|p| p.0).collect::<Vec<_>>());
        assert_eq!(v, want.iter().map(|p| p.1).collect::<Vec<_>>());
        let mut k64: Vec<u64> = keys.iter().map(|&x| (x as u64) << 29 ^ x as u64).collect();
        let mut want64 = k64.clone();
        want64.sort();
        radix_sort_cpu(&mut k64, None);
        assert_eq!(k64, want64);
    }
}

#[test]
fn u32_sorts_agree_at_tile_boundaries() {
    let t = SORT_TILE;
    for gpu in gpus() {
        // Tiles' output positions are found in chunks of 32 tiles: lengths across chunks too.
        // And across the one-sweep sort's tiles.
        let w = SWEEP_TILE;
        for n in [
            0usize,
            1,
            2,
            255,
            t - 1,
            t,
            t + 1,
            7 * t + 5,
            50_001,
            32 * t - 1,
            32 * t + 1,
            40 * t + 3,
            w - 1,
            w + 1,
            9 * w,
        ] {
            for mask in [u32::MAX, 0xf, 0, 0xff00_0000] {
                let keys = keys32(n, mask);
                conformance(&RadixSort::<u32>::new(), &gpu, &keys, Tolerance::EXACT)
                    .unwrap_or_else(|e| panic!("{} n={n} mask={mask:x}: {e}", describe(&gpu)));
                let pairs = (keys.clone(), (0..n as u32).collect::<Vec<_>>());
                conformance(&RadixSortPairs::<u32>::new(), &gpu, &pairs, Tolerance::EXACT)
                    .unwrap_or_else(|e| panic!("{} pairs n={n} mask={mask:x}: {e}", describe(&gpu)));
            }
        }
    }
}

#[test]
fn u64_sorts_agree() {
    for gpu in gpus() {
        for n in [0usize, 1, 3, SORT_TILE + 1, 30_000] {
            let keys: Vec<u64> = keys32(n, u32::MAX)
                .iter()
                .enumerate()
                .map(|(i, &k)| (k as u64) << 32 | (i as u64 * 7919) & 0xffff)
                .collect();
            conformance(&RadixSort::<u64>::new(), &gpu, &keys, Tolerance::EXACT)
                .unwrap_or_else(|e| panic!("{} n={n}: {e}", describe(&gpu)));
            let extreme = vec![u64::MAX, 0, u64::MAX - 1, 1 << 63, 1, u64::MAX, 0];
            conformance(&RadixSort::<u64>::new(), &gpu, &extreme, Tolerance::EXACT).unwrap();
            let pairs = (keys, (0..n as u32).rev().collect::<Vec<_>>());
            conformance(&RadixSortPairs::<u64>::new(), &gpu, &pairs, Tolerance::EXACT)
                .unwrap_or_else(|e| panic!("{} pairs n={n}: {e}", describe(&gpu)));
        }
    }
}

#[test]
fn keys_longer_than_a_binding_are_sorted_in_pieces() {
    let Some(small) = gpus().into_iter().find(|g| g.limits().max_storage_buffer_binding_size == 64 << 10) else {
        return;
    };
    // 64 KiB bindings: 100 000 u32 keys span 7 pieces (and 13 for u64) and 49 tiles (two
    // chunks of tiles); the GPU result must still equal the CPU's, including stability.
    let keys = keys32(100_000, u32::MAX);
    conformance(&RadixSort::<u32>::new(), &small, &keys, Tolerance::EXACT).unwrap();
    let pairs = (keys32(40_000, 0xff), (0..40_000).collect::<Vec<u32>>());
    conformance(&RadixSortPairs::<u32>::new(), &small, &pairs, Tolerance::EXACT).unwrap();
    let keys64: Vec<u64> = keys.iter().map(|&k| (k as u64) << 17 ^ k as u64).collect();
    conformance(&RadixSort::<u64>::new(), &small, &keys64, Tolerance::EXACT).unwrap();
    // More than 8 bindings of keys: the histograms no longer fit, a limit error.
    let err = RadixSort::<u32>::new().gpu(&small, &keys32(1 << 20, u32::MAX)).unwrap_err();
    assert!(matches!(err, lumbre_gpu::Error::LimitExceeded { .. }), "{err}");
}

#[test]
fn sorts_of_narrow_keys_skip_passes() {
    use lumbre_compact::record_sort_bits;
    for gpu in gpus() {
        for bits in [1u32, 8, 12, 24, 30] {
            let keys = keys32(12_000, (1u32 << bits) - 1);
            let vals: Vec<u32> = (0..keys.len() as u32).collect();
            let k = gpu.upload(&keys).unwrap();
            let v = gpu.upload(&vals).unwrap();
            let mut rec = gpu.recorder();
            record_sort_bits(&mut rec, &k, Some(&v), bits).unwrap();
            rec.submit().unwrap();
            let want = RadixSortPairs::<u32>::new().cpu(&(keys, vals)).unwrap();
            assert_eq!((gpu.download(&k).unwrap(), gpu.download(&v).unwrap()), want, "{} bits={bits}", describe(&gpu));
        }
    }
}

/// `keys` and `vals` sorted on `gpu` by `method`.
fn sorted_by<K: SortKey + lumbre_gpu::Scalar>(
    gpu: &Gpu,
    keys: &[K],
    vals: &[u32],
    method: SortMethod,
) -> (Vec<K>, Vec<u32>) {
    sorted_with(gpu, keys, vals, method, 32 * K::WORDS)
}

/// `keys` of `bits` bits and `vals` sorted on `gpu` in one sweep per digit.
fn sorted_bits(gpu: &Gpu, keys: &[u32], vals: &[u32], bits: u32) -> (Vec<u32>, Vec<u32>) {
    sorted_with(gpu, keys, vals, SortMethod::OneSweep(Lookback::default()), bits)
}

fn sorted_with<K: SortKey + lumbre_gpu::Scalar>(
    gpu: &Gpu,
    keys: &[K],
    vals: &[u32],
    method: SortMethod,
    bits: u32,
) -> (Vec<K>, Vec<u32>) {
    let (k, v) = (gpu.upload(keys).unwrap(), gpu.upload(vals).unwrap());
    let mut rec = gpu.recorder();
    let mut s = Stages::record(&mut rec);
    let (kb, vb) = (s.adopt(&k).unwrap(), s.adopt(&v).unwrap());
    record_sort_with(&mut s, kb, Some(vb), bits, method).unwrap();
    drop(s);
    rec.submit().unwrap();
    (gpu.download(&k).unwrap(), gpu.download(&v).unwrap())
}

#[test]
fn one_sweep_sorts_are_exact_at_tile_boundaries_and_when_the_look_back_falls_back_or_walks_far() {
    // Spin limit 0: every predecessor that has published nothing is reduced from its keys.
    // Walks to tile zero: every tile sums all its predecessors' counts.
    let lookbacks =
        [Lookback { spin_limit: 0, walk_to_tile_zero: false }, Lookback { spin_limit: 4, walk_to_tile_zero: true }];
    for gpu in gpus().into_iter().filter(|g| g.has_subgroups()) {
        for n in [3usize, SWEEP_TILE + 1, 7 * SWEEP_TILE - 5] {
            if 8 * n as u64 > gpu.limits().max_storage_buffer_binding_size {
                continue;
            }
            let keys = keys32(n, if n % 2 == 0 { u32::MAX } else { 0x0fff_0f0f });
            let vals: Vec<u32> = (0..n as u32).rev().collect();
            let wide: Vec<u64> = keys.iter().map(|&k| (k as u64) << 31 ^ k as u64).collect();
            let want = RadixSortPairs::<u32>::new().cpu(&(keys.clone(), vals.clone())).unwrap();
            let want64 = RadixSortPairs::<u64>::new().cpu(&(wide.clone(), vals.clone())).unwrap();
            for lb in lookbacks {
                let what = format!("{} n={n} {lb:?}", describe(&gpu));
                assert_eq!(sorted_by(&gpu, &keys, &vals, SortMethod::OneSweep(lb)), want, "{what}");
                assert_eq!(sorted_by(&gpu, &wide, &vals, SortMethod::OneSweep(lb)), want64, "u64 {what}");
            }
            if n == 3 {
                // Keys of fewer bits skip passes (an odd number leaves them in the scratch).
                let narrow: Vec<u32> = keys.iter().map(|&k| k & 0xfff).collect();
                let want = RadixSortPairs::<u32>::new().cpu(&(narrow.clone(), vals.clone())).unwrap();
                assert_eq!(sorted_bits(&gpu, &narrow, &vals, 12), want, "12-bit {}", describe(&gpu));
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]
    #[test]
    fn generated_sorts_are_stable_and_exact(
        keys in prop_oneof![
            proptest::collection::vec(any::<u32>(), 0..9000),
            proptest::collection::vec(0u32..4, 0..9000),
            proptest::collection::vec(prop_oneof![Just(0u32), Just(u32::MAX)], 0..5000),
        ],
    ) {
        let vals: Vec<u32> = (0..keys.len() as u32).collect();
        for gpu in gpus() {
            conformance(&RadixSortPairs::<u32>::new(), &gpu, &(keys.clone(), vals.clone()), Tolerance::EXACT)
                .map_err(|e| TestCaseError::fail(format!("{}: {e}", describe(&gpu))))?;
        }
    }
}
