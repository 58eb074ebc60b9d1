//! import shared/dispatch
//! import density/ordered
// Radii from the nearest photon hits on the GPU, twin of lumbre_density's nearest_radii
// (nearest.rs) for disks and flights that live on the GPU: each disk's radius becomes the
// distance to the k-th nearest flight end, clamped to [r_min, r_max]. Only ends within
// r_max matter (a farther k-th end clamps to r_max), so the ends are bucketed in a grid of
// cells at least r_max wide (`end_bounds`, `cell_keys`, then a radix sort of the keys by
// lumbre_compact), and `radii` looks at the 27 cells around each disk: it counts the ends
// within r_max, and if there are k of them, selects the k-th smallest squared distance
// exactly, four bits at a time (squared distances order as their bits do).

struct Params {
    // ends (end_bounds, cell_keys: this piece's) or disk slots (radii)
    count: u32,
    k: u32,
    r_min: f32,
    r_max: f32,
    // the piece's first end (cell_keys)
    first: u32,
    // all the ends (radii)
    ends: u32,
    _p1: u32,
    _p2: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
// per flight: start, end (w unused): the piece's flights
@group(0) @binding(1) var<storage, read> seg_geom: array<vec4<f32>>;
// order-preserving words of the ends' box: lo xyz (min), hi xyz (max)
@group(0) @binding(2) var<storage, read_write> bounds: array<atomic<u32>>;
// per end: its cell, then sorted
@group(0) @binding(3) var<storage, read_write> keys: array<u32>;
// per end: its position
@group(0) @binding(4) var<storage, read_write> ends: array<vec4<f32>>;
// per sorted key: its end
@group(0) @binding(5) var<storage, read> order: array<u32>;
// per disk, two vec4s: centre and radius, normal (as lumbre_density::Disk)
@group(0) @binding(6) var<storage, read_write> raw_disks: array<vec4<f32>>;
@group(0) @binding(7) var<storage, read> disk_count: array<u32>;

const WG: u32 = 256u;
const ENC_INF: u32 = 0xff800000u;
const ENC_NEG_INF: u32 = 0x007fffffu;
const MIN_POSITIVE: f32 = 1.17549435e-38;
// Cells per axis at most: keys hold 30 bits.
const MAX_CELLS: u32 = 1024u;

var<workgroup> wg_bounds: array<atomic<u32>, 6>;

struct Grid {
    lo: vec3<f32>,
    // cell width: at least r_max (with a margin for rounding), at most 1024 cells per axis
    h: f32,
    dims: vec3<u32>,
}

fn grid() -> Grid {
    let lo = vec3<f32>(ordered_decode(atomicLoad(&bounds[0])), ordered_decode(atomicLoad(&bounds[1])), ordered_decode(atomicLoad(&bounds[2])));
    let hi = vec3<f32>(ordered_decode(atomicLoad(&bounds[3])), ordered_decode(atomicLoad(&bounds[4])), ordered_decode(atomicLoad(&bounds[5])));
    let ext = max(hi - lo, vec3<f32>(0.0));
    let h = max(params.r_max * 1.0009765625, max(max(ext.x, ext.y), ext.z) / 1000.0);
    let dims = min(vec3<u32>(ext / h) + vec3<u32>(1u), vec3<u32>(MAX_CELLS));
    return Grid(lo, h, dims);
}

fn cell_of(g: Grid, p: vec3<f32>) -> vec3<i32> {
    return vec3<i32>(floor((p - g.lo) / g.h));
}

fn key_of(g: Grid, c: vec3<u32>) -> u32 {
    return c.x + g.dims.x * (c.y + g.dims.y * c.z);
}

@compute @workgroup_size(16)
fn bounds_init(@builtin(local_invocation_index) lid: u32) {
    if lid < 6u {
        atomicStore(&bounds[lid], select(ENC_NEG_INF, ENC_INF, lid < 3u));
    }
}

@compute @workgroup_size(256)
fn end_bounds(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let s = flat_index(wid, nwg, lid, WG);
    if lid < 6u {
        atomicStore(&wg_bounds[lid], select(ENC_NEG_INF, ENC_INF, lid < 3u));
    }
    workgroupBarrier();
    if s < params.count {
        let p = seg_geom[2u * s + 1u].xyz;
        for (var a = 0u; a < 3u; a++) {
            atomicMin(&wg_bounds[a], ordered_encode(p[a]));
            atomicMax(&wg_bounds[3u + a], ordered_encode(p[a]));
        }
    }
    workgroupBarrier();
    if lid < 6u {
        let v = atomicLoad(&wg_bounds[lid]);
        if lid < 3u {
            atomicMin(&bounds[lid], v);
        } else {
            atomicMax(&bounds[lid], v);
        }
    }
}

@compute @workgroup_size(256)
fn cell_keys(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let s = flat_index(wid, nwg, lid, WG);
    if s >= params.count {
        return;
    }
    let g = grid();
    let p = seg_geom[2u * s + 1u].xyz;
    let c = vec3<u32>(clamp(cell_of(g, p), vec3<i32>(0), vec3<i32>(g.dims) - vec3<i32>(1)));
    keys[params.first + s] = key_of(g, c);
    ends[params.first + s] = vec4<f32>(p, 0.0);
}

// The first sorted position whose key is at least `key`.
fn lower_bound(key: u32, n: u32) -> u32 {
    var lo = 0u;
    var hi = n;
    while lo < hi {
        let mid = (lo + hi) / 2u;
        if keys[mid] < key {
            lo = mid + 1u;
        } else {
            hi = mid;
        }
    }
    return lo;
}

@compute @workgroup_size(64)
fn radii(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let i = flat_index(wid, nwg, lid, 64u);
    if i >= min(params.count, disk_count[0]) {
        return;
    }
    let n = params.ends;
    let g = grid();
    let c = raw_disks[2u * i].xyz;
    let cc = cell_of(g, c);
    let top = vec3<i32>(g.dims) - vec3<i32>(1);
    // The runs of sorted ends in the cells around the disk: a row of up to three cells
    // along x is one run of keys.
    var runs: array<vec2<u32>, 9>;
    var m = 0u;
    let x0 = max(cc.x - 1, 0);
    let x1 = min(cc.x + 1, top.x);
    for (var dz = -1; dz <= 1; dz++) {
        for (var dy = -1; dy <= 1; dy++) {
            let y = cc.y + dy;
            let z = cc.z + dz;
            if x0 <= x1 && y >= 0 && y <= top.y && z >= 0 && z <= top.z {
                let a = key_of(g, vec3<u32>(u32(x0), u32(y), u32(z)));
                let b = key_of(g, vec3<u32>(u32(x1), u32(y), u32(z)));
                runs[m] = vec2<u32>(lower_bound(a, n), lower_bound(b + 1u, n));
                m += 1u;
            }
        }
    }
    let limit = bitcast<u32>(params.r_max * params.r_max);
    // Squared distances within r_max, as bits, four at a time from the top: `prefix` holds
    // the bits chosen so far (under `mask`), `need` how many ends below the prefix's range
    // are still to pass.
    var prefix = 0u;
    var mask = 0u;
    var need = params.k;
    var within = 0u;
    for (var shift = 32; shift > 0; shift -= 4) {
        var counts: array<u32, 16>;
        for (var r = 0u; r < m; r++) {
            for (var j = runs[r].x; j < runs[r].y; j++) {
                let d = ends[order[j]].xyz - c;
                let b = bitcast<u32>(d.x * d.x + d.y * d.y + d.z * d.z);
                if b <= limit && (b & mask) == prefix {
                    counts[(b >> u32(shift - 4)) & 15u] += 1u;
                }
            }
        }
        if shift == 32 {
            for (var t = 0u; t < 16u; t++) {
                within += counts[t];
            }
            if within < params.k {
                break;
            }
        }
        var digit = 0u;
        loop {
            if counts[digit] >= need || digit == 15u {
                break;
            }
            need -= counts[digit];
            digit += 1u;
        }
        prefix |= digit << u32(shift - 4);
        mask |= 15u << u32(shift - 4);
    }
    var radius = params.r_max;
    if within >= params.k {
        radius = sqrt(bitcast<f32>(prefix));
    }
    raw_disks[2u * i].w = clamp(radius, max(params.r_min, MIN_POSITIVE), params.r_max);
}
