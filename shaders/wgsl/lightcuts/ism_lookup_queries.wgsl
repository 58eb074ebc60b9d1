//! import shared/dispatch
//! import lightcuts/ism_lookup
// A batch of ISM lookups, one thread each: the test kernel of lightcuts/ism_lookup and the
// GPU twin of IsmAtlas::visibility over a list of queries.

struct Params {
    n: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<uniform> ism: IsmParams;
@group(0) @binding(2) var<storage, read> ism_atlas: array<u32>;
// Per query: VPL position (w: the VPL's index, u32 bits), VPL normal, receiver.
@group(0) @binding(3) var<storage, read> queries: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read_write> visibility: array<f32>;

const WG: u32 = 64u;

@compute @workgroup_size(64)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let i = flat_index(wid, nwg, lid, WG);
    if i >= params.n {
        return;
    }
    let a = queries[3u * i];
    let n = queries[3u * i + 1u];
    let p = queries[3u * i + 2u];
    visibility[i] = ism_visibility(bitcast<u32>(a.w), a.xyz, n.xyz, p.xyz);
}
