//! import shared/dispatch
//! import compact/sort_params
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

// Tiles per chunk; also `CHUNK` of the sort's twin on the host.
const CHUNK: u32 = 32u;

fn chunks() -> u32 {
    return (params.num_tiles + CHUNK - 1u) / CHUNK;
}

// Count of digit `d` in tile `t`, 0 past the last tile.
fn count(t: u32, d: u32) -> u32 {
    return select(0u, hist[min(t, params.num_tiles - 1u) * 256u + d], t < params.num_tiles);
}

// Counts of digit `d` in the four tiles from `t`: loads in groups, so that several are in
// flight before the first is used.
fn count4(t: u32, d: u32) -> vec4<u32> {
    return vec4<u32>(count(t, d), count(t + 1u, d), count(t + 2u, d), count(t + 3u, d));
}

@compute @workgroup_size(256)
fn chunk_sums(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) d: u32,
) {
    let chunk = flat_workgroup(wid, nwg);
    var total = vec4<u32>();
    for (var i = 0u; i < CHUNK; i += 8u) {
        let t = chunk * CHUNK + i;
        total += count4(t, d) + count4(t + 4u, d);
    }
    sums[d * chunks() + chunk] = total.x + total.y + total.z + total.w;
}

// Writes the offsets of tiles t .. t + 3 (those that exist) for digit `d`, starting at `at`;
// returns the offset after them.
fn put4(t: u32, d: u32, at: u32, c: vec4<u32>) -> u32 {
    let o = vec4<u32>(at, at + c.x, at + c.x + c.y, at + c.x + c.y + c.z);
    for (var j = 0u; j < 4u; j++) {
        if t + j < params.num_tiles {
            offsets[(t + j) * 256u + d] = o[j];
        }
    }
    return o.w + c.w;
}

@compute @workgroup_size(256)
fn chunk_offsets(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) d: u32,
) {
    let chunk = flat_workgroup(wid, nwg);
    var at = starts[d * chunks() + chunk];
    for (var i = 0u; i < CHUNK; i += 8u) {
        let t = chunk * CHUNK + i;
        let a = count4(t, d);
        let b = count4(t + 4u, d);
        at = put4(t, d, at, a);
        at = put4(t + 4u, d, at, b);
    }
}
