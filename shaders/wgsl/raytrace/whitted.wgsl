//! variants kd, bvh
//! import shared/dispatch
//! define const KD_SHORT_STACK: u32 = 16u;
//! import kd: kdtree/traverse
//! import bvh: kdtree/bvh
//! import shared/sampling
//! import shared/camera
//! import raytrace/scene
//! import raytrace/sums
// The Whitted integrator, one thread per pixel (or several: `streams`): a step-by-step port
// of lumbre_raytrace::Prepared::radiance (whitted.rs), with the same explicit ray stack. Each
// sample's radiance is added to its pixel's sums in 64-bit fixed point (raytrace/sums), in the
// unit the host derives from the scene (RenderOptions::scale_log2).

struct Params {
    cam: Camera,
    bmin: vec3<f32>,
    width: u32,
    bmax: vec3<f32>,
    height: u32,
    background: vec3<f32>,
    spp: u32,
    max_depth: u32,
    n_lights: u32,
    // bit 0: restart traversal; bit 1: watertight test
    flags: u32,
    ambient: f32,
    eps: f32,
    // first tile of this dispatch (images are rendered in tiles of 8x8 pixels)
    pixel_base: u32,
    // this dispatch's samples: [batch_first, batch_first + batch_count) of the spp strata
    batch_first: u32,
    batch_count: u32,
    // invocations per pixel: stream t of a pixel renders the batch's samples t, t + streams, ..
    streams: u32,
    // the render's samples per pixel (all its batches): the divisor of `mean`
    samples: u32,
    // samples are summed in units of 2^-scale_log2 (RenderOptions::scale_log2)
    scale_log2: i32,
    // 1 in the dispatches of the render's first samples: the sums are still zero
    fresh: u32,
}

// In a storage buffer, not a uniform: each batch of samples has its own values, and lavapipe
// compiles (and keeps) a variant of the kernel for every set of uniform values it meets.
@group(0) @binding(0) var<storage, read> params: Params;
// bindings 1 to 6: the scene (raytrace/scene_bindings)
@group(0) @binding(7) var<storage, read> lights: array<Light>;
// the red, green and blue sums of the pixels' samples so far, six planes of a word a pixel
// (raytrace/sums); a pixel's streams add to them atomically
@group(0) @binding(8) var<storage, read_write> sums: array<atomic<u32>>;
// rays cast (low, high word), invocations the driver cut short, padding
@group(0) @binding(9) var<storage, read_write> counters: array<atomic<u32>, 4>;
// `mean`: the mean of the samples per pixel (RGB and 1), for work that stays on the GPU
@group(0) @binding(10) var<storage, read_write> image: array<vec4<f32>>;

const WG: u32 = 64u;
const STACK: u32 = 14u;

struct Pending {
    origin: vec3<f32>,
    dir: vec3<f32>,
    weight: vec3<f32>,
    depth: u32,
}

var<workgroup> wg_rays: atomic<u32>;

fn query(o: vec3<f32>, d: vec3<f32>, t_max: f32, any_hit: bool) -> KdHit {
    let r = ray_prep(o, d);
    return tree_query(r, params.flags, any_hit, params.bmin, params.bmax, 0.0, t_max);
}

