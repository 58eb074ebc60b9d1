//! module
// Single-pass prefix scan: each workgroup scans a tile of TILE elements, gets the tile's
// prefix by decoupled look-back, and writes the result. Inputs longer than one storage
// binding are scanned piece by piece; `carry[piece]` holds the total of earlier pieces and
// the last tile writes `carry[piece + 1]`.
// The includer defines `alias Val` (u32 or f32) and imports lanes, block_scan and lookback.
//
// The tile is four stripes of WG vec4s; the thread of rank r holds vec4 r of every stripe,
// in registers, from load to store. One block scan (in rank order) of the four stripes'
// per-thread sums, as a vec4, places every vec4: no staging of the tile through shared
// memory, whose round trip cost more than the copy of the same bytes.

alias Elem = vec4<Val>;
alias Agg = Val;

struct ScanParams {
    n: u32,
    piece: u32,
    inclusive: u32,
    num_tiles: u32,
    // Lookback::tuning
    lookback: u32,
}

@group(0) @binding(0) var<uniform> params: ScanParams;
@group(0) @binding(1) var<storage, read> src: array<vec4<Val>>;
@group(0) @binding(2) var<storage, read_write> dst: array<vec4<Val>>;
@group(0) @binding(3) var<storage, read_write> state: array<atomic<u32>>;
@group(0) @binding(4) var<storage, read_write> carry: array<Val>;
// Reduce-then-scan: the tiles' totals (`reduce` writes them) or, once scanned, their
// prefixes (`scan_from_prefixes` reads them).
@group(0) @binding(5) var<storage, read_write> tile_values: array<Val>;

const ITEMS: u32 = 16u;
const TILE: u32 = WG * ITEMS;

// Input vec4 `v` of this piece; lanes past `n` read as zero (buffers are padded to vec4s).
fn load4(v: u32) -> vec4<Val> {
    let e = 4u * v;
    if e + 3u < params.n {
        return src[v];
    }
    var r = vec4<Val>();
    if e < params.n {
        let x = src[v];
        r = select(r, x, vec4<u32>(e) + vec4<u32>(0u, 1u, 2u, 3u) < vec4<u32>(params.n));
    }
    return r;
}

fn store4(v: u32, x: vec4<Val>) {
    let e = 4u * v;
    if e + 3u < params.n {
        dst[v] = x;
    } else {
        for (var c = 0u; c < 4u; c++) {
            if e + c < params.n {
                dst[v][c] = x[c];
            }
        }
    }
}

// Exclusive prefix sums within a vec4, and its total as the last lane of `excl4(x) + x`.
fn excl4(x: vec4<Val>) -> vec4<Val> {
    let a = x.x + x.y;
    return vec4<Val>(Val(), x.x, a, a + x.z);
}

fn sum4(x: vec4<Val>) -> Val {
    return excl4(x).w + x.w;
}

// The tile's total from the block scan's per-stripe totals (the same order everywhere, so
// a fallback reduction of a tile equals what the tile publishes).
fn tile_total(t: vec4<Val>) -> Val {
    return (t.x + t.y) + (t.z + t.w);
}

// The four stripe sums of the vec4s a thread holds.
fn stripe_sums(a: vec4<Val>, b: vec4<Val>, c: vec4<Val>, d: vec4<Val>) -> vec4<Val> {
    return vec4<Val>(sum4(a), sum4(b), sum4(c), sum4(d));
}

// Sum of tile j's input, by the whole workgroup (look-back fallback).
fn fallback_reduce(j: u32, l: Lanes) -> Agg {
    let vb = j * (TILE / 4u);
    let a = load4(vb + l.rank);
    let b = load4(vb + WG + l.rank);
    let c = load4(vb + 2u * WG + l.rank);
    let d = load4(vb + 3u * WG + l.rank);
    return tile_total(block_scan(stripe_sums(a, b, c, d), l).total);
}

// Exclusive (or inclusive) scan of vec4 `x` whose first element is preceded by `before`.
fn place(before: Val, x: vec4<Val>) -> vec4<Val> {
    let e = vec4<Val>(before) + excl4(x);
    if params.inclusive != 0u {
        return e + x;
    }
    return e;
}

// Four vec4 loads per thread, all issued before any is used (one 4-byte load in flight per
// thread cannot cover the memory latency).
struct Loaded {
    x0: vec4<Val>,
    x1: vec4<Val>,
    x2: vec4<Val>,
    x3: vec4<Val>,
}

fn load_tile(vb: u32, l: Lanes) -> Loaded {
    return Loaded(load4(vb + l.rank), load4(vb + WG + l.rank), load4(vb + 2u * WG + l.rank), load4(vb + 3u * WG + l.rank));
}

// Writes the tile from its loaded vec4s, their block scan and what precedes the tile.
fn store_tile(vb: u32, x: Loaded, bs: BlockScan, prefix: Val, l: Lanes) {
    // What precedes each stripe in the tile, then this thread's vec4 in it.
    let t = bs.total;
    let stripe = vec4<Val>(Val(), t.x, t.x + t.y, (t.x + t.y) + t.z);
    let before = vec4<Val>(prefix) + stripe + bs.excl;
    store4(vb + l.rank, place(before.x, x.x0));
    store4(vb + WG + l.rank, place(before.y, x.x1));
    store4(vb + 2u * WG + l.rank, place(before.z, x.x2));
    store4(vb + 3u * WG + l.rank, place(before.w, x.x3));
}

// Single pass: the tile's prefix by decoupled look-back.
@compute @workgroup_size(256)
fn scan(ids: LaneIds) {
    let l = lanes(ids);
    let tile = acquire_tile(l);
    let vb = tile * (TILE / 4u);
    let x = load_tile(vb, l);
    let bs = block_scan(stripe_sums(x.x0, x.x1, x.x2, x.x3), l);
    let total = tile_total(bs.total);
    let prefix = lookback(tile, total, carry[params.piece], params.lookback, l);
    store_tile(vb, x, bs, prefix, l);
    if tile == params.num_tiles - 1u && l.lid == 0u {
        carry[params.piece + 1u] = prefix + total;
    }
}

// Reduce-then-scan, first pass: every tile's total (the look-back fallback's reduction).
@compute @workgroup_size(256)
fn reduce(ids: LaneIds) {
    let l = lanes(ids);
    if l.wg >= params.num_tiles {
        return;
    }
    let total = fallback_reduce(l.wg, l);
    if l.lid == 0u {
        tile_values[l.wg] = total;
    }
}

// Reduce-then-scan, last pass: every tile from its prefix (the totals' exclusive scan, with
// the carry of earlier pieces).
@compute @workgroup_size(256)
fn scan_from_prefixes(ids: LaneIds) {
    let l = lanes(ids);
    if l.wg >= params.num_tiles {
        return;
    }
    let vb = l.wg * (TILE / 4u);
    let x = load_tile(vb, l);
    let bs = block_scan(stripe_sums(x.x0, x.x1, x.x2, x.x3), l);
    store_tile(vb, x, bs, tile_values[l.wg], l);
}
