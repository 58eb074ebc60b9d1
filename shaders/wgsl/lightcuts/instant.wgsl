//! variants rays_kd, rays_bvh, maps_kd, maps_bvh
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
// Instant radiosity, one thread per G-buffer pixel in 8x8 tiles: every VPL, in order, with
// its own visibility (lumbre_lightcuts::instant's `instant_pixel`). A dispatch adds the
// VPLs first_vpl .. first_vpl + n_vpls to the running sum it keeps in `image` (rays in w);
// the last one turns the sum into radiance. The workgroup stages 64 VPLs at a time in
// shared memory.

struct Params {
    bmin: vec3<f32>,
    width: u32,
    bmax: vec3<f32>,
    height: u32,
    min_d2: f32,
    // the VPLs of this dispatch
    n_vpls: u32,
    // bit 0: restart traversal; bit 1: watertight test; bit 2: shadow rays
    flags: u32,
    tile_base: u32,
    // SHADOW_END, passed at run time: a compiler folding it into the traversal may
    // round differently from the CPU's
    shadow_end: f32,
    first_vpl: u32,
    // 1 for the first dispatch (the sum starts at 0), 2 for the last (write radiance)
    stage: u32,
    _p2: u32,
}

// In a storage buffer, not a uniform: each chunk of VPLs has its own values, and lavapipe
// compiles (and keeps) a variant of the kernel for every set of uniform values it meets.
@group(0) @binding(0) var<storage, read> params: Params;
// bindings 1 to 3: the kd-tree (kdtree/traverse)
@group(0) @binding(4) var<storage, read> gbuffer: array<GPixel>;
// three vec4 per VPL: position, normal, intensity
@group(0) @binding(5) var<storage, read> vpls: array<vec4<f32>>;
// the running sum and shadow rays (bits in w), then the radiance
@group(0) @binding(6) var<storage, read_write> image: array<vec4<f32>>;
// visibility queries per tile (8x8 pixels)
@group(0) @binding(7) var<storage, read_write> tile_rays: array<u32>;
// the imperfect shadow maps (lumbre_lightcuts::ism::GpuIsmAtlas::lookup_bindings)
@group(0) @binding(8) var<uniform> ism: IsmParams;
@group(0) @binding(9) var<storage, read> ism_atlas: array<u32>;

const WG: u32 = 64u;
const SHADOW_RAYS: u32 = 4u;

var<workgroup> staged: array<vec4<f32>, 192>;
var<workgroup> wg_rays: atomic<u32>;

fn visible(x: vec3<f32>, y: vec3<f32>) -> bool {
    let f = params.flags;
    let h = tree_query(ray_prep(x, y - x), f, true, params.bmin, params.bmax, 0.0, params.shadow_end);
    return h.tri == KD_NONE;
}

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    if lid == 0u {
        atomicStore(&wg_rays, 0u);
    }
    workgroupBarrier();
    let tile = params.tile_base + flat_workgroup(wid, nwg);
    let xy = tile_pixel(tile, params.width, lid);
    let inside = xy.x < params.width && xy.y < params.height;
    let index = xy.y * params.width + xy.x;
    var px: GPixel;
    if inside {
        px = gbuffer[index];
    }
    let shaded = inside && (px.flags & 1u) != 0u;
    let rays_on = (params.flags & SHADOW_RAYS) != 0u;
    var sum = vec3<f32>(0.0);
    var rays = 0u;
    if inside && (params.stage & 1u) == 0u {
        let acc = image[index];
        sum = acc.xyz;
        rays = bitcast<u32>(acc.w);
    }
    let rays_before = rays;
    for (var base = 0u; base < params.n_vpls; base += WG) {
        workgroupBarrier();
        if base + lid < params.n_vpls {
            let k = 3u * (params.first_vpl + base + lid);
            staged[3u * lid] = vpls[k];
            staged[3u * lid + 1u] = vpls[k + 1u];
            staged[3u * lid + 2u] = vpls[k + 2u];
        }
        workgroupBarrier();
        if shaded {
            let count = min(WG, params.n_vpls - base);
            for (var j = 0u; j < count; j++) {
                let y = staged[3u * j].xyz;
                let ny = staged[3u * j + 1u].xyz;
                let g = geometry(px.position, px.normal, y, ny, params.min_d2);
                if g <= 0.0 {
                    continue;
                }
                var v = 1.0;
                if USE_ISM {
                    rays += 1u;
                    v = ism_visibility(params.first_vpl + base + j, y, ny, px.position);
                } else if rays_on {
                    rays += 1u;
                    v = select(0.0, 1.0, visible(px.position, y));
                }
                let gv = g * v;
                if gv > 0.0 {
                    sum += staged[3u * j + 2u].xyz * gv;
                }
            }
        }
    }
    if inside {
        if (params.stage & 2u) != 0u {
            var color = px.emission;
            if shaded {
                // Not (albedo * sum) * INV_PI: Mesa reassociates a product of a product and
                // a constant, and the CPU twin would round differently.
                color = px.emission + px.albedo * (sum * INV_PI);
            }
            image[index] = vec4<f32>(color, 1.0);
        } else {
            image[index] = vec4<f32>(sum, bitcast<f32>(rays));
        }
    }
    atomicAdd(&wg_rays, rays - rays_before);
    workgroupBarrier();
    let tiles = ((params.width + 7u) / 8u) * ((params.height + 7u) / 8u);
    if lid == 0u && tile < tiles {
        tile_rays[tile] += atomicLoad(&wg_rays);
    }
}
