//! variants plain, subgroups
//! import shared/lanes_{variant}
//! import shared/block_scan_{variant}
// Radix sort, pass part 2: each tile sorts its keys by the pass's 8-bit digit in shared
// memory (four stable 2-bit splits, counters for the four values packed as 16-bit fields
// of a vec2 and block-scanned together), then writes each key to its digit's output
// position: the scanned histogram for (digit, tile) plus its rank within the tile's digit.
// Keys and values are gathered by their original position in the tile.
// Keys longer than one binding: `keys_in`/`vals_in` hold one piece, and only destinations
// inside the bound output window [out_base, out_base + out_len) are written; the host
// dispatches every (piece, window) pair.

alias Elem = vec2<u32>;

struct SortParams {
    n: u32,
    shift: u32,
    word: u32,
    key_words: u32,
    num_tiles: u32,
    has_values: u32,
    tile_base: u32,
    out_base: u32,
    out_len: u32,
}

@group(0) @binding(0) var<uniform> params: SortParams;
@group(0) @binding(1) var<storage, read> keys_in: array<u32>;
@group(0) @binding(2) var<storage, read> vals_in: array<u32>;
@group(0) @binding(3) var<storage, read> offsets: array<u32>;
@group(0) @binding(4) var<storage, read_write> keys_out: array<u32>;
@group(0) @binding(5) var<storage, read_write> vals_out: array<u32>;

const ITEMS: u32 = 8u;
const SORT_TILE: u32 = WG * ITEMS;

// Shared entries are (digit << 16) | position in the tile: the sort inside a tile needs only
// the pass's digit, and the key (and value) are fetched by position at the end.
var<workgroup> sm: array<u32, SORT_TILE + SORT_TILE / 32u>;
var<workgroup> digit_count: array<atomic<u32>, 256>;
// Output position of the first key of each digit, minus where that digit starts in the tile.
var<workgroup> digit_base: array<u32, 256>;

fn pad(i: u32) -> u32 {
    return i + (i >> 5u);
}

// One 16-bit counter increment for 2-bit value d in the packed (x: d0 | d1, y: d2 | d3) pair.
fn bump(d: u32) -> vec2<u32> {
    let one = 1u << (16u * (d & 1u));
    return select(vec2<u32>(0u, one), vec2<u32>(one, 0u), d < 2u);
}

fn unpack(c: vec2<u32>) -> vec4<u32> {
    return vec4<u32>(c.x & 0xffffu, c.x >> 16u, c.y & 0xffffu, c.y >> 16u);
}

@compute @workgroup_size(256)
fn scatter(ids: LaneIds) {
    let l = lanes(ids);
    let tile = l.wg;
    let base = tile * SORT_TILE;
    atomicStore(&digit_count[l.lid], 0u);
    workgroupBarrier();
    for (var k = 0u; k < ITEMS; k++) {
        let i = k * WG + l.lid;
        let g = base + i;
        // Past the end: digit 255 and the largest positions, so they sort after every real key.
        var d = 0xffu;
        if g < params.n {
            d = (keys_in[g * params.key_words + params.word] >> params.shift) & 0xffu;
            atomicAdd(&digit_count[d], 1u);
        }
        sm[pad(i)] = (d << 16u) | i;
    }
    workgroupBarrier();
    // Four stable 2-bit splits sort the tile by digit.
    for (var round = 0u; round < 4u; round++) {
        let bit = 16u + 2u * round;
        var e: array<u32, ITEMS>;
        var c = vec2<u32>(0u);
        for (var k = 0u; k < ITEMS; k++) {
            e[k] = sm[pad(l.rank * ITEMS + k)];
            c += bump((e[k] >> bit) & 3u);
        }
        // block_scan ends with a barrier, so every chunk has been read before the writes.
        let bs = block_scan(c, l);
        let t = unpack(bs.total);
        var pos = vec4<u32>(0u, t.x, t.x + t.y, t.x + t.y + t.z) + unpack(bs.excl);
        for (var k = 0u; k < ITEMS; k++) {
            let d = (e[k] >> bit) & 3u;
            sm[pad(pos[d])] = e[k];
            pos[d] += 1u;
        }
        workgroupBarrier();
    }
    // Where each digit starts inside the sorted tile, and where it goes in the output.
    let count = atomicLoad(&digit_count[l.rank]);
    let bs = block_scan(vec2<u32>(count, 0u), l);
    if count > 0u {
        digit_base[l.rank] = offsets[l.rank * params.num_tiles + params.tile_base + tile] - bs.excl.x;
    }
    workgroupBarrier();
    let valid = min(SORT_TILE, params.n - min(params.n, base));
    for (var k = 0u; k < ITEMS; k++) {
        let p = k * WG + l.lid;
        if p < valid {
            let e = sm[pad(p)];
            let src = base + (e & 0xffffu);
            let global = digit_base[e >> 16u] + p;
            if global >= params.out_base && global - params.out_base < params.out_len {
                let dst = global - params.out_base;
                let kw = params.key_words;
                keys_out[dst * kw + params.word] = keys_in[src * kw + params.word];
                if kw == 2u {
                    let other = 1u - params.word;
                    keys_out[dst * 2u + other] = keys_in[src * 2u + other];
                }
                if params.has_values != 0u {
                    vals_out[dst] = vals_in[src];
                }
            }
        }
    }
}
