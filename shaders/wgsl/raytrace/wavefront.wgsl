//! variants kd, bvh
//! define const KD_SHORT_STACK: u32 = 16u;
//! import kd: kdtree/traverse
//! import bvh: kdtree/bvh
//! import raytrace/path_common
//! import morton/code
// The path tracer as a wavefront (Laine, Karras and Aila 2013): a pool of paths in flight,
// one kernel per stage and queues between them. Each round: `regen` adds the radiance of
// paths that ended to their pixels and starts new paths in the free slots; `queue_args`
// sizes the next dispatches; `extend` traces the queued paths' rays; `shade` runs their
// vertices (path_vertex, as the megakernel does) and queues their next-event
// estimation; `shadow_args`; `shadow` casts the shadow rays and adds their light. The paths
// are the megakernel's: its sums come out bit for bit, in any order of the queues.

// The paths in flight (its length is the pool's size).
@group(0) @binding(14) var<storage, read_write> state: array<PathState>;
// The queued paths' slots: `regen` appends them, or writes every slot with its key in `keys`
// for a sort by key that puts the queued first (ray reordering, flags bit 2).
@group(0) @binding(15) var<storage, read_write> queue: array<u32>;
// The queued next-event estimations (their `slot` names their path).
@group(0) @binding(16) var<storage, read_write> shadows: array<Nee>;
// The counters WF_*.
@group(0) @binding(17) var<storage, read_write> wf: array<atomic<u32>>;
// The hit of each queued path's ray, by slot.
@group(0) @binding(18) var<storage, read_write> hits: array<KdHit>;
// Ray reordering: each slot's sort key (DEAD_KEY: nothing to trace).
@group(0) @binding(19) var<storage, read_write> keys: array<u32>;
// The indirect dispatch arguments of extend and shade (words 0-2) and of shadow (3-5),
// written by queue_args and shadow_args (a buffer bound as storage cannot be a dispatch's
// arguments).
@group(0) @binding(20) var<storage, read_write> args: array<u32>;

// A path between two vertices: the ray to trace next and what the path carries.
struct PathState {
    origin: vec3<f32>,
    depth: u32,
    dir: vec3<f32>,
    // the sample's key (sample_key)
    key: u32,
    throughput: vec3<f32>,
    // density in solid angle of the last scattered direction; 0 after the camera or a
    // specular bounce (its emitter hit counts fully)
    last_pdf: f32,
    // where the last direction was scattered from
    last_point: vec3<f32>,
    pixel: u32,
    radiance: vec3<f32>,
    // wavefront only: STATUS_*
    status: u32,
}

// Next-event estimation at a vertex, as the vertex asks for it: direct(p, above, lobes, key,
// depth) times `throughput` adds to the path's radiance.
struct Nee {
    p: vec3<f32>,
    depth: u32,
    above: vec3<f32>,
    // the wavefront's slot of the path
    slot: u32,
    throughput: vec3<f32>,
    valid: u32,
    lobes: Lobes,
}

// The path of sample `sample` of pixel (x, y): its camera ray, jittered in the pixel.
fn path_start(x: u32, y: u32, pixel: u32, sample: u32) -> PathState {
    let key = sample_key(pixel, sample);
    let jx = rand(key, 0u, DIM_CAMERA);
    let jy = rand(key, 0u, DIM_CAMERA + 1u);
    let origin = params.cam.eye.xyz;
    let dir = camera_dir(params.cam, f32(x) + jx, f32(y) + jy);
    return PathState(origin, 0u, dir, key, vec3<f32>(1.0), 0.0, origin, pixel, vec3<f32>(0.0), 0u);
}

// The path a vertex works on, and the next-event estimation it asks for.
var<private> path: PathState;
var<private> path_nee: Nee;

