//! variants plain, subgroups
//! import shared/lanes_{variant}
//! import shared/block_scan_{variant}
// Radix sort, pass part 2: each tile sorts its keys by the pass's 8-bit digit in shared
// memory (four stable 2-bit splits, counters for the four values packed as 16-bit fields
// of a vec2 and block-scanned together), then writes each key to its digit's output
// position: the scanned histogram for (digit, tile) plus its rank within the tile's digit.
// The other word of 64-bit keys and the values are gathered by the key's original index.
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

var<workgroup> sm_key: array<u32, SORT_TILE + SORT_TILE / 32u>;
var<workgroup> sm_idx: array<u32, SORT_TILE + SORT_TILE / 32u>;
var<workgroup> digit_start: array<u32, 256>;
var<workgroup> digit_count: array<atomic<u32>, 256>;

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
        // Past the end: all ones, so they sort after every real key of digit 255.
        var key = 0xffffffffu;
        if g < params.n {
            key = keys_in[g * params.key_words + params.word];
            atomicAdd(&digit_count[(key >> params.shift) & 0xffu], 1u);
        }
        sm_key[pad(i)] = key;
        sm_idx[pad(i)] = i;
    }
    workgroupBarrier();
    for (var round = 0u; round < 4u; round++) {
        let bit = params.shift + 2u * round;
        var k_reg: array<u32, ITEMS>;
        var i_reg: array<u32, ITEMS>;
        var c = vec2<u32>(0u);
        for (var k = 0u; k < ITEMS; k++) {
            let at = pad(l.rank * ITEMS + k);
            k_reg[k] = sm_key[at];
            i_reg[k] = sm_idx[at];
            c += bump((k_reg[k] >> bit) & 3u);
        }
        // block_scan ends with a barrier, so every chunk has been read before the writes.
        let bs = block_scan(c, l);
        let t = unpack(bs.total);
        let start = vec4<u32>(0u, t.x, t.x + t.y, t.x + t.y + t.z);
        var pos = start + unpack(bs.excl);
        for (var k = 0u; k < ITEMS; k++) {
            let d = (k_reg[k] >> bit) & 3u;
            sm_key[pad(pos[d])] = k_reg[k];
            sm_idx[pad(pos[d])] = i_reg[k];
            pos[d] += 1u;
        }
        workgroupBarrier();
    }
    // Where each digit starts inside the sorted tile.
    let bs = block_scan(vec2<u32>(atomicLoad(&digit_count[l.rank]), 0u), l);
    digit_start[l.rank] = bs.excl.x;
    workgroupBarrier();
    let valid = min(SORT_TILE, params.n - min(params.n, base));
    for (var k = 0u; k < ITEMS; k++) {
        let p = k * WG + l.lid;
        if p < valid {
            let key = sm_key[pad(p)];
            let src = base + sm_idx[pad(p)];
            let d = (key >> params.shift) & 0xffu;
            let global = offsets[d * params.num_tiles + params.tile_base + tile] + p - digit_start[d];
            if global >= params.out_base && global - params.out_base < params.out_len {
                let dst = global - params.out_base;
                keys_out[dst * params.key_words + params.word] = key;
                if params.key_words == 2u {
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
