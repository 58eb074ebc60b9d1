// Look-back by the whole workgroup: thread of rank k examines predecessor j - k, so one
// step covers WG predecessors. Time to propagate prefixes across T tiles is about
// T / WG steps instead of T (one thread) or T / 32 (one subgroup).

fn is_lead(l: Lanes) -> bool {
    return l.lid == 0u;
}

const ST_WAIT: u32 = 0u;
const ST_AGG: u32 = 1u;
const ST_INC: u32 = 2u;
const NONE: u32 = 0xffffffffu;

// Per subgroup: the first lane that is not a plain aggregate (NONE if all are), the sum of
// the lanes before it (and its own value if it is an inclusive prefix), and whether it is.
var<workgroup> lb_part: array<vec3<u32>, 64>;

fn lb_step(spin_limit: u32, l: Lanes) -> Walk {
    let j = lb_j;
    let k = l.rank;
    var status = ST_WAIT;
    var v = 0u;
    if k <= j {
        let t = j - k;
        let inc = lb_read(t, 2u);
        if inc.x == 1u {
            status = ST_INC;
            v = inc.y;
        } else {
            let agg_t = lb_read(t, 0u);
            // Tile 0 publishes only its inclusive prefix.
            if agg_t.x == 1u && t > 0u {
                status = ST_AGG;
                v = agg_t.y;
            }
        }
    }
    let stop = subgroupMin(select(l.lane, NONE, status == ST_AGG));
    let take = l.lane < stop || (l.lane == stop && status == ST_INC);
    let sum = subgroupAdd(select(Elem(), bitcast<Elem>(v), take));
    let inc_at_stop = subgroupAny(l.lane == stop && status == ST_INC);
    if l.lane == 0u {
        lb_part[l.sg] = vec3<u32>(stop, bitcast<u32>(sum), select(0u, 1u, inc_at_stop));
    }
    workgroupBarrier();
    var w = Walk(j, lb_prefix, ACT_WALK);
    if is_lead(l) {
        var p = lb_prefix;
        var first = NONE;
        var found = false;
        for (var s = 0u; s < l.nsg; s++) {
            let part = lb_part[s];
            p = bitcast<Elem>(part.y) + p;
            if part.x != NONE {
                first = s * l.size + part.x;
                found = part.z == 1u;
                break;
            }
        }
        if found {
            w = Walk(j, p, ACT_DONE);
        } else if first == NONE {
            // A whole window of aggregates (tile 0 is never one, so j >= WG here).
            lb_spins = 0u;
            w = Walk(j - WG, p, ACT_WALK);
        } else {
            // Predecessor j - first has published nothing yet: wait for it, or reduce it.
            var spins = lb_spins;
            if first > 0u {
                spins = 0u;
            }
            spins += 1u;
            lb_spins = spins;
            w = Walk(j - first, p, select(ACT_WALK, ACT_FALLBACK, spins >= spin_limit));
        }
    }
    return w;
}
