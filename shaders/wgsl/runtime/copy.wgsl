//! variants vec4, u32
//! import shared/dispatch
//! define vec4: alias Elem = vec4<u32>;
//! define u32: alias Elem = u32;
// The roofline: copy one element per thread (`vec4`: 16 bytes; `u32`: 4 bytes, the roofline
// of kernels that move one 4-byte element per thread); every benchmark reports against it.

@group(0) @binding(0) var<storage, read> src: array<Elem>;
@group(0) @binding(1) var<storage, read_write> dst: array<Elem>;

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
