//! import shared/dispatch
//! import shared/radix_params
// Radix sort, pass part 2: every (tile, digit)'s first output position from the tile-major
// histograms `hist[tile * 256 + digit]`, with only contiguous reads and writes (the
// digit-major layout that one plain scan needs made both the histogram's stores and the
// scatter's loads strided, which cost more than the histogram's reading of the keys).
// 1. `chunk_sums`: each chunk of CHUNK tiles sums its counts per digit into
//    `sums[digit * chunks + chunk]` (digit-major, a small array);
// 2. the host scans `sums` (exclusive) into `starts`: each (digit, chunk)'s first position;
// 3. `chunk_offsets`: each chunk walks its tiles from that start, writing
//    `offsets[tile * 256 + digit]`.

@group(0) @binding(0) var<uniform> params: SortParams;
@group(0) @binding(1) var<storage, read> hist: array<u32>;
@group(0) @binding(2) var<storage, read_write> sums: array<u32>;
@group(0) @binding(3) var<storage, read> starts: array<u32>;
@group(0) @binding(4) var<storage, read_write> offsets: array<u32>;

// Tiles per chunk; also `RADIX_CHUNK` on the host.
const CHUNK: u32 = 32u;

fn chunks() -> u32 {
    return (params.num_tiles + CHUNK - 1u) / CHUNK;
}

// Count of digit `d` in tile `t`, 0 past the last tile.
fn count(t: u32, d: u32) -> u32 {
    return select(0u, hist[min(t, params.num_tiles - 1u) * 256u + d], t < params.num_tiles);
}

@compute @workgroup_size(256)
fn chunk_sums(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) d: u32,
) {
    let chunk = flat_workgroup(wid, nwg);
    var total = 0u;
    for (var i = 0u; i < CHUNK; i++) {
        total += count(chunk * CHUNK + i, d);
    }
    sums[d * chunks() + chunk] = total;
}

@compute @workgroup_size(256)
fn chunk_offsets(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) d: u32,
) {
    let chunk = flat_workgroup(wid, nwg);
    var at = starts[d * chunks() + chunk];
    for (var i = 0u; i < CHUNK; i++) {
        let t = chunk * CHUNK + i;
        if t < params.num_tiles {
            offsets[t * 256u + d] = at;
        }
        at += count(t, d);
    }
}
