// Capability probes for tests (`lumbre_gpu::testing::capabilities`): whether f32 operations
// round one by one as IEEE 754 says (the CPU's results, bit for bit), and whether the driver
// ends long loops early.

// a, b, c: a * b + c is 0 rounded step by step and 2^-24 fused; tiny * half is the
// subnormal 2^-127, or 0 flushed; then the loop count.
@group(0) @binding(0) var<storage, read> inputs: array<f32, 6>;
@group(0) @binding(1) var<storage, read_write> results: array<u32, 4>;

// results[0]: the bits of a * b + c; results[1]: the bits of tiny * half.
@compute @workgroup_size(1)
fn arithmetic() {
    results[0] = bitcast<u32>(inputs[0] * inputs[1] + inputs[2]);
    results[1] = bitcast<u32>(inputs[3] * inputs[4]);
}

// results[2]: iterations a loop of u32(inputs[5]) ran; results[3]: 1 once it has ended.
@compute @workgroup_size(1)
fn loop_limit() {
    let n = u32(inputs[5]);
    var i = 0u;
    loop {
        if i >= n {
            break;
        }
        i += 1u;
        results[2] = i;
    }
    results[3] = 1u;
}
