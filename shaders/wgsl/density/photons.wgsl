//! variants kd, bvh
//! import shared/dispatch
//! define const KD_SHORT_STACK: u32 = 16u;
//! import kd: kdtree/traverse
//! import bvh: kdtree/bvh
//! import raytrace/scene_bindings
//! import shared/sampling
//! import shared/emitters
//! import shared/material
// Photon tracing, twin of lumbre_density's photons.rs: one thread per photon, emitted by
// power, bounced diffusely with Russian roulette. Runs twice with the same numbers: `count`
// stores each photon's number of flights, and after a scan of those, `trace` writes the
// flights from the photon's offset (so they come out in photon order, then bounce order).

struct Params {
    // the kd-tree's box, and the photons of this batch
    bmin: vec3<f32>,
    count: u32,
    bmax: vec3<f32>,
    max_bounces: u32,
    // the box escaping photons are cut at
    escape_lo: vec3<f32>,
    seed: u32,
    escape_hi: vec3<f32>,
    em_count: u32,
    // offset of secondary ray origins along the normal
    eps: f32,
    // the batch's first photon (its number in the whole run), and the run's photons (each
    // carries 1 / photons of the emitted power)
    first: u32,
    photons: u32,
    _pad: u32,
}


@group(0) @binding(0) var<uniform> params: Params;
// bindings 1 to 6: the scene (raytrace/scene_bindings)
@group(0) @binding(7) var<storage, read> em_emitters: array<Emitter>;
@group(0) @binding(8) var<storage, read> em_cdf: array<f32>;
@group(0) @binding(9) var<storage, read> em_index: array<u32>;
// flights per photon (count), then their exclusive scan (trace)
@group(0) @binding(10) var<storage, read_write> counts: array<u32>;
// per flight: start (w: bounce as bits), end; and power
@group(0) @binding(11) var<storage, read_write> seg_geom: array<vec4<f32>>;
@group(0) @binding(12) var<storage, read_write> seg_power: array<vec4<f32>>;

const WG: u32 = 64u;
const DIM_PICK: u32 = 0u;
const DIM_POINT: u32 = 1u;
const DIM_EMIT_DIR: u32 = 3u;
const DIM_ROULETTE: u32 = 5u;
const DIM_BOUNCE_DIR: u32 = 6u;

fn photon_random(photon: u32, bounce: u32, dim: u32) -> f32 {
    return hash_f32(hash_u32(photon ^ hash_u32(params.seed)) ^ hash_u32(bounce * 8u + dim));
}

// photons.rs's cosine_about: normalize(n + s), s uniform on the sphere; no tangent frame.
fn cosine_about(n: vec3<f32>, u: f32, v: f32) -> vec3<f32> {
    let d = concentric_disk(u, v);
    let r2 = d.x * d.x + d.y * d.y;
    let scale = 2.0 * sqrt(max(1.0 - r2, 0.0));
    let w = n + vec3<f32>(d.x * scale, d.y * scale, 1.0 - 2.0 * r2);
    let len = length(w);
    if len > 1e-6 {
        return w / len;
    }
    return n;
}

fn exit_distance(o: vec3<f32>, d: vec3<f32>) -> f32 {
    var t = 3.40282347e38;
    for (var k = 0u; k < 3u; k++) {
        if d[k] > 0.0 {
            t = min(t, (params.escape_hi[k] - o[k]) / d[k]);
        } else if d[k] < 0.0 {
            t = min(t, (params.escape_lo[k] - o[k]) / d[k]);
        }
    }
    return max(t, 0.0);
}

fn normalize_or_zero(v: vec3<f32>) -> vec3<f32> {
    let l = length(v);
    if l > 0.0 {
        return v / l;
    }
    return vec3<f32>(0.0);
}

fn shade_normal(tri: u32, u: f32, v: f32, ng: vec3<f32>) -> vec3<f32> {
    let info = tri_info[tri];
    if info.x == KD_NONE {
        return ng;
    }
    let s = normals[info.x].xyz * (1.0 - u - v) + normals[info.y].xyz * u + normals[info.z].xyz * v;
    let len = length(s);
    if len > 0.0 {
        return s / len;
    }
    return ng;
}

fn put(k: u32, start: vec3<f32>, end: vec3<f32>, power: vec3<f32>, bounce: u32) {
    seg_geom[2u * k] = vec4<f32>(start, bitcast<f32>(bounce));
    seg_geom[2u * k + 1u] = vec4<f32>(end, 0.0);
    seg_power[k] = vec4<f32>(power, 0.0);
}

// Photon i's flights: counted, or written from `at`. Returns how many.
fn trace_photon(local: u32, write: bool, at: u32) -> u32 {
    let i = params.first + local;
    if params.em_count == 0u {
        return 0u;
    }
    let s = em_sample(params.em_count, photon_random(i, 0u, DIM_PICK), photon_random(i, 0u, DIM_POINT), photon_random(i, 0u, DIM_POINT + 1u));
    if s.pdf <= 0.0 {
        return 0u;
    }
    var dir = cosine_about(s.normal, photon_random(i, 0u, DIM_EMIT_DIR), photon_random(i, 0u, DIM_EMIT_DIR + 1u));
    var power = s.radiance * (PI / (s.pdf * f32(params.photons)));
    var start = s.point;
    var origin = s.point + s.normal * params.eps;
    var n_out = 0u;
    for (var bounce = 0u; bounce < params.max_bounces; bounce++) {
        let hit = tree_query(ray_prep(origin, dir), 2u, false, params.bmin, params.bmax, 0.0, bitcast<f32>(0x7f800000u));
        if hit.tri == KD_NONE {
            if write {
                put(at + n_out, start, origin + dir * exit_distance(origin, dir), power, bounce);
            }
            return n_out + 1u;
        }
        let end = origin + dir * hit.t;
        if write {
            put(at + n_out, start, end, power, bounce);
        }
        n_out += 1u;
        let next = bounce + 1u;
        if next >= params.max_bounces {
            break;
        }
        let info = tri_info[hit.tri];
        let kd = clamp(materials[info.w].kd, vec3<f32>(0.0), vec3<f32>(1.0));
        let q = max(max(kd.x, kd.y), kd.z);
        if photon_random(i, next, DIM_ROULETTE) >= q {
            break;
        }
        power *= kd / q;
        let p0 = kd_vertex(hit.tri, 0u);
        var ng = normalize_or_zero(cross(kd_vertex(hit.tri, 1u) - p0, kd_vertex(hit.tri, 2u) - p0));
        var n = shade_normal(hit.tri, hit.u, hit.v, ng);
        if dot(ng, dir) > 0.0 {
            ng = -ng;
        }
        if dot(n, ng) < 0.0 {
            n = -n;
        }
        let d = cosine_about(n, photon_random(i, next, DIM_BOUNCE_DIR), photon_random(i, next, DIM_BOUNCE_DIR + 1u));
        if dot(d, ng) <= 0.0 {
            break;
        }
        dir = d;
        start = end;
        origin = end + ng * params.eps;
    }
    return n_out;
}

@compute @workgroup_size(64)
fn count(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let i = flat_index(wid, nwg, lid, WG);
    if i < params.count {
        counts[i] = trace_photon(i, false, 0u);
    }
}

@compute @workgroup_size(64)
fn trace(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let i = flat_index(wid, nwg, lid, WG);
    if i < params.count {
        trace_photon(i, true, counts[i]);
    }
}
