//! module
// Decoupled look-back with fallback (Smith, Levien, Owens, SPAA 2025): each tile publishes
// its aggregate, then walks back over its predecessors' published values. If a predecessor
// has published nothing after `spin_limit` polls, the tile reduces that predecessor's input
// itself instead of waiting, so it stays correct without forward-progress guarantees.
//
// State words (cleared to zero before each dispatch): [0] the tile ticket counter, then
// per tile four words: aggregate low/high 16 bits, inclusive prefix low/high 16 bits, each
// with a ready flag in bit 16. Splitting values into halves keeps value and flag in one
// atomic word, which is all WGSL's relaxed atomics can make consistent.
//
// The includer defines `alias Agg` (32-bit), the `state` binding and
// `fn fallback_reduce(tile: u32, l: Lanes) -> Agg` (called by the whole workgroup).

const READY: u32 = 0x10000u;
const ACT_DONE: u32 = 0u;
const ACT_WALK: u32 = 1u;
const ACT_FALLBACK: u32 = 2u;

var<workgroup> lb_tile: u32;
var<workgroup> lb_action: u32;
var<workgroup> lb_j: u32;
var<workgroup> lb_prefix: Agg;
var<workgroup> lb_spins: u32;

// Tiles are numbered in the order workgroups start, which is what makes look-back cheap.
fn acquire_tile(l: Lanes) -> u32 {
    if l.lid == 0u {
        lb_tile = atomicAdd(&state[0], 1u);
    }
    return workgroupUniformLoad(&lb_tile);
}

fn lb_slot(tile: u32, k: u32) -> u32 {
    return 4u + 4u * tile + k;
}

fn lb_publish(tile: u32, k: u32, v: Agg) {
    let b = bitcast<u32>(v);
    atomicStore(&state[lb_slot(tile, k)], READY | (b & 0xffffu));
    atomicStore(&state[lb_slot(tile, k + 1u)], READY | (b >> 16u));
}

// (1, value) if both halves of slot pair k of `tile` are published, else (0, _).
fn lb_read(tile: u32, k: u32) -> vec2<u32> {
    let lo = atomicLoad(&state[lb_slot(tile, k)]);
    let hi = atomicLoad(&state[lb_slot(tile, k + 1u)]);
    let ready = ((lo & hi) & READY) != 0u;
    return vec2<u32>(select(0u, 1u, ready), (lo & 0xffffu) | ((hi & 0xffffu) << 16u));
}

// Where a look-back step leaves the walk: the next predecessor, the sum so far, what next.
struct Walk {
    j: u32,
    prefix: Agg,
    action: u32,
}

// The walk: thread k of the window examines predecessor j - k, so one step covers
// LB_WINDOW predecessors (T tiles take about T / LB_WINDOW steps, not T as for one thread
// walking serially). No subgroup operations: on an NVIDIA H200 they saw only part of the
// subgroup here in some builds (a predecessor's value dropped from the sum, or a window
// taken for all aggregates), so the window is combined through shared memory, in two levels
// of LB_PART entries. A window of 64 measured faster than one of 256.

const ST_WAIT: u32 = 0u;
const ST_AGG: u32 = 1u;
const ST_INC: u32 = 2u;
const NONE: u32 = 0xffffffffu;
const LB_PART: u32 = 8u;
const LB_WINDOW: u32 = LB_PART * LB_PART;

// What thread k found: its predecessor's state (ST_*) and value.
var<workgroup> lb_seen: array<vec2<u32>, LB_WINDOW>;

// A run of the window combined: where its first non-aggregate is (NONE if all are
// aggregates), whether that one is an inclusive prefix, and the sum of the values before
// it (and of its own if it is).
struct Run {
    first: u32,
    inc: bool,
    sum: Agg,
}

// The run of one entry: window position `at`, with what `lb_seen` holds there.
fn lb_entry(at: u32, seen: vec2<u32>) -> Run {
    let s = seen.x;
    return Run(select(at, NONE, s == ST_AGG), s == ST_INC, select(bitcast<Agg>(seen.y), Agg(), s == ST_WAIT));
}

// Run `a` followed by run `b`.
fn lb_join(a: Run, b: Run) -> Run {
    let open = a.first == NONE;
    return Run(select(a.first, b.first, open), select(a.inc, b.inc, open), select(a.sum, a.sum + b.sum, open));
}

