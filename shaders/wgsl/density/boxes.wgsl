//! module
// Box tests of the indices, twin of lumbre_density's boxes.rs. A segment moving less than
// tau along an axis (half the box padding) is tested there by its start alone, so no
// division by a tiny number happens and slab parameters stay far from overflow.

struct SegRay {
    a: vec3<f32>,
    inv: vec3<f32>,
    flat: vec3<bool>,
}

fn seg_ray(a: vec3<f32>, b: vec3<f32>, tau: f32) -> SegRay {
    let d = b - a;
    let flat = abs(d) < vec3<f32>(tau);
    let inv = select(vec3<f32>(1.0) / select(d, vec3<f32>(1.0), flat), vec3<f32>(0.0), flat);
    return SegRay(a, inv, flat);
}

// Whether the segment (parameters in [0, 1]) meets the closed box [lo, hi].
fn seg_hits(r: SegRay, lo: vec3<f32>, hi: vec3<f32>) -> bool {
    let t0 = (lo - r.a) * r.inv;
    let t1 = (hi - r.a) * r.inv;
    let near = select(min(t0, t1), vec3<f32>(0.0), r.flat);
    let far = select(max(t0, t1), vec3<f32>(1.0), r.flat);
    let inside = (r.a >= lo) & (r.a <= hi);
    let flat_ok = all(inside | !r.flat);
    let t_near = max(max(max(near.x, near.y), near.z), 0.0);
    let t_far = min(min(min(far.x, far.y), far.z), 1.0);
    return flat_ok && t_near <= t_far;
}

// Whether two closed boxes share a point.
fn boxes_overlap(lo_a: vec3<f32>, hi_a: vec3<f32>, lo_b: vec3<f32>, hi_b: vec3<f32>) -> bool {
    return all(lo_a <= hi_b) && all(lo_b <= hi_a);
}
