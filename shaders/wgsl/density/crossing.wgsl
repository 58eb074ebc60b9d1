//! module
// The crossing test of a segment and a disk, twin of lumbre_density::twin::crossing (crossing.rs):
// the segment must arrive from the side the normal faces (da > eps >= db), and its crossing
// point, at t = min(da / (da - db), 1), must lie within the radius.

// A disk as two vec4s: centre and radius, unit normal and plane tolerance.
struct DiskData {
    centre: vec3<f32>,
    radius: f32,
    normal: vec3<f32>,
    eps: f32,
}

// xyz: the crossing point; w: 1 when the segment crosses, else 0.
fn crossing(a: vec3<f32>, b: vec3<f32>, d: DiskData) -> vec4<f32> {
    let da = dot(a - d.centre, d.normal);
    let db = dot(b - d.centre, d.normal);
    if !(da > d.eps && db <= d.eps) {
        return vec4<f32>(0.0);
    }
    let t = min(da / (da - db), 1.0);
    let p = a + (b - a) * t;
    let q = p - d.centre;
    let h = dot(q, d.normal);
    if dot(q, q) - h * h <= d.radius * d.radius {
        return vec4<f32>(p, 1.0);
    }
    return vec4<f32>(0.0);
}