// Ambient plus every light's Phong term over pi, with a shadow ray each from `above`;
// distances and cosines from the surface point p.
fn local_light(m: Material, p: vec3<f32>, above: vec3<f32>, n: vec3<f32>, view: vec3<f32>, pixel: u32, sample: u32, depth: u32, rays: ptr<function, u32>) -> vec3<f32> {
    var local = params.ambient * m.kd;
    for (var li = 0u; li < params.n_lights; li++) {
        let light = lights[li];
        var lp = light.pos;
        var ln = vec3<f32>(0.0);
        var e = light.e;
        if light.kind == 1u {
            let uv = light_sample(pixel, sample, depth, li);
            let a = kd_vertex(light.tri, 0u);
            let b = kd_vertex(light.tri, 1u);
            let c = kd_vertex(light.tri, 2u);
            let s = sqrt(uv.x);
            let b0 = 1.0 - s;
            let b1 = uv.y * s;
            lp = a * b0 + b * b1 + c * (1.0 - b0 - b1);
            ln = safe_normalize(cross(b - a, c - a));
            e = light.e * light.area;
        }
        let to = lp - p;
        let d2 = dot(to, to);
        if d2 <= 0.0 {
            continue;
        }
        let l = to / sqrt(d2);
        let cos = dot(n, l);
        if cos <= 0.0 {
            continue;
        }
        // area lights emit on the side of their normal only
        var cos_l = 1.0;
        if any(ln != vec3<f32>(0.0)) {
            cos_l = -dot(ln, l);
        }
        if cos_l <= 0.0 {
            continue;
        }
        let irradiance = e * (cos_l / d2);
        let shadow = lp - above;
        let ds = length(shadow);
        *rays += 1u;
        if query(above, shadow / ds, ds * (1.0 - 1e-3), true).tri != KD_NONE {
            continue;
        }
        var c = m.kd * cos;
        if (m.kind == KIND_PHONG || m.kind == KIND_MIRROR) && any(m.ks != vec3<f32>(0.0)) {
            let refl = 2.0 * dot(n, l) * n - l;
            c += m.ks * pow(max(dot(refl, view), 0.0), max(m.ns, 1.0));
        }
        local += c * irradiance / PI;
    }
    return local;
}

// max_depth 1: the camera ray and its shadow rays only, no ray stack (the benchmark case).
fn radiance_direct(origin: vec3<f32>, dir: vec3<f32>, pixel: u32, sample: u32, rays: ptr<function, u32>) -> vec3<f32> {
    *rays += 1u;
    let hit = query(origin, dir, inf(), false);
    if hit.tri == KD_NONE {
        return params.background;
    }
    let sf = surface(hit, origin, dir);
    let m = materials[sf.material];
    // emitters emit on the side of their geometric normal only, and reflect like diffuse
    var emitted = vec3<f32>(0.0);
    if m.kind == KIND_EMITTER && sf.entering {
        emitted = m.ke;
    }
    if m.kind == KIND_GLASS {
        return vec3<f32>(0.0);
    }
    return emitted + local_light(m, sf.p, sf.p + sf.ng * params.eps, sf.n, -dir, pixel, sample, 0u, rays);
}

fn radiance(origin: vec3<f32>, dir: vec3<f32>, pixel: u32, sample: u32, rays: ptr<function, u32>) -> vec3<f32> {
    var stack: array<Pending, STACK>;
    stack[0] = Pending(origin, dir, vec3<f32>(1.0), 0u);
    var top = 1u;
    var color = vec3<f32>(0.0);
    while top > 0u {
        top -= 1u;
        let r = stack[top];
        *rays += 1u;
        let hit = query(r.origin, r.dir, inf(), false);
        if hit.tri == KD_NONE {
            color += r.weight * params.background;
            continue;
        }
        let sf = surface(hit, r.origin, r.dir);
        let m = materials[sf.material];
        if m.kind == KIND_EMITTER && sf.entering {
            color += r.weight * m.ke;
        }
        let n = sf.n;
        let ng = sf.ng;
        let p = sf.p;
        let above = p + ng * params.eps;
        if m.kind != KIND_GLASS {
            color += r.weight * local_light(m, p, above, n, -r.dir, pixel, sample, r.depth, rays);
        }
        if r.depth + 1u >= params.max_depth {
            continue;
        }
        let reflected = r.dir - 2.0 * dot(r.dir, n) * n;
        if m.kind == KIND_MIRROR {
            let w = r.weight * m.ks;
            if max(w.x, max(w.y, w.z)) > 1e-3 && top < STACK {
                stack[top] = Pending(above, reflected, w, r.depth + 1u);
                top += 1u;
            }
        } else if m.kind == KIND_GLASS {
            var n1 = m.ni;
            var n2 = 1.0;
            if sf.entering {
                n1 = 1.0;
                n2 = m.ni;
            }
            let eta = n1 / n2;
            let cos_i = clamp(-dot(r.dir, n), 0.0, 1.0);
            let sin2_t = eta * eta * (1.0 - cos_i * cos_i);
            if sin2_t >= 1.0 {
                let w = r.weight;
                if max(w.x, max(w.y, w.z)) > 1e-3 && top < STACK {
                    stack[top] = Pending(above, reflected, w, r.depth + 1u);
                    top += 1u;
                }
            } else {
                let cos_t = sqrt(1.0 - sin2_t);
                let refracted = eta * r.dir + (eta * cos_i - cos_t) * n;
                let f = schlick(cos_i, n1, n2);
                let wr = r.weight * f;
                if max(wr.x, max(wr.y, wr.z)) > 1e-3 && top < STACK {
                    stack[top] = Pending(above, reflected, wr, r.depth + 1u);
                    top += 1u;
                }
                let wt = r.weight * (1.0 - f);
                if max(wt.x, max(wt.y, wt.z)) > 1e-3 && top < STACK {
                    stack[top] = Pending(p - ng * params.eps, refracted, wt, r.depth + 1u);
                    top += 1u;
                }
            }
        }
    }
    return color;
}

