//! variants plain, subgroups
//! import shared/lanes_{variant}
//! import shared/block_scan_{variant}
// Radix sort, pass part 2: each tile sorts its keys by the pass's 8-bit digit in shared
// memory (two stable 4-bit splits: counters for the 16 values packed as 16-bit fields of
// two vec4s and block-scanned together), then writes each key to its digit's output
// position: the scanned histogram for (digit, tile) plus its rank within the tile's digit.
// Keys and values are gathered by their original position in the tile.
// Keys longer than one binding: `keys_in`/`vals_in` hold one piece, and only destinations
// inside the bound output window [out_base, out_base + out_len) are written; the host
// dispatches every (piece, window) pair.

alias Elem = vec4<u32>;

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
@group(0) @binding(1) var<storage, read> keys_in: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read> vals_in: array<u32>;
@group(0) @binding(3) var<storage, read> offsets: array<u32>;
@group(0) @binding(4) var<storage, read_write> keys_out: array<u32>;
@group(0) @binding(5) var<storage, read_write> vals_out: array<u32>;

const ITEMS: u32 = 8u;
const SORT_TILE: u32 = WG * ITEMS;

// Shared entries are (digit << 16) | position in the tile: the sort inside a tile needs only
// the pass's digit, and the key (and value) are fetched by position at the end.
// Two arrays, so each split round reads one and writes the other (no per-thread copies).
var<workgroup> sm_a: array<u32, SORT_TILE + SORT_TILE / 32u>;
var<workgroup> sm_b: array<u32, SORT_TILE + SORT_TILE / 32u>;
var<workgroup> digit_count: array<atomic<u32>, 256>;
// Output position of the first key of each digit, minus where that digit starts in the tile.
var<workgroup> digit_base: array<u32, 256>;

fn pad(i: u32) -> u32 {
    return i + (i >> 5u);
}

// Counters for 4-bit values: field d (16 bits) of the packed pair (lo: d < 8, hi: d >= 8),
// word d / 2 % 4, bits 16 * (d % 2).
struct Packed {
    lo: vec4<u32>,
    hi: vec4<u32>,
}

fn bump(c: Packed, d: u32) -> Packed {
    let one = vec4<u32>(1u << (16u * (d & 1u)));
    let word = vec4<u32>((d >> 1u) & 3u) == vec4<u32>(0u, 1u, 2u, 3u);
    let zero = vec4<u32>(0u);
    return Packed(c.lo + select(zero, one, word & vec4<bool>(d < 8u)), c.hi + select(zero, one, word & vec4<bool>(d >= 8u)));
}

fn field(c: Packed, d: u32) -> u32 {
    let v = select(c.lo, c.hi, d >= 8u);
    let w = (d >> 1u) & 3u;
    let word = select(select(v.w, v.z, w == 2u), select(v.y, v.x, w == 0u), w < 2u);
    return (word >> (16u * (d & 1u))) & 0xffffu;
}

// Packed exclusive prefix over the 16 fields of `t` (each total <= SORT_TILE < 2^16).
fn starts(t: Packed) -> Packed {
    var out = Packed(vec4<u32>(0u), vec4<u32>(0u));
    var run = 0u;
    for (var d = 0u; d < 16u; d++) {
        out = add_field(out, d, run);
        run += field(t, d);
    }
    return out;
}

fn add_field(c: Packed, d: u32, x: u32) -> Packed {
    let add = vec4<u32>(x << (16u * (d & 1u)));
    let word = vec4<u32>((d >> 1u) & 3u) == vec4<u32>(0u, 1u, 2u, 3u);
    let zero = vec4<u32>(0u);
    return Packed(c.lo + select(zero, add, word & vec4<bool>(d < 8u)), c.hi + select(zero, add, word & vec4<bool>(d >= 8u)));
}

fn sm_get(from_a: bool, i: u32) -> u32 {
    if from_a {
        return sm_a[i];
    }
    return sm_b[i];
}

fn sm_set(to_a: bool, i: u32, v: u32) {
    if to_a {
        sm_a[i] = v;
    } else {
        sm_b[i] = v;
    }
}

fn stage(base: u32, i: u32, word: u32) {
    var d = 0xffu;
    if base + i < params.n {
        d = (word >> params.shift) & 0xffu;
        atomicAdd(&digit_count[d], 1u);
    }
    sm_a[pad(i)] = (d << 16u) | i;
}

