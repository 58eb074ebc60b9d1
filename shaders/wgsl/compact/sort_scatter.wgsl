//! variants plain, subgroups
//! import compact/lanes_{variant}
//! import compact/block_scan_{variant}
//! import compact/sort_params
// Radix sort, pass part 2: each tile sorts its keys by the pass's 8-bit digit in shared
// memory (four stable 2-bit splits, counters for the four values packed as 16-bit fields
// of a vec2 and block-scanned together), then writes each key to its digit's output
// position: the tile's first position for the digit (sort_offsets) plus its rank within the
// tile's digit.
// Keys and values are gathered by their original position in the tile.
// Keys longer than one binding: `keys_in`/`vals_in` hold one piece, and only destinations
// inside the bound output window [out_base, out_base + out_len) are written; the host
// dispatches every (piece, window) pair.

alias Elem = vec2<u32>;


@group(0) @binding(0) var<uniform> params: SortParams;
@group(0) @binding(1) var<storage, read> keys_in: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read> vals_in: array<u32>;
@group(0) @binding(3) var<storage, read> offsets: array<u32>;
@group(0) @binding(4) var<storage, read_write> keys_out: array<u32>;
@group(0) @binding(5) var<storage, read_write> vals_out: array<u32>;
@group(0) @binding(6) var<storage, read> hist: array<u32>;

const ITEMS: u32 = 8u;
const SORT_TILE: u32 = WG * ITEMS;

// Shared entries are (digit << 16) | position in the tile: the sort inside a tile needs only
// the pass's digit, and the key (and value) are fetched by position at the end.
// Two arrays, so each split round reads one and writes the other (no per-thread copies).
var<workgroup> sm_a: array<u32, SORT_TILE + SORT_TILE / 32u>;
var<workgroup> sm_b: array<u32, SORT_TILE + SORT_TILE / 32u>;
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

// Component d of v, by selects (dynamic vector indexing can spill to local memory).
fn pick(v: vec4<u32>, d: u32) -> u32 {
    return select(select(v.w, v.z, d == 2u), select(v.y, v.x, d == 0u), d < 2u);
}

fn unit(d: u32) -> vec4<u32> {
    return vec4<u32>(vec4<bool>(d == 0u, d == 1u, d == 2u, d == 3u));
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

// Entries i .. i + 3 of sm_a or sm_b.
fn entries4(from_a: bool, i: u32) -> vec4<u32> {
    return vec4<u32>(sm_get(from_a, pad(i)), sm_get(from_a, pad(i + 1u)), sm_get(from_a, pad(i + 2u)), sm_get(from_a, pad(i + 3u)));
}

fn bump4(e: vec4<u32>, bit: u32) -> vec2<u32> {
    let d = (e >> vec4<u32>(bit)) & vec4<u32>(3u);
    return bump(d.x) + bump(d.y) + bump(d.z) + bump(d.w);
}

// Puts one entry at the next position of its 2-bit value; returns the positions after it.
fn place(to_a: bool, e: u32, bit: u32, pos: vec4<u32>) -> vec4<u32> {
    let d = (e >> bit) & 3u;
    sm_set(to_a, pad(pick(pos, d)), e);
    return pos + unit(d);
}

fn place4(to_a: bool, e: vec4<u32>, bit: u32, pos: vec4<u32>) -> vec4<u32> {
    return place(to_a, e.w, bit, place(to_a, e.z, bit, place(to_a, e.y, bit, place(to_a, e.x, bit, pos))));
}

fn stage(base: u32, i: u32, word: u32) {
    var d = 0xffu;
    if base + i < params.n {
        d = (word >> params.shift) & 0xffu;
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

fn put4(i: u32, k: vec4<u32>) {
    sm_b[pad(i)] = k.x;
    sm_b[pad(i + 1u)] = k.y;
    sm_b[pad(i + 2u)] = k.z;
    sm_b[pad(i + 3u)] = k.w;
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
    // The tile's digit counts are its histogram row (sort_hist), read now, used later.
    let count = hist[(params.tile_base + tile) * 256u + l.rank];
    // Digits of the tile's keys from vec4 loads (all issued up front), staged as
    // (digit << 16) | position; positions past the end get digit 255 and sort last.
    // One-word keys stay in registers until the tile is sorted, then go to shared memory
    // (fetching them again from global memory by position cost more).
    var ka = vec4<u32>();
    var kb = vec4<u32>();
    if params.key_words == 1u {
        let vb = tile * (SORT_TILE / 4u);
        ka = keys_in[vb + l.lid];
        kb = keys_in[vb + WG + l.lid];
        stage4(base, 4u * l.lid, ka);
        stage4(base, 4u * (WG + l.lid), kb);
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
    // Four stable 2-bit splits sort the tile by digit.
    for (var round = 0u; round < 4u; round++) {
        let bit = 16u + 2u * round;
        let from_a = (round & 1u) == 0u;
        // The thread's ITEMS (= 8) entries stay in registers from counting to placing.
        let ea = entries4(from_a, l.rank * ITEMS);
        let eb = entries4(from_a, l.rank * ITEMS + 4u);
        let bs = block_scan(bump4(ea, bit) + bump4(eb, bit), l);
        let t = unpack(bs.total);
        var pos = vec4<u32>(0u, t.x, t.x + t.y, t.x + t.y + t.z) + unpack(bs.excl);
        pos = place4(!from_a, ea, bit, pos);
        pos = place4(!from_a, eb, bit, pos);
        workgroupBarrier();
    }
    // After four rounds the sorted tile is back in sm_a, and sm_b is free for the keys.
    if params.key_words == 1u {
        put4(4u * l.lid, ka);
        put4(4u * (WG + l.lid), kb);
    }
    // Where each digit starts inside the sorted tile, and where it goes in the output.
    let bs = block_scan(vec2<u32>(count, 0u), l);
    if count > 0u {
        digit_base[l.rank] = offsets[(params.tile_base + tile) * 256u + l.rank] - bs.excl.x;
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
                if params.key_words == 1u {
                    keys_out[dst] = sm_b[pad(e & 0xffffu)];
                } else {
                    keys_out[2u * dst] = key_word(2u * src);
                    keys_out[2u * dst + 1u] = key_word(2u * src + 1u);
                }
                if params.has_values != 0u {
                    vals_out[dst] = vals_in[src];
                }
            }
        }
    }
}
