//! import shared/dispatch
//! import density/crossing
//! import density/ordered
// What every method derives from its input, on the GPU, for inputs made on the GPU (photon
// flights and camera disks): twin of lumbre_density's problem.rs (`disk_data`, `disk_box`
// and the bounds of `Problem::prepare`). `segment_bounds` and `disk_data` reduce the
// boxes of the segments and disks, the segments' largest power and the box of the disk
// centres into `stats` (exact: minima and maxima); the host reads those few words, derives
// the padding, and `pad_boxes` grows every disk box by it.

struct Params {
    // segments (segment_bounds) or disk slots (disk_data, pad_boxes) to run
    count: u32,
    // the box padding (pad_boxes)
    pad: f32,
    _p0: u32,
    _p1: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
// per segment: start, end (w unused)
@group(0) @binding(1) var<storage, read> seg_geom: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> seg_power: array<vec4<f32>>;
// per disk, two vec4s: centre and radius, normal (as lumbre_density::Disk)
@group(0) @binding(3) var<storage, read> raw_disks: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read_write> disks: array<DiskData>;
// per disk, two vec4s: the box's min corner, then its max corner
@group(0) @binding(5) var<storage, read_write> disk_boxes: array<vec4<f32>>;
// order-preserving words: bounds lo xyz (min), hi xyz (max); the largest power's bits
// (max); the number of disks (set by the caller); the disk centres' lo xyz, hi xyz
@group(0) @binding(6) var<storage, read_write> stats: array<atomic<u32>>;

const WG: u32 = 256u;
// Planes of the disks: PLANE_EPS of problem.rs.
const PLANE_EPS: f32 = 1.52587890625e-05;
const STAT_LO: u32 = 0u;
const STAT_HI: u32 = 3u;
const STAT_POWER: u32 = 6u;
const STAT_DISKS: u32 = 7u;
const STAT_CENTRE_LO: u32 = 8u;
const STAT_CENTRE_HI: u32 = 11u;
const STATS: u32 = 14u;
// Order-preserving words of +infinity and -infinity (the empty box).
const ENC_INF: u32 = 0xff800000u;
const ENC_NEG_INF: u32 = 0x007fffffu;

var<workgroup> wg_stats: array<atomic<u32>, 14>;

fn is_min(k: u32) -> bool {
    return k < STAT_HI || (k >= STAT_CENTRE_LO && k < STAT_CENTRE_HI);
}

// The empty value of word k.
fn empty(k: u32) -> u32 {
    if is_min(k) {
        return ENC_INF;
    }
    if k == STAT_POWER {
        return 0u;
    }
    return ENC_NEG_INF;
}

fn wg_start(lid: u32) {
    if lid < STATS {
        atomicStore(&wg_stats[lid], empty(lid));
    }
    workgroupBarrier();
}

// The workgroup's values into `stats` (word `STAT_DISKS` is left alone).
fn wg_finish(lid: u32) {
    workgroupBarrier();
    if lid < STATS && lid != STAT_DISKS {
        let v = atomicLoad(&wg_stats[lid]);
        if is_min(lid) {
            atomicMin(&stats[lid], v);
        } else {
            atomicMax(&stats[lid], v);
        }
    }
}

fn grow(at: u32, lo: vec3<f32>, hi: vec3<f32>) {
    for (var k = 0u; k < 3u; k++) {
        atomicMin(&wg_stats[at + k], ordered_encode(lo[k]));
        atomicMax(&wg_stats[at + 3u + k], ordered_encode(hi[k]));
    }
}

// Empties every word but the disk count.
@compute @workgroup_size(16)
fn stats_init(@builtin(local_invocation_index) lid: u32) {
    if lid < STATS && lid != STAT_DISKS {
        atomicStore(&stats[lid], empty(lid));
    }
}

// problem.rs's bounds of the segments, and their largest power (over channels).
@compute @workgroup_size(256)
fn segment_bounds(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let s = flat_index(wid, nwg, lid, WG);
    wg_start(lid);
    if s < params.count {
        let a = seg_geom[2u * s].xyz;
        let b = seg_geom[2u * s + 1u].xyz;
        grow(STAT_LO, min(a, b), max(a, b));
        let p = seg_power[s].xyz;
        // Powers are non-negative: their bits order as they do.
        atomicMax(&wg_stats[STAT_POWER], bitcast<u32>(max(max(p.x, p.y), p.z)));
    }
    wg_finish(lid);
}

// problem.rs's disk_data and unpadded disk_box of every disk, with the bounds of the boxes
// and of the centres.
@compute @workgroup_size(256)
fn disk_data(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let i = flat_index(wid, nwg, lid, WG);
    wg_start(lid);
    if i < min(params.count, atomicLoad(&stats[STAT_DISKS])) {
        let c = raw_disks[2u * i].xyz;
        let r = raw_disks[2u * i].w;
        let raw_n = raw_disks[2u * i + 1u].xyz;
        // glam's normalize: times the reciprocal of the length.
        let n = raw_n * (1.0 / length(raw_n));
        let a = abs(c);
        let eps = PLANE_EPS * (max(max(a.x, a.y), a.z) + r);
        disks[i] = DiskData(c, r, n, eps);
        let e = sqrt(max(vec3<f32>(1.0) - n * n, vec3<f32>(0.0))) * r + vec3<f32>(eps);
        disk_boxes[2u * i] = vec4<f32>(c - e, 0.0);
        disk_boxes[2u * i + 1u] = vec4<f32>(c + e, 0.0);
        grow(STAT_LO, c - e, c + e);
        grow(STAT_CENTRE_LO, c, c);
    }
    wg_finish(lid);
}

// Every disk box grown by the padding.
@compute @workgroup_size(256)
fn pad_boxes(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let i = flat_index(wid, nwg, lid, WG);
    if i < min(params.count, atomicLoad(&stats[STAT_DISKS])) {
        let p = vec3<f32>(params.pad);
        disk_boxes[2u * i] = vec4<f32>(disk_boxes[2u * i].xyz - p, 0.0);
        disk_boxes[2u * i + 1u] = vec4<f32>(disk_boxes[2u * i + 1u].xyz + p, 0.0);
    }
}
