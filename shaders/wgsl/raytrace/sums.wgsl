//! module
// Per-pixel sums of samples in 64-bit fixed point: lumbre_raytrace::SampleSums (sums.rs),
// each sum two 32-bit words (low, high) with a carry. Integer sums do not depend on their
// order, so any grouping of a render's samples adds up to the same bits.
//
// The includer declares, in group 0, `sums: array<atomic<u32>>`: per pixel six words, (low,
// high) of red, green and blue.

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

// Adds x to the 64-bit sum in words (i, i + 1) of `sums`, carrying into the high word
// (wrapping past 2^64, which a pixel reaches only far past its unit's headroom).
fn add_sum(i: u32, x: vec2<u32>) {
    if x.x != 0u {
        let old = atomicAdd(&sums[i], x.x);
        if old > 0xffffffffu - x.x {
            atomicAdd(&sums[i + 1u], 1u);
        }
    }
    if x.y != 0u {
        atomicAdd(&sums[i + 1u], x.y);
    }
}

// Adds one sample's radiance, quantized, to an invocation's sums (r, g, b).
fn add_sample(sum: ptr<function, array<vec2<u32>, 3>>, v: vec3<f32>, scale: f32) {
    (*sum)[0] = add64((*sum)[0], quantize(v.x, scale));
    (*sum)[1] = add64((*sum)[1], quantize(v.y, scale));
    (*sum)[2] = add64((*sum)[2], quantize(v.z, scale));
}

// Adds an invocation's sums (r, g, b) to pixel `pixel`'s in `sums`.
fn add_pixel_sums(pixel: u32, sum: array<vec2<u32>, 3>) {
    let w = 6u * pixel;
    add_sum(w, sum[0]);
    add_sum(w + 2u, sum[1]);
    add_sum(w + 4u, sum[2]);
}

// Whether a channel of pixel `pixel`'s sums saturated (both words all ones).
fn pixel_saturated(pixel: u32) -> bool {
    var saturated = false;
    for (var c = 0u; c < 6u; c += 2u) {
        saturated = saturated || (atomicLoad(&sums[6u * pixel + c]) & atomicLoad(&sums[6u * pixel + c + 1u])) == 0xffffffffu;
    }
    return saturated;
}

// One channel's sum (words lo, hi) as an f32 count of units (rounded).
fn sum_value(lo: u32, hi: u32) -> f32 {
    return f32(hi) * 4294967296.0 + f32(lo);
}

// The mean of `samples` samples whose sums pixel `pixel` holds in units of 2^-scale_log2,
// rounded a few times in f32 (the host computes it from the sums in f64, rounding once).
fn pixel_mean(pixel: u32, samples: u32, scale_log2: i32) -> vec3<f32> {
    let w = 6u * pixel;
    let r = sum_value(atomicLoad(&sums[w]), atomicLoad(&sums[w + 1u]));
    let g = sum_value(atomicLoad(&sums[w + 2u]), atomicLoad(&sums[w + 3u]));
    let b = sum_value(atomicLoad(&sums[w + 4u]), atomicLoad(&sums[w + 5u]));
    return vec3<f32>(r, g, b) / f32(samples) * pow2(-scale_log2);
}
