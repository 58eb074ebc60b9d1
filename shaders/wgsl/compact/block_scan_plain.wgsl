//! module
// Workgroup-wide exclusive scan of `Elem` in rank order, in shared memory (Kogge-Stone).
// The includer defines `alias Elem` (u32, f32 or a vector of them).

struct BlockScan {
    excl: Elem,
    total: Elem,
}

var<workgroup> bs_mem: array<Elem, WG>;

fn block_scan(v: Elem, l: Lanes) -> BlockScan {
    var x = v;
    bs_mem[l.rank] = x;
    workgroupBarrier();
    for (var off = 1u; off < WG; off <<= 1u) {
        var t = Elem();
        if l.rank >= off {
            t = bs_mem[l.rank - off];
        }
        workgroupBarrier();
        x = t + x;
        bs_mem[l.rank] = x;
        workgroupBarrier();
    }
    var excl = Elem();
    if l.rank > 0u {
        excl = bs_mem[l.rank - 1u];
    }
    let total = bs_mem[WG - 1u];
    workgroupBarrier();
    return BlockScan(excl, total);
}