fn stage4(base: u32, i: u32, k: vec4<u32>) {
    stage(base, i, k.x);
    stage(base, i + 1u, k.y);
    stage(base, i + 2u, k.z);
    stage(base, i + 3u, k.w);
}

fn stage2(base: u32, i: u32, k: vec4<u32>) {
    let w = select(vec2<u32>(k.x, k.z), vec2<u32>(k.y, k.w), params.word == 1u);
    stage(base, i, w.x);
    stage(base, i + 1u, w.y);
}

// Word `w` of the piece's keys (keys_in is bound as vec4s).
fn key_word(w: u32) -> u32 {
    return keys_in[w / 4u][w % 4u];
}

@compute @workgroup_size(256)
fn scatter(ids: LaneIds) {
    let l = lanes(ids);
    let tile = l.wg;
    let base = tile * SORT_TILE;
    atomicStore(&digit_count[l.lid], 0u);
    workgroupBarrier();
    // Digits of the tile's keys from vec4 loads (all issued up front), staged as
    // (digit << 16) | position; positions past the end get digit 255 and sort last.
    if params.key_words == 1u {
        let vb = tile * (SORT_TILE / 4u);
        let a = keys_in[vb + l.lid];
        let b = keys_in[vb + WG + l.lid];
        stage4(base, 4u * l.lid, a);
        stage4(base, 4u * (WG + l.lid), b);
    } else {
        let vb = tile * (SORT_TILE / 2u);
        let a = keys_in[vb + l.lid];
        let b = keys_in[vb + WG + l.lid];
        let c = keys_in[vb + 2u * WG + l.lid];
        let d = keys_in[vb + 3u * WG + l.lid];
        stage2(base, 2u * l.lid, a);
        stage2(base, 2u * (WG + l.lid), b);
        stage2(base, 2u * (2u * WG + l.lid), c);
        stage2(base, 2u * (3u * WG + l.lid), d);
    }
    workgroupBarrier();
    // Two stable 4-bit splits sort the tile by digit.
    for (var round = 0u; round < 2u; round++) {
        let bit = 16u + 4u * round;
        let from_a = round == 0u;
        var c = Packed(vec4<u32>(0u), vec4<u32>(0u));
        for (var k = 0u; k < ITEMS; k++) {
            c = bump(c, (sm_get(from_a, pad(l.rank * ITEMS + k)) >> bit) & 15u);
        }
        let lo = block_scan(c.lo, l);
        let hi = block_scan(c.hi, l);
        let s0 = starts(Packed(lo.total, hi.total));
        var pos = Packed(s0.lo + lo.excl, s0.hi + hi.excl);
        for (var k = 0u; k < ITEMS; k++) {
            let e = sm_get(from_a, pad(l.rank * ITEMS + k));
            let d = (e >> bit) & 15u;
            sm_set(!from_a, pad(field(pos, d)), e);
            pos = bump(pos, d);
        }
        workgroupBarrier();
    }
    // After two rounds the sorted tile is back in sm_a.
    // Where each digit starts inside the sorted tile, and where it goes in the output.
    let count = atomicLoad(&digit_count[l.rank]);
    let bs = block_scan(vec4<u32>(count, 0u, 0u, 0u), l);
    if count > 0u {
        digit_base[l.rank] = offsets[l.rank * params.num_tiles + params.tile_base + tile] - bs.excl.x;
    }
    workgroupBarrier();
    let valid = min(SORT_TILE, params.n - min(params.n, base));
    for (var k = 0u; k < ITEMS; k++) {
        let p = k * WG + l.lid;
        if p < valid {
            let e = sm_a[pad(p)];
            let src = base + (e & 0xffffu);
            let global = digit_base[e >> 16u] + p;
            if global >= params.out_base && global - params.out_base < params.out_len {
                let dst = global - params.out_base;
                let kw = params.key_words;
                keys_out[dst * kw + params.word] = key_word(src * kw + params.word);
                if kw == 2u {
                    let other = 1u - params.word;
                    keys_out[dst * 2u + other] = key_word(src * 2u + other);
                }
                if params.has_values != 0u {
                    vals_out[dst] = vals_in[src];
                }
            }
        }
    }
}
