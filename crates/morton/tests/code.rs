//! Morton codes: interleaving against a bit-by-bit oracle, and the thesis's example.

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

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn round_trips(x in 0u32..(1 << 21), y in 0u32..(1 << 21), z in 0u32..(1 << 21)) {
        prop_assert_eq!(decode_u64(encode_u64([x, y, z])), [x, y, z]);
        prop_assert_eq!(encode_u64([x, y, z]), naive([x, y, z], 21));
        let c = [x & 1023, y & 1023, z & 1023];
        prop_assert_eq!(decode_u32(encode_u32(c)), c);
    }
}
