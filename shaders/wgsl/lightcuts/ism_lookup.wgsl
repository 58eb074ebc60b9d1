//! module
//! import lightcuts/ism_paraboloid
// Visibility from imperfect shadow maps, operation for operation as IsmAtlas::visibility
// in lumbre_lightcuts::ism's lookup.rs.
//
// The includer declares, in group 0, at binding numbers of its choice:
//   var<uniform> ism: IsmParams;
//   var<storage, read> ism_atlas: array<u32>;   (the maps: f32 bits, +inf for none)
// (lumbre_lightcuts::ism::GpuIsmAtlas::lookup_bindings gives both, in this order).

struct IsmParams {
    // Side of each map in texels.
    size: u32,
    // Taps per lookup: 1, 5 or 9.
    taps: u32,
    // Number of maps.
    vpls: u32,
    // Depth bias in scene units, and per unit of distance (Lookup::per_distance).
    bias: f32,
    per_distance: f32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

// Offset of tap k: the texel, then its 4 neighbours (5 taps), or the 3x3 block (9 taps).
fn ism_tap_offset(taps: u32, k: u32) -> vec2<i32> {
    if taps == 9u {
        return vec2<i32>(i32(k % 3u) - 1, i32(k / 3u) - 1);
    }
    switch k {
        case 1u: { return vec2<i32>(-1, 0); }
        case 2u: { return vec2<i32>(1, 0); }
        case 3u: { return vec2<i32>(0, -1); }
        case 4u: { return vec2<i32>(0, 1); }
        default: { return vec2<i32>(0, 0); }
    }
}

// The fraction of the taps around p's texel in VPL `vpl`'s map whose depth plus the margin
// (bias + distance * per_distance) reaches p's distance: 1 lit, 0 shadowed. Points behind the VPL (and VPL indices past the
// atlas) get 0.
fn ism_visibility(vpl: u32, vpl_pos: vec3<f32>, vpl_normal: vec3<f32>, p: vec3<f32>) -> f32 {
    if vpl >= ism.vpls {
        return 0.0;
    }
    let t = ism_project(vpl_pos, ism_frame(vpl_normal), p, ism.size);
    if !t.ok {
        return 0.0;
    }
    let s = i32(ism.size);
    let base = vpl * ism.size * ism.size;
    let reach = t.dist - (ism.bias + t.dist * ism.per_distance);
    var lit = 0u;
    for (var k = 0u; k < ism.taps; k += 1u) {
        let o = ism_tap_offset(ism.taps, k);
        let x = u32(clamp(i32(t.x) + o.x, 0, s - 1));
        let y = u32(clamp(i32(t.y) + o.y, 0, s - 1));
        let depth = bitcast<f32>(ism_atlas[base + y * ism.size + x]);
        if reach <= depth {
            lit += 1u;
        }
    }
    return f32(lit) / f32(ism.taps);
}
