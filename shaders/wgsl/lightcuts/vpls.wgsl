//! variants kd, bvh
//! import shared/dispatch
//! define const KD_SHORT_STACK: u32 = 16u;
//! import kd: kdtree/traverse
//! import bvh: kdtree/bvh
//! import raytrace/scene_bindings
//! import shared/emitters
//! import lightcuts/light
//! import shared/material
// Virtual point lights (lumbre_lightcuts::vpls, step by step), one thread per direct VPL
// and per light path: each fills its slots (direct VPL k: slot k; bounce b of path k:
// slot direct + k * bounces + b) and flags the filled ones; `gather` then packs the
// flagged slots in order from the indices a compaction of the flags gave. Paths end by
// Russian roulette after each bounce b >= rr_depth, as the path tracer's do.

struct Params {
    bmin: vec3<f32>,
    direct: u32,
    bmax: vec3<f32>,
    paths: u32,
    eps: f32,
    seed: u32,
    bounces: u32,
    // bit 0: restart traversal; bit 1: watertight test
    flags: u32,
    // +infinity, passed at run time (a constant folded into the traversal may round
    // differently from the CPU's)
    far: f32,
    emitters: u32,
    // the seed of the direct VPLs
    direct_seed: u32,
    // Russian roulette after bounces b >= rr_depth, survival clamped to [survive_min, survive_max]
    rr_depth: u32,
    survive_min: f32,
    survive_max: f32,
    _pad: vec2<u32>,
}


@group(0) @binding(0) var<uniform> params: Params;
// bindings 1 to 6: the scene (raytrace/scene_bindings)
@group(0) @binding(7) var<storage, read> em_emitters: array<Emitter>;
@group(0) @binding(8) var<storage, read> em_cdf: array<f32>;
@group(0) @binding(9) var<storage, read> em_index: array<u32>;
// three vec4 per slot: position, normal, intensity
@group(0) @binding(10) var<storage, read_write> slots: array<vec4<f32>>;
@group(0) @binding(11) var<storage, read_write> filled: array<u32>;
// gather: the filled slots' indices (a compaction's output) and their count
@group(0) @binding(12) var<storage, read> picked: array<u32>;
@group(0) @binding(13) var<storage, read> picked_count: array<u32>;
@group(0) @binding(14) var<storage, read_write> vpls: array<vec4<f32>>;

const WG: u32 = 256u;
const KIND_DIFFUSE: u32 = 0u;
const KIND_PHONG: u32 = 1u;
const KIND_EMITTER: u32 = 4u;
// lumbre_lightcuts::DIM_ROULETTE: 5 + 2 * MAX_BOUNCES
const DIM_ROULETTE: u32 = 133u;

// lumbre_lightcuts::vpl_uniform
fn vpl_uniform(seed: u32, index: u32, dim: u32) -> f32 {
    return hash_f32(hash_u32(index) ^ hash_u32(seed * 0x9e3779b9u + dim * 0x85ebca6bu));
}

fn put(slot: u32, position: vec3<f32>, normal: vec3<f32>, intensity: vec3<f32>) {
    slots[3u * slot] = vec4<f32>(position, 0.0);
    slots[3u * slot + 1u] = vec4<f32>(normal, 0.0);
    slots[3u * slot + 2u] = vec4<f32>(intensity, 0.0);
    filled[slot] = 1u;
}

fn direct_vpl(k: u32) {
    let seed = params.direct_seed;
    let s = em_sample(params.emitters, vpl_uniform(seed, k, 0u), vpl_uniform(seed, k, 1u), vpl_uniform(seed, k, 2u));
    if !(s.pdf > 0.0) {
        return;
    }
    put(k, s.point + s.normal * params.eps, s.normal, s.radiance * (1.0 / (s.pdf * f32(params.direct))));
}

fn path_vpls(k: u32) {
    let seed = params.seed;
    let s = em_sample(params.emitters, vpl_uniform(seed, k, 0u), vpl_uniform(seed, k, 1u), vpl_uniform(seed, k, 2u));
    if !(s.pdf > 0.0) {
        return;
    }
    var dir = em_sample_direction(s.normal, vpl_uniform(seed, k, 3u), vpl_uniform(seed, k, 4u)).xyz;
    var flux = s.radiance * (PI / (s.pdf * f32(params.paths)));
    var throughput = vec3<f32>(1.0);
    var origin = s.point + s.normal * params.eps;
    let f = params.flags;
    for (var b = 0u; b < params.bounces; b++) {
        let hit = tree_query(ray_prep(origin, dir), f, false, params.bmin, params.bmax, 0.0, params.far);
        if hit.tri == KD_NONE {
            break;
        }
        let a = kd_vertex(hit.tri, 0u);
        let point = origin + dir * hit.t;
        var n = unit(cross(kd_vertex(hit.tri, 1u) - a, kd_vertex(hit.tri, 2u) - a));
        if dot3(n, dir) > 0.0 {
            n = -n;
        }
        let m = materials[tri_info[hit.tri].w];
        let diffuse = m.kind == KIND_DIFFUSE || m.kind == KIND_PHONG || m.kind == KIND_EMITTER;
        if !diffuse || all(m.kd == vec3<f32>(0.0)) {
            break;
        }
        let position = point + n * params.eps;
        put(params.direct + k * params.bounces + b, position, n, m.kd * (flux * INV_PI));
        flux *= m.kd;
        throughput *= m.kd;
        if b >= params.rr_depth {
            let survive = clamp(max(max(throughput.x, throughput.y), throughput.z), params.survive_min, params.survive_max);
            if vpl_uniform(seed, k, DIM_ROULETTE + b) >= survive {
                break;
            }
            flux /= survive;
            throughput /= survive;
        }
        dir = em_sample_direction(n, vpl_uniform(seed, k, 5u + 2u * b), vpl_uniform(seed, k, 6u + 2u * b)).xyz;
        origin = position;
    }
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let i = flat_index(wid, nwg, lid, WG);
    if i < params.direct {
        direct_vpl(i);
    } else if i - params.direct < params.paths {
        path_vpls(i - params.direct);
    }
}

@compute @workgroup_size(256)
fn gather(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let j = flat_index(wid, nwg, lid, WG);
    if j >= picked_count[0] {
        return;
    }
    let s = picked[j];
    vpls[3u * j] = slots[3u * s];
    vpls[3u * j + 1u] = slots[3u * s + 1u];
    vpls[3u * j + 2u] = slots[3u * s + 2u];
}
