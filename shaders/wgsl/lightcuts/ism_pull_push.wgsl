//! import shared/dispatch
// Pull-push hole filling, the GPU twin of ism/pull_push.rs. One workgroup fills one map:
// pull builds levels 1..L (each texel the mean of its 2x2 block's valid texels), push walks
// back down filling each hole of a level bilinearly from the level above (weights 9, 3, 3, 1
// over the taps inside the map that are valid, renormalised). Levels above 0 live in
// `scratch`. Texels are f32 bits, +inf for a hole.
//
// Every product below is by a power of two or by a table reciprocal, and weights 9 and 3
// are 8v + v and 2v + v: fused multiply-adds give the same result as separate ones (a
// driver that reassociates the sums can still move them by an ulp).

struct Params {
    size: u32,
    levels: u32,
    // Maps in this piece, and the scratch texels each one gets.
    maps: u32,
    scratch_per_map: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read_write> atlas: array<u32>;
@group(0) @binding(2) var<storage, read_write> scratch: array<u32>;

const WG: u32 = 256u;
const EMPTY: u32 = 0x7f800000u;

// 1 / w as f32, for w = 0..16 (0 unused).
const RECIP = array<u32, 17>(
    0u, 0x3f800000u, 0x3f000000u, 0x3eaaaaabu, 0x3e800000u, 0x3e4ccccdu, 0x3e2aaaabu, 0x3e124925u, 0x3e000000u,
    0x3de38e39u, 0x3dcccccdu, 0x3dba2e8cu, 0x3daaaaabu, 0x3d9d89d9u, 0x3d924925u, 0x3d888889u, 0x3d800000u,
);

// Where level `l` of map `m` starts: level 0 in the atlas, the others in scratch.
fn level_base(m: u32, l: u32) -> u32 {
    if l == 0u {
        return m * params.size * params.size;
    }
    var off = m * params.scratch_per_map;
    for (var j = 1u; j < l; j += 1u) {
        let s = params.size >> j;
        off += s * s;
    }
    return off;
}

fn load(l: u32, at: u32) -> u32 {
    if l == 0u {
        return atlas[at];
    }
    return scratch[at];
}

fn store(l: u32, at: u32, value: u32) {
    if l == 0u {
        atlas[at] = value;
    } else {
        scratch[at] = value;
    }
}

// Tap (x, y) of a level of side s at `base` with weight w, if inside the map and valid.
fn tap(l: u32, base: u32, s: u32, x: i32, y: i32, w: u32, acc: ptr<function, f32>, weight: ptr<function, u32>) {
    if x < 0 || y < 0 || x >= i32(s) || y >= i32(s) {
        return;
    }
    let bits = load(l, base + u32(y) * s + u32(x));
    if bits >= EMPTY {
        return;
    }
    let v = bitcast<f32>(bits);
    var scaled = v;
    if w == 9u {
        scaled = v * 8.0 + v;
    } else if w == 3u {
        scaled = v * 2.0 + v;
    }
    *acc += scaled;
    *weight += w;
}

@compute @workgroup_size(256)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let m = flat_workgroup(wid, nwg);
    let live = m < params.maps;
    // Pull: level l from level l - 1.
    for (var l = 1u; l <= params.levels; l += 1u) {
        if live {
            let s = params.size >> l;
            let shift = countTrailingZeros(s);
            let fine = level_base(m, l - 1u);
            let coarse = level_base(m, l);
            for (var i = lid; i < s * s; i += WG) {
                let x = i & (s - 1u);
                let y = i >> shift;
                let row = 2u * y * (2u * s) + 2u * x;
                var sum = 0.0;
                var n = 0u;
                for (var k = 0u; k < 4u; k += 1u) {
                    let bits = load(l - 1u, fine + row + (k >> 1u) * (2u * s) + (k & 1u));
                    if bits < EMPTY {
                        sum += bitcast<f32>(bits);
                        n += 1u;
                    }
                }
                var out = EMPTY;
                if n > 0u {
                    out = bitcast<u32>(sum * bitcast<f32>(RECIP[n]));
                }
                store(l, coarse + i, out);
            }
        }
        storageBarrier();
    }
    // Push: the holes of level l - 1 from level l, top down.
    for (var l = params.levels; l >= 1u; l -= 1u) {
        if live {
            let sc = params.size >> l;
            let sf = sc * 2u;
            let shift = countTrailingZeros(sf);
            let fine = level_base(m, l - 1u);
            let coarse = level_base(m, l);
            for (var i = lid; i < sf * sf; i += WG) {
                if load(l - 1u, fine + i) < EMPTY {
                    continue;
                }
                let x = i & (sf - 1u);
                let y = i >> shift;
                // The fine texel's centre lies a quarter of a coarse texel from the nearest
                // coarse centre, towards the far one.
                let nx = i32(x >> 1u);
                let ny = i32(y >> 1u);
                let fx = nx + select(-1, 1, (x & 1u) == 1u);
                let fy = ny + select(-1, 1, (y & 1u) == 1u);
                var acc = 0.0;
                var weight = 0u;
                tap(l, coarse, sc, nx, ny, 9u, &acc, &weight);
                tap(l, coarse, sc, fx, ny, 3u, &acc, &weight);
                tap(l, coarse, sc, nx, fy, 3u, &acc, &weight);
                tap(l, coarse, sc, fx, fy, 1u, &acc, &weight);
                if weight > 0u {
                    store(l - 1u, fine + i, bitcast<u32>(acc * bitcast<f32>(RECIP[weight])));
                }
            }
        }
        storageBarrier();
    }
}
