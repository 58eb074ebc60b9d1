//! variants kd, bvh
//! define const KD_SHORT_STACK: u32 = 16u;
//! import kd: kdtree/traverse
//! import bvh: kdtree/bvh
//! import raytrace/path_common
// The path tracer as one kernel, one thread per pixel looping over its samples and bounces
// (what it shares with the wavefront is raytrace/path_common's).

// `mean`: the mean of the samples per pixel (RGB and 1), for work that stays on the GPU
@group(0) @binding(14) var<storage, read_write> image: array<vec4<f32>>;

// Radiance of one sample of pixel (x, y): Tracer::sample. The wavefront's path_vertex
// (wavefront.wgsl) is this loop's body, step for step; called as a function from this loop it
// measured 5-9% slower on an H100, so the steps are written out here, and the wavefront's
// tests keep the two equal bit for bit.
fn path_sample(x: u32, y: u32, pixel: u32, sample: u32, counts: ptr<function, Counts>) -> vec3<f32> {
    let key = sample_key(pixel, sample);
    let jx = rand(key, 0u, DIM_CAMERA);
    let jy = rand(key, 0u, DIM_CAMERA + 1u);
    var origin = params.cam.eye.xyz;
    var dir = camera_dir(params.cam, f32(x) + jx, f32(y) + jy);
    var throughput = vec3<f32>(1.0);
    var radiance = vec3<f32>(0.0);
    var last_pdf = 0.0;
    // where the last direction was scattered from
    var last_point = origin;
    var depth = 0u;
    loop {
        (*counts).extension += 1u;
        let hit = query(origin, dir, inf(), false);
        if hit.tri == KD_NONE {
            radiance += throughput * params.background;
            break;
        }
        let sf = surface_at(hit, origin, dir, face_normals[hit.tri].xyz);
        let m = materials[sf.material];
        if m.kind == KIND_EMITTER && sf.entering {
            var w = 1.0;
            if last_pdf > 0.0 {
                // sf.ng faces the ray: -dot(ng, dir) is the cosine at the emitter
                let back = sf.p - last_point;
                let pdf_light = em_pdf(hit.tri) * dot(back, back) / (-dot(sf.ng, dir));
                w = power_heuristic(last_pdf, pdf_light);
            }
            radiance += throughput * m.ke * w;
        }
        if depth >= params.max_bounces {
            break;
        }
        let n = sf.n;
        let ng = sf.ng;
        let above = sf.p + ng * params.eps;
        if m.kind == KIND_GLASS {
            var n1 = m.ni;
            var n2 = 1.0;
            if sf.entering {
                n1 = 1.0;
                n2 = m.ni;
            }
            let eta = n1 / n2;
            let cos_i = clamp(-dot(dir, n), 0.0, 1.0);
            let sin2_t = eta * eta * (1.0 - cos_i * cos_i);
            let reflected = dir - 2.0 * dot(dir, n) * n;
            if sin2_t >= 1.0 || rand(key, depth, DIM_LOBE) < schlick(cos_i, n1, n2) {
                origin = above;
                dir = reflected;
            } else {
                let cos_t = sqrt(1.0 - sin2_t);
                origin = sf.p - ng * params.eps;
                dir = eta * dir + (eta * cos_i - cos_t) * n;
            }
            last_pdf = 0.0;
        } else {
            let mirror = m.kind == KIND_MIRROR;
            let glossy = m.kind == KIND_PHONG;
            let kd = max(max3(m.kd), 0.0);
            var ks = 0.0;
            if mirror || glossy {
                ks = max(max3(m.ks), 0.0);
            }
            if kd + ks <= 0.0 {
                break;
            }
            let specular_prob = ks / (kd + ks);
            let reflected = dir - 2.0 * dot(dir, n) * n;
            var b = Lobes(n, reflected, m.kd, vec3<f32>(0.0), max(m.ns, 1.0), 1.0 - specular_prob, 0.0);
            if glossy {
                b.ks = m.ks;
                b.p_glossy = specular_prob;
            }
            if kd > 0.0 || glossy {
                radiance += throughput * direct(sf.p, above, b, key, depth, counts);
            }
            let pick_specular = rand(key, depth, DIM_LOBE) < specular_prob;
            if mirror && pick_specular {
                throughput *= m.ks / specular_prob;
                origin = above;
                dir = reflected;
                last_pdf = 0.0;
            } else {
                let u1 = rand(key, depth, DIM_DIRECTION);
                let u2 = rand(key, depth, DIM_DIRECTION + 1u);
                var next: vec3<f32>;
                if pick_specular {
                    next = to_world(phong_lobe(u1, u2, b.ns), reflected);
                } else {
                    next = to_world(cosine_hemisphere(u1, u2), n);
                }
                let cos = dot(n, next);
                // below the surface (a lobe or a shading normal leaning away): the path ends
                if cos <= 0.0 || dot(next, ng) <= 0.0 {
                    break;
                }
                let e = lobes_eval(b, next);
                if e.pdf <= 0.0 {
                    break;
                }
                throughput *= e.f * (cos / e.pdf);
                last_pdf = e.pdf;
                last_point = sf.p;
                origin = above;
                dir = next;
            }
        }
        if depth >= params.rr_depth {
            let survive = clamp(max3(throughput), SURVIVE_MIN, SURVIVE_MAX);
            if rand(key, depth, DIM_ROULETTE) >= survive {
                break;
            }
            throughput /= survive;
        }
        depth += 1u;
    }
    return radiance;
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
