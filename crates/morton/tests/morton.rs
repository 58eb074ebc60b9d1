//! Morton codes, node keys and the CPU/GPU encoder.

use lumbre_gpu::testing::test_gpu;
use lumbre_gpu::{Compute, Tolerance, conformance};
use lumbre_morton::*;
use proptest::prelude::*;

fn naive(c: [u32; 3], bits: u32) -> u64 {
    let mut code = 0u64;
    for i in 0..bits {
        for (a, v) in c.iter().enumerate() {
            code |= (((*v >> i) & 1) as u64) << (3 * i + a as u32);
        }
    }
    code
}

#[test]
fn exhaustive_small_cube_u32_and_u64() {
    for x in 0..32 {
        for y in 0..32 {
            for z in 0..32 {
                let c = [x, y, z];
                let want = naive(c, 10);
                assert_eq!(encode_u32(c) as u64, want);
                assert_eq!(encode_u64(c), want);
                assert_eq!(decode_u32(encode_u32(c)), c);
                assert_eq!(decode_u64(encode_u64(c)), c);
            }
        }
    }
    // The corners of the full grids.
    let m10 = (1 << 10) - 1;
    let m21 = (1 << 21) - 1;
    assert_eq!(encode_u32([m10; 3]), (1 << 30) - 1);
    assert_eq!(encode_u64([m21; 3]), (1u64 << 63) - 1);
    for c in [[m21, 0, 0], [0, m21, 0], [0, 0, m21], [m21, 1, m21 - 1]] {
        assert_eq!(encode_u64(c), naive(c, 21));
        assert_eq!(decode_u64(encode_u64(c)), c);
    }
}

#[test]
fn thesis_particle_example() {
    // (10, 3, 15) -> 101 100 111 110, x the lowest bit of each triplet.
    assert_eq!(encode_u32([10, 3, 15]), 0b101_100_111_110);
    let key = NodeKey32::new(10, encode_u32([10, 3, 15])).unwrap();
    assert_eq!(key.0 >> 30, 0b01, "the thesis's 01 marker above 30 bits");
}

#[test]
fn thesis_index_examples_from_the_formula() {
    // Level-2 key 001 000 -> 1 + 8 + 8 = 17.
    assert_eq!(NodeKey32::new(2, 0b001_000).unwrap().index(), 17);
    // Triplets 000 010 010 000 000: ancestors at 0, 1, 11, 91, 729, 5833.
    let leaf = NodeKey32::new(5, 0b000_010_010_000_000).unwrap();
    let idx: Vec<u64> = (0..=5).map(|l| leaf.ancestor(l).unwrap().index()).collect();
    assert_eq!(idx, vec![0, 1, 11, 91, 729, 5833]);
    // Index 200 -> level 3, position 127 (the thesis prints 126; its formula gives 127).
    let k = NodeKey32::from_index(200).unwrap();
    assert_eq!((k.level(), k.value()), (3, 127));
    // Index 72 is the last node of level 2; the log8 shortcut gets this wrong.
    let k = NodeKey32::from_index(72).unwrap();
    assert_eq!((k.level(), k.value()), (2, 63));
    let k = NodeKey32::from_index(73).unwrap();
    assert_eq!((k.level(), k.value()), (3, 0));
}

#[test]
fn index_round_trips_at_every_level_boundary() {
    for level in 0..=NodeKey64::MAX_LEVEL {
        let first = level_offset(level);
        let last = level_offset(level + 1) - 1;
        for i in [first, (first + 1).min(last), last.saturating_sub(1).max(first), last] {
            let k = NodeKey64::from_index(i).unwrap();
            assert_eq!(k.level(), level, "index {i}");
            assert_eq!(k.index(), i);
            assert!(k.is_valid());
        }
        if level <= NodeKey32::MAX_LEVEL {
            let k = NodeKey32::from_index(last).unwrap();
            assert_eq!((k.level(), k.index()), (level, last));
        }
    }
    assert_eq!(NodeKey32::from_index(level_offset(11)), None);
    assert_eq!(NodeKey64::from_index(level_offset(22)), None);
}

