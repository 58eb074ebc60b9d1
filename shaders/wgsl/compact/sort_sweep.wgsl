//! import shared/dispatch
//! import compact/lanes_subgroups
//! import compact/block_scan_subgroups
//! import compact/sort_params
// One-sweep radix sort pass (Adinets & Merrill 2022): each tile of TILE keys ranks its keys
// by the pass's 8-bit digit in workgroup memory, finds where its keys of each digit go by
// decoupled look-back over the tiles before it, and writes them there; one read and one
// write of the keys per pass.
//
// Ranking: a subgroup takes ITEMS rounds of `size` consecutive keys; in each round the
// lanes holding the same digit find each other by eight ballots (one per digit bit), and
// the first of them adds their number to the subgroup's counter of that digit. Counters
// hold two digits as 16-bit halves, so 32 subgroups (a subgroup size of 8) fit the tile's
// workgroup memory, which they share with the staging of the keys.
//
// Look-back: `state` holds one ticket per pass, then per tile and digit a word: the count
// in bits 0-29 and AGG (the tile's own count) or INC (the count of every key up to the
// tile's end) above it. Thread d walks back over its digit's words on its own (no barriers),
// and counts a predecessor's keys of digit d itself when that one has published nothing
// after the spin limit, so the sort stays correct without forward-progress guarantees.
//
// A thread's sixteen keys, positions and destinations are kept as vec4s with every access
// spelled out (arrays indexed in loops may spill to local memory).

alias Elem = u32;

@group(0) @binding(0) var<uniform> params: SortParams;
@group(0) @binding(1) var<storage, read> keys_in: array<u32>;
@group(0) @binding(2) var<storage, read> vals_in: array<u32>;
@group(0) @binding(3) var<storage, read> starts: array<u32>;
@group(0) @binding(4) var<storage, read_write> state: array<atomic<u32>>;
@group(0) @binding(5) var<storage, read_write> keys_out: array<u32>;
@group(0) @binding(6) var<storage, read_write> vals_out: array<u32>;

const ITEMS: u32 = 16u;
// Keys per tile (`SWEEP_TILE` on the host).
const TILE: u32 = WG * ITEMS;
const AGG: u32 = 0x40000000u;
const INC: u32 = 0x80000000u;
const COUNT: u32 = 0x3fffffffu;
// State words before the tiles': one ticket per pass.
const TICKETS: u32 = 8u;

// The subgroups' digit counters while ranking, then the tile's keys (or values) staged in
// digit order, then a predecessor's digit counts when the look-back reduces it.
var<workgroup> sm: array<atomic<u32>, TILE>;
// Each digit's first position in the sorted tile, and its count.
var<workgroup> wg_start: array<u32, 256>;
var<workgroup> wg_count: array<u32, 256>;
// A digit's output position minus its first position in the tile.
var<workgroup> wg_base: array<u32, 256>;
var<workgroup> wg_tile: u32;

// Key `g` of the input as (low word, high word); keys past the end sort last (digit 255).
fn load_key(g: u32) -> vec2<u32> {
    if g >= params.n {
        return vec2<u32>(0xffffffffu);
    }
    if params.key_words == 1u {
        return vec2<u32>(keys_in[g], 0u);
    }
    return vec2<u32>(keys_in[2u * g], keys_in[2u * g + 1u]);
}

fn digit_word(k: vec2<u32>) -> u32 {
    return select(k.x, k.y, params.word == 1u);
}

fn digit_of(w: u32) -> u32 {
    return (w >> params.shift) & 0xffu;
}

// Lanes below `lane`, as a ballot mask.
fn lanes_below(lane: u32) -> vec4<u32> {
    let l = vec4<u32>(lane);
    let base = vec4<u32>(0u, 32u, 64u, 96u);
    let part = (vec4<u32>(1u) << (l - base)) - vec4<u32>(1u);
    return select(select(vec4<u32>(0u), part, l > base), vec4<u32>(0xffffffffu), l >= base + vec4<u32>(32u));
}

