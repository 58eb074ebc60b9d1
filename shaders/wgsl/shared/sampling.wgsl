//! module
// Integer hash and stratified samples, bit-exact with lumbre_raytrace's hash_u32, hash_f32
// and stratified (PCG hash, Jarzynski and Olano 2020).

const ONE_MINUS_EPSILON: f32 = 0.99999994;

fn hash_u32(x: u32) -> u32 {
    let state = x * 747796405u + 2891336453u;
    let word = ((state >> ((state >> 28u) + 4u)) ^ state) * 277803737u;
    return (word >> 22u) ^ word;
}

fn hash_f32(x: u32) -> f32 {
    return f32(hash_u32(x) >> 8u) / 16777216.0;
}

fn isqrt(n: u32) -> u32 {
    var s = u32(sqrt(f32(n)));
    // f32's sqrt may be off by one for large n: correct it exactly.
    while s * s > n {
        s -= 1u;
    }
    while (s + 1u) * (s + 1u) <= n {
        s += 1u;
    }
    return s;
}

fn stratified(spp_in: u32, index_in: u32, seed: u32) -> vec2<f32> {
    let spp = max(spp_in, 1u);
    let index = index_in % spp;
    let key = hash_u32(seed) + index;
    let jx = hash_f32(key);
    let jy = hash_f32(hash_u32(key));
    let s = isqrt(spp);
    var xy: vec2<f32>;
    if s * s == spp {
        xy = vec2<f32>((f32(index % s) + jx) / f32(s), (f32(index / s) + jy) / f32(s));
    } else {
        xy = vec2<f32>((f32(index) + jx) / f32(spp), jy);
    }
    return min(xy, vec2<f32>(ONE_MINUS_EPSILON));
}

// lumbre_raytrace::light_sample
fn light_sample(pixel: u32, sample: u32, depth: u32, light: u32) -> vec2<f32> {
    let k = hash_u32(pixel ^ hash_u32((sample * 64u + depth * 8u) ^ (light * 0x9e3779b9u)));
    return vec2<f32>(hash_f32(k), hash_f32(hash_u32(k)));
}
