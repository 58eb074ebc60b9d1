//! module
// Floats as order-preserving words, twin of lumbre_density's ordered.rs: for any two f32
// (not NaN) a < b exactly when ordered_encode(a) < ordered_encode(b), so boxes grow by
// atomicMin and atomicMax on u32 and the result does not depend on the order.

fn ordered_encode(f: f32) -> u32 {
    let b = bitcast<u32>(f);
    return select(~b, b | 0x80000000u, (b & 0x80000000u) == 0u);
}

// The inverse of ordered_encode.
fn ordered_decode(u: u32) -> f32 {
    return bitcast<f32>(select(~u, u & 0x7fffffffu, (u & 0x80000000u) != 0u));
}
