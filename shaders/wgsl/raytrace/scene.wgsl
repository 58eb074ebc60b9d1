//! module
//! import raytrace/scene_bindings
// The scene as the triangle renderers read it (lumbre_raytrace::GpuScene): materials, lights,
// shading normals and the surface at a hit, shared by whitted.wgsl and path.wgsl.
//
// The includer imports shared/camera and declares, in group 0 after the scene block of
// raytrace/scene_bindings, `lights: array<Light>`.


struct Light {
    // 0: point, 1: area
    kind: u32,
    tri: u32,
    area: f32,
    _pad: u32,
    // point: position; area: unused
    pos: vec3<f32>,
    _p1: f32,
    // point: intensity; area: emission
    e: vec3<f32>,
    _p2: f32,
}

const KIND_PHONG: u32 = 1u;
const KIND_MIRROR: u32 = 2u;
const KIND_GLASS: u32 = 3u;
const KIND_EMITTER: u32 = 4u;

fn shade_normal(tri: u32, u: f32, v: f32, ng: vec3<f32>) -> vec3<f32> {
    let info = tri_info[tri];
    if info.x == KD_NONE {
        return ng;
    }
    let n = normals[info.x].xyz * (1.0 - u - v) + normals[info.y].xyz * u + normals[info.z].xyz * v;
    let len = length(n);
    if len > 0.0 {
        return n / len;
    }
    return ng;
}

fn schlick(cos_i: f32, n1: f32, n2: f32) -> f32 {
    let q = (n1 - n2) / (n1 + n2);
    let r0 = q * q;
    let c = 1.0 - cos_i;
    return r0 + (1.0 - r0) * c * c * c * c * c;
}

struct Surface {
    p: vec3<f32>,
    ng: vec3<f32>,
    n: vec3<f32>,
    // whether the ray arrives on the side of the geometric normal (b - a) x (c - a)
    entering: bool,
    material: u32,
}

// Hit point, geometric and shading normals facing the ray's side, material.
fn surface(hit: KdHit, origin: vec3<f32>, dir: vec3<f32>) -> Surface {
    let p0 = kd_vertex(hit.tri, 0u);
    return surface_at(hit, origin, dir, safe_normalize(cross(kd_vertex(hit.tri, 1u) - p0, kd_vertex(hit.tri, 2u) - p0)));
}

// `surface` with the triangle's unit geometric normal given (the path tracer's, computed
// once on the host so that both paths see the same bits).
fn surface_at(hit: KdHit, origin: vec3<f32>, dir: vec3<f32>, normal: vec3<f32>) -> Surface {
    var ng = normal;
    var n = shade_normal(hit.tri, hit.u, hit.v, ng);
    let entering = dot(ng, dir) < 0.0;
    if !entering {
        ng = -ng;
    }
    if dot(n, ng) < 0.0 {
        n = -n;
    }
    return Surface(origin + dir * hit.t, ng, n, entering, tri_info[hit.tri].w);
}

// +infinity (WGSL has no literal for it, and bitcast is not a constant expression in naga).
fn inf() -> f32 {
    return bitcast<f32>(0x7f800000u);
}

// Whether the driver cut this invocation's loops short: lavapipe ends every loop of an
// invocation once its loops have run 65535 iterations in all, silently, and from then on a
// loop runs its body once. So a loop of `n` >= 2 iterations, `n` from a uniform (no
// unrolling), run after the work counts fewer than `n` exactly when the work was cut.
fn loops_cut_short(n: u32) -> bool {
    var count = 0u;
    for (var i = 0u; i < n; i++) {
        count += 1u;
    }
    return count != n;
}
