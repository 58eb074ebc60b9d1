//! Compaction: CPU against GPU, exact, on every context.

mod common;

use common::{describe, gpus};
use lumbre_compact::{
    COMPACT_TILE, Compact, Emit, GpuCompacted, HistoPyramid, Lookback, Predicate, ScanMethod, Select, Stream,
    compact_cpu,
};
use lumbre_gpu::{Compute, Tolerance, conformance};
use proptest::prelude::*;

/// Both GPU methods: one pass with a look-back, two passes around a scan of the counts.
const METHODS: [ScanMethod; 2] = [ScanMethod::SinglePass, ScanMethod::ReduceThenScan];

fn stream(n: usize, every: usize) -> Stream {
    Stream {
        values: (0..n as u32).map(|i| i.wrapping_mul(2654435761)).collect(),
        flags: (0..n).map(|i| (i % every == 0) as u32).collect(),
    }
}

#[test]
fn cpu_compaction_is_stable() {
    let s = stream(10, 3);
    assert_eq!(compact_cpu(&s.values, &s.flags, Select::Flags, Emit::Indices), vec![0, 3, 6, 9]);
    let odd = compact_cpu(&[5, 2, 7, 8, 1], &[], Select::Where(Predicate::AnyBits(1)), Emit::Values);
    assert_eq!(odd, vec![5, 7, 1]);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    /// The CPU path (chunks of 65536 written in place) against a plain sequential filter,
    /// over lengths that end inside, on and past chunk boundaries.
    #[test]
    fn cpu_compaction_is_a_sequential_filter(
        n in prop_oneof![0usize..300, (1usize..4).prop_flat_map(|c| (c << 16) - 2..(c << 16) + 2), 0usize..200_000],
        seed in any::<u32>(),
        density in 0u32..5,
    ) {
        let values: Vec<u32> = (0..n as u32).map(|i| (i ^ seed).wrapping_mul(2654435761)).collect();
        // density 0: none kept, 4: all kept, else about density / 4 of them.
        let flags: Vec<u32> = values.iter().map(|v| ((v >> 7) % 4 < density) as u32).collect();
        let kept: Vec<usize> = (0..n).filter(|&i| flags[i] != 0).collect();
        let values_out = compact_cpu(&values, &flags, Select::Flags, Emit::Values);
        prop_assert_eq!(values_out, kept.iter().map(|&i| values[i]).collect::<Vec<_>>());
        let indices_out = compact_cpu(&values, &flags, Select::Flags, Emit::Indices);
        prop_assert_eq!(indices_out, kept.iter().map(|&i| i as u32).collect::<Vec<_>>());
        let odd = compact_cpu(&values, &[], Select::Where(Predicate::AnyBits(1)), Emit::Values);
        prop_assert_eq!(odd, values.iter().copied().filter(|v| v & 1 == 1).collect::<Vec<_>>());
    }
}

#[test]
fn compactions_into_kept_buffers_reuse_them() {
    for (gpu, method) in gpus().into_iter().flat_map(|g| METHODS.map(|m| (g.clone(), m))) {
        let c = Compact { method, ..Default::default() };
        let out = GpuCompacted::new(&gpu, 3 * COMPACT_TILE).unwrap();
        // Longer input first: the shorter one must not see its leftovers, nor its count.
        for (n, every) in [(3 * COMPACT_TILE, 2), (COMPACT_TILE + 5, 3), (0, 1)] {
            let s = stream(n, every);
            let input = c.upload(&gpu, &s).unwrap();
            let mut rec = gpu.recorder();
            c.record_compact_into(&mut rec, &input, &out).unwrap();
            rec.submit().unwrap();
            let want = compact_cpu(&s.values, &s.flags, Select::Flags, Emit::Values);
            assert_eq!(c.download(&gpu, &out).unwrap(), want, "{} {method:?} n {n}", describe(&gpu));
        }
        let big = c.upload(&gpu, &stream(3 * COMPACT_TILE + 1, 2)).unwrap();
        let err = c.record_compact_into(&mut gpu.recorder(), &big, &out).unwrap_err();
        assert!(err.to_string().contains("into an output of"), "{err}");
        // The histogram pyramid's output has no look-back state to lend.
        let small = c.upload(&gpu, &stream(5, 2)).unwrap();
        let hp = HistoPyramid { select: Select::Flags, emit: Emit::Values, index_base: 0 };
        let mut rec = gpu.recorder();
        let hp_out = hp.record(&mut rec, &small).unwrap();
        rec.submit().unwrap();
        let err = c.record_compact_into(&mut gpu.recorder(), &small, &hp_out).unwrap_err();
        assert!(err.to_string().contains("without look-back state"), "{err}");
    }
}

