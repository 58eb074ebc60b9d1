//! module
//! requires subgroup_barrier
// Compaction stores by subgroup: a subgroup's kept elements of one stripe form one run of the
// output. They are gathered in shared memory (a region per subgroup, four words per lane)
// and stored by consecutive lanes, so each store instruction writes consecutive words, where
// each thread writing its own elements spreads every instruction's words over twice the span.
// The regions are the subgroups' own, so subgroup barriers suffice. Called by the whole
// workgroup; `at` is where this thread's kept elements go. The includer defines
// `Quad`, `params` and `out`.
var<workgroup> sk_run: array<u32, WG * 4u>;

fn store_kept(at: u32, q: Quad, l: Lanes) {
    let first = subgroupBroadcast(at, 0u);
    let base = l.sg * l.size * 4u;
    var p = base + (at - first);
    if q.keep.x != 0u {
        sk_run[p] = q.out.x;
        p += 1u;
    }
    if q.keep.y != 0u {
        sk_run[p] = q.out.y;
        p += 1u;
    }
    if q.keep.z != 0u {
        sk_run[p] = q.out.z;
        p += 1u;
    }
    if q.keep.w != 0u {
        sk_run[p] = q.out.w;
        p += 1u;
    }
    let run = subgroupMax(p - base);
    subgroupBarrier();
    for (var i = l.lane; i < run; i += l.size) {
        out[first + i - params.out_base] = sk_run[base + i];
    }
    subgroupBarrier();
}
