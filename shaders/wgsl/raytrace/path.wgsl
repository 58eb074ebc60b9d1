//! variants kd, bvh
//! define const KD_SHORT_STACK: u32 = 16u;
//! import kd: kdtree/traverse
//! import bvh: kdtree/bvh
//! import raytrace/path_vertex
// The path tracer as one kernel, one thread per pixel looping over its samples and bounces
// (the vertex itself is raytrace/path_vertex's, shared with the wavefront stages).

// `mean`: the mean of the samples per pixel (RGB and 1), for work that stays on the GPU
@group(0) @binding(14) var<storage, read_write> image: array<vec4<f32>>;

// Radiance of one sample of pixel (x, y): Tracer::sample.
fn path_sample(x: u32, y: u32, pixel: u32, sample: u32, counts: ptr<function, Counts>) -> vec3<f32> {
    var st = path_start(x, y, pixel, sample);
    var nee: Nee;
    loop {
        (*counts).extension += 1u;
        let hit = query(st.origin, st.dir, inf(), false);
        let more = path_vertex(&st, hit, &nee);
        if nee.valid != 0u {
            st.radiance += nee_radiance(nee, st.key, counts);
        }
        if !more {
            break;
        }
    }
    return st.radiance;
}

// `params.pixel_base` counts 8x8 tiles; each dispatch renders a batch of samples of its
// tiles, `params.streams` workgroups a tile (one per stream, so that small images fill the
// GPU), and adds them to the pixels' sums.
@compute @workgroup_size(64)
fn render(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let group = flat_workgroup(wid, nwg);
    let stream = group % params.streams;
    let xy = tile_pixel(params.pixel_base + group / params.streams, params.width, lid);
    if xy.x >= params.width || xy.y >= params.height {
        return;
    }
    let pixel = xy.y * params.width + xy.x;
    var counts = Counts(0u, 0u);
    var sum = Sums();
    let scale = pow2(params.scale_log2);
    var done = 0u;
    for (var s = stream; s < params.batch_count; s += params.streams) {
        add_sample(&sum, path_sample(xy.x, xy.y, pixel, params.batch_first + s, &counts), scale);
        done += 1u;
    }
    // A driver that caps the loop iterations of an invocation (lavapipe: 65535) ends the
    // loop early, or a loop inside the last sample; the host turns the count into an error.
    let mine = (params.batch_count + params.streams - 1u - stream) / params.streams;
    if done != mine || loops_cut_short(mine + 1u) {
        atomicAdd(&counters[4], 1u);
    }
    let fresh = params.batch_first == params.first_sample;
    add_pixel_sums(pixel, params.width * params.height, sum, params.streams == 1u, fresh);
    add_wide(0u, counts.extension);
    add_wide(2u, counts.shadow);
}

// After the last batch: each pixel's mean (the host's download computes it from the sums in
// f64; this one rounds a few times in f32), and a count of saturated pixels.
@compute @workgroup_size(64)
fn mean(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let pixel = flat_workgroup(wid, nwg) * 64u + lid;
    if pixel >= params.width * params.height {
        return;
    }
    let n = params.width * params.height;
    if pixel_saturated(pixel, n) {
        atomicAdd(&counters[5], 1u);
    }
    image[pixel] = vec4<f32>(pixel_mean(pixel, n, params.spp, params.scale_log2), 1.0);
}