#[test]
fn every_mode_agrees_at_tile_boundaries() {
    let t = COMPACT_TILE;
    let lens = [0, 1, 2, 255, t - 1, t, t + 1, 5 * t + 3, 40_001];
    let selects = [
        Select::Flags,
        Select::Where(Predicate::NonZero),
        Select::Where(Predicate::Lt(1 << 31)),
        Select::Where(Predicate::Ge(7)),
        Select::Where(Predicate::Eq(0)),
        Select::Where(Predicate::AnyBits(0b101)),
    ];
    for gpu in gpus() {
        for n in lens {
            for every in [1, 2, 3, usize::MAX] {
                let s = if every == usize::MAX {
                    Stream { flags: vec![0; n], ..stream(n, 1) } // nothing kept
                } else {
                    stream(n, every)
                };
                for select in selects {
                    for emit in [Emit::Values, Emit::Indices] {
                        for method in METHODS {
                            let c = Compact { select, emit, method, ..Default::default() };
                            conformance(&c, &gpu, &s, Tolerance::EXACT).unwrap_or_else(|e| {
                                panic!("{} n={n} every={every} {select:?} {emit:?} {method:?}: {e}", describe(&gpu))
                            });
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn all_kept_and_none_kept() {
    for gpu in gpus() {
        let n = 3 * COMPACT_TILE + 5;
        let all = Stream { values: (0..n as u32).collect(), flags: vec![1; n] };
        for method in METHODS {
            let c = Compact { method, ..Default::default() };
            assert_eq!(c.gpu(&gpu, &all).unwrap(), all.values, "{method:?}");
            let none = Stream { flags: vec![0; n], ..all.clone() };
            assert!(c.gpu(&gpu, &none).unwrap().is_empty(), "{method:?}");
        }
    }
}

#[test]
fn the_fallback_path_is_correct() {
    let s = stream(100_000, 2);
    for gpu in gpus() {
        let mut c = Compact::default();
        c.lookback.spin_limit = 0;
        conformance(&c, &gpu, &s, Tolerance::EXACT).unwrap_or_else(|e| panic!("{}: {e}", describe(&gpu)));
    }
}

#[test]
fn walks_through_windows_of_aggregates_are_correct() {
    // 74 tiles, each walking back to tile 0 over aggregates only: more than one window.
    let s = stream(74 * COMPACT_TILE - 7, 3);
    for gpu in gpus() {
        for spin_limit in [256, 0] {
            let c = Compact { lookback: Lookback { spin_limit, walk_to_tile_zero: true }, ..Default::default() };
            conformance(&c, &gpu, &s, Tolerance::EXACT)
                .unwrap_or_else(|e| panic!("{} spin limit {spin_limit}: {e}", describe(&gpu)));
        }
    }
}

#[test]
fn streams_longer_than_a_binding_are_compacted_in_pieces() {
    let Some(small) = gpus().into_iter().find(|g| g.limits().max_storage_buffer_binding_size == 64 << 10) else {
        return;
    };
    // 64 KiB bindings: 70 000 elements span 5 pieces; sparse and dense selections.
    for every in [1, 3, 1000] {
        let s = stream(70_000, every);
        for emit in [Emit::Values, Emit::Indices] {
            for select in [Select::Flags, Select::Where(Predicate::AnyBits(2))] {
                for method in METHODS {
                    let c = Compact { emit, select, method, ..Default::default() };
                    conformance(&c, &small, &s, Tolerance::EXACT)
                        .unwrap_or_else(|e| panic!("every {every} {emit:?} {select:?} {method:?}: {e}"));
                }
            }
        }
    }
    // The GPU-resident entry point refuses them with the limit error instead.
    let c = Compact::default();
    let on_gpu = c.upload(&small, &stream(70_000, 2)).unwrap();
    let mut rec = small.recorder();
    assert!(matches!(c.record(&mut rec, &on_gpu), Err(lumbre_gpu::Error::LimitExceeded { .. })));
}

#[test]
fn mismatched_lengths_are_input_errors() {
    let c = Compact::default();
    let bad = Stream { values: vec![1, 2, 3], flags: vec![1] };
    assert!(matches!(c.cpu(&bad), Err(lumbre_gpu::Error::Input(_))));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]
    #[test]
    fn generated_compactions_conform(
        flags in proptest::collection::vec(prop_oneof![Just(0u32), Just(1u32), any::<u32>()], 0..12_000),
        indices in any::<bool>(),
        two_pass in any::<bool>(),
    ) {
        let values: Vec<u32> = (0..flags.len() as u32).map(|i| i ^ 0x5555_5555).collect();
        let s = Stream { values, flags };
        let emit = if indices { Emit::Indices } else { Emit::Values };
        let method = METHODS[two_pass as usize];
        for gpu in gpus() {
            conformance(&Compact { emit, method, ..Default::default() }, &gpu, &s, Tolerance::EXACT)
                .map_err(|e| TestCaseError::fail(format!("{} {method:?}: {e}", describe(&gpu))))?;
        }
    }
}