#[test]
fn key_navigation() {
    let root = NodeKey32::ROOT;
    assert_eq!(root.level(), 0);
    assert_eq!(root.parent(), None);
    let c = root.child(5).unwrap().child(2).unwrap();
    assert_eq!((c.level(), c.value(), c.octant()), (2, 0b101_010, 2));
    assert_eq!(c.parent().unwrap().parent(), Some(root));
    assert!(root.contains(c) && c.parent().unwrap().contains(c) && c.contains(c));
    assert!(!c.contains(c.parent().unwrap()));
    assert!(!root.child(4).unwrap().contains(c));
    let deepest = NodeKey32::new(10, 0).unwrap();
    assert_eq!(deepest.child(0), None);
    assert_eq!(NodeKey32::new(3, 1 << 9), None, "value too wide for the level");
    // Bounds: child 7 of the root is the upper octant.
    let (lo, hi) = root.child(7).unwrap().bounds([0.0; 3], 2.0);
    assert_eq!((lo, hi), ([1.0; 3], [2.0; 3]));
}

#[test]
fn quantizer_edges() {
    let q = Quantizer::new([-1.0; 3], [1.0; 3], 4).unwrap();
    assert_eq!(q.cell([1.0; 3], 0).unwrap(), [15; 3], "max face lands in the last cell");
    assert_eq!(q.cell([-1.0; 3], 0).unwrap(), [0; 3]);
    assert_eq!(q.cell([0.0, 1.0001, 0.0], 3), Err(QuantizeError::OutOfBounds { index: 3, point: [0.0, 1.0001, 0.0] }));
    assert!(q.cell([f32::NAN, 0.0, 0.0], 0).is_err());
    assert_eq!(q.cell_clamped([f32::INFINITY, f32::NEG_INFINITY, f32::NAN]), [15, 0, 0]);
    assert_eq!(Quantizer::new([0.0; 3], [1.0; 3], 22), Err(QuantizeError::BadBits(22)));
    assert_eq!(Quantizer::new([0.0; 3], [f32::NAN, 1.0, 1.0], 3), Err(QuantizeError::BadBox));
    assert_eq!(Quantizer::new([1.0; 3], [0.0; 3], 3), Err(QuantizeError::BadBox));
    // A flat box puts everything in cell 0 of that axis.
    let flat = Quantizer::new([0.0; 3], [1.0, 1.0, 0.0], 3).unwrap();
    assert_eq!(flat.cell([0.5, 0.5, 0.0], 0).unwrap(), [4, 4, 0]);
}

fn point() -> impl Strategy<Value = [f32; 3]> {
    let coord = prop_oneof![
        8 => -1.0f32..1.0,
        1 => Just(-1.0f32),
        1 => Just(1.0f32),
        1 => Just(0.0f32),
    ];
    [coord.clone(), coord.clone(), coord]
}

fn wild_point() -> impl Strategy<Value = [f32; 3]> {
    let coord = prop_oneof![
        6 => -1.5f32..1.5,
        1 => Just(f32::NAN),
        1 => Just(f32::INFINITY),
        1 => Just(f32::NEG_INFINITY),
        1 => Just(1.0f32),
    ];
    [coord.clone(), coord.clone(), coord]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn round_trips(x in 0u32..(1 << 21), y in 0u32..(1 << 21), z in 0u32..(1 << 21)) {
        prop_assert_eq!(decode_u64(encode_u64([x, y, z])), [x, y, z]);
        prop_assert_eq!(encode_u64([x, y, z]), naive([x, y, z], 21));
        let c = [x & 1023, y & 1023, z & 1023];
        prop_assert_eq!(decode_u32(encode_u32(c)), c);
    }

    #[test]
    fn key_index_round_trips(level in 0u32..=21, value in any::<u64>()) {
        let value = if level == 0 { 0 } else { value >> (64 - 3 * level) };
        let k = NodeKey64::new(level, value).unwrap();
        prop_assert_eq!(NodeKey64::from_index(k.index()), Some(k));
        prop_assert_eq!(k.level(), level);
        for l in 0..=level {
            let a = k.ancestor(l).unwrap();
            prop_assert!(a.contains(k));
            prop_assert_eq!(a.level(), l);
        }
        if level <= 10 {
            let k32 = NodeKey32::new(level, value as u32).unwrap();
            prop_assert_eq!(k32.index(), k.index());
            prop_assert_eq!(NodeKey32::from_index(k.index()), Some(k32));
        }
    }

    #[test]
    fn gpu_encoding_is_bit_exact(
        points in proptest::collection::vec(point(), 0..2000),
        bits in prop_oneof![Just(1u32), Just(3), Just(10), Just(11), Just(16), Just(21)],
    ) {
        let Some(gpu) = test_gpu(lumbre_gpu::wgpu::Features::empty()) else { return Ok(()) };
        let enc = MortonEncode { quantizer: Quantizer::new([-1.0; 3], [1.0; 3], bits).unwrap(), clamp: false };
        conformance(&enc, &gpu, &points, Tolerance::EXACT).map_err(|e| TestCaseError::fail(e.to_string()))?;
    }

    #[test]
    fn gpu_clamping_is_bit_exact(points in proptest::collection::vec(wild_point(), 1..500), bits in 1u32..=21) {
        let Some(gpu) = test_gpu(lumbre_gpu::wgpu::Features::empty()) else { return Ok(()) };
        let enc = MortonEncode { quantizer: Quantizer::new([-1.0; 3], [1.0; 3], bits).unwrap(), clamp: true };
        conformance(&enc, &gpu, &points, Tolerance::EXACT).map_err(|e| TestCaseError::fail(e.to_string()))?;
    }
}

