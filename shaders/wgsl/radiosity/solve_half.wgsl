//! module
// f16 in u32 words by integer operations (pack2x16float and unpack2x16float need a naga
// capability the shader build does not enable). Bit-exact twins: lumbre_radiosity::f16_bits
// and f16_value. A word holds two halves: bits 0-15 and 16-31.

// f32 -> f16 bits, rounding to nearest even (overflow to infinity, NaN kept NaN).
fn f16_bits(v: f32) -> u32 {
    let b = bitcast<u32>(v);
    let sign = (b >> 16u) & 0x8000u;
    let a = b & 0x7fffffffu;
    if a >= 0x47800000u {
        return sign | select(0x7c00u, 0x7e00u, a > 0x7f800000u);
    }
    if a >= 0x38800000u {
        let m = a - 0x38000000u;
        return sign | ((m + 0x0fffu + ((m >> 13u) & 1u)) >> 13u);
    }
    if a < 0x33000000u {
        return sign;
    }
    let e = a >> 23u;
    let mant = (a & 0x7fffffu) | 0x800000u;
    let shift = 126u - e;
    var r = mant >> shift;
    let rem = mant & ((1u << shift) - 1u);
    let half = 1u << (shift - 1u);
    if rem > half || (rem == half && (r & 1u) == 1u) {
        r += 1u;
    }
    return sign | r;
}

// The low halves of four words as f32 (exact; a subnormal half may flush to zero where
// the GPU flushes f32 subnormals).
fn f16_low(w: vec4<u32>) -> vec4<f32> {
    return bitcast<vec4<f32>>(((w & vec4<u32>(0x7fffu)) << vec4<u32>(13u)) | ((w & vec4<u32>(0x8000u)) << vec4<u32>(16u))) * 5.192296858534828e33;
}

// The high halves of four words as f32.
fn f16_high(w: vec4<u32>) -> vec4<f32> {
    return bitcast<vec4<f32>>(((w >> vec4<u32>(3u)) & vec4<u32>(0x0fffe000u)) | (w & vec4<u32>(0x80000000u))) * 5.192296858534828e33;
}
