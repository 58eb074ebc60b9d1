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
// tile's end) above it. The workgroup walks its predecessors in step, one tile per step, and
// reduces a predecessor's keys itself when it has published nothing after the spin limit,
// so it stays correct without forward-progress guarantees.

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
var<workgroup> wg_votes: array<u32, 64>;
var<workgroup> wg_vote: u32;

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

// Whether any thread of the workgroup passes `mine` (the result is uniform).
fn any_thread(mine: bool, l: Lanes) -> bool {
    if l.lane == 0u {
        wg_votes[l.sg] = 0u;
    }
    let v = subgroupAny(mine);
    if l.lane == 0u && v {
        wg_votes[l.sg] = 1u;
    }
    workgroupBarrier();
    if l.lid == 0u {
        var votes = 0u;
        for (var s = 0u; s < l.nsg; s++) {
            votes |= wg_votes[s];
        }
        wg_vote = votes;
    }
    return workgroupUniformLoad(&wg_vote) != 0u;
}

// Digit `d`'s count in tile `t`, reduced from its keys by the whole workgroup.
fn reduce_tile(t: u32, d: u32, l: Lanes) -> u32 {
    atomicStore(&sm[l.lid], 0u);
    workgroupBarrier();
    for (var k = 0u; k < ITEMS; k++) {
        let g = t * TILE + k * WG + l.lid;
        if g < params.n {
            atomicAdd(&sm[digit_of(digit_word(load_key(g)))], 1u);
        }
    }
    workgroupBarrier();
    let c = atomicLoad(&sm[d]);
    workgroupBarrier();
    return c;
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
    // Subgroup `sg` holds keys sg * size * ITEMS ..; round k, lane i: key k * size + i of those.
    let first = tile * TILE + l.sg * l.size * ITEMS;
    var key: array<vec2<u32>, ITEMS>;
    for (var k = 0u; k < ITEMS; k++) {
        key[k] = load_key(first + k * l.size + l.lane);
    }
    // Rank within the subgroup: earlier rounds, then lower lanes of this round, come first.
    let lanes_on = subgroupBallot(true);
    let below = lanes_below(l.lane);
    let row = l.sg * 128u;
    var pos: array<u32, ITEMS>;
    for (var k = 0u; k < ITEMS; k++) {
        let d = digit_of(digit_word(key[k]));
        var peers = lanes_on;
        for (var b = 0u; b < 8u; b++) {
            let bit_on = ((d >> b) & 1u) != 0u;
            let m = subgroupBallot(bit_on);
            peers &= select(~m, m, bit_on);
        }
        let leader = first_lane(peers);
        var before = 0u;
        if l.lane == leader {
            before = atomicAdd(&sm[row + (d >> 1u)], ones(peers) << (16u * (d & 1u)));
        }
        pos[k] = counter_half(subgroupShuffle(before, leader), d) + ones(peers & below);
    }
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
    for (var k = 0u; k < ITEMS; k++) {
        let d = digit_of(digit_word(key[k]));
        pos[k] += counter_half(atomicLoad(&sm[row + (d >> 1u)]), d);
    }
    // Look-back, thread d for digit d: publish the tile's count, then walk back.
    let d = l.rank;
    let count = wg_count[d];
    let walk_to_zero = (params.lookback >> 31u) != 0u;
    let spin_limit = params.lookback & 0x7fffffffu;
    let mine = TICKETS + tile * 256u + d;
    atomicStore(&state[mine], select(AGG, INC, tile == 0u) | count);
    var excl = 0u;
    var done = tile == 0u;
    var j = tile;
    var spins = 0u;
    loop {
        if !any_thread(!done, l) {
            break;
        }
        var seen = 0u;
        if !done {
            seen = atomicLoad(&state[TICKETS + (j - 1u) * 256u + d]);
        }
        if any_thread(!done && (seen & (AGG | INC)) == 0u, l) {
            spins += 1u;
            if spins > spin_limit {
                let c = reduce_tile(j - 1u, d, l);
                if !done {
                    excl += c;
                    done = j == 1u;
                }
                j -= 1u;
                spins = 0u;
            }
            continue;
        }
        if !done {
            excl += seen & COUNT;
            done = (seen & INC) != 0u;
        }
        j -= 1u;
        spins = 0u;
    }
    if tile > 0u && !walk_to_zero {
        atomicStore(&state[mine], INC | (excl + count));
    }
    wg_base[d] = starts[params.digit_pass * 256u + d] + excl - wg_start[d];
    workgroupBarrier();
    // Stage the keys in digit order, then write each run of a digit to its place: first the
    // word holding the digit (which gives each position its destination), then the other.
    let valid = min(TILE, params.n - tile * TILE);
    for (var k = 0u; k < ITEMS; k++) {
        atomicStore(&sm[pos[k]], digit_word(key[k]));
    }
    workgroupBarrier();
    var dst: array<u32, ITEMS>;
    for (var k = 0u; k < ITEMS; k++) {
        let i = k * WG + l.lid;
        if i < valid {
            let w = atomicLoad(&sm[i]);
            dst[k] = wg_base[digit_of(w)] + i;
            if params.key_words == 1u {
                keys_out[dst[k]] = w;
            } else {
                keys_out[2u * dst[k] + params.word] = w;
            }
        }
    }
    if params.key_words == 2u {
        workgroupBarrier();
        for (var k = 0u; k < ITEMS; k++) {
            atomicStore(&sm[pos[k]], select(key[k].y, key[k].x, params.word == 1u));
        }
        workgroupBarrier();
        for (var k = 0u; k < ITEMS; k++) {
            let i = k * WG + l.lid;
            if i < valid {
                keys_out[2u * dst[k] + 1u - params.word] = atomicLoad(&sm[i]);
            }
        }
    }
    if params.has_values != 0u {
        workgroupBarrier();
        for (var k = 0u; k < ITEMS; k++) {
            let g = first + k * l.size + l.lane;
            if g < params.n {
                atomicStore(&sm[pos[k]], vals_in[g]);
            }
        }
        workgroupBarrier();
        for (var k = 0u; k < ITEMS; k++) {
            let i = k * WG + l.lid;
            if i < valid {
                vals_out[dst[k]] = atomicLoad(&sm[i]);
            }
        }
    }
}
