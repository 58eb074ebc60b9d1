//! module
// Power in fixed point, twin of lumbre_density's fixed.rs: p * 2^k is exact in f32 (a
// power-of-two scaling) and is split into low and high u32 words, the fraction dropped;
// 64-bit sums are two words with a carry.

// (low, high) words of p * scale, scale = 2^k.
fn quantize(p: f32, scale: f32) -> vec2<u32> {
    let x = p * scale;
    let hi = floor(x * 2.3283064365386963e-10);
    let lo = x - hi * 4294967296.0;
    return vec2<u32>(u32(lo), u32(hi));
}

fn add64(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    let lo = a.x + b.x;
    return vec2<u32>(lo, a.y + b.y + select(0u, 1u, lo < a.x));
}
