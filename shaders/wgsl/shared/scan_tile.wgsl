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
@group(0) @binding(1) var<storage, read> src: array<Elem>;
@group(0) @binding(2) var<storage, read_write> dst: array<Elem>;
@group(0) @binding(3) var<storage, read_write> state: array<atomic<u32>>;
@group(0) @binding(4) var<storage, read_write> carry: array<Elem>;

const ITEMS: u32 = 16u;
const TILE: u32 = WG * ITEMS;

// Padding one slot per 32 avoids bank conflicts when a thread walks its contiguous chunk.
var<workgroup> tile_mem: array<Elem, TILE + TILE / 32u>;

fn pad(i: u32) -> u32 {
    return i + (i >> 5u);
}

fn fallback_reduce(j: u32, l: Lanes) -> Elem {
    let base = j * TILE;
    var acc = Elem();
    for (var k = 0u; k < ITEMS; k++) {
        let g = base + k * WG + l.lid;
        if g < params.n {
            acc = acc + src[g];
        }
    }
    return block_scan(acc, l).total;
}

@compute @workgroup_size(256)
fn scan(ids: LaneIds) {
    let l = lanes(ids);
    let tile = acquire_tile(l);
    let base = tile * TILE;
    for (var k = 0u; k < ITEMS; k++) {
        let i = k * WG + l.lid;
        var v = Elem();
        if base + i < params.n {
            v = src[base + i];
        }
        tile_mem[pad(i)] = v;
    }
    workgroupBarrier();
    var incl: array<Elem, ITEMS>;
    var acc = Elem();
    for (var k = 0u; k < ITEMS; k++) {
        acc = acc + tile_mem[pad(l.rank * ITEMS + k)];
        incl[k] = acc;
    }
    let bs = block_scan(acc, l);
    let prefix = lookback(tile, bs.total, carry[params.piece], params.spin_limit, l);
    let off = prefix + bs.excl;
    for (var k = 0u; k < ITEMS; k++) {
        var v = off + incl[k];
        if params.inclusive == 0u {
            v = off;
            if k > 0u {
                v = off + incl[k - 1u];
            }
        }
        tile_mem[pad(l.rank * ITEMS + k)] = v;
    }
    workgroupBarrier();
    for (var k = 0u; k < ITEMS; k++) {
        let i = k * WG + l.lid;
        if base + i < params.n {
            dst[base + i] = tile_mem[pad(i)];
        }
    }
    if tile == params.num_tiles - 1u && l.lid == 0u {
        carry[params.piece + 1u] = prefix + bs.total;
    }
}
