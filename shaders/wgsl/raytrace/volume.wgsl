//! variants shallow, deep
//! import shared/dispatch
//! import octree/node
//! define shallow: const STACK: u32 = 88u;
//! define shallow: const LEVELS: u32 = 11u;
//! define deep: const STACK: u32 = 176u;
//! define deep: const LEVELS: u32 = 22u;
//! import shared/camera
// Traversal arrays: 8 stack entries per level plus the root's, one corner per level;
// `shallow` for trees up to depth 10, `deep` up to lumbre_octree::MAX_DEPTH (21).
// Voxel rendering through the sparse octree, one thread per pixel: a port of
// lumbre_octree::Octree::trace and lumbre_raytrace::voxel_radiance. Children are visited
// in the order `i ^ m` (m: the octants the ray points away from), which is front to back
// for every child the ray meets, so the first voxel reached at the render level is the
// nearest one, as the CPU's sort by entry distance finds.

struct Params {
    cam: Camera,
    root_min: vec3<f32>,
    root_size: f32,
    background: vec3<f32>,
    width: u32,
    height: u32,
    mode: u32,
    level: u32,
    max_depth: u32,
    n_lights: u32,
    ambient: f32,
    eps: f32,
    near: f32,
    far: f32,
    ks: f32,
    ns: f32,
    pixel_base: u32,
    // depth of the tree: nodes at this level are payloads only
    tree_depth: u32,
    // 1 if the tree holds no point
    empty: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
// the packed octree: interior nodes and payloads
@group(0) @binding(1) var<storage, read> nodes: array<Inner>;
// per light: position, intensity
@group(0) @binding(2) var<storage, read> lights: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> image: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read> payloads: array<Payload>;

const WG: u32 = 64u;
const NONE: u32 = 0xffffffffu;

fn comp(v: vec3<f32>, a: u32) -> f32 {
    return select(select(v.z, v.y, a == 1u), v.x, a == 0u);
}

fn is_nan(x: f32) -> bool {
    return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u;
}

fn inf() -> f32 {
    return bitcast<f32>(0x7f800000u);
}

// Side of a node at `level`: root_size / 2^level, exactly (a power-of-two scale).
fn side(level: u32) -> f32 {
    return ldexp(params.root_size, -i32(level));
}

// The offset of child `oct` in a box of children of side `s`.
fn step_of(oct: u32, s: f32) -> vec3<f32> {
    return select(vec3<f32>(0.0), vec3<f32>(s), vec3<bool>((oct & 1u) != 0u, (oct & 2u) != 0u, (oct & 4u) != 0u));
}

// lumbre_octree::slab: (t_near, t_far, entry axis or 3, 1) or w = 0 for a miss.
fn slab(o: vec3<f32>, inv: vec3<f32>, lo: vec3<f32>, hi: vec3<f32>, t0: f32, t1: f32) -> vec4<f32> {
    return slab_t((lo - o) * inv, (hi - o) * inv, t0, t1);
}

// `slab` from the ray distances of the box's low (ta) and high (tb) planes per axis.
fn slab_t(ta: vec3<f32>, tb: vec3<f32>, t0: f32, t1: f32) -> vec4<f32> {
    var near = select(tb, ta, ta <= tb);
    var far = select(ta, tb, ta <= tb);
    near = select(near, vec3<f32>(-inf()), vec3<bool>(is_nan(near.x), is_nan(near.y), is_nan(near.z)));
    far = select(far, vec3<f32>(inf()), vec3<bool>(is_nan(far.x), is_nan(far.y), is_nan(far.z)));
    var tn = t0;
    var axis = 3.0;
    if near.x > tn {
        tn = near.x;
        axis = 0.0;
    }
    if near.y > tn {
        tn = near.y;
        axis = 1.0;
    }
    if near.z > tn {
        tn = near.z;
        axis = 2.0;
    }
    var tf = t1;
    if far.x < tf {
        tf = far.x;
    }
    if far.y < tf {
        tf = far.y;
    }
    if far.z < tf {
        tf = far.z;
    }
    return vec4<f32>(tn, tf, axis, select(0.0, 1.0, tn <= tf));
}

// `node`: the voxel's payload index.
struct VoxelHit {
    t: f32,
    node: u32,
    normal: vec3<f32>,
}

fn normal_of(axis: u32, d: vec3<f32>) -> vec3<f32> {
    var a = axis;
    if a >= 3u {
        // Started inside: the dominant axis of the direction (ties to the later axis).
        let ad = abs(d);
        a = 0u;
        if ad.y >= ad.x {
            a = 1u;
        }
        if ad.z >= comp(ad, a) {
            a = 2u;
        }
    }
    let s = select(1.0, -1.0, comp(d, a) > 0.0);
    return vec3<f32>(select(0.0, s, a == 0u), select(0.0, s, a == 1u), select(0.0, s, a == 2u));
}

fn trace(o: vec3<f32>, d: vec3<f32>, t_min: f32, t_max: f32, level: u32) -> VoxelHit {
    var miss = VoxelHit(0.0, NONE, vec3<f32>(0.0));
    if params.empty != 0u {
        return miss;
    }
    let inv = vec3<f32>(1.0) / d;
    let root = slab(o, inv, params.root_min, params.root_min + vec3<f32>(params.root_size), t_min, t_max);
    if root.w == 0.0 {
        return miss;
    }
    // Octants the ray points away from along each axis.
    let m = select(0u, 1u, d.x < 0.0) | select(0u, 2u, d.y < 0.0) | select(0u, 4u, d.z < 0.0);
    // Pending nodes as index << 3 | octant (nodes hold no keys; 2^29 nodes is more than a
    // tree of lumbre_octree::MAX_POINTS points can have). Their levels follow from where
    // they sit: depth first, entries only get deeper towards the top of the stack, and
    // `bound[l]` is where the entries of level l start.
    var stack: array<u32, STACK>;
    var bound: array<u32, LEVELS>;
    stack[0] = 0u;
    bound[0] = 0u;
    var sp = 1u;
    var level_here = 0u;
    // Lower corner of the last node popped at each level. Depth first, a node's parent is
    // always the last node popped one level up, so a corner is its parent's plus one step,
    // the same additions in the same order as NodeKey64::bounds (bit-identical).
    var lo_at: array<vec3<f32>, LEVELS>;
    while sp > 0u {
        sp -= 1u;
        let i = stack[sp] >> 3u;
        while sp < bound[level_here] {
            level_here -= 1u;
        }
        var lo = params.root_min;
        if level_here > 0u {
            lo = lo_at[level_here - 1u] + step_of(stack[sp] & 7u, side(level_here));
        }
        lo_at[level_here] = lo;
        if level_here == level {
            let s = slab(o, inv, lo, lo + vec3<f32>(side(level_here)), t_min, t_max);
            // Leaves are payloads: their index is their payload's.
            var payload = i;
            if level_here < params.tree_depth {
                payload = nodes[i].payload;
            }
            return VoxelHit(s.x, payload, normal_of(u32(s.z), d));
        }
        let mask = nodes[i].child_mask;
        let first = nodes[i].first_child;
        // Children's boxes from this one's; push far to near so the nearest pops first.
        // The children's planes are the node's low, middle and high planes: their ray
        // distances once per node, then each child picks its pair per axis. The same
        // arithmetic as a slab test of the child's own box (lo + 0, lo + half, then + half).
        let half = side(level_here + 1u);
        bound[level_here + 1u] = sp;
        let mid = lo + vec3<f32>(half);
        let t_lo = (lo - o) * inv;
        let t_mid = (mid - o) * inv;
        let t_hi = ((mid + vec3<f32>(half)) - o) * inv;
        for (var j = 0u; j < 8u; j++) {
            let oct = (7u - j) ^ m;
            if (mask & (1u << oct)) == 0u {
                continue;
            }
            let c = first + countOneBits(mask & ((1u << oct) - 1u));
            let upper = vec3<bool>((oct & 1u) != 0u, (oct & 2u) != 0u, (oct & 4u) != 0u);
            let cs = slab_t(select(t_lo, t_mid, upper), select(t_mid, t_hi, upper), t_min, t_max);
            if cs.w != 0.0 && sp < STACK {
                stack[sp] = (c << 3u) | oct;
                sp += 1u;
            }
        }
        // The next entry popped is one of these children, if any was pushed.
        level_here += 1u;
    }
    return miss;
}

fn mean_color(n: Payload) -> vec3<f32> {
    let c = f32(max(n.count, 1u)) * 255.0;
    return vec3<f32>(f32(n.sum[0]) / c, f32(n.sum[1]) / c, f32(n.sum[2]) / c);
}

fn mean_reflection(n: Payload) -> f32 {
    return f32(n.sum[3]) / (f32(max(n.count, 1u)) * 255.0);
}

fn reflect_dir(d: vec3<f32>, n: vec3<f32>) -> vec3<f32> {
    return d - 2.0 * dot(d, n) * n;
}

fn radiance(origin: vec3<f32>, dir: vec3<f32>) -> vec3<f32> {
    let level = params.level;
    if params.mode == 0u {
        let h = trace(origin, dir, 0.0, inf(), level);
        if h.node == NONE {
            return params.background;
        }
        return mean_color(payloads[h.node]);
    }
    if params.mode == 1u {
        let h = trace(origin, dir, 0.0, inf(), level);
        if h.node == NONE {
            return params.background;
        }
        return vec3<f32>(clamp(1.0 - (h.t - params.near) / (params.far - params.near), 0.0, 1.0));
    }
    var color = vec3<f32>(0.0);
    var weight = 1.0;
    var ro = origin;
    var rd = dir;
    for (var bounce = 0u; bounce < max(params.max_depth, 1u); bounce++) {
        let h = trace(ro, rd, 0.0, inf(), level);
        if h.node == NONE {
            color += weight * params.background;
            break;
        }
        let node = payloads[h.node];
        let albedo = mean_color(node);
        let refl = mean_reflection(node);
        let n = h.normal;
        let p = ro + rd * h.t;
        let above = p + n * params.eps;
        var local = params.ambient * albedo;
        for (var li = 0u; li < params.n_lights; li++) {
            let lp = lights[2u * li].xyz;
            let intensity = lights[2u * li + 1u].xyz;
            let to = lp - above;
            let d2 = dot(to, to);
            let d = sqrt(d2);
            let l = to / d;
            let cos = dot(n, l);
            if cos <= 0.0 {
                continue;
            }
            if trace(above, l, 0.0, d, level).node != NONE {
                continue;
            }
            let spec = params.ks * pow(max(dot(reflect_dir(-l, n), -rd), 0.0), params.ns);
            local += (albedo * cos + vec3<f32>(spec)) * intensity / d2;
        }
        color += weight * (1.0 - refl) * local;
        weight *= refl;
        if weight < 1e-3 {
            break;
        }
        ro = above;
        rd = reflect_dir(rd, n);
    }
    return color;
}

@compute @workgroup_size(64)
fn render(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    // `pixel_base` counts tiles.
    let xy = tile_pixel(params.pixel_base + flat_workgroup(wid, nwg), params.width, lid);
    if xy.x >= params.width || xy.y >= params.height {
        return;
    }
    let dir = camera_dir(params.cam, f32(xy.x) + 0.5, f32(xy.y) + 0.5);
    image[xy.y * params.width + xy.x] = vec4<f32>(radiance(params.cam.eye.xyz, dir), 1.0);
}
