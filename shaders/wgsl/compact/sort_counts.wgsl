//! import shared/dispatch
//! import compact/sort_params
// One-sweep radix sort, before the passes: every pass's digit counts from one read of the
// keys (`count_digits`), then each pass's exclusive scan of them (`digit_starts`): where
// each digit's keys begin in that pass's output. `counts[pass * 256 + digit]`, zeroed first.

@group(0) @binding(0) var<uniform> params: SortParams;
@group(0) @binding(1) var<storage, read> keys: array<u32>;
@group(0) @binding(2) var<storage, read_write> counts: array<atomic<u32>>;

const WG: u32 = 256u;
// Keys per tile of the sort's passes (`SWEEP_TILE` on the host).
const TILE: u32 = 4096u;

// Up to eight passes (u64 keys) of 256 counters.
var<workgroup> wc: array<atomic<u32>, 2048>;

fn count_word(w: u32, first: u32, last: u32) {
    for (var p = first; p < last; p++) {
        atomicAdd(&wc[p * 256u + ((w >> (8u * (p & 3u))) & 0xffu)], 1u);
    }
}

// Each workgroup counts `tiles_per_group` tiles' keys in workgroup memory, then adds its
// counts to the global ones (one global atomic per counter and workgroup, not per key).
@compute @workgroup_size(256)
fn count_digits(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let group = flat_workgroup(wid, nwg);
    let slots = params.passes * 256u;
    for (var i = lid; i < slots; i += WG) {
        atomicStore(&wc[i], 0u);
    }
    workgroupBarrier();
    let first = group * params.tiles_per_group * TILE;
    let last = min(params.n, first + params.tiles_per_group * TILE);
    for (var g = first + lid; g < last; g += WG) {
        if params.key_words == 1u {
            count_word(keys[g], 0u, params.passes);
        } else {
            count_word(keys[2u * g], 0u, min(params.passes, 4u));
            count_word(keys[2u * g + 1u], 4u, params.passes);
        }
    }
    workgroupBarrier();
    for (var i = lid; i < slots; i += WG) {
        let c = atomicLoad(&wc[i]);
        if c > 0u {
            atomicAdd(&counts[i], c);
        }
    }
}

var<workgroup> sums: array<u32, 256>;

// One workgroup per pass: its 256 counts become their exclusive scan, in place.
@compute @workgroup_size(256)
fn digit_starts(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) d: u32) {
    if wid.x >= params.passes {
        return;
    }
    let at = wid.x * 256u + d;
    let own = atomicLoad(&counts[at]);
    sums[d] = own;
    workgroupBarrier();
    for (var step = 1u; step < 256u; step <<= 1u) {
        let before = select(0u, sums[max(d, step) - step], d >= step);
        workgroupBarrier();
        sums[d] += before;
        workgroupBarrier();
    }
    atomicStore(&counts[at], sums[d] - own);
}
