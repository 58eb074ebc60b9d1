//! variants plain, subgroups
//! import shared/lanes_{variant}
//! import shared/block_scan_{variant}
//! import shared/lookback
// Stable stream compaction in one pass: each tile counts its kept elements, finds how many
// earlier tiles kept by decoupled look-back, and writes its kept values (or their indices)
// there. An element is kept if its flag is non-zero, or if a predicate on its value holds.
//
// The tile is four stripes of WG vec4s; the thread of rank r holds vec4 r of each, in
// registers, and one block scan (in rank order) of its four kept counts gives each thread
// where its kept elements go; it stores them there itself. (On an H200, at 2^28 by flag:
// staging the tile's output in shared memory to store it coalesced took 1.96 ms against
// 1.70 for tiles of two stripes; four stripes take 1.51.)

alias Elem = vec4<u32>;
alias Agg = u32;

struct CompactParams {
    n: u32,
    piece: u32,
    num_tiles: u32,
    // Lookback::tuning
    lookback: u32,
    // bit 0: keep by predicate on the value (else by flag); bit 1: output indices (else values)
    mode: u32,
    // predicate: 0 v != 0, 1 v == x, 2 v != x, 3 v < x, 4 v <= x, 5 v > x, 6 v >= x, 7 (v & x) != 0
    op: u32,
    operand: u32,
    // global index of this piece's first element (for index output)
    index_base: u32,
    // global output position where the `out` binding starts
    out_base: u32,
}

@group(0) @binding(0) var<uniform> params: CompactParams;
@group(0) @binding(1) var<storage, read> values: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read> flags: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read_write> state: array<atomic<u32>>;
@group(0) @binding(4) var<storage, read_write> carry: array<u32>;
@group(0) @binding(5) var<storage, read_write> out: array<u32>;

const ITEMS: u32 = 16u;
const TILE: u32 = WG * ITEMS;

fn holds(v: u32) -> bool {
    let x = params.operand;
    switch params.op {
        case 0u: { return v != 0u; }
        case 1u: { return v == x; }
        case 2u: { return v != x; }
        case 3u: { return v < x; }
        case 4u: { return v <= x; }
        case 5u: { return v > x; }
        case 6u: { return v >= x; }
        default: { return (v & x) != 0u; }
    }
}

fn holds4(v: vec4<u32>) -> vec4<bool> {
    return vec4<bool>(holds(v.x), holds(v.y), holds(v.z), holds(v.w));
}

// Keep flags (0/1) of input vec4 `v` (lanes past `n` are 0) and what to write for each.
struct Quad {
    keep: vec4<u32>,
    out: vec4<u32>,
}

fn load_quad(v: u32) -> Quad {
    let e = vec4<u32>(4u * v) + vec4<u32>(0u, 1u, 2u, 3u);
    let inside = e < vec4<u32>(params.n);
    var q = Quad(vec4<u32>(0u), vec4<u32>(0u));
    if 4u * v >= params.n {
        return q;
    }
    let by_value = (params.mode & 1u) != 0u;
    let out_index = (params.mode & 2u) != 0u;
    var vals = vec4<u32>(0u);
    if by_value || !out_index {
        vals = values[v];
    }
    var keep = vec4<bool>(false);
    if by_value {
        keep = holds4(vals);
    } else {
        keep = flags[v] != vec4<u32>(0u);
    }
    q.keep = vec4<u32>(keep & inside);
    q.out = select(vals, vec4<u32>(params.index_base) + e, out_index);
    return q;
}

fn count4(keep: vec4<u32>) -> u32 {
    return (keep.x + keep.y) + (keep.z + keep.w);
}

fn fallback_reduce(j: u32, l: Lanes) -> Agg {
    let vb = j * (TILE / 4u);
    let a = load_quad(vb + l.rank).keep;
    let b = load_quad(vb + WG + l.rank).keep;
    let c = load_quad(vb + 2u * WG + l.rank).keep;
    let d = load_quad(vb + 3u * WG + l.rank).keep;
    let t = block_scan(vec4<u32>(count4(a), count4(b), count4(c), count4(d)), l).total;
    return (t.x + t.y) + (t.z + t.w);
}

// Writes the kept elements of `q` to the output from position `at` on.
fn place(at: u32, q: Quad) {
    var p = at - params.out_base;
    if q.keep.x != 0u {
        out[p] = q.out.x;
        p += 1u;
    }
    if q.keep.y != 0u {
        out[p] = q.out.y;
        p += 1u;
    }
    if q.keep.z != 0u {
        out[p] = q.out.z;
        p += 1u;
    }
    if q.keep.w != 0u {
        out[p] = q.out.w;
    }
}

@compute @workgroup_size(256)
fn compact(ids: LaneIds) {
    let l = lanes(ids);
    let tile = acquire_tile(l);
    let vb = tile * (TILE / 4u);
    // Every vec4 load issued before any is used.
    let q0 = load_quad(vb + l.rank);
    let q1 = load_quad(vb + WG + l.rank);
    let q2 = load_quad(vb + 2u * WG + l.rank);
    let q3 = load_quad(vb + 3u * WG + l.rank);
    let bs = block_scan(vec4<u32>(count4(q0.keep), count4(q1.keep), count4(q2.keep), count4(q3.keep)), l);
    let t = bs.total;
    let total = (t.x + t.y) + (t.z + t.w);
    let prefix = lookback(tile, total, carry[params.piece], params.lookback, l);
    place(prefix + bs.excl.x, q0);
    place(prefix + t.x + bs.excl.y, q1);
    place(prefix + (t.x + t.y) + bs.excl.z, q2);
    place(prefix + (t.x + t.y) + t.z + bs.excl.w, q3);
    if tile == params.num_tiles - 1u && l.lid == 0u {
        carry[params.piece + 1u] = prefix + total;
    }
}
