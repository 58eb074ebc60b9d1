//! variants plain, subgroups
//! import compact/lanes_{variant}
//! import compact/block_scan_{variant}
//! import compact/lookback
//! import compact/compact_store_{variant}
// Stable stream compaction. An element is kept if its flag is non-zero, or if a predicate
// on its value holds. Two ways to find where a tile's kept elements go:
// - one pass (`compact`): each tile counts its kept elements, finds how many earlier tiles
//   kept by decoupled look-back, and writes its kept values (or their indices) there;
// - two passes around a scan of the counts: `count` writes every tile's count and its keep
//   bits (a word per thread holding its 16, 1/16 of the flags' bytes), the counts are
//   scanned, and `compact_from_prefixes` writes every tile from its prefix, reading the bits
//   instead of the flags (or instead of evaluating the predicate again). Nothing waits for
//   another tile, and only the bits are read twice.
//
// The tile is four stripes of WG vec4s; the thread of rank r holds vec4 r of each, in
// registers, and one block scan (in rank order) of its four kept counts gives each thread
// where its kept elements go; it stores them there itself (staging the tile's output in
// shared memory to store it coalesced measured slower: docs/tuning-log.md).

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
// Two passes: the tiles' counts (`count` writes them) or, once scanned, their prefixes
// (`compact_from_prefixes` reads them).
@group(0) @binding(6) var<storage, read_write> tile_values: array<u32>;
// Two passes: keep bits, one word per thread of a tile (WG words per tile): bit 4 s + c of
// the word of rank r is element c of the thread's vec4 in stripe s (element 1024 s + 4 r + c
// of the tile).
@group(0) @binding(7) var<storage, read_write> keep_bits: array<u32>;

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

// Keep flags (0/1) of input vec4 `v` (lanes past `n` are 0); reads only what deciding needs.
fn load_keep(v: u32) -> vec4<u32> {
    if 4u * v >= params.n {
        return vec4<u32>(0u);
    }
    let e = vec4<u32>(4u * v) + vec4<u32>(0u, 1u, 2u, 3u);
    var keep = vec4<bool>(false);
    if (params.mode & 1u) != 0u {
        keep = holds4(values[v]);
    } else {
        keep = flags[v] != vec4<u32>(0u);
    }
    return vec4<u32>(keep & (e < vec4<u32>(params.n)));
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
    let a = load_keep(vb + l.rank);
    let b = load_keep(vb + WG + l.rank);
    let c = load_keep(vb + 2u * WG + l.rank);
    let d = load_keep(vb + 3u * WG + l.rank);
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

// The four keep flags of a vec4 as bits 0-3.
fn nibble(k: vec4<u32>) -> u32 {
    return (k.x | (k.y << 1u)) | ((k.z << 2u) | (k.w << 3u));
}

// Two passes, first: every tile's count of kept elements and its keep bits.
@compute @workgroup_size(256)
fn count(ids: LaneIds) {
    let l = lanes(ids);
    if l.wg >= params.num_tiles {
        return;
    }
    let vb = l.wg * (TILE / 4u);
    let a = load_keep(vb + l.rank);
    let b = load_keep(vb + WG + l.rank);
    let c = load_keep(vb + 2u * WG + l.rank);
    let d = load_keep(vb + 3u * WG + l.rank);
    keep_bits[l.wg * WG + l.rank] = (nibble(a) | (nibble(b) << 4u)) | ((nibble(c) << 8u) | (nibble(d) << 12u));
    let t = block_scan(vec4<u32>(count4(a), count4(b), count4(c), count4(d)), l).total;
    if l.lid == 0u {
        tile_values[l.wg] = (t.x + t.y) + (t.z + t.w);
    }
}

// Input vec4 `v` of the tile (stripe `s`) with its keep flags from the thread's keep word.
fn load_kept(word: u32, s: u32, v: u32) -> Quad {
    let bits = vec4<u32>(word >> (4u * s));
    let keep = (bits >> vec4<u32>(0u, 1u, 2u, 3u)) & vec4<u32>(1u);
    let e = vec4<u32>(4u * v) + vec4<u32>(0u, 1u, 2u, 3u);
    if (params.mode & 2u) != 0u {
        return Quad(keep, vec4<u32>(params.index_base) + e);
    }
    var vals = vec4<u32>(0u);
    if 4u * v < params.n {
        vals = values[v];
    }
    return Quad(keep, vals);
}

// Two passes, last: every tile from its prefix (the counts' exclusive scan, with the carry of
// earlier pieces). Its stores go through `store_kept`, by subgroup where there are subgroups;
// the one-pass kernel stores each thread's elements itself (by subgroup it measured no
// better there).
@compute @workgroup_size(256)
fn compact_from_prefixes(ids: LaneIds) {
    let l = lanes(ids);
    if l.wg >= params.num_tiles {
        return;
    }
    let tile = l.wg;
    let vb = tile * (TILE / 4u);
    let word = keep_bits[tile * WG + l.rank];
    let q0 = load_kept(word, 0u, vb + l.rank);
    let q1 = load_kept(word, 1u, vb + WG + l.rank);
    let q2 = load_kept(word, 2u, vb + 2u * WG + l.rank);
    let q3 = load_kept(word, 3u, vb + 3u * WG + l.rank);
    let bs = block_scan(vec4<u32>(count4(q0.keep), count4(q1.keep), count4(q2.keep), count4(q3.keep)), l);
    let t = bs.total;
    let prefix = tile_values[tile];
    store_kept(prefix + bs.excl.x, q0, l);
    store_kept(prefix + t.x + bs.excl.y, q1, l);
    store_kept(prefix + (t.x + t.y) + bs.excl.z, q2, l);
    store_kept(prefix + (t.x + t.y) + t.z + bs.excl.w, q3, l);
}