fn ones(v: vec4<u32>) -> u32 {
    let c = countOneBits(v);
    return c.x + c.y + c.z + c.w;
}

// The lowest lane of a non-empty ballot mask.
fn first_lane(v: vec4<u32>) -> u32 {
    let f = firstTrailingBit(v) + vec4<u32>(0u, 32u, 64u, 96u);
    return select(select(select(f.w, f.z, v.z != 0u), f.y, v.y != 0u), f.x, v.x != 0u);
}

// A half of a packed pair of 16-bit counters.
fn counter_half(word: u32, d: u32) -> u32 {
    return (word >> (16u * (d & 1u))) & 0xffffu;
}

// Words `word` of keys g, g + stride, g + 2 stride, g + 3 stride.
fn load4(g: u32, stride: u32, word: u32) -> vec4<u32> {
    let a = load_key(g);
    let b = load_key(g + stride);
    let c = load_key(g + 2u * stride);
    let d = load_key(g + 3u * stride);
    return select(vec4<u32>(a.x, b.x, c.x, d.x), vec4<u32>(a.y, b.y, c.y, d.y), word == 1u);
}

fn digits4(w: vec4<u32>) -> vec4<u32> {
    return (w >> vec4<u32>(params.shift)) & vec4<u32>(0xffu);
}

// Rank of one key of digit `d` within the subgroup so far: the subgroup's earlier keys of
// the digit (its counter, bumped by the first lane holding the digit) plus the lower lanes
// holding it now.
fn rank1(d: u32, lanes_on: vec4<u32>, below: vec4<u32>, row: u32, lane: u32) -> u32 {
    var peers = lanes_on;
    for (var b = 0u; b < 8u; b++) {
        let bit_on = ((d >> b) & 1u) != 0u;
        let m = subgroupBallot(bit_on);
        peers &= select(~m, m, bit_on);
    }
    let leader = first_lane(peers);
    var before = 0u;
    if lane == leader {
        before = atomicAdd(&sm[row + (d >> 1u)], ones(peers) << (16u * (d & 1u)));
    }
    return counter_half(subgroupShuffle(before, leader), d) + ones(peers & below);
}

fn rank4(d: vec4<u32>, lanes_on: vec4<u32>, below: vec4<u32>, row: u32, lane: u32) -> vec4<u32> {
    let x = rank1(d.x, lanes_on, below, row, lane);
    let y = rank1(d.y, lanes_on, below, row, lane);
    let z = rank1(d.z, lanes_on, below, row, lane);
    let w = rank1(d.w, lanes_on, below, row, lane);
    return vec4<u32>(x, y, z, w);
}

// Adds the subgroup's first position among the tile's keys of each digit.
fn place4(d: vec4<u32>, p: vec4<u32>, row: u32) -> vec4<u32> {
    return p + vec4<u32>(
        counter_half(atomicLoad(&sm[row + (d.x >> 1u)]), d.x),
        counter_half(atomicLoad(&sm[row + (d.y >> 1u)]), d.y),
        counter_half(atomicLoad(&sm[row + (d.z >> 1u)]), d.z),
        counter_half(atomicLoad(&sm[row + (d.w >> 1u)]), d.w),
    );
}

fn stage4(p: vec4<u32>, v: vec4<u32>) {
    atomicStore(&sm[p.x], v.x);
    atomicStore(&sm[p.y], v.y);
    atomicStore(&sm[p.z], v.z);
    atomicStore(&sm[p.w], v.w);
}

// Values of keys g, g + stride, ... (0 past the end).
fn vals4(g: u32, stride: u32) -> vec4<u32> {
    let i = vec4<u32>(g) + vec4<u32>(0u, 1u, 2u, 3u) * stride;
    let n = vec4<u32>(params.n);
    let ok = i < n;
    let c = min(i, n - vec4<u32>(1u));
    return select(vec4<u32>(0u), vec4<u32>(vals_in[c.x], vals_in[c.y], vals_in[c.z], vals_in[c.w]), ok);
}

