// Look-back walk by a single thread: one predecessor at a time.

fn is_lead(l: Lanes) -> bool {
    return l.lid == 0u;
}

// From predecessor `j` with `prefix` accumulated so far: walks back until an inclusive
// prefix is found (done), or a predecessor stays unpublished for `spin_limit` polls
// (fallback on that predecessor).
fn lb_walk(j0: u32, prefix0: Elem, spin_limit: u32, l: Lanes) -> Walk {
    var j = j0;
    var p = prefix0;
    var spins = 0u;
    loop {
        let inc = lb_read(j, 2u);
        if inc.x == 1u {
            return Walk(j, bitcast<Elem>(inc.y) + p, ACT_DONE);
        }
        let agg_j = lb_read(j, 0u);
        if agg_j.x == 1u && j > 0u {
            p = bitcast<Elem>(agg_j.y) + p;
            j -= 1u;
            spins = 0u;
            continue;
        }
        spins += 1u;
        if spins >= spin_limit {
            return Walk(j, p, ACT_FALLBACK);
        }
    }
    return Walk(j, p, ACT_FALLBACK);
}

fn lb_step(spin_limit: u32, l: Lanes) -> Walk {
    if l.lid == 0u {
        return lb_walk(lb_j, lb_prefix, spin_limit, l);
    }
    return Walk(0u, Elem(), ACT_WALK);
}