var<workgroup> lb_runs: array<Run, LB_PART>;

fn lb_step(spin_limit: u32, l: Lanes) -> Walk {
    let j = lb_j;
    let k = l.lid;
    if k < LB_WINDOW {
        // Threads past tile 0 read tile 0 and count as waiting.
        let valid = k <= j;
        let t = select(0u, j - k, valid);
        let inc = lb_read(t, 2u);
        let agg_t = lb_read(t, 0u);
        let is_inc = valid & (inc.x == 1u);
        // Tile 0 publishes only its inclusive prefix.
        let is_agg = valid & !is_inc & (agg_t.x == 1u) & (t > 0u);
        let status = select(select(ST_WAIT, ST_AGG, is_agg), ST_INC, is_inc);
        lb_seen[k] = vec2<u32>(status, select(agg_t.y, inc.y, is_inc));
    }
    workgroupBarrier();
    if k < LB_PART {
        var r = Run(NONE, false, Agg());
        for (var i = 0u; i < LB_PART; i++) {
            let at = k * LB_PART + i;
            r = lb_join(r, lb_entry(at, lb_seen[at]));
        }
        lb_runs[k] = r;
    }
    workgroupBarrier();
    // Only the lead's result is used (the others do not read `lb_prefix`, which the lead
    // rewrites as soon as it returns).
    var w = Walk(j, Agg(), ACT_WALK);
    if l.lid == 0u {
        var r = Run(NONE, false, Agg());
        for (var i = 0u; i < LB_PART; i++) {
            r = lb_join(r, lb_runs[i]);
        }
        let p = r.sum + lb_prefix;
        if r.inc {
            w = Walk(j, p, ACT_DONE);
        } else if r.first == NONE {
            // A whole window of aggregates (tile 0 is never one, so j >= LB_WINDOW here).
            lb_spins = 0u;
            w = Walk(j - LB_WINDOW, p, ACT_WALK);
        } else {
            // Predecessor j - first has published nothing yet: wait for it, or reduce it.
            var spins = lb_spins;
            if r.first > 0u {
                spins = 0u;
            }
            spins += 1u;
            lb_spins = spins;
            w = Walk(j - r.first, p, select(ACT_WALK, ACT_FALLBACK, spins >= spin_limit));
        }
    }
    return w;
}

// Exclusive prefix of `tile` (the same in every thread). `agg` is the tile's own total;
// `carry_in` is what precedes tile 0 (earlier pieces of a split buffer). `tuning`, bits 0-30:
// how many times to poll an unpublished predecessor before reducing its input instead; bit
// 31: publish no inclusive prefixes but tile 0's (every tile then walks back to tile 0, which
// tests use to exercise windows of aggregates).
fn lookback(tile: u32, agg: Agg, carry_in: Agg, tuning: u32, l: Lanes) -> Agg {
    let spin_limit = tuning & 0x7fffffffu;
    if l.lid == 0u {
        if tile == 0u {
            lb_publish(0u, 2u, carry_in + agg);
            lb_prefix = carry_in;
            lb_action = ACT_DONE;
        } else {
            lb_publish(tile, 0u, agg);
            lb_prefix = Agg();
            lb_j = tile - 1u;
            lb_spins = 0u;
            lb_action = ACT_WALK;
        }
    }
    loop {
        let action = workgroupUniformLoad(&lb_action);
        if action == ACT_DONE {
            break;
        }
        if action == ACT_FALLBACK {
            let j = workgroupUniformLoad(&lb_j);
            let r = fallback_reduce(j, l);
            if l.lid == 0u {
                lb_prefix = r + lb_prefix;
                if j == 0u {
                    lb_prefix = carry_in + lb_prefix;
                    lb_action = ACT_DONE;
                } else {
                    lb_j = j - 1u;
                    lb_spins = 0u;
                    lb_action = ACT_WALK;
                }
            }
            continue;
        }
        // Every thread calls the step (it reads one predecessor); the lead's result decides
        // what the workgroup does next.
        let w = lb_step(spin_limit, l);
        if l.lid == 0u {
            lb_j = w.j;
            lb_prefix = w.prefix;
            lb_action = w.action;
        }
    }
    let prefix = workgroupUniformLoad(&lb_prefix);
    if l.lid == 0u && tile != 0u && (tuning >> 31u) == 0u {
        lb_publish(tile, 2u, prefix + agg);
    }
    return prefix;
}
