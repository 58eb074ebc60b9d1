//! import shared/dispatch
// Progressive density estimation on the GPU, twin of lumbre_density's Progressive
// (progressive.rs) in f32 where the CPU keeps f64: with N the crossings kept so far, M this
// pass's, R the radius it gathered with and tau the flux so far, N' = N + alpha M,
// R'^2 = R^2 N' / (N + M) and tau' = (tau + Phi) R'^2 / R^2, where Phi is the pass's power
// sum times its photons. The new radius goes straight into the disks the next pass reads.
// `count_pairs` adds a pass's crossings to a 64-bit total (a statistic read at the end).

struct Params {
    // disk slots to run
    count: u32,
    alpha: f32,
    // photons of this pass
    photons: f32,
    // 2^-k: the value of one unit of the fixed-point sums
    unit: f32,
}

@group(0) @binding(0) var<uniform> params: Params;
// eight words per disk: count, spare, low and high words of r, g, b
@group(0) @binding(1) var<storage, read> acc: array<u32>;
// per disk, two vec4s: centre and radius, normal (as lumbre_density::Disk)
@group(0) @binding(2) var<storage, read_write> raw_disks: array<vec4<f32>>;
// per disk: N (x), tau (yzw)
@group(0) @binding(3) var<storage, read_write> state: array<vec4<f32>>;
// the number of disks
@group(0) @binding(4) var<storage, read> disk_count: array<u32>;
// (low, high) words of the crossings counted over every pass
@group(0) @binding(5) var<storage, read_write> pairs: array<atomic<u32>>;

const WG: u32 = 256u;

// A 64-bit fixed-point sum in f32 units.
fn sum(lo: u32, hi: u32) -> f32 {
    return (f32(hi) * 4294967296.0 + f32(lo)) * params.unit;
}

@compute @workgroup_size(256)
fn add_pass(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let i = flat_index(wid, nwg, lid, WG);
    if i >= min(params.count, disk_count[0]) {
        return;
    }
    let a = 8u * i;
    let m = f32(acc[a]);
    let phi = vec3<f32>(sum(acc[a + 2u], acc[a + 3u]), sum(acc[a + 4u], acc[a + 5u]), sum(acc[a + 6u], acc[a + 7u])) * params.photons;
    let s = state[i];
    let n = s.x;
    // No crossing: the radius and what was kept stay.
    var shrink = 1.0;
    if m > 0.0 {
        shrink = (n + params.alpha * m) / (n + m);
    }
    state[i] = vec4<f32>(n + params.alpha * m, (s.yzw + phi) * shrink);
    raw_disks[2u * i].w = raw_disks[2u * i].w * sqrt(shrink);
}

var<workgroup> wg_pairs: array<atomic<u32>, 2>;

// Adds m to the 64-bit count at words (lo, hi): a carry out of lo goes into hi.
fn add64_wg(m: u32) {
    let old = atomicAdd(&wg_pairs[0], m);
    if old + m < old {
        atomicAdd(&wg_pairs[1], 1u);
    }
}

@compute @workgroup_size(256)
fn count_pairs(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let i = flat_index(wid, nwg, lid, WG);
    if lid < 2u {
        atomicStore(&wg_pairs[lid], 0u);
    }
    workgroupBarrier();
    if i < min(params.count, disk_count[0]) {
        add64_wg(acc[8u * i]);
    }
    workgroupBarrier();
    if lid == 0u {
        let lo = atomicLoad(&wg_pairs[0]);
        let old = atomicAdd(&pairs[0], lo);
        atomicAdd(&pairs[1], atomicLoad(&wg_pairs[1]) + select(0u, 1u, old + lo < old));
    }
}
