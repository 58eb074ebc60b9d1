//! import shared/dispatch
//! import density/crossing
//! import density/fixed
// Brute force, twin of brute.rs: one thread per disk tests every segment in order; the
// workgroup stages 256 segments at a time in workgroup memory. Adds to the disk's
// accumulator (count, spare, then low and high words of r, g, b), so pieces of a segment
// list longer than one binding run as successive dispatches.

struct Params {
    segments: u32,
    disks: u32,
    scale: f32,
    _pad: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
// start, end (w unused) per segment
@group(0) @binding(1) var<storage, read> seg_geom: array<vec4<f32>>;
// rgb power per segment
@group(0) @binding(2) var<storage, read> seg_power: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> disks: array<DiskData>;
@group(0) @binding(4) var<storage, read_write> acc: array<u32>;

const WG: u32 = 256u;

var<workgroup> tile_a: array<vec3<f32>, WG>;
var<workgroup> tile_b: array<vec3<f32>, WG>;

@compute @workgroup_size(256)
fn brute_force(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let i = flat_index(wid, nwg, lid, WG);
    let live = i < params.disks;
    let disk = disks[min(i, params.disks - 1u)];
    var count = 0u;
    var r = vec2<u32>(0u);
    var g = vec2<u32>(0u);
    var b = vec2<u32>(0u);
    for (var base = 0u; base < params.segments; base += WG) {
        let s = base + lid;
        if s < params.segments {
            tile_a[lid] = seg_geom[2u * s].xyz;
            tile_b[lid] = seg_geom[2u * s + 1u].xyz;
        }
        workgroupBarrier();
        let m = min(WG, params.segments - base);
        if live {
            for (var k = 0u; k < m; k++) {
                if crossing(tile_a[k], tile_b[k], disk).w != 0.0 {
                    let p = seg_power[base + k].xyz;
                    count += 1u;
                    r = add64(r, quantize(p.x, params.scale));
                    g = add64(g, quantize(p.y, params.scale));
                    b = add64(b, quantize(p.z, params.scale));
                }
            }
        }
        workgroupBarrier();
    }
    if live {
        let w = 8u * i;
        acc[w] += count;
        let r0 = add64(vec2<u32>(acc[w + 2u], acc[w + 3u]), r);
        let g0 = add64(vec2<u32>(acc[w + 4u], acc[w + 5u]), g);
        let b0 = add64(vec2<u32>(acc[w + 6u], acc[w + 7u]), b);
        acc[w + 2u] = r0.x;
        acc[w + 3u] = r0.y;
        acc[w + 4u] = g0.x;
        acc[w + 5u] = g0.y;
        acc[w + 6u] = b0.x;
        acc[w + 7u] = b0.y;
    }
}
