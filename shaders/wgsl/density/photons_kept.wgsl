//! import shared/dispatch
// The flights a photon tracing keeps, on the GPU, twin of the filter by bounce in
// lumbre_density's photons.rs (Bounces::keeps): `kept_counts` turns each photon's number of
// flights into the number it keeps, and after a scan of those, `gather` copies the kept
// flights of a batch, in photon then bounce order, into the tracing's one list.

struct Params {
    // photons of the batch
    count: u32,
    // 0: every flight; 1: bounce 0 only (direct); 2: bounces 1 and later (indirect)
    bounces: u32,
    // where the batch's first kept flight goes in dst_geom / dst_power
    dst_base: u32,
    _p0: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
// flights of each photon, and their exclusive scan
@group(0) @binding(1) var<storage, read> counts: array<u32>;
@group(0) @binding(2) var<storage, read> offsets: array<u32>;
// kept flights of each photon, and their exclusive scan
@group(0) @binding(3) var<storage, read_write> kept: array<u32>;
@group(0) @binding(4) var<storage, read> kept_offsets: array<u32>;
// the batch's flights: start (w: bounce as bits), end; power
@group(0) @binding(5) var<storage, read> src_geom: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read> src_power: array<vec4<f32>>;
@group(0) @binding(7) var<storage, read_write> dst_geom: array<vec4<f32>>;
@group(0) @binding(8) var<storage, read_write> dst_power: array<vec4<f32>>;

const WG: u32 = 64u;

fn keeps(bounce: u32) -> bool {
    switch params.bounces {
        case 1u: {
            return bounce == 0u;
        }
        case 2u: {
            return bounce > 0u;
        }
        default: {
            return true;
        }
    }
}

@compute @workgroup_size(64)
fn kept_counts(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let i = flat_index(wid, nwg, lid, WG);
    if i >= params.count {
        return;
    }
    // A photon's flights have bounces 0, 1, ..., counts - 1.
    let c = counts[i];
    var k = 0u;
    switch params.bounces {
        case 1u: {
            k = min(c, 1u);
        }
        case 2u: {
            k = c - min(c, 1u);
        }
        default: {
            k = c;
        }
    }
    kept[i] = k;
}

@compute @workgroup_size(64)
fn gather(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let i = flat_index(wid, nwg, lid, WG);
    if i >= params.count {
        return;
    }
    var out = params.dst_base + kept_offsets[i];
    let first = offsets[i];
    for (var j = 0u; j < counts[i]; j++) {
        let k = first + j;
        let start = src_geom[2u * k];
        if keeps(bitcast<u32>(start.w)) {
            dst_geom[2u * out] = start;
            dst_geom[2u * out + 1u] = src_geom[2u * k + 1u];
            dst_power[out] = src_power[k];
            out += 1u;
        }
    }
}
