//! module
// Dispatches of more than 65535 workgroups are folded into a 2D grid by the runtime
// (lumbre_gpu::Dispatch); this recovers the linear workgroup index.
fn flat_workgroup(wid: vec3<u32>, num_wg: vec3<u32>) -> u32 {
    return wid.x + wid.y * num_wg.x;
}

// Linear invocation index of a 1D-style kernel with workgroup size `wg_size`.
fn flat_index(wid: vec3<u32>, num_wg: vec3<u32>, lid: u32, wg_size: u32) -> u32 {
    return flat_workgroup(wid, num_wg) * wg_size + lid;
}
