//! module
// Workgroup-wide exclusive scan of `Elem` in rank order: a subgroup scan, then the
// subgroup totals through shared memory. Works for any subgroup size >= 4.

struct BlockScan {
    excl: Elem,
    total: Elem,
}

var<workgroup> bs_sg: array<Elem, 64>;

fn block_scan(v: Elem, l: Lanes) -> BlockScan {
    let excl = subgroupExclusiveAdd(v);
    if l.lane == l.size - 1u {
        bs_sg[l.sg] = excl + v;
    }
    workgroupBarrier();
    var before = Elem();
    var total = Elem();
    for (var s = 0u; s < l.nsg; s++) {
        let t = bs_sg[s];
        if s < l.sg {
            before = before + t;
        }
        total = total + t;
    }
    workgroupBarrier();
    return BlockScan(before + excl, total);
}
