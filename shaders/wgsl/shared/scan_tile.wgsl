// Single-pass prefix scan: each workgroup scans a tile of TILE elements, gets the tile's
// prefix by decoupled look-back, and writes the result. Inputs longer than one storage
// binding are scanned piece by piece; `carry[piece]` holds the total of earlier pieces and
// the last tile writes `carry[piece + 1]`.
// The includer defines `alias Elem` and imports lanes, block_scan and lookback.

struct ScanParams {
    n: u32,
    piece: u32,
    inclusive: u32,
    num_tiles: u32,
    spin_limit: u32,
}

@group(0) @binding(0) var<uniform> params: ScanParams;
@group(0) @binding(1) var<storage, read> src: array<vec4<Elem>>;
@group(0) @binding(2) var<storage, read_write> dst: array<vec4<Elem>>;
@group(0) @binding(3) var<storage, read_write> state: array<atomic<u32>>;
@group(0) @binding(4) var<storage, read_write> carry: array<Elem>;

const ITEMS: u32 = 16u;
const TILE: u32 = WG * ITEMS;

// Padding one slot per 32 avoids bank conflicts when a thread walks its contiguous chunk.
var<workgroup> tile_mem: array<Elem, TILE + TILE / 32u>;

fn pad(i: u32) -> u32 {
    return i + (i >> 5u);
}

// Input vec4 `v` of this piece; lanes past `n` read as zero (buffers are padded to vec4s).
fn load4(v: u32) -> vec4<Elem> {
    let e = 4u * v;
    if e + 3u < params.n {
        return src[v];
    }
    var r = vec4<Elem>();
    if e < params.n {
        let x = src[v];
        r = select(r, x, vec4<u32>(e) + vec4<u32>(0u, 1u, 2u, 3u) < vec4<u32>(params.n));
    }
    return r;
}

fn store4(v: u32, x: vec4<Elem>) {
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

// Sum of tile j's input, by the whole workgroup (look-back fallback).
fn fallback_reduce(j: u32, l: Lanes) -> Elem {
    let vb = j * (TILE / 4u);
    let a = load4(vb + l.lid);
    let b = load4(vb + WG + l.lid);
    let c = load4(vb + 2u * WG + l.lid);
    let d = load4(vb + 3u * WG + l.lid);
    let s = (a + b) + (c + d);
    return block_scan((s.x + s.y) + (s.z + s.w), l).total;
}

// Four vec4 loads per thread, all issued before any is used (one 4-byte load in flight per
// thread cannot cover the memory latency), staged through shared memory so each thread then
// scans 16 consecutive elements.
@compute @workgroup_size(256)
fn scan(ids: LaneIds) {
    let l = lanes(ids);
    let tile = acquire_tile(l);
    let vb = tile * (TILE / 4u);
    let x0 = load4(vb + l.lid);
    let x1 = load4(vb + WG + l.lid);
    let x2 = load4(vb + 2u * WG + l.lid);
    let x3 = load4(vb + 3u * WG + l.lid);
    stage(l.lid, x0);
    stage(WG + l.lid, x1);
    stage(2u * WG + l.lid, x2);
    stage(3u * WG + l.lid, x3);
    workgroupBarrier();
    var acc = Elem();
    for (var k = 0u; k < ITEMS; k++) {
        acc = acc + tile_mem[pad(l.rank * ITEMS + k)];
    }
    let bs = block_scan(acc, l);
    let prefix = lookback(tile, bs.total, carry[params.piece], params.spin_limit, l);
    var run = prefix + bs.excl;
    for (var k = 0u; k < ITEMS; k++) {
        let at = pad(l.rank * ITEMS + k);
        let v = tile_mem[at];
        if params.inclusive != 0u {
            run = run + v;
            tile_mem[at] = run;
        } else {
            tile_mem[at] = run;
            run = run + v;
        }
    }
    workgroupBarrier();
    for (var k = 0u; k < 4u; k++) {
        let v = k * WG + l.lid;
        store4(vb + v, unstage(v));
    }
    if tile == params.num_tiles - 1u && l.lid == 0u {
        carry[params.piece + 1u] = prefix + bs.total;
    }
}

fn stage(v: u32, x: vec4<Elem>) {
    tile_mem[pad(4u * v)] = x.x;
    tile_mem[pad(4u * v + 1u)] = x.y;
    tile_mem[pad(4u * v + 2u)] = x.z;
    tile_mem[pad(4u * v + 3u)] = x.w;
}

fn unstage(v: u32) -> vec4<Elem> {
    return vec4<Elem>(tile_mem[pad(4u * v)], tile_mem[pad(4u * v + 1u)], tile_mem[pad(4u * v + 2u)], tile_mem[pad(4u * v + 3u)]);
}
