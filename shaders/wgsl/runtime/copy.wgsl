//! import shared/dispatch
// The roofline: copy vec4<u32> elements; every benchmark reports against it.

@group(0) @binding(0) var<storage, read> src: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<u32>>;

const WG: u32 = 256u;

@compute @workgroup_size(256)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let i = flat_index(wid, nwg, lid, WG);
    if i < arrayLength(&dst) {
        dst[i] = src[i];
    }
}
