//! The integer hash and the stratified pixel samples (`sampling.rs`): the PCG hash against
//! an independent reference, and samples that are deterministic, per pixel and in their
//! strata. The WGSL twins of the warps are checked in `emitters.rs`; those of the hash and
//! the samples through the renderers, whose GPU images match the CPU's (`golden.rs`,
//! `path.rs`).

use lumbre_raytrace::sampling::{hash_f32, hash_u32, stratified};
use proptest::prelude::*;

#[test]
fn hash_is_the_pcg_hash() {
    // Reference values of pcg_hash (Jarzynski and Olano 2020) computed independently with u64
    // arithmetic masked to 32 bits.
    fn reference(x: u32) -> u32 {
        let state = ((u64::from(x) * 747_796_405 + 2_891_336_453) & 0xffff_ffff) as u32;
        let shift = (state >> 28) + 4;
        let word = ((u64::from((state >> shift) ^ state) * 277_803_737) & 0xffff_ffff) as u32;
        (word >> 22) ^ word
    }
    for x in (0..1000).chain([u32::MAX, u32::MAX - 1, 1 << 31, 0xdead_beef]) {
        assert_eq!(hash_u32(x), reference(x), "{x}");
        assert_eq!(hash_f32(x), (reference(x) >> 8) as f32 / 16_777_216.0);
    }
    // Roughly uniform.
    let mean = (0..100_000).map(hash_f32).sum::<f32>() / 100_000.0;
    assert!((mean - 0.5).abs() < 0.01, "{mean}");
}

#[test]
fn stratified_is_deterministic_and_varies_per_pixel() {
    assert_eq!(stratified(16, 5, 99), stratified(16, 5, 99));
    assert_ne!(stratified(16, 5, 99), stratified(16, 5, 100));
    // A single sample per pixel is jittered over the whole pixel.
    let xs: Vec<f32> = (0..1000).map(|p| stratified(1, 0, p).0).collect();
    assert!(xs.iter().any(|&x| x < 0.1) && xs.iter().any(|&x| x > 0.9));
}

proptest! {
    #[test]
    fn stratified_stays_in_the_unit_square(spp in 0u32..10_000, index in any::<u32>(), seed in any::<u32>()) {
        let (x, y) = stratified(spp, index, seed);
        prop_assert!((0.0..1.0).contains(&x) && (0.0..1.0).contains(&y));
        let s = spp.max(1).isqrt();
        if s * s == spp.max(1) {
            let i = index % spp.max(1);
            prop_assert_eq!((x * s as f32) as u32, (i % s).min(s - 1));
            prop_assert_eq!((y * s as f32) as u32, (i / s).min(s - 1));
        }
    }
}
