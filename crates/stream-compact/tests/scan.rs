//! Scans: CPU against GPU on every context, exact for u32, within tolerance for f32.

mod common;

use common::{describe, gpus};
use lumbre_compact::{Lookback, SCAN_TILE, Scan, ScanKind, ScanMethod, scan_cpu};
use lumbre_gpu::{Compute, Tolerance, conformance};
use proptest::prelude::*;

/// Both GPU methods, whatever `Auto` would pick for the length.
const METHODS: [ScanMethod; 2] = [ScanMethod::SinglePass, ScanMethod::ReduceThenScan];

fn lengths() -> Vec<usize> {
    let t = SCAN_TILE;
    vec![0, 1, 2, 255, 256, 257, t - 1, t, t + 1, 3 * t + 17, 16 * t - 1, 16 * t + 1, 100_003]
}

#[test]
fn cpu_scan_matches_a_serial_loop() {
    for n in [0usize, 1, 5, (1 << 16) + 3, 300_000] {
        let input: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(2654435761)).collect();
        let mut out = vec![0; n];
        let total = scan_cpu(&input, &mut out, ScanKind::Exclusive);
        let mut acc = 0u32;
        for i in 0..n {
            assert_eq!(out[i], acc);
            acc = acc.wrapping_add(input[i]);
        }
        assert_eq!(total, acc);
        scan_cpu(&input, &mut out, ScanKind::Inclusive);
        assert_eq!(out.last().copied().unwrap_or(0), acc);
    }
}

#[test]
fn u32_scans_are_bit_exact_at_tile_boundaries() {
    for gpu in gpus() {
        for n in lengths() {
            // Large values make the sums wrap.
            let input: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(0x9e37_79b9) | 1).collect();
            for kind in [ScanKind::Exclusive, ScanKind::Inclusive] {
                for method in METHODS {
                    conformance(&Scan::<u32>::with_method(kind, method), &gpu, &input, Tolerance::EXACT)
                        .unwrap_or_else(|e| panic!("{} n={n} {kind:?} {method:?}: {e}", describe(&gpu)));
                }
            }
        }
    }
}

#[test]
fn f32_scans_agree_within_tolerance() {
    // Positive inputs (energies, weights): the GPU sums in a different order, so results
    // differ by rounding; 1e-4 relative bounds it for these lengths.
    for gpu in gpus() {
        for n in [0, 1, 4097, 100_000] {
            let input: Vec<f32> = (0..n).map(|i| ((i * 7919) % 1000) as f32 / 997.0 + 0.001).collect();
            for kind in [ScanKind::Exclusive, ScanKind::Inclusive] {
                for method in METHODS {
                    conformance(&Scan::<f32>::with_method(kind, method), &gpu, &input, Tolerance::relative(1e-4))
                        .unwrap_or_else(|e| panic!("{} n={n} {kind:?} {method:?}: {e}", describe(&gpu)));
                }
            }
        }
    }
}

#[test]
fn the_lookback_fallback_path_is_correct() {
    // spin_limit 0: a tile that finds its predecessor unpublished reduces its input at once.
    let input: Vec<u32> = (0..200_000u32).map(|i| i % 7).collect();
    for gpu in gpus() {
        for kind in [ScanKind::Exclusive, ScanKind::Inclusive] {
            let mut scan = Scan::<u32>::with_method(kind, ScanMethod::SinglePass);
            scan.lookback.spin_limit = 0;
            conformance(&scan, &gpu, &input, Tolerance::EXACT).unwrap_or_else(|e| panic!("{}: {e}", describe(&gpu)));
        }
    }
}

#[test]
fn walks_through_windows_of_aggregates_are_correct() {
    // 74 tiles, each walking back to tile 0 over aggregates only: more than one window.
    let input: Vec<u32> = (0..74 * SCAN_TILE as u32 - 7).map(|i| i % 5).collect();
    let inputf: Vec<f32> = input.iter().map(|&x| x as f32).collect();
    for gpu in gpus() {
        for spin_limit in [256, 0] {
            let lookback = Lookback { spin_limit, walk_to_tile_zero: true };
            let mut scan = Scan::<u32>::with_method(ScanKind::Exclusive, ScanMethod::SinglePass);
            scan.lookback = lookback;
            conformance(&scan, &gpu, &input, Tolerance::EXACT)
                .unwrap_or_else(|e| panic!("{} spin limit {spin_limit}: {e}", describe(&gpu)));
            let mut scan = Scan::<f32>::with_method(ScanKind::Inclusive, ScanMethod::SinglePass);
            scan.lookback = lookback;
            conformance(&scan, &gpu, &inputf, Tolerance::relative(1e-6))
                .unwrap_or_else(|e| panic!("{} f32, spin limit {spin_limit}: {e}", describe(&gpu)));
        }
    }
}

