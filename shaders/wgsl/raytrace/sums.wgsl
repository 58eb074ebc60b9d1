//! module
// Per-pixel sums of samples in 64-bit fixed point: lumbre_raytrace::SampleSums (sums.rs),
// each sum two 32-bit words (low, high) with a carry. Integer sums do not depend on their
// order, so any grouping of a render's samples adds up to the same bits.
//
// The includer declares, in group 0, `sums: array<atomic<u32>>`: six planes of one word a
// pixel, (low, high) of red, green and blue (SampleSums::to_planes).

// `v * 2^scale_log2` rounded to a 64-bit integer (low, high), `scale` being 2^scale_log2:
// SampleSums::quantize. Scaling by a power of two is exact; below 2^23 the value is rounded
// as floor(x + 0.5) in f32 (unbiased, unlike truncation), above it is an integer already,
// and the floor and the difference below are exact for a 24-bit mantissa.
fn quantize(v: f32, scale: f32) -> vec2<u32> {
    var x = v * scale;
    if !(x > 0.0) {
        return vec2<u32>(0u);
    }
    if x >= 18446744073709551616.0 {
        return vec2<u32>(0xffffffffu);
    }
    if x < 8388608.0 {
        x = floor(x + 0.5);
    }
    let hi = floor(x * 2.3283064365386963e-10);
    return vec2<u32>(u32(x - hi * 4294967296.0), u32(hi));
}

// a + b in 64 bits, saturating at 2^64 - 1.
fn add64(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    let lo = a.x + b.x;
    let high = a.y + b.y;
    let hi = high + select(0u, 1u, lo < a.x);
    if high < a.y || hi < high {
        return vec2<u32>(0xffffffffu);
    }
    return vec2<u32>(lo, hi);
}

// 2^k as an f32, for k in [-126, 127].
fn pow2(k: i32) -> f32 {
    return bitcast<f32>(u32(k + 127) << 23u);
}

// Adds x to the 64-bit sum in words (lo, hi) of `sums`, carrying into the high word
// (wrapping past 2^64, which a pixel reaches only far past its unit's headroom).
fn add_sum(lo: u32, hi: u32, x: vec2<u32>) {
    if x.x != 0u {
        let old = atomicAdd(&sums[lo], x.x);
        if old > 0xffffffffu - x.x {
            atomicAdd(&sums[hi], 1u);
        }
    }
    if x.y != 0u {
        atomicAdd(&sums[hi], x.y);
    }
}

// An invocation's sums of its samples: red, green and blue, 64-bit (low, high) each. Three
// named fields, not an array: a dynamically indexed array would live in local memory.
struct Sums {
    r: vec2<u32>,
    g: vec2<u32>,
    b: vec2<u32>,
}

// Adds one sample's radiance, quantized, to an invocation's sums.
fn add_sample(sum: ptr<function, Sums>, v: vec3<f32>, scale: f32) {
    (*sum).r = add64((*sum).r, quantize(v.x, scale));
    (*sum).g = add64((*sum).g, quantize(v.y, scale));
    (*sum).b = add64((*sum).b, quantize(v.z, scale));
}

// Adds one channel's sum x to words (lo, hi) of `sums`: see add_pixel_sums.
fn add_channel(lo: u32, hi: u32, x: vec2<u32>, only: bool, fresh: bool) {
    if !only {
        add_sum(lo, hi, x);
        return;
    }
    var next = x;
    if !fresh {
        next = add64(vec2<u32>(atomicLoad(&sums[lo]), atomicLoad(&sums[hi])), next);
    }
    atomicStore(&sums[lo], next.x);
    atomicStore(&sums[hi], next.y);
}

// Adds an invocation's sums to pixel `pixel`'s in `sums` (of `n` pixels: word c of a pixel in
// plane c, so that a warp's accesses to a word are contiguous). With `only`, no other
// invocation of the dispatch adds to this pixel (one stream): plain stores, after loads unless
// the sums are still zero (`fresh`: the render's first samples); else atomic additions.
fn add_pixel_sums(pixel: u32, n: u32, sum: Sums, only: bool, fresh: bool) {
    add_channel(pixel, n + pixel, sum.r, only, fresh);
    add_channel(2u * n + pixel, 3u * n + pixel, sum.g, only, fresh);
    add_channel(4u * n + pixel, 5u * n + pixel, sum.b, only, fresh);
}

// Channel c's sum of pixel `pixel` (of `n`) as (low, high) words.
fn channel_sum(pixel: u32, n: u32, c: u32) -> vec2<u32> {
    let lo = 2u * c * n + pixel;
    return vec2<u32>(atomicLoad(&sums[lo]), atomicLoad(&sums[lo + n]));
}

// Whether a channel of pixel `pixel`'s sums (of `n`) saturated (both words all ones).
fn pixel_saturated(pixel: u32, n: u32) -> bool {
    var saturated = false;
    for (var c = 0u; c < 3u; c++) {
        let w = channel_sum(pixel, n, c);
        saturated = saturated || (w.x & w.y) == 0xffffffffu;
    }
    return saturated;
}

// One channel's sum (words lo, hi) as an f32 count of units (rounded).
fn sum_value(w: vec2<u32>) -> f32 {
    return f32(w.y) * 4294967296.0 + f32(w.x);
}

// The mean of `samples` samples whose sums pixel `pixel` (of `n`) holds in units of
// 2^-scale_log2, rounded a few times in f32 (the host computes it from the sums in f64,
// rounding once).
fn pixel_mean(pixel: u32, n: u32, samples: u32, scale_log2: i32) -> vec3<f32> {
    let r = sum_value(channel_sum(pixel, n, 0u));
    let g = sum_value(channel_sum(pixel, n, 1u));
    let b = sum_value(channel_sum(pixel, n, 2u));
    return vec3<f32>(r, g, b) / f32(samples) * pow2(-scale_log2);
}
