//! The capability probe: run once per context, and finding on lavapipe what is known of it
//! (f32 rounded step by step, loops ended after 65535 iterations).

use lumbre_gpu::testing::{Capabilities, capabilities, test_gpu};

#[test]
fn the_probe_runs_once_per_context() {
    let Some(gpu) = test_gpu(wgpu::Features::empty()) else { return };
    let first = capabilities(&gpu);
    let compiled = gpu.compiled_pipelines();
    assert_eq!(capabilities(&gpu.clone()), first);
    assert_eq!(gpu.compiled_pipelines(), compiled, "asked again, the probe ran again");
}

#[test]
fn lavapipe_rounds_like_the_cpu_and_ends_long_loops() {
    let Some(gpu) = test_gpu(wgpu::Features::empty()) else { return };
    let found = capabilities(&gpu);
    println!("{}: {found:?}", gpu.adapter_name());
    if gpu.adapter_name().contains("llvmpipe") {
        assert_eq!(found, Capabilities { exact_f32: true, loop_limit: Some(65535) });
    }
}
