//! module
// Thread identities for kernels that run without subgroups: the rank is the local index.
const WG: u32 = 256u;

struct LaneIds {
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
}

// lid: local index; rank: position in the workgroup's logical order (chunk ownership);
// lane/size/sg/nsg: subgroup lane, size, id and count (trivial here); wg: flat workgroup index.
struct Lanes {
    lid: u32,
    rank: u32,
    lane: u32,
    size: u32,
    sg: u32,
    nsg: u32,
    wg: u32,
}

fn lanes(ids: LaneIds) -> Lanes {
    return Lanes(ids.lid, ids.lid, 0u, 1u, 0u, 1u, ids.wid.x + ids.wid.y * ids.nwg.x);
}
