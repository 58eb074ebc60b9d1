//! variants rays32_kd, rays64_kd, rays128_kd, maps32_kd, maps64_kd, maps128_kd, rays32_bvh, rays64_bvh, rays128_bvh, maps32_bvh, maps64_bvh, maps128_bvh
//! define rays32*: const HEAP: u32 = 32u;
//! define rays64*: const HEAP: u32 = 64u;
//! define rays128*: const HEAP: u32 = 128u;
//! define maps32*: const HEAP: u32 = 32u;
//! define maps64*: const HEAP: u32 = 64u;
//! define maps128*: const HEAP: u32 = 128u;
//! define rays*: const SHARED_SLOTS: u32 = 1u;
//! define maps32*: const SHARED_SLOTS: u32 = 2048u;
//! define maps64*: const SHARED_SLOTS: u32 = 4096u;
//! define maps128*: const SHARED_SLOTS: u32 = 1u;
//! define rays*: const USE_ISM: bool = false;
//! define maps*: const USE_ISM: bool = true;
//! import shared/dispatch
//! define const KD_SHORT_STACK: u32 = 16u;
//! import *kd: kdtree/traverse
//! import *bvh: kdtree/bvh
//! import shared/camera
//! import lightcuts/light
//! import lightcuts/pixel
//! import lightcuts/ism_lookup
// Lightcuts, one thread per G-buffer pixel in 8x8 tiles: lumbre_lightcuts::cut's
// `cut_pixel` step by step, with its heap of refinable clusters in a fixed private array
// of HEAP entries (12 bytes each). Visibility by shadow rays (flag bit 2; variants raysN) or
// by imperfect shadow maps (variants mapsN); N is HEAP. With maps and up to 64 entries, the
// bounds and nodes live in workgroup memory (32 KiB at most: every device wgpu reaches has
// it), where they stay on chip. With rays they stay in private memory: the traversal needs
// the occupancy that 32 KiB per workgroup would cost.

