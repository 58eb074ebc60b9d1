//! module
// The paraboloid map of a VPL's hemisphere, operation for operation as
// lumbre_lightcuts::ism's paraboloid.rs: the CPU and the GPU put a point in the same texel
// at the same depth wherever f32 rounds the same.

// Directions at a cosine below this count as behind the VPL (paraboloid.rs's MIN_COS).
const ISM_MIN_COS: f32 = 0.000244140625;

struct IsmFrame {
    t: vec3<f32>,
    b: vec3<f32>,
    n: vec3<f32>,
}

// Tangent and bitangent of the unit normal n (Duff et al. 2017).
fn ism_frame(n: vec3<f32>) -> IsmFrame {
    let sign = select(-1.0, 1.0, n.z >= 0.0);
    let a = -1.0 / (sign + n.z);
    let bb = n.x * n.y * a;
    let t = vec3<f32>(1.0 + sign * n.x * n.x * a, sign * bb, -sign * n.x);
    let b = vec3<f32>(bb, sign + n.y * n.y * a, -n.y);
    return IsmFrame(t, b, n);
}

fn ism_dot(a: vec3<f32>, b: vec3<f32>) -> f32 {
    return a.x * b.x + a.y * b.y + a.z * b.z;
}

struct IsmTexel {
    // Whether p lies in the open hemisphere in front of the VPL.
    ok: bool,
    x: u32,
    y: u32,
    // Distance from the VPL (positive when ok).
    dist: f32,
}

// Texel of p in a size x size paraboloid map around `c` oriented by `f`:
// (x, y) = (d.t, d.b) / (|d| + d.n), the disk [-1, 1]^2 spread over the texels; `ok` when
// p lies in front at a cosine above ISM_MIN_COS.
fn ism_project(c: vec3<f32>, f: IsmFrame, p: vec3<f32>, size: u32) -> IsmTexel {
    var out = IsmTexel(false, 0u, 0u, 0.0);
    let d = p - c;
    let z = ism_dot(d, f.n);
    let dist = sqrt(ism_dot(d, d));
    // Behind, or too close to the VPL's plane for the sign of z to survive rounding.
    if !(z > dist * ISM_MIN_COS) {
        return out;
    }
    let den = dist + z;
    let u = ism_dot(d, f.t) / den;
    let v = ism_dot(d, f.b) / den;
    let half = f32(size) * 0.5;
    let last = f32(size - 1u);
    out.ok = true;
    out.x = u32(clamp(floor((u + 1.0) * half), 0.0, last));
    out.y = u32(clamp(floor((v + 1.0) * half), 0.0, last));
    out.dist = dist;
    return out;
}
