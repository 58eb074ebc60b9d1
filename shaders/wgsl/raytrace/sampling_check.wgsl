//! import shared/dispatch
//! import shared/emitters
// A test kernel: shared/sampling's warps and shared/emitters on a batch of uniform numbers,
// for comparison with lumbre_raytrace::sampling and Emitters on the CPU.

struct Params {
    // inputs
    n: u32,
    // emitters
    count: u32,
    // scene triangles
    n_tris: u32,
    _pad: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> em_emitters: array<Emitter>;
@group(0) @binding(2) var<storage, read> em_cdf: array<f32>;
@group(0) @binding(3) var<storage, read> em_index: array<u32>;
// per input: four uniform numbers; a unit normal
@group(0) @binding(4) var<storage, read> uniforms: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read> normals: array<vec4<f32>>;
// per input, nine rows (see the Rust test that reads them)
@group(0) @binding(6) var<storage, read_write> out: array<vec4<f32>>;

const WG: u32 = 64u;

@compute @workgroup_size(64)
fn check(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let i = flat_index(wid, nwg, lid, WG);
    if i >= params.n {
        return;
    }
    let u = uniforms[i];
    let n = normals[i].xyz;
    let o = 9u * i;
    let bary = uniform_triangle(u.y, u.z);
    let cosine = cosine_hemisphere(u.y, u.z);
    let basis = orthonormal_basis(n);
    out[o] = vec4<f32>(concentric_disk(u.y, u.z), bary.xy);
    out[o + 1u] = vec4<f32>(cosine, cosine_hemisphere_pdf(cosine.z));
    out[o + 2u] = vec4<f32>(basis.t, power_heuristic(4.0 * u.y, 4.0 * u.z));
    out[o + 3u] = vec4<f32>(basis.b, bary.z);
    let ns = 1.0 + 300.0 * u.w;
    let lobe = phong_lobe(u.y, u.z, ns);
    out[o + 8u] = vec4<f32>(lobe, phong_lobe_pdf(lobe.z, ns));
    if params.count > 0u {
        let s = em_sample(params.count, u.x, u.y, u.z);
        let d = em_sample_direction(s.normal, u.w, u.y);
        out[o + 4u] = vec4<f32>(s.point, s.pdf);
        out[o + 5u] = vec4<f32>(s.normal, bitcast<f32>(s.tri));
        out[o + 6u] = vec4<f32>(s.radiance, em_pdf(i % params.n_tris));
        out[o + 7u] = d;
    }
}
