//! module
// The tiled products of the precompute (Y = -U M, Gauss-Jordan's rank-32 update): a workgroup
// of 256 makes 64 x 64 outputs, 4 x 4 an invocation, from DEPTH-deep slices of its operands
// that it stages first: ta[kk * TILE + row] and tb[kk * TILE + column].

const TILE: u32 = 64u;
const DEPTH: u32 = 16u;

var<workgroup> ta: array<f32, 1024>;
var<workgroup> tb: array<f32, 1024>;

// Adds the staged slice's products to this invocation's 4 x 4 outputs (rows 4 ty .., columns
// 4 tx ..); between two workgroup barriers.
fn tile_accumulate(acc: ptr<function, array<vec4<f32>, 4>>, tx: u32, ty: u32) {
    for (var kk = 0u; kk < DEPTH; kk++) {
        let a = vec4<f32>(ta[kk * TILE + ty * 4u], ta[kk * TILE + ty * 4u + 1u], ta[kk * TILE + ty * 4u + 2u], ta[kk * TILE + ty * 4u + 3u]);
        let b = vec4<f32>(tb[kk * TILE + tx * 4u], tb[kk * TILE + tx * 4u + 1u], tb[kk * TILE + tx * 4u + 2u], tb[kk * TILE + tx * 4u + 3u]);
        (*acc)[0] += a.x * b;
        (*acc)[1] += a.y * b;
        (*acc)[2] += a.z * b;
        (*acc)[3] += a.w * b;
    }
}