#[test]
fn points_outside_the_box_are_errors_on_both_paths() {
    let enc = MortonEncode { quantizer: Quantizer::new([0.0; 3], [1.0; 3], 10).unwrap(), clamp: false };
    let pts = [[0.5, 0.5, 0.5], [2.0, 0.0, 0.0]];
    assert!(enc.cpu(&pts).is_err());
    let Some(gpu) = test_gpu(lumbre_gpu::wgpu::Features::empty()) else { return };
    assert!(enc.gpu(&gpu, &pts).is_err());
    assert!(enc.gpu(&gpu, &[[0.0, f32::NAN, 0.0]]).is_err());
}

#[test]
fn clouds_longer_than_one_binding_are_encoded_in_pieces() {
    use lumbre_gpu::testing::{gpu_required, try_test_gpu};
    let Some(base) = test_gpu(lumbre_gpu::wgpu::Features::empty()) else { return };
    let opts = lumbre_gpu::GpuOptions {
        adapter: Some(base.adapter_name().to_string()),
        max_binding_size: Some(64 << 10),
        ..lumbre_gpu::GpuOptions::from_env()
    };
    let Some(small) = try_test_gpu(&opts, lumbre_gpu::wgpu::Features::empty(), gpu_required()).unwrap() else { return };
    // 64 KiB bindings hold 5461 points: 20 000 points take 4 pieces; 63-bit keys as well.
    let pts: Vec<[f32; 3]> = (0..20_000)
        .map(|i| {
            let f = i as f32 / 20_000.0;
            [f, (f * 7.0).fract(), (f * 13.0).fract()]
        })
        .collect();
    for bits in [10, 21] {
        let enc = MortonEncode { quantizer: Quantizer::new([0.0; 3], [1.0; 3], bits).unwrap(), clamp: false };
        conformance(&enc, &small, &pts, Tolerance::EXACT).unwrap();
    }
    // An outside point in a later piece is still reported.
    let mut bad = pts.clone();
    bad[15_000] = [2.0, 0.0, 0.0];
    let enc = MortonEncode { quantizer: Quantizer::new([0.0; 3], [1.0; 3], 10).unwrap(), clamp: false };
    assert!(enc.gpu(&small, &bad).is_err());
}

#[test]
fn gpu_encodes_a_large_buffer() {
    let Some(gpu) = test_gpu(lumbre_gpu::wgpu::Features::empty()) else { return };
    let n = 300_000;
    let pts: Vec<[f32; 3]> = (0..n)
        .map(|i| {
            let f = i as f32 / n as f32;
            [f, (f * 7.0).fract(), (f * 13.0).fract()]
        })
        .collect();
    for bits in [10, 21] {
        let enc = MortonEncode { quantizer: Quantizer::new([0.0; 3], [1.0; 3], bits).unwrap(), clamp: false };
        conformance(&enc, &gpu, &pts, Tolerance::EXACT).unwrap();
    }
}
