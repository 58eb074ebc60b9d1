//! variants plain, subgroups
//! import shared/lanes_{variant}
//! import shared/block_scan_{variant}
//! import shared/lookback
//! import shared/lookback_walk_{variant}
// Stable stream compaction in one pass: each tile counts its kept elements, finds how many
// earlier tiles kept by decoupled look-back, and writes its kept values (or their indices)
// there, coalesced through shared memory. An element is kept if its flag is non-zero, or if
// a predicate on its value holds.

alias Elem = u32;

struct CompactParams {
    n: u32,
    piece: u32,
    num_tiles: u32,
    spin_limit: u32,
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
@group(0) @binding(1) var<storage, read> values: array<u32>;
@group(0) @binding(2) var<storage, read> flags: array<u32>;
@group(0) @binding(3) var<storage, read_write> state: array<atomic<u32>>;
@group(0) @binding(4) var<storage, read_write> carry: array<u32>;
@group(0) @binding(5) var<storage, read_write> out: array<u32>;

const ITEMS: u32 = 8u;
const TILE: u32 = WG * ITEMS;

var<workgroup> cm_val: array<u32, TILE + TILE / 32u>;
var<workgroup> cm_keep: array<u32, TILE + TILE / 32u>;

fn pad(i: u32) -> u32 {
    return i + (i >> 5u);
}

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

fn keep(g: u32) -> u32 {
    if (params.mode & 1u) != 0u {
        return select(0u, 1u, holds(values[g]));
    }
    return select(0u, 1u, flags[g] != 0u);
}

fn fallback_reduce(j: u32, l: Lanes) -> Elem {
    var c = 0u;
    for (var k = 0u; k < ITEMS; k++) {
        let g = j * TILE + k * WG + l.lid;
        if g < params.n {
            c += keep(g);
        }
    }
    return block_scan(c, l).total;
}

@compute @workgroup_size(256)
fn compact(ids: LaneIds) {
    let l = lanes(ids);
    let tile = acquire_tile(l);
    let base = tile * TILE;
    let out_index = (params.mode & 2u) != 0u;
    for (var k = 0u; k < ITEMS; k++) {
        let i = k * WG + l.lid;
        let g = base + i;
        var kp = 0u;
        var v = 0u;
        if g < params.n {
            kp = keep(g);
            v = select(values[g], params.index_base + g, out_index);
        }
        cm_val[pad(i)] = v;
        cm_keep[pad(i)] = kp;
    }
    workgroupBarrier();
    var vals: array<u32, ITEMS>;
    var kept: array<u32, ITEMS>;
    var count = 0u;
    for (var k = 0u; k < ITEMS; k++) {
        let i = pad(l.rank * ITEMS + k);
        vals[k] = cm_val[i];
        kept[k] = cm_keep[i];
        count += kept[k];
    }
    let bs = block_scan(count, l);
    let prefix = lookback(tile, bs.total, carry[params.piece], params.spin_limit, l);
    // Everyone has read its chunk (block_scan ends with a barrier): reuse cm_val for output.
    var at = bs.excl;
    for (var k = 0u; k < ITEMS; k++) {
        if kept[k] != 0u {
            cm_val[pad(at)] = vals[k];
            at += 1u;
        }
    }
    workgroupBarrier();
    for (var k = 0u; k < ITEMS; k++) {
        let i = k * WG + l.lid;
        if i < bs.total {
            out[prefix + i - params.out_base] = cm_val[pad(i)];
        }
    }
    if tile == params.num_tiles - 1u && l.lid == 0u {
        carry[params.piece + 1u] = prefix + bs.total;
    }
}