// Writes staged position i (of the sorted tile) if it holds a key: its digit word gives its
// destination, returned (for the other word and the value).
fn out1(i: u32, valid: u32) -> u32 {
    if i >= valid {
        return 0u;
    }
    let w = atomicLoad(&sm[i]);
    let dst = wg_base[digit_of(w)] + i;
    if params.key_words == 1u {
        keys_out[dst] = w;
    } else {
        keys_out[2u * dst + params.word] = w;
    }
    return dst;
}

// Positions k * WG + lid for k = k0 .. k0 + 3.
fn out4(k0: u32, lid: u32, valid: u32) -> vec4<u32> {
    let x = out1(k0 * WG + lid, valid);
    let y = out1((k0 + 1u) * WG + lid, valid);
    let z = out1((k0 + 2u) * WG + lid, valid);
    let w = out1((k0 + 3u) * WG + lid, valid);
    return vec4<u32>(x, y, z, w);
}

// Writes staged positions k * WG + lid (k = k0 ..) to `dst`: the other word of u64 keys
// (`values` false) or the values.
fn again1(i: u32, valid: u32, dst: u32, values: bool) {
    if i < valid {
        let v = atomicLoad(&sm[i]);
        if values {
            vals_out[dst] = v;
        } else {
            keys_out[2u * dst + 1u - params.word] = v;
        }
    }
}

fn again4(k0: u32, lid: u32, valid: u32, dst: vec4<u32>, values: bool) {
    again1(k0 * WG + lid, valid, dst.x, values);
    again1((k0 + 1u) * WG + lid, valid, dst.y, values);
    again1((k0 + 2u) * WG + lid, valid, dst.z, values);
    again1((k0 + 3u) * WG + lid, valid, dst.w, values);
}

// Digit d's count in tile t, from its keys (the look-back's fallback, one thread).
fn count_in_tile(t: u32, d: u32) -> u32 {
    var c = 0u;
    let end = min(params.n, (t + 1u) * TILE);
    for (var g = t * TILE; g < end; g++) {
        c += u32(digit_of(digit_word(load_key(g))) == d);
    }
    return c;
}

// What precedes tile `tile`'s keys of digit d among all tiles' (thread d alone).
fn look_back(tile: u32, d: u32) -> u32 {
    let spin_limit = params.lookback & 0x7fffffffu;
    var excl = 0u;
    var j = tile;
    var spins = 0u;
    while j > 0u {
        let seen = atomicLoad(&state[TICKETS + (j - 1u) * 256u + d]);
        if (seen & (AGG | INC)) == 0u {
            spins += 1u;
            if spins > spin_limit {
                excl += count_in_tile(j - 1u, d);
                j -= 1u;
                spins = 0u;
            }
            continue;
        }
        excl += seen & COUNT;
        if (seen & INC) != 0u {
            break;
        }
        j -= 1u;
        spins = 0u;
    }
    return excl;
}

