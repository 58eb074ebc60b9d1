//! import shared/dispatch
// Scalar copy, one u32 per thread: the roofline of kernels that move one 4-byte element per
// thread (compared with runtime/copy.wgsl, which moves 16 bytes per thread).

@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;

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
