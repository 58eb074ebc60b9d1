//! module
//! import shared/sampling
// The scene's area emitters as a distribution: lumbre_raytrace::Emitters (emitters.rs),
// operation for operation. Emitters are one-sided (radiance Ke on the side of the geometric
// normal (b - a) x (c - a)) and picked in proportion to their power's channel sum.
//
// The includer declares, in group 0, at bindings of its choice, from
// lumbre_raytrace::GpuEmitters::bindings() in this order:
//   em_emitters: array<Emitter>   (GpuEmitter, 80 bytes each; one zeroed entry when none)
//   em_cdf: array<f32>            (count + 1 entries: 0, running sums, 1)
//   em_index: array<u32>          (per scene triangle: its emitter, or EM_NONE)
// and passes the emitter count (GpuEmitters::count) to em_sample.

const EM_NONE: u32 = 0xffffffffu;

struct Emitter {
    a: vec3<f32>,
    tri: u32,
    b: vec3<f32>,
    area: f32,
    c: vec3<f32>,
    pdf_area: f32,
    normal: vec3<f32>,
    prob: f32,
    radiance: vec3<f32>,
    _pad: u32,
}

struct EmitterSample {
    point: vec3<f32>,
    // density in area measure: pick probability / area
    pdf: f32,
    normal: vec3<f32>,
    tri: u32,
    radiance: vec3<f32>,
}

// The first emitter whose CDF entry exceeds u (count > 0).
fn em_pick(count: u32, u: f32) -> u32 {
    var lo = 1u;
    var hi = count;
    while lo < hi {
        let mid = (lo + hi) / 2u;
        if em_cdf[mid] > u {
            hi = mid;
        } else {
            lo = mid + 1u;
        }
    }
    return lo - 1u;
}

// A point on the emitters (count > 0): u_pick picks by power, (u1, u2) a uniform point.
fn em_sample(count: u32, u_pick: f32, u1: f32, u2: f32) -> EmitterSample {
    let e = em_emitters[em_pick(count, u_pick)];
    let w = uniform_triangle(u1, u2);
    return EmitterSample(e.a * w.x + e.b * w.y + e.c * w.z, e.pdf_area, e.normal, e.tri, e.radiance);
}

// Density in area measure of em_sample's points on scene triangle `tri` (0: not an emitter).
fn em_pdf(tri: u32) -> f32 {
    let k = em_index[tri];
    if k == EM_NONE {
        return 0.0;
    }
    return em_emitters[k].pdf_area;
}

// A cosine-distributed direction on the front side of unit normal n; w: density cos / pi.
fn em_sample_direction(n: vec3<f32>, u1: f32, u2: f32) -> vec4<f32> {
    let local = cosine_hemisphere(u1, u2);
    return vec4<f32>(to_world(local, n), local.z / PI);
}
