//! The integer-hash random numbers of imperfect shadow maps, bit-exact with the WGSL module
//! `lightcuts/ism_random.wgsl`: draws with explicit dimension indices, the pool's shuffle (a
//! Feistel network) and where each VPL's window of the pool starts.

use lumbre_raytrace::sampling::hash_u32;

/// Dimensions of the integer-hash draws (the same in `lightcuts/ism_random.wgsl`).
pub(crate) const DIM_JITTER: u32 = 0;
pub(crate) const DIM_U: u32 = 1;
pub(crate) const DIM_V: u32 = 2;
pub(crate) const DIM_SHUFFLE: u32 = 3;
pub(crate) const DIM_START: u32 = 8;
const SHUFFLE_ROUNDS: u32 = 4;

/// Draw `dim` of item `index` under `seed`.
pub(crate) fn draw(seed: u32, index: u32, dim: u32) -> u32 {
    hash_u32(hash_u32(index) ^ hash_u32(seed ^ dim.wrapping_mul(0x9e37_79b9)))
}

/// A uniform number in `[0, 1)` with 24 bits.
pub(crate) fn unit(bits: u32) -> f32 {
    (bits >> 8) as f32 / 16_777_216.0
}

fn feistel(x: u32, half_bits: u32, seed: u32) -> u32 {
    let mask = (1u32 << half_bits) - 1;
    let (mut left, mut right) = (x >> half_bits, x & mask);
    for r in 0..SHUFFLE_ROUNDS {
        let f = draw(seed, right, DIM_SHUFFLE + r) & mask;
        (left, right) = (right, left ^ f);
    }
    (left << half_bits) | right
}

/// Half the bits of the shuffle's domain: the smallest `h >= 1` with `4^h >= count`.
pub(crate) fn half_bits(count: u32) -> u32 {
    let bits = 32 - (count.max(2) - 1).leading_zeros();
    bits.div_ceil(2).max(1)
}

/// A bijection of `0..count`: the Feistel network over `4^half_bits` values, walked until it
/// lands in range (fewer than four steps on average: the domain is below `4 * count`).
pub(crate) fn shuffle(j: u32, count: u32, half_bits: u32, seed: u32) -> u32 {
    let mut x = feistel(j, half_bits, seed);
    while x >= count {
        x = feistel(x, half_bits, seed);
    }
    x
}

/// Where VPL `vpl`'s window of a pool of `points` starts.
pub(crate) fn start(seed: u32, vpl: u32, points: u32) -> u32 {
    draw(seed, vpl, DIM_START) % points
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shuffle_is_a_permutation() {
        for count in [1u32, 2, 3, 4, 5, 17, 64, 1000, 4097] {
            let h = half_bits(count);
            assert!(1u64 << (2 * h) >= count as u64 && (1u64 << (2 * h)) < 4 * count.max(2) as u64);
            let mut seen = vec![false; count as usize];
            for j in 0..count {
                let s = shuffle(j, count, h, 99) as usize;
                assert!(!seen[s], "count {count}: {s} twice");
                seen[s] = true;
            }
        }
    }
}
