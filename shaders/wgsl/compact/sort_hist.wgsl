//! import shared/dispatch
//! import compact/sort_params
// Radix sort, pass part 1: each tile of SORT_TILE keys counts its 8-bit digits into its row
// of `hist[tile * 256 + digit]` (sort_offsets turns the rows into output positions). `n`
// counts this piece's keys.


@group(0) @binding(0) var<uniform> params: SortParams;
@group(0) @binding(1) var<storage, read> keys: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read_write> hist: array<u32>;

const WG: u32 = 256u;
const ITEMS: u32 = 8u;
const SORT_TILE: u32 = WG * ITEMS;

var<workgroup> counts: array<atomic<u32>, 256>;

fn count(g: u32, word: u32) {
    if g < params.n {
        atomicAdd(&counts[(word >> params.shift) & 0xffu], 1u);
    }
}

// Four u32 keys starting at key g.
fn count4(g: u32, k: vec4<u32>) {
    count(g, k.x);
    count(g + 1u, k.y);
    count(g + 2u, k.z);
    count(g + 3u, k.w);
}

// Two u64 keys (low, high words) starting at key g.
fn count2(g: u32, k: vec4<u32>) {
    let w = select(vec2<u32>(k.x, k.z), vec2<u32>(k.y, k.w), params.word == 1u);
    count(g, w.x);
    count(g + 1u, w.y);
}

@compute @workgroup_size(256)
fn hist_tiles(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let tile = flat_workgroup(wid, nwg);
    atomicStore(&counts[lid], 0u);
    workgroupBarrier();
    // Keys arrive as vec4s (four u32 keys, or two u64 keys), all loads issued up front.
    if params.key_words == 1u {
        let vb = tile * (SORT_TILE / 4u);
        let a = keys[vb + lid];
        let b = keys[vb + WG + lid];
        count4(4u * (vb + lid), a);
        count4(4u * (vb + WG + lid), b);
    } else {
        let vb = tile * (SORT_TILE / 2u);
        let a = keys[vb + lid];
        let b = keys[vb + WG + lid];
        let c = keys[vb + 2u * WG + lid];
        let d = keys[vb + 3u * WG + lid];
        count2(2u * (vb + lid), a);
        count2(2u * (vb + WG + lid), b);
        count2(2u * (vb + 2u * WG + lid), c);
        count2(2u * (vb + 3u * WG + lid), d);
    }
    workgroupBarrier();
    if params.tile_base + tile < params.num_tiles {
        hist[(params.tile_base + tile) * 256u + lid] = atomicLoad(&counts[lid]);
    }
}
