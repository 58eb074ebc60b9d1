//! import shared/dispatch
// Variants of the one-u32-per-thread copy, each adding one feature the real kernels use,
// so `lumbre bench roofline --variants` can tell which one costs bandwidth.

struct Params {
    n: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> src: array<u32>;
@group(0) @binding(2) var<storage, read_write> dst: array<u32>;
@group(0) @binding(3) var<storage, read_write> counter: atomic<u32>;

const WG: u32 = 256u;
var<workgroup> staged: array<u32, 256>;

// The length from a uniform instead of arrayLength.
@compute @workgroup_size(256)
fn uniform_n(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let i = flat_index(wid, nwg, lid, WG);
    if i < params.n {
        dst[i] = src[i];
    }
}

// ... plus a workgroup barrier.
@compute @workgroup_size(256)
fn barrier(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let i = flat_index(wid, nwg, lid, WG);
    var v = 0u;
    if i < params.n {
        v = src[i];
    }
    workgroupBarrier();
    if i < params.n {
        dst[i] = v;
    }
}

// ... staged through shared memory (read by another thread).
@compute @workgroup_size(256)
fn shared_mem(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let i = flat_index(wid, nwg, lid, WG);
    if i < params.n {
        staged[lid] = src[i];
    }
    workgroupBarrier();
    let j = flat_workgroup(wid, nwg) * WG + (lid ^ 1u);
    if j < params.n {
        dst[j] = staged[lid];
    }
}

// ... with an atomic add on a branch that is never taken.
@compute @workgroup_size(256)
fn atomic_branch(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let i = flat_index(wid, nwg, lid, WG);
    if i < params.n {
        let v = src[i];
        if v == 0xdeadbeefu && params.n == 7u {
            atomicAdd(&counter, 1u);
        }
        dst[i] = v;
    }
}

// ... four elements per thread, strided by the workgroup (the scan's load pattern, scalar).
@compute @workgroup_size(256)
fn four_strided(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let base = flat_workgroup(wid, nwg) * WG * 4u + lid;
    for (var k = 0u; k < 4u; k++) {
        let i = base + k * WG;
        if i < params.n {
            dst[i] = src[i];
        }
    }
}
