//! module
// Morton codes, the twins of lumbre_morton's code.rs: x in bit 0 of each triplet.

// Spreads the low 10 bits of v so bit i lands at bit 3i (spread_u32).
fn spread_u32(v: u32) -> u32 {
    var x = v & 0x3ffu;
    x = (x | (x << 16u)) & 0x030000ffu;
    x = (x | (x << 8u)) & 0x0300f00fu;
    x = (x | (x << 4u)) & 0x030c30c3u;
    x = (x | (x << 2u)) & 0x09249249u;
    return x;
}

// spread_u32 with bit 10 at bit 30: the low word's share of an axis of a 63-bit code.
fn spread11(v: u32) -> u32 {
    return spread_u32(v) | (((v >> 10u) & 1u) << 30u);
}

// The 30-bit code of three 10-bit coordinates (encode_u32).
fn encode_u32(c: vec3<u32>) -> u32 {
    return spread_u32(c.x) | (spread_u32(c.y) << 1u) | (spread_u32(c.z) << 2u);
}

// The 63-bit code of three 21-bit coordinates as (low word, high word) (encode_u64): bit p of
// the code is bit 3i + axis.
fn encode_u64(c: vec3<u32>) -> vec2<u32> {
    // Low word: x bits 0..10, y bits 0..10, z bits 0..9.
    let lo = spread11(c.x) | (spread11(c.y) << 1u) | (spread_u32(c.z) << 2u);
    // High word: z bits 10..20 from bit 0, x bits 11..20 from bit 1, y bits 11..20 from bit 2.
    let hi = spread11(c.z >> 10u) | (spread_u32(c.x >> 11u) << 1u) | (spread_u32(c.y >> 11u) << 2u);
    return vec2<u32>(lo, hi);
}
