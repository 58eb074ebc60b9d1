//! import shared/dispatch
//! import lightcuts/ism_random
//! import lightcuts/ism_paraboloid
// Splatting, the GPU twin of ism/splat.rs: each VPL projects its window of the point pool
// with its paraboloid map and keeps the nearest distance per texel. A workgroup owns one
// band of one VPL's map in workgroup memory (atomic min on the distance's f32 bits, which
// order like the distances), then writes the band out whole: no clear pass, and integer
// minima make the result independent of the order of the atomics.

struct Params {
    points: u32,
    per_vpl: u32,
    size: u32,
    // First VPL of this piece of the atlas, and how many it holds.
    vpl0: u32,
    vpls: u32,
    // Bands per map and rows per band.
    bands: u32,
    band_rows: u32,
    seed: u32,
}

// The VPL layout shared with the lightcuts renderer: xyz used, w padding.
struct Vpl {
    position: vec4<f32>,
    normal: vec4<f32>,
    intensity: vec4<f32>,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> points: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> vpls: array<Vpl>;
// The piece's maps, one after another, rows of `size` texels: f32 bits, +inf for none.
@group(0) @binding(3) var<storage, read_write> atlas: array<u32>;

const WG: u32 = 256u;
const BAND_TEXELS: u32 = 4096u;
const EMPTY: u32 = 0x7f800000u;

var<workgroup> band: array<atomic<u32>, BAND_TEXELS>;

@compute @workgroup_size(256)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let w = flat_workgroup(wid, nwg);
    let local_vpl = w / params.bands;
    let live = local_vpl < params.vpls;
    let row0 = (w % params.bands) * params.band_rows;
    let texels = params.band_rows * params.size;
    for (var i = lid; i < texels; i += WG) {
        atomicStore(&band[i], EMPTY);
    }
    workgroupBarrier();
    if live {
        let vpl = params.vpl0 + local_vpl;
        let light = vpls[vpl];
        let frame = ism_frame(light.normal.xyz);
        let start = ism_start(params.seed, vpl, params.points);
        for (var k = lid; k < params.per_vpl; k += WG) {
            var idx = start + k;
            if idx >= params.points {
                idx -= params.points;
            }
            let t = ism_project(light.position.xyz, frame, points[idx].xyz, params.size);
            if t.ok && t.y >= row0 && t.y < row0 + params.band_rows {
                atomicMin(&band[(t.y - row0) * params.size + t.x], bitcast<u32>(t.dist));
            }
        }
    }
    workgroupBarrier();
    if live {
        let base = local_vpl * params.size * params.size + row0 * params.size;
        for (var i = lid; i < texels; i += WG) {
            atlas[base + i] = atomicLoad(&band[i]);
        }
    }
}