struct Params {
    bmin: vec3<f32>,
    width: u32,
    bmax: vec3<f32>,
    height: u32,
    min_d2: f32,
    error: f32,
    max_cut: u32,
    // bit 0: restart traversal; bit 1: watertight test; bit 2: shadow rays
    flags: u32,
    tile_base: u32,
    // SHADOW_END, passed at run time: a compiler folding it into the traversal may
    // round differently from the CPU's
    shadow_end: f32,
    _p1: u32,
    _p2: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
// bindings 1 to 3: the kd-tree (kdtree/traverse)
@group(0) @binding(4) var<storage, read> gbuffer: array<GPixel>;
@group(0) @binding(5) var<storage, read> nodes: array<LightNode>;
// three vec4 per VPL: position, normal, intensity
@group(0) @binding(6) var<storage, read> vpls: array<vec4<f32>>;
@group(0) @binding(7) var<storage, read_write> image: array<vec4<f32>>;
// per pixel: cut size, hash of its nodes, visibility queries, flags (lumbre_lightcuts::CutPixel)
@group(0) @binding(8) var<storage, read_write> cuts: array<vec4<u32>>;
// the imperfect shadow maps (lumbre_lightcuts::ism::GpuIsmAtlas::lookup_bindings)
@group(0) @binding(9) var<uniform> ism: IsmParams;
@group(0) @binding(10) var<storage, read> ism_atlas: array<u32>;

const SHADOW_RAYS: u32 = 4u;
const CUT_INEXACT: u32 = 1u;
const CUT_MAX_REACHED: u32 = 2u;

// The pixel's state.
var<private> px: GPixel;
const SHARED: bool = SHARED_SLOTS > 1u;
const PRIVATE_SLOTS: u32 = select(HEAP, 1u, SHARED);
var<private> heap_bound: array<f32, PRIVATE_SLOTS>;
var<private> heap_node: array<u32, PRIVATE_SLOTS>;
var<private> heap_gv: array<f32, HEAP>;
// entry i of thread `me` at i * 64 + me: consecutive threads, consecutive banks
var<workgroup> wg_bound: array<f32, SHARED_SLOTS>;
var<workgroup> wg_node: array<u32, SHARED_SLOTS>;
var<private> me: u32;
var<private> heap_len: u32;
var<private> done: vec3<f32>;
var<private> total: f32;
var<private> queries: u32;
var<private> dropped: f32;

struct Entry {
    bound: f32,
    node: u32,
    gv: f32,
}

fn visible(x: vec3<f32>, y: vec3<f32>) -> bool {
    let f = params.flags;
    let h = tree_query(ray_prep(x, y - x), f, true, params.bmin, params.bmax, 0.0, params.shadow_end);
    return h.tri == KD_NONE;
}

// Radiance times pi: the factor is applied once to the pixel's sum, and left out of every
// comparison (a compiler may reassociate a product with a constant).
fn contribution(node: LightNode, gv: f32) -> vec3<f32> {
    return px.albedo * node.intensity * gv;
}

// The sum of contribution's channels in factored form (Mesa factors a sum of products
// with a common factor, which would round differently from the CPU twin).
fn scalar(node: LightNode, gv: f32) -> f32 {
    return gv * dot3(px.albedo, node.intensity);
}

fn eval(rep: u32) -> f32 {
    let y = vpls[3u * rep].xyz;
    let ny = vpls[3u * rep + 1u].xyz;
    let g = geometry(px.position, px.normal, y, ny, params.min_d2);
    if g <= 0.0 {
        return 0.0;
    }
    var v = 1.0;
    if USE_ISM {
        queries += 1u;
        v = ism_visibility(rep, y, ny, px.position);
    } else if (params.flags & SHADOW_RAYS) != 0u {
        queries += 1u;
        v = select(0.0, 1.0, visible(px.position, y));
    }
    return g * v;
}

fn bound(node: LightNode) -> f32 {
    let x = px.position;
    let cr = receiver_cos_upper(x, px.normal, node.lo, node.hi);
    let cl = light_cos_upper(x, Cone(node.axis, node.cos), node.lo, node.hi);
    let g = cr * cl / max(box_dist2(x, node.lo, node.hi), params.min_d2);
    return g * dot3(px.albedo, node.intensity);
}

fn heap_bound_of(i: u32) -> f32 {
    if SHARED {
        return wg_bound[i * 64u + me];
    }
    return heap_bound[i];
}

fn heap_get(i: u32) -> Entry {
    if SHARED {
        return Entry(wg_bound[i * 64u + me], wg_node[i * 64u + me], heap_gv[i]);
    }
    return Entry(heap_bound[i], heap_node[i], heap_gv[i]);
}

fn heap_set(i: u32, e: Entry) {
    if SHARED {
        wg_bound[i * 64u + me] = e.bound;
        wg_node[i * 64u + me] = e.node;
    } else {
        heap_bound[i] = e.bound;
        heap_node[i] = e.node;
    }
    heap_gv[i] = e.gv;
}

fn heap_swap(i: u32, j: u32) {
    let a = heap_get(i);
    heap_set(i, heap_get(j));
    heap_set(j, a);
}

fn sift_up(start: u32) {
    var i = start;
    while i > 0u {
        let parent = (i - 1u) / 2u;
        if heap_bound_of(parent) >= heap_bound_of(i) {
            break;
        }
        heap_swap(parent, i);
        i = parent;
    }
}

fn sift_down(start: u32) {
    var i = start;
    loop {
        let l = 2u * i + 1u;
        let r = 2u * i + 2u;
        var big = i;
        if l < heap_len && heap_bound_of(l) > heap_bound_of(big) {
            big = l;
        }
        if r < heap_len && heap_bound_of(r) > heap_bound_of(big) {
            big = r;
        }
        if big == i {
            break;
        }
        heap_swap(i, big);
        i = big;
    }
}

struct Pushed {
    out: bool,
    e: Entry,
}

// Queues e; when full, whichever of e and the smallest entry is left out.
fn heap_push(e: Entry) -> Pushed {
    if heap_len < HEAP {
        heap_set(heap_len, e);
        heap_len += 1u;
        sift_up(heap_len - 1u);
        return Pushed(false, e);
    }
    var m = heap_len / 2u;
    for (var k = heap_len / 2u + 1u; k < heap_len; k++) {
        if heap_bound_of(k) < heap_bound_of(m) {
            m = k;
        }
    }
    if e.bound <= heap_bound_of(m) {
        return Pushed(true, e);
    }
    let out = heap_get(m);
    heap_set(m, e);
    sift_up(m);
    return Pushed(true, out);
}

fn heap_pop() {
    heap_len -= 1u;
    if heap_len > 0u {
        heap_set(0u, heap_get(heap_len));
        sift_down(0u);
    }
}

// Adds cluster `index` to the cut (lumbre_lightcuts::cut's Cut::add).
fn add(index: u32, known: bool, known_gv: f32) {
    let node = nodes[index];
    if node.left == LEAF {
        var gv = known_gv;
        if !known {
            gv = eval(node.rep);
        }
        done += contribution(node, gv);
        total += scalar(node, gv);
        return;
    }
    let b = bound(node);
    if b <= 0.0 {
        return;
    }
    var gv = known_gv;
    if !known {
        gv = eval(node.rep);
    }
    total += scalar(node, gv);
    let e = Entry(b, index, gv);
    let p = heap_push(e);
    if p.out {
        done += contribution(nodes[p.e.node], p.e.gv);
        dropped = max(dropped, p.e.bound);
    }
}

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    me = lid;
    let xy = tile_pixel(params.tile_base + flat_workgroup(wid, nwg), params.width, lid);
    if xy.x >= params.width || xy.y >= params.height {
        return;
    }
    let index = xy.y * params.width + xy.x;
    px = gbuffer[index];
    if (px.flags & 1u) == 0u {
        image[index] = vec4<f32>(px.emission, 1.0);
        cuts[index] = vec4<u32>(0u);
        return;
    }
    heap_len = 0u;
    done = vec3<f32>(0.0);
    total = 0.0;
    queries = 0u;
    dropped = 0.0;
    var size = 1u;
    var hash = hash_u32(0u);
    var flags = 0u;
    add(0u, false, 0.0);
    while heap_len > 0u {
        let top = heap_get(0u);
        if top.bound <= params.error * total {
            break;
        }
        if size >= params.max_cut {
            flags |= CUT_MAX_REACHED;
            break;
        }
        heap_pop();
        let node = nodes[top.node];
        total -= scalar(node, top.gv);
        size += 1u;
        hash = hash - hash_u32(top.node) + hash_u32(node.left) + hash_u32(node.right);
        add(node.left, nodes[node.left].rep == node.rep, top.gv);
        add(node.right, nodes[node.right].rep == node.rep, top.gv);
    }
    var color = done;
    for (var k = 0u; k < heap_len; k++) {
        let e = heap_get(k);
        color += contribution(nodes[e.node], e.gv);
    }
    if dropped > params.error * total {
        flags |= CUT_INEXACT;
    }
    image[index] = vec4<f32>(px.emission + color * INV_PI, 1.0);
    cuts[index] = vec4<u32>(size, hash, queries, flags);
}
