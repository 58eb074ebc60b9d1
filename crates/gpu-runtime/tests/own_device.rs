//! A context on a device the application made: accepted when it has what Lumbre needs,
//! refused with the missing limit named otherwise; every kernel fits `REQUIRED_LIMITS`.

use lumbre_gpu::testing::test_gpu;
use lumbre_gpu::{CopyKernel, Error, Gpu, GpuOptions, OPTIONAL_FEATURES, REQUIRED_LIMITS, Tolerance, conformance};

/// The test adapter, to make devices of our own from.
fn adapter() -> Option<wgpu::Adapter> {
    test_gpu(wgpu::Features::empty()).map(|gpu| gpu.wgpu_adapter().clone())
}

fn device(adapter: &wgpu::Adapter, features: wgpu::Features, limits: wgpu::Limits) -> (wgpu::Device, wgpu::Queue) {
    let desc = wgpu::DeviceDescriptor { required_features: features, required_limits: limits, ..Default::default() };
    pollster::block_on(adapter.request_device(&desc)).expect("the adapter makes the device")
}

fn no_cache() -> GpuOptions {
    GpuOptions { pipeline_cache: None, ..GpuOptions::default() }
}

#[test]
fn a_device_made_with_wgpu_is_accepted_and_runs_kernels() {
    let Some(adapter) = adapter() else { return };
    let (device, queue) = device(&adapter, wgpu::Features::empty(), adapter.limits());
    let gpu = Gpu::from_wgpu_with_options(adapter, device.clone(), queue, &no_cache()).unwrap();
    assert_eq!(gpu.device(), &device, "the context uses the application's device");
    assert!(gpu.features().is_empty(), "only the features the application enabled");
    let input: Vec<[u32; 4]> = (0..1000u32).map(|i| [i, i + 1, i + 2, i + 3]).collect();
    assert_eq!(conformance(&CopyKernel, &gpu, &input, Tolerance::EXACT).unwrap(), input);
}

#[test]
fn a_device_with_too_low_limits_is_refused_naming_each() {
    let Some(adapter) = adapter() else { return };
    let low = wgpu::Limits {
        max_storage_buffers_per_shader_stage: 4,
        max_compute_workgroup_storage_size: 8192,
        ..REQUIRED_LIMITS
    };
    let (device, queue) = device(&adapter, wgpu::Features::empty(), low);
    let err = Gpu::from_wgpu_with_options(adapter, device, queue, &no_cache()).unwrap_err();
    let Error::UnsuitableDevice { missing, .. } = &err else { panic!("wrong error: {err}") };
    let storage = format!(
        "limit max_storage_buffers_per_shader_stage: needs {}, the device has 4",
        REQUIRED_LIMITS.max_storage_buffers_per_shader_stage
    );
    let shared = format!(
        "limit max_compute_workgroup_storage_size: needs {}, the device has 8192",
        REQUIRED_LIMITS.max_compute_workgroup_storage_size
    );
    assert_eq!(missing, &[storage.clone(), shared], "{err}");
    assert!(err.to_string().contains(&storage), "{err}");
}

#[test]
fn every_kernel_fits_the_required_limits() {
    let Some(adapter) = adapter() else { return };
    let features = adapter.features() & OPTIONAL_FEATURES;
    let (device, queue) = device(&adapter, features, REQUIRED_LIMITS);
    let gpu = Gpu::from_wgpu_with_options(adapter, device, queue, &no_cache()).unwrap();
    let mut compiled = 0;
    for shader in lumbre_shaders::ALL.iter().filter(|s| gpu.supports(s)) {
        for entry in shader.entry_points {
            gpu.kernel(shader, entry).unwrap_or_else(|e| panic!("{}/{entry}: {e}", shader.name));
            compiled += 1;
        }
    }
    assert!(compiled > 50, "only {compiled} kernels compiled");
}
