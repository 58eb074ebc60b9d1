//! module
//! requires subgroups
// Thread identities for kernels with subgroups. The rank orders threads subgroup by
// subgroup, so a subgroup scan follows rank order whatever the hardware's lane layout.
const WG: u32 = 256u;

struct LaneIds {
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(subgroup_invocation_id) lane: u32,
    @builtin(subgroup_size) size: u32,
    @builtin(subgroup_id) sg: u32,
    @builtin(num_subgroups) nsg: u32,
}

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
    return Lanes(ids.lid, ids.sg * ids.size + ids.lane, ids.lane, ids.size, ids.sg, ids.nsg, ids.wid.x + ids.wid.y * ids.nwg.x);
}
