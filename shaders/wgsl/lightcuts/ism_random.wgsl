//! module
//! import shared/sampling
// Random numbers and the pool's shuffle for imperfect shadow maps, bit-exact with
// lumbre_lightcuts::ism's random.rs: integer hashes with explicit dimension indices.

// Dimensions of the draws (the same on both sides).
const ISM_DIM_JITTER: u32 = 0u;
const ISM_DIM_U: u32 = 1u;
const ISM_DIM_V: u32 = 2u;
const ISM_DIM_SHUFFLE: u32 = 3u;
const ISM_DIM_START: u32 = 8u;
const ISM_SHUFFLE_ROUNDS: u32 = 4u;

// Draw `dim` of item `index` under `seed`.
fn ism_draw(seed: u32, index: u32, dim: u32) -> u32 {
    return hash_u32(hash_u32(index) ^ hash_u32(seed ^ (dim * 0x9e3779b9u)));
}

// A uniform number in [0, 1) with 24 bits.
fn ism_unit(bits: u32) -> f32 {
    return f32(bits >> 8u) / 16777216.0;
}

// One pass of the Feistel network over 2 * half_bits bits.
fn ism_feistel(x: u32, half_bits: u32, seed: u32) -> u32 {
    let mask = (1u << half_bits) - 1u;
    var left = x >> half_bits;
    var right = x & mask;
    for (var r = 0u; r < ISM_SHUFFLE_ROUNDS; r += 1u) {
        let f = ism_draw(seed, right, ISM_DIM_SHUFFLE + r) & mask;
        let next = left ^ f;
        left = right;
        right = next;
    }
    return (left << half_bits) | right;
}

// A bijection of [0, count): the Feistel network, walked until it lands in range.
fn ism_shuffle(j: u32, count: u32, half_bits: u32, seed: u32) -> u32 {
    var x = ism_feistel(j, half_bits, seed);
    while x >= count {
        x = ism_feistel(x, half_bits, seed);
    }
    return x;
}

// Where VPL `vpl`'s window of the pool starts.
fn ism_start(seed: u32, vpl: u32, points: u32) -> u32 {
    return ism_draw(seed, vpl, ISM_DIM_START) % points;
}
