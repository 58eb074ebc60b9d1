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
// The includer defines `alias Elem` (32-bit), the `state` binding and
// `fn fallback_reduce(tile: u32, l: Lanes) -> Elem` (called by the whole workgroup), and
// imports a `lookback_walk_*` module: how the workgroup steps backwards (one thread
// walking serially, or every thread examining one predecessor of a window at once).

const READY: u32 = 0x10000u;
const ACT_DONE: u32 = 0u;
const ACT_WALK: u32 = 1u;
const ACT_FALLBACK: u32 = 2u;

var<workgroup> lb_tile: u32;
var<workgroup> lb_action: u32;
var<workgroup> lb_j: u32;
var<workgroup> lb_prefix: Elem;
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

fn lb_publish(tile: u32, k: u32, v: Elem) {
    let b = bitcast<u32>(v);
    atomicStore(&state[lb_slot(tile, k)], READY | (b & 0xffffu));
    atomicStore(&state[lb_slot(tile, k + 1u)], READY | (b >> 16u));
}

// (1, value) if both halves of slot pair k of `tile` are published, else (0, _).
fn lb_read(tile: u32, k: u32) -> vec2<u32> {
    let lo = atomicLoad(&state[lb_slot(tile, k)]);
    let hi = atomicLoad(&state[lb_slot(tile, k + 1u)]);
    let ready = (lo & READY) != 0u && (hi & READY) != 0u;
    return vec2<u32>(select(0u, 1u, ready), (lo & 0xffffu) | ((hi & 0xffffu) << 16u));
}

// Exclusive prefix of `tile` (the same in every thread). `agg` is the tile's own total;
// `carry_in` is what precedes tile 0 (earlier pieces of a split buffer); `spin_limit` is how
// many times to poll an unpublished predecessor before reducing its input instead.
struct Walk {
    j: u32,
    prefix: Elem,
    action: u32,
}

fn lookback(tile: u32, agg: Elem, carry_in: Elem, spin_limit: u32, l: Lanes) -> Elem {
    if l.lid == 0u {
        if tile == 0u {
            lb_publish(0u, 2u, carry_in + agg);
            lb_prefix = carry_in;
            lb_action = ACT_DONE;
        } else {
            lb_publish(tile, 0u, agg);
            lb_prefix = Elem();
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
        // Every thread calls the step (the subgroup variant uses them all); the lead's
        // result decides what the workgroup does next.
        let w = lb_step(spin_limit, l);
        if is_lead(l) {
            lb_j = w.j;
            lb_prefix = w.prefix;
            lb_action = w.action;
        }
    }
    let prefix = workgroupUniformLoad(&lb_prefix);
    if l.lid == 0u && tile != 0u {
        lb_publish(tile, 2u, prefix + agg);
    }
    return prefix;
}