#[test]
fn multi_piece_scan_carries_between_pieces() {
    let Some(small) = gpus().into_iter().find(|g| g.limits().max_storage_buffer_binding_size == 64 << 10) else {
        return;
    };
    // 64 KiB bindings hold 16384 u32: this input spans 7 pieces.
    let n = 100_000;
    let input = vec![1u32; n];
    for method in METHODS {
        let out = Scan::<u32>::with_method(ScanKind::Exclusive, method).gpu(&small, &input).unwrap();
        assert_eq!(out, (0..n as u32).collect::<Vec<_>>(), "{method:?}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn generated_u32_scans_conform(
        input in prop_oneof![
            proptest::collection::vec(any::<u32>(), 0..20_000),
            proptest::collection::vec(Just(u32::MAX), 0..9000),
            proptest::collection::vec(0u32..2, 0..9000),
        ],
        inclusive in any::<bool>(),
        method in proptest::sample::select(METHODS.to_vec()),
    ) {
        let kind = if inclusive { ScanKind::Inclusive } else { ScanKind::Exclusive };
        for gpu in gpus() {
            conformance(&Scan::<u32>::with_method(kind, method), &gpu, &input, Tolerance::EXACT)
                .map_err(|e| TestCaseError::fail(format!("{}: {e}", describe(&gpu))))?;
        }
    }
}

#[test]
fn cpu_f32_scans_do_not_stall_on_large_prefixes() {
    // One chunk summing to 2^24, then ones: a running sum started at 2^24 adds 1.0 and
    // rounds back to 2^24 (ties to even), so a scan carried that way never moves again.
    let mut input = vec![256.0f32; 1 << 16];
    input.extend(vec![1.0f32; 1 << 16]);
    let mut out = vec![0.0f32; input.len()];
    scan_cpu(&input, &mut out, ScanKind::Inclusive);
    let exact = |i: usize| if i < 1 << 16 { 256.0 * (i + 1) as f64 } else { 16777216.0 + (i + 1 - (1 << 16)) as f64 };
    assert_eq!(*out.last().unwrap(), 16842752.0);
    assert!(out.iter().enumerate().all(|(i, &v)| (v as f64 - exact(i)).abs() <= 1.0));
}

/// A bug seen once, on an NVIDIA H200: the look-back walk combined its window with subgroup
/// operations, which Vulkan without maximal reconvergence may run with part of the subgroup
/// after a branch; a tile's prefix then missed exactly one predecessor's total (tile 3 got
/// T0 + T2), or a walk stepped back past tile 0 and never ended. The walk now combines its
/// window through shared memory. This fails if subgroup operations come back into the walk,
/// and names the predecessor a prefix misses on any device that drops one.
#[test]
fn look_back_with_part_of_a_subgroup_drops_no_predecessor() {
    let walk = include_str!("../../../shaders/wgsl/compact/lookback.wgsl");
    let builtin = |w: &&str| w.strip_prefix("subgroup").is_some_and(|rest| rest.starts_with(char::is_uppercase));
    let calls: Vec<&str> = walk.split(|c: char| !c.is_alphanumeric() && c != '_').filter(builtin).collect();
    assert!(calls.is_empty(), "compact/lookback.wgsl uses subgroup operations again: {calls:?}");

    // Tile t's total is t + 1 (its first value), so a prefix short by d misses tile d - 1.
    let tiles = 2 * 64 + 10; // walks of more than two windows
    let input: Vec<u32> =
        (0..tiles * SCAN_TILE).map(|i| if i % SCAN_TILE == 0 { (i / SCAN_TILE) as u32 + 1 } else { 0 }).collect();
    for gpu in gpus() {
        for spin_limit in [256, 0] {
            let mut scan = Scan::<u32>::with_method(ScanKind::Exclusive, ScanMethod::SinglePass);
            scan.lookback = Lookback { spin_limit, walk_to_tile_zero: true };
            let out = scan.gpu(&gpu, &input).unwrap_or_else(|e| panic!("{}: {e}", describe(&gpu)));
            for t in 0..tiles {
                let (want, got) = ((t * (t + 1) / 2) as u32, out[t * SCAN_TILE]);
                assert!(
                    want == got,
                    "{} spin limit {spin_limit}: tile {t}'s prefix is {got}, not {want}{}",
                    describe(&gpu),
                    if got < want && want - got <= t as u32 {
                        format!(": it misses tile {}'s total", want - got - 1)
                    } else {
                        String::new()
                    }
                );
            }
            assert_eq!(out, scan.cpu(&input).unwrap(), "{} spin limit {spin_limit}", describe(&gpu));
        }
    }
}
