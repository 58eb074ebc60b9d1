// Look-back walk by the first subgroup: lane k examines predecessor j - k, so each step
// covers a whole window of predecessors instead of one (the look-back chain through tiles
// that have only published aggregates is `subgroup size` times shorter).

fn is_walker(l: Lanes) -> bool {
    return l.sg == 0u;
}

fn is_lead(l: Lanes) -> bool {
    return l.sg == 0u && l.lane == 0u;
}

const ST_WAIT: u32 = 0u;
const ST_AGG: u32 = 1u;
const ST_INC: u32 = 2u;

fn lb_walk(j0: u32, prefix0: Elem, spin_limit: u32, l: Lanes) -> Walk {
    var j = j0;
    var p = prefix0;
    var spins = 0u;
    loop {
        let k = l.lane;
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
        // The nearest predecessor that is not a plain aggregate ends this window's sum.
        let stop = subgroupMin(select(k, 0xffffffffu, status == ST_AGG));
        let take = k < stop || (k == stop && status == ST_INC);
        p = subgroupAdd(select(Elem(), bitcast<Elem>(v), take)) + p;
        if stop == 0xffffffffu {
            j -= l.size;
            spins = 0u;
            continue;
        }
        if subgroupAny(k == stop && status == ST_INC) {
            return Walk(j, p, ACT_DONE);
        }
        // Predecessor j - stop has published nothing yet: wait for it, or reduce it.
        j -= stop;
        if stop > 0u {
            spins = 0u;
        }
        spins += 1u;
        if spins >= spin_limit {
            return Walk(j, p, ACT_FALLBACK);
        }
    }
    return Walk(j, p, ACT_FALLBACK);
}