// The vertex where `path`'s ray met `hit` (KD_NONE: nothing): adds what it sees of the
// emitters and the background, asks for next-event estimation in `path_nee` (its light is
// added before the next vertex), and scatters the ray. False when the path ends here. The
// loop body of the megakernel's path_sample (path.wgsl), step for step.
fn path_vertex(hit: KdHit) -> bool {
    path_nee.valid = 0u;
    let origin = path.origin;
    let dir = path.dir;
    let depth = path.depth;
    let key = path.key;
    if hit.tri == KD_NONE {
        path.radiance += path.throughput * params.background;
        return false;
    }
    let sf = surface_at(hit, origin, dir, face_normals[hit.tri].xyz);
    let m = materials[sf.material];
    if m.kind == KIND_EMITTER && sf.entering {
        var w = 1.0;
        if path.last_pdf > 0.0 {
            // sf.ng faces the ray: -dot(ng, dir) is the cosine at the emitter
            let back = sf.p - path.last_point;
            let pdf_light = em_pdf(hit.tri) * dot(back, back) / (-dot(sf.ng, dir));
            w = power_heuristic(path.last_pdf, pdf_light);
        }
        path.radiance += path.throughput * m.ke * w;
    }
    if depth >= params.max_bounces {
        return false;
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
            path.origin = above;
            path.dir = reflected;
        } else {
            let cos_t = sqrt(1.0 - sin2_t);
            path.origin = sf.p - ng * params.eps;
            path.dir = eta * dir + (eta * cos_i - cos_t) * n;
        }
        path.last_pdf = 0.0;
    } else {
        let mirror = m.kind == KIND_MIRROR;
        let glossy = m.kind == KIND_PHONG;
        let kd = max(max3(m.kd), 0.0);
        var ks = 0.0;
        if mirror || glossy {
            ks = max(max3(m.ks), 0.0);
        }
        if kd + ks <= 0.0 {
            return false;
        }
        let specular_prob = ks / (kd + ks);
        let reflected = dir - 2.0 * dot(dir, n) * n;
        var b = Lobes(n, reflected, m.kd, vec3<f32>(0.0), max(m.ns, 1.0), 1.0 - specular_prob, 0.0);
        if glossy {
            b.ks = m.ks;
            b.p_glossy = specular_prob;
        }
        if kd > 0.0 || glossy {
            path_nee = Nee(sf.p, depth, above, 0u, path.throughput, 1u, b);
        }
        let pick_specular = rand(key, depth, DIM_LOBE) < specular_prob;
        if mirror && pick_specular {
            path.throughput *= m.ks / specular_prob;
            path.origin = above;
            path.dir = reflected;
            path.last_pdf = 0.0;
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
                return false;
            }
            let e = lobes_eval(b, next);
            if e.pdf <= 0.0 {
                return false;
            }
            path.throughput *= e.f * (cos / e.pdf);
            path.last_pdf = e.pdf;
            path.last_point = sf.p;
            path.origin = above;
            path.dir = next;
        }
    }
    if depth >= params.rr_depth {
        let survive = clamp(max3(path.throughput), SURVIVE_MIN, SURVIVE_MAX);
        if rand(key, depth, DIM_ROULETTE) >= survive {
            return false;
        }
        path.throughput /= survive;
    }
    path.depth = depth + 1u;
    return true;
}

// What next-event estimation `nee` adds to its path's radiance (counting its shadow rays), as
// the megakernel adds it.
fn nee_radiance(nee: Nee, key: u32, counts: ptr<function, Counts>) -> vec3<f32> {
    return nee.throughput * direct(nee.p, nee.above, nee.lobes, key, nee.depth, counts);
}

const STATUS_FREE: u32 = 0u;
const STATUS_ALIVE: u32 = 1u;
const STATUS_ENDED: u32 = 2u;
const WF_QUEUE: u32 = 0u;
const WF_SHADOWS: u32 = 1u;
const WF_NEXT: u32 = 2u;
// the queue's length in the last round (0 with no path left: the render is done)
const WF_LAST_QUEUE: u32 = 3u;
const FLAG_REORDER: u32 = 4u;
// above every key of a ray (24 bits: 21 of the origin's Morton code, 3 of the direction's
// octant; the largest is moved one down)
const DEAD_KEY: u32 = 0xffffffu;

var<workgroup> wg_count: atomic<u32>;
var<workgroup> wg_base: u32;

// Workgroup-aggregated append to the list counted by wf[counter]: the index of this
// invocation's entry if it `want`s one. Called by the whole workgroup (uniform control flow).
fn append(counter: u32, want: bool, lid: u32) -> u32 {
    if lid == 0u {
        atomicStore(&wg_count, 0u);
    }
    workgroupBarrier();
    var mine = 0u;
    if want {
        mine = atomicAdd(&wg_count, 1u);
    }
    workgroupBarrier();
    if lid == 0u {
        wg_base = atomicAdd(&wf[counter], atomicLoad(&wg_count));
    }
    workgroupBarrier();
    return wg_base + mine;
}

// The indirect arguments at args[at..at + 3] for `count` invocations, folded to 2D as the
// runtime folds its grids (the kernels check their index against the count).
fn set_args(at: u32, count: u32) {
    let groups = (count + WG - 1u) / WG;
    let x = min(groups, 65535u);
    args[at] = x;
    args[at + 1u] = select(1u, (groups + x - 1u) / max(x, 1u), groups > 0u);
    args[at + 2u] = 1u;
}

const WG: u32 = 64u;

// The sort key of a ray: its origin's cell in a 128^3 grid of the scene's box (Morton order),
// then its direction's octant.
fn ray_key(o: vec3<f32>, d: vec3<f32>) -> u32 {
    let rel = (o - params.bmin) / max(params.bmax - params.bmin, vec3<f32>(1e-30));
    let c = vec3<u32>(clamp(rel * 128.0, vec3<f32>(0.0), vec3<f32>(127.0)));
    let octant = select(0u, 1u, d.x < 0.0) | select(0u, 2u, d.y < 0.0) | select(0u, 4u, d.z < 0.0);
    return (encode_u32(c) << 3u) | octant;
}