// Renders this stream's share of the dispatch's samples of pixel xy and adds them to its sums.
fn render_pixel(xy: vec2<u32>, stream: u32, direct: bool, rays: ptr<function, u32>) {
    let x = xy.x;
    let y = xy.y;
    let seed = y * params.width + x;
    let scale = pow2(params.scale_log2);
    var sum = Sums();
    var done = 0u;
    for (var k = stream; k < params.batch_count; k += params.streams) {
        let s = params.batch_first + k;
        let j = stratified(params.spp, s, seed);
        let d = camera_dir(params.cam, f32(x) + j.x, f32(y) + j.y);
        var v: vec3<f32>;
        if direct {
            v = radiance_direct(params.cam.eye.xyz, d, seed, s, rays);
        } else {
            v = radiance(params.cam.eye.xyz, d, seed, s, rays);
        }
        add_sample(&sum, v, scale);
        done += 1u;
    }
    // A driver that caps the loop iterations of an invocation (lavapipe: 65535) ends the
    // loop early, or a loop inside the last sample; the host turns the count into an error.
    let mine = (params.batch_count + params.streams - 1u - stream) / params.streams;
    if done != mine || loops_cut_short(mine + 1u) {
        atomicAdd(&counters[2], 1u);
    }
    add_pixel_sums(seed, params.width * params.height, sum, params.streams == 1u, params.fresh != 0u);
}

fn count_rays(lid: u32, rays: u32) {
    atomicAdd(&wg_rays, rays);
    workgroupBarrier();
    if lid == 0u {
        let n = atomicLoad(&wg_rays);
        let old = atomicAdd(&counters[0], n);
        if old > 0xffffffffu - n {
            atomicAdd(&counters[1], 1u);
        }
    }
}

// `params.pixel_base` counts tiles; `params.streams` workgroups a tile, one per stream, so
// that small images fill the GPU.
fn render_tile(wid: vec3<u32>, nwg: vec3<u32>, lid: u32, direct: bool) {
    if lid == 0u {
        atomicStore(&wg_rays, 0u);
    }
    workgroupBarrier();
    let group = flat_workgroup(wid, nwg);
    let stream = group % params.streams;
    let xy = tile_pixel(params.pixel_base + group / params.streams, params.width, lid);
    var rays = 0u;
    if xy.x < params.width && xy.y < params.height {
        render_pixel(xy, stream, direct, &rays);
    }
    count_rays(lid, rays);
}

@compute @workgroup_size(64)
fn render(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    render_tile(wid, nwg, lid, false);
}

@compute @workgroup_size(64)
fn render_direct(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    render_tile(wid, nwg, lid, true);
}

// After the last batch: each pixel's mean, for work that stays on the GPU.
@compute @workgroup_size(64)
fn mean(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let pixel = flat_workgroup(wid, nwg) * 64u + lid;
    if pixel >= params.width * params.height {
        return;
    }
    image[pixel] = vec4<f32>(pixel_mean(pixel, params.width * params.height, params.samples, params.scale_log2), 1.0);
}
