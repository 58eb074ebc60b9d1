// Lagged single-pass scan: the workgroup with ticket t reduces tile t and publishes its total,
// then scans tile t - TT_LAG (still in L2: on an H100 a tile re-read 4 MiB behind cost
// nothing), whose prefix it sums from a tree of tile totals published long before, so that
// it neither waits for a predecessor nor walks back through a chain of them.
//
// Level 0 of the tree holds the tiles' totals, level k + 1 the sums of 32 consecutive nodes of
// level k (node i of level k covers tiles [i 32^k, (i + 1) 32^k)). The tile whose ticket is
// TT_GAP k after the last tile of a full level-k block sums that block; the prefix of tile u
// is at most 31 nodes per level (the blocks before u inside u's block of the level above),
// read by one thread each, all written at least TT_LAG - TT_GAP (levels - 1) tickets before.
// A node still missing after `spin_limit` polls is computed instead (a sum from the tile
// totals, a tile total from the input), so the scan needs no forward-progress guarantee.
//
// State words after the ticket counter: level by level, two words per node (value halves with
// READY flags, as in lookback.wgsl). The includer imports lookback and defines
// `fallback_reduce` and `block_scan` on `Elem = vec4<Agg>`.

const TT_FAN: u32 = 32u;
const TT_LAG: u32 = 256u;
const TT_GAP: u32 = 32u;

// Levels for `tiles` tiles: the top level has at most 32 nodes.
fn tt_levels(tiles: u32) -> u32 {
    var k = 1u;
    var span = TT_FAN;
    while span < tiles {
        k += 1u;
        span *= TT_FAN;
    }
    return k;
}

// Tiles a node of level k covers.
fn tt_span(k: u32) -> u32 {
    return 1u << (5u * k);
}

// The first state word of node i of level k, for `tiles` tiles.
fn tt_slot(tiles: u32, k: u32, i: u32) -> u32 {
    var base = 4u;
    var n = tiles;
    for (var j = 0u; j < k; j++) {
        base += 2u * n;
        n = (n + TT_FAN - 1u) / TT_FAN;
    }
    return base + 2u * i;
}

var<workgroup> tt_found: vec2<u32>;

// Tile j's total: published, or after `spin_limit` polls reduced from the input. Whole
// workgroup, `j` uniform.
fn tt_tile_total(tiles: u32, j: u32, spin_limit: u32, l: Lanes) -> Agg {
    if l.lid == 0u {
        var r = read_at(tt_slot(tiles, 0u, j));
        for (var spins = 0u; r.x == 0u && spins < spin_limit; spins++) {
            r = read_at(tt_slot(tiles, 0u, j));
        }
        tt_found = r;
    }
    let r = workgroupUniformLoad(&tt_found);
    if r.x == 1u {
        return bitcast<Agg>(r.y);
    }
    return fallback_reduce(j, l);
}

// Node i of level k (k >= 1): published, or after `spin_limit` polls summed from the tile
// totals it covers. Whole workgroup, arguments uniform.
fn tt_node(tiles: u32, k: u32, i: u32, spin_limit: u32, l: Lanes) -> Agg {
    if l.lid == 0u {
        var r = read_at(tt_slot(tiles, k, i));
        for (var spins = 0u; r.x == 0u && spins < spin_limit; spins++) {
            r = read_at(tt_slot(tiles, k, i));
        }
        tt_found = r;
    }
    let r = workgroupUniformLoad(&tt_found);
    if r.x == 1u {
        return bitcast<Agg>(r.y);
    }
    var sum = Agg();
    let first = i * tt_span(k);
    for (var j = first; j < min(first + tt_span(k), tiles); j++) {
        sum += tt_tile_total(tiles, j, spin_limit, l);
    }
    return sum;
}

var<workgroup> tt_any: u32;
var<workgroup> tt_miss: array<vec2<u32>, WG>;

// The sum over the workgroup of one node per thread (level k, index i, where `valid`), the
// same in every thread. Nodes not yet published are waited for or computed, one by one.
fn tt_sum(tiles: u32, k: u32, i: u32, valid: bool, spin_limit: u32, l: Lanes) -> Agg {
    var x = Agg();
    var miss = false;
    if valid {
        let r = read_at(tt_slot(tiles, k, i));
        miss = r.x == 0u;
        x = select(bitcast<Agg>(r.y), Agg(), miss);
    }
    // Level + 1 of a missing node, 0 if none.
    tt_miss[l.lid] = vec2<u32>(select(0u, k + 1u, miss), i);
    let t = block_scan(Elem(x, select(Agg(), Agg(1), miss), Agg(), Agg()), l).total;
    if l.lid == 0u {
        tt_any = select(0u, 1u, t.y != Agg());
    }
    var sum = t.x;
    if workgroupUniformLoad(&tt_any) != 0u {
        for (var j = 0u; j < WG; j++) {
            let m = workgroupUniformLoad(&tt_miss[j]);
            if m.x == 1u {
                sum += tt_tile_total(tiles, m.y, spin_limit, l);
            } else if m.x > 1u {
                sum += tt_node(tiles, m.x - 1u, m.y, spin_limit, l);
            }
        }
    }
    return sum;
}

// The exclusive prefix of tile u (without the carry of earlier pieces): thread 32 k + j reads
// node j of the run of level-k nodes before u inside u's block of level k + 1.
fn tt_prefix(tiles: u32, u: u32, valid: bool, spin_limit: u32, l: Lanes) -> Agg {
    let levels = tt_levels(tiles);
    let k = min(l.lid / TT_FAN, levels - 1u);
    let span = tt_span(k);
    var start = 0u;
    if k + 1u < levels {
        start = u / (span * TT_FAN) * TT_FAN;
    }
    let i = start + l.lid % TT_FAN;
    return tt_sum(tiles, k, i, valid && l.lid < TT_FAN * levels && i < u / span, spin_limit, l);
}

// Sums of the full blocks this ticket is due to sum: the level-k block whose last tile is
// `ticket - TT_GAP k`.
fn tt_publish_sums(tiles: u32, ticket: u32, spin_limit: u32, l: Lanes) {
    let levels = tt_levels(tiles);
    for (var k = 1u; k < levels; k++) {
        let gap = TT_GAP * k;
        if ticket < gap {
            break;
        }
        let last = ticket - gap;
        if last < tiles && (last + 1u) % tt_span(k) == 0u {
            let b = (last + 1u) / tt_span(k) - 1u;
            let child = b * TT_FAN + l.lid;
            let v = tt_sum(tiles, k - 1u, child, l.lid < TT_FAN, spin_limit, l);
            if l.lid == 0u {
                publish_at(tt_slot(tiles, k, b), v);
            }
        }
    }
}
