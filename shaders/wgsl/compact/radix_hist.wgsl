//! import shared/dispatch
// Radix sort, pass part 1: each tile of SORT_TILE keys counts its 8-bit digits. Counts are
// stored digit-major (`hist[digit * num_tiles + tile]`) so that one exclusive scan of
// `hist` gives every (digit, tile) its first output position. `n` counts this piece's keys.

struct SortParams {
    n: u32,
    shift: u32,
    // which 32-bit word of a key holds this pass's digit, and words per key (1 or 2)
    word: u32,
    key_words: u32,
    num_tiles: u32,
    has_values: u32,
    // keys longer than one binding are processed in pieces: this piece's first tile, and
    // the window of the output bound in this dispatch (scatter only)
    tile_base: u32,
    out_base: u32,
    out_len: u32,
}

@group(0) @binding(0) var<uniform> params: SortParams;
@group(0) @binding(1) var<storage, read> keys: array<u32>;
@group(0) @binding(2) var<storage, read_write> hist: array<u32>;

const WG: u32 = 256u;
const ITEMS: u32 = 8u;
const SORT_TILE: u32 = WG * ITEMS;

var<workgroup> counts: array<atomic<u32>, 256>;

@compute @workgroup_size(256)
fn hist_tiles(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let tile = flat_workgroup(wid, nwg);
    atomicStore(&counts[lid], 0u);
    workgroupBarrier();
    for (var k = 0u; k < ITEMS; k++) {
        let g = tile * SORT_TILE + k * WG + lid;
        if g < params.n {
            let d = (keys[g * params.key_words + params.word] >> params.shift) & 0xffu;
            atomicAdd(&counts[d], 1u);
        }
    }
    workgroupBarrier();
    if params.tile_base + tile < params.num_tiles {
        hist[lid * params.num_tiles + params.tile_base + tile] = atomicLoad(&counts[lid]);
    }
}
