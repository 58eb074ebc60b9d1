//! import shared/dispatch
//! import morton/code
// Stage 1 of the Morton light tree (lumbre_lightcuts::morton_tree's `morton_keys`): each
// VPL's key, a Morton code of its quantised position with `dir_bits` levels of its normal's
// octahedral map interleaved evenly (direction level j after position level j p / q), and
// its index (the value the sort carries).

struct Params {
    min: vec3<f32>,
    n: u32,
    scale: vec3<f32>,
    // bits per axis of the position
    pos_bits: u32,
    dir_bits: u32,
    _p0: u32,
    _p1: u32,
    _p2: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
// three vec4 per VPL: position, normal, intensity
@group(0) @binding(1) var<storage, read> vpls: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> keys: array<u32>;
@group(0) @binding(3) var<storage, read_write> values: array<u32>;

const WG: u32 = 256u;

// lumbre_morton::Quantizer::cell_clamped, one axis.
fn cell(p: f32, lo: f32, scale: f32, last: f32) -> u32 {
    return u32(floor(clamp((p - lo) * scale, 0.0, last)));
}

// floor(x * 2^bits) clamped to [0, 2^bits - 1].
fn quantize_unit(x: f32, bits: u32) -> u32 {
    let cells = f32(1u << bits);
    return u32(clamp(floor(x * cells), 0.0, cells - 1.0));
}

fn octahedral(n: vec3<f32>) -> vec2<f32> {
    let l1 = abs(n.x) + abs(n.y) + abs(n.z);
    var u = n.x / l1;
    var v = n.y / l1;
    if n.z < 0.0 {
        let su = select(-1.0, 1.0, u >= 0.0);
        let sv = select(-1.0, 1.0, v >= 0.0);
        let u2 = (1.0 - abs(v)) * su;
        let v2 = (1.0 - abs(u)) * sv;
        u = u2;
        v = v2;
    }
    return vec2<f32>((u + 1.0) * 0.5, (v + 1.0) * 0.5);
}

fn light_key(p: vec3<f32>, n: vec3<f32>) -> u32 {
    let bits = params.pos_bits;
    let last = f32((1u << bits) - 1u);
    let c = vec3<u32>(
        cell(p.x, params.min.x, params.scale.x, last),
        cell(p.y, params.min.y, params.scale.y, last),
        cell(p.z, params.min.z, params.scale.z, last),
    );
    let q = params.dir_bits;
    if q == 0u {
        return encode_u32(c);
    }
    let o = octahedral(n);
    let qu = quantize_unit(o.x, q);
    let qv = quantize_unit(o.y, q);
    var key = 0u;
    var j = 0u;
    for (var level = 0u; level < bits; level++) {
        let b = bits - 1u - level;
        key = (key << 3u) | (((c.z >> b) & 1u) << 2u) | (((c.y >> b) & 1u) << 1u) | ((c.x >> b) & 1u);
        if j < q && j * bits / q == level {
            let d = q - 1u - j;
            key = (key << 2u) | (((qu >> d) & 1u) << 1u) | ((qv >> d) & 1u);
            j++;
        }
    }
    return key;
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let i = flat_index(wid, nwg, lid, WG);
    if i >= params.n {
        return;
    }
    keys[i] = light_key(vpls[3u * i].xyz, vpls[3u * i + 1u].xyz);
    values[i] = i;
}