// Per slot: adds the radiance of a path that ended to its pixel, starts the next path of the
// render in a free slot, and queues the slot if its path has a ray to trace.
@compute @workgroup_size(64)
fn regen(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let i = flat_index(wid, nwg, lid, WG);
    let in_pool = i < arrayLength(&state);
    var status = STATUS_FREE;
    if in_pool {
        status = state[i].status;
    }
    let n = params.width * params.height;
    if status == STATUS_ENDED {
        var sum = Sums();
        add_sample(&sum, state[i].radiance, pow2(params.scale_log2));
        add_pixel_sums(state[i].pixel, n, sum, false, false);
    }
    // 8x8 tiles of the image, each sample of the batch in turn
    let lanes = ((params.width + 7u) / 8u) * ((params.height + 7u) / 8u) * 64u;
    let paths = lanes * params.batch_count;
    let need = in_pool && status != STATUS_ALIVE && atomicLoad(&wf[WF_NEXT]) < paths;
    let j = append(WF_NEXT, need, lid);
    var alive = status == STATUS_ALIVE;
    var started = false;
    if need && j < paths {
        let lane = j % lanes;
        let xy = tile_pixel(lane / 64u, params.width, lane % 64u);
        if xy.x < params.width && xy.y < params.height {
            var st = path_start(xy.x, xy.y, xy.y * params.width + xy.x, params.batch_first + j / lanes);
            st.status = STATUS_ALIVE;
            state[i] = st;
            started = true;
            alive = true;
        }
    }
    if status == STATUS_ENDED && !started {
        state[i].status = STATUS_FREE;
    }
    if (params.flags & FLAG_REORDER) != 0u {
        if in_pool {
            var key = DEAD_KEY;
            if alive {
                key = min(ray_key(state[i].origin, state[i].dir), DEAD_KEY - 1u);
            }
            keys[i] = key;
            queue[i] = i;
        }
        append(WF_QUEUE, alive, lid);
    } else {
        let q = append(WF_QUEUE, alive, lid);
        if alive {
            queue[q] = i;
        }
    }
}

// One invocation: the arguments of extend and shade; counts their rays.
@compute @workgroup_size(1)
fn queue_args() {
    let q = atomicLoad(&wf[WF_QUEUE]);
    set_args(0u, q);
    atomicStore(&wf[WF_LAST_QUEUE], q);
    atomicStore(&wf[WF_SHADOWS], 0u);
    add_wide(0u, q);
}

// Traces the ray of every queued path.
@compute @workgroup_size(64)
fn extend(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let k = flat_index(wid, nwg, lid, WG);
    if k >= atomicLoad(&wf[WF_LAST_QUEUE]) {
        return;
    }
    let slot = queue[k];
    hits[slot] = query(state[slot].origin, state[slot].dir, inf(), false);
}

// Runs the vertex of every queued path at its hit and queues its next-event estimation.
@compute @workgroup_size(64)
fn shade(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let k = flat_index(wid, nwg, lid, WG);
    let queued = k < atomicLoad(&wf[WF_LAST_QUEUE]);
    var nee: Nee;
    var slot = 0u;
    if queued {
        slot = queue[k];
        path = state[slot];
        let more = path_vertex(hits[slot]);
        path.status = select(STATUS_ENDED, STATUS_ALIVE, more);
        state[slot] = path;
        nee = path_nee;
    }
    let s = append(WF_SHADOWS, nee.valid != 0u, lid);
    if nee.valid != 0u {
        nee.slot = slot;
        shadows[s] = nee;
    }
}

// One invocation: the arguments of shadow; empties the queue for the next round.
@compute @workgroup_size(1)
fn shadow_args() {
    set_args(3u, atomicLoad(&wf[WF_SHADOWS]));
    atomicStore(&wf[WF_QUEUE], 0u);
}

var<workgroup> wg_shadow_rays: atomic<u32>;

// Casts the shadow rays of every queued next-event estimation and adds its light to the path.
@compute @workgroup_size(64)
fn shadow(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    if lid == 0u {
        atomicStore(&wg_shadow_rays, 0u);
    }
    workgroupBarrier();
    let k = flat_index(wid, nwg, lid, WG);
    var counts = Counts(0u, 0u);
    if k < atomicLoad(&wf[WF_SHADOWS]) {
        let nee = shadows[k];
        state[nee.slot].radiance += nee_radiance(nee, state[nee.slot].key, &counts);
        atomicAdd(&wg_shadow_rays, counts.shadow);
    }
    workgroupBarrier();
    if lid == 0u {
        add_wide(2u, atomicLoad(&wg_shadow_rays));
    }
}
