//! Morton encoding of point buffers: the GPU against the CPU, bit for bit, and errors.

use lumbre_gpu::testing::test_gpu;
use lumbre_gpu::{Compute, Tolerance, conformance};
use lumbre_morton::*;
use proptest::prelude::*;

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
        adapter: Some(base.adapter_choice().to_string()),
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