@compute @workgroup_size(256)
fn sweep(ids: LaneIds) {
    let l = lanes(ids);
    if l.lid == 0u {
        wg_tile = atomicAdd(&state[params.digit_pass], 1u);
    }
    for (var i = l.lid; i < TILE; i += WG) {
        atomicStore(&sm[i], 0u);
    }
    let tile = workgroupUniformLoad(&wg_tile);
    if tile >= params.num_tiles {
        return;
    }
    // Subgroup `sg` holds keys sg * size * ITEMS ..; round k, lane i: key k * size + i of
    // those; vec4 q of a thread holds rounds 4q .. 4q + 3.
    let size = l.size;
    let g0 = tile * TILE + l.sg * size * ITEMS + l.lane;
    let q = 4u * size;
    let dw = params.word;
    let w0 = load4(g0, size, dw);
    let w1 = load4(g0 + q, size, dw);
    let w2 = load4(g0 + 2u * q, size, dw);
    let w3 = load4(g0 + 3u * q, size, dw);
    let d0 = digits4(w0);
    let d1 = digits4(w1);
    let d2 = digits4(w2);
    let d3 = digits4(w3);
    // Rank within the subgroup: earlier rounds, then lower lanes of a round, come first.
    let lanes_on = subgroupBallot(true);
    let below = lanes_below(l.lane);
    let row = l.sg * 128u;
    var p0 = rank4(d0, lanes_on, below, row, l.lane);
    var p1 = rank4(d1, lanes_on, below, row, l.lane);
    var p2 = rank4(d2, lanes_on, below, row, l.lane);
    var p3 = rank4(d3, lanes_on, below, row, l.lane);
    workgroupBarrier();
    // Thread r (in rank order) owns digits 2r and 2r + 1: their counts in each subgroup
    // become the subgroup's first positions among the tile's keys of the digit, then, after
    // the scan of the tile's counts, among all the tile's keys.
    let r = l.rank;
    var run = 0u;
    if r < 128u {
        for (var s = 0u; s < l.nsg; s++) {
            let c = atomicLoad(&sm[s * 128u + r]);
            atomicStore(&sm[s * 128u + r], run);
            run += c;
        }
    }
    let bs = block_scan((run & 0xffffu) + (run >> 16u), l);
    if r < 128u {
        let s0 = bs.excl;
        let s1 = bs.excl + (run & 0xffffu);
        wg_start[2u * r] = s0;
        wg_start[2u * r + 1u] = s1;
        wg_count[2u * r] = run & 0xffffu;
        wg_count[2u * r + 1u] = run >> 16u;
        for (var s = 0u; s < l.nsg; s++) {
            atomicAdd(&sm[s * 128u + r], s0 | (s1 << 16u));
        }
    }
    workgroupBarrier();
    // Publish the tile's count of digit d (thread d), as early as possible.
    let d = l.rank;
    let count = wg_count[d];
    let mine = TICKETS + tile * 256u + d;
    atomicStore(&state[mine], select(AGG, INC, tile == 0u) | count);
    p0 = place4(d0, p0, row);
    p1 = place4(d1, p1, row);
    p2 = place4(d2, p2, row);
    p3 = place4(d3, p3, row);
    let excl = look_back(tile, d);
    if tile > 0u && (params.lookback >> 31u) == 0u {
        atomicStore(&state[mine], INC | (excl + count));
    }
    wg_base[d] = starts[params.digit_pass * 256u + d] + excl - wg_start[d];
    workgroupBarrier();
    // Stage the keys in digit order, then write each run of a digit to its place: first the
    // word holding the digit (which gives each position its destination), then the other.
    let valid = min(TILE, params.n - tile * TILE);
    stage4(p0, w0);
    stage4(p1, w1);
    stage4(p2, w2);
    stage4(p3, w3);
    workgroupBarrier();
    let o0 = out4(0u, l.lid, valid);
    let o1 = out4(4u, l.lid, valid);
    let o2 = out4(8u, l.lid, valid);
    let o3 = out4(12u, l.lid, valid);
    if params.key_words == 2u {
        workgroupBarrier();
        let ow = 1u - dw;
        stage4(p0, load4(g0, size, ow));
        stage4(p1, load4(g0 + q, size, ow));
        stage4(p2, load4(g0 + 2u * q, size, ow));
        stage4(p3, load4(g0 + 3u * q, size, ow));
        workgroupBarrier();
        again4(0u, l.lid, valid, o0, false);
        again4(4u, l.lid, valid, o1, false);
        again4(8u, l.lid, valid, o2, false);
        again4(12u, l.lid, valid, o3, false);
    }
    if params.has_values != 0u {
        workgroupBarrier();
        stage4(p0, vals4(g0, size));
        stage4(p1, vals4(g0 + q, size));
        stage4(p2, vals4(g0 + 2u * q, size));
        stage4(p3, vals4(g0 + 3u * q, size));
        workgroupBarrier();
        again4(0u, l.lid, valid, o0, true);
        again4(4u, l.lid, valid, o1, true);
        again4(8u, l.lid, valid, o2, true);
        again4(12u, l.lid, valid, o3, true);
    }
}
