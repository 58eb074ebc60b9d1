//! A context on a device the application made: accepted when it has what Lumbre needs,
//! refused with the missing limit named otherwise; every kernel fits `REQUIRED_LIMITS`.

use lumbre_gpu::stages::Stages;
use lumbre_gpu::testing::test_gpu;
use lumbre_gpu::{
    Buffer, CopyKernel, Error, Gpu, GpuOptions, OPTIONAL_FEATURES, REQUIRED_LIMITS, Tolerance, conformance,
};

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

/// What every Lumbre buffer is created with.
const USAGE: wgpu::BufferUsages =
    wgpu::BufferUsages::STORAGE.union(wgpu::BufferUsages::COPY_SRC).union(wgpu::BufferUsages::COPY_DST);

fn app_buffer(device: &wgpu::Device, size: u64, usage: wgpu::BufferUsages) -> wgpu::Buffer {
    device.create_buffer(&wgpu::BufferDescriptor { label: Some("app"), size, usage, mapped_at_creation: false })
}

#[test]
fn a_stage_reads_and_writes_the_applications_buffers_in_its_encoder() {
    let Some(adapter) = adapter() else { return };
    let (device, queue) = device(&adapter, wgpu::Features::empty(), adapter.limits());
    let gpu = Gpu::from_wgpu_with_options(adapter, device.clone(), queue.clone(), &no_cache()).unwrap();
    let input: Vec<[u32; 4]> = (0..1000u32).map(|i| [i, 2 * i, 3 * i, 4 * i]).collect();
    let bytes = 16 * input.len() as u64;
    let (src, dst) = (app_buffer(&device, bytes, USAGE), app_buffer(&device, bytes, USAGE));
    let staging = app_buffer(&device, bytes, wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST);
    queue.write_buffer(&src, 0, bytemuck::cast_slice(&input));

    // The application's encoder: its own clear, Lumbre's copy stage, its own read-back copy.
    let mut encoder = device.create_command_encoder(&Default::default());
    encoder.clear_buffer(&dst, 0, None);
    let mut rec = gpu.recorder_on(encoder);
    let (s, d) = (Buffer::from_wgpu(src, input.len()).unwrap(), Buffer::from_wgpu(dst, input.len()).unwrap());
    CopyKernel::record_into(&mut rec, &s, &d).unwrap();
    let mut encoder = rec.finish();
    encoder.copy_buffer_to_buffer(&d.into_wgpu(), 0, &staging, 0, bytes);
    queue.submit([encoder.finish()]);

    staging.map_async(wgpu::MapMode::Read, .., |r| r.expect("mapped"));
    device.poll(wgpu::PollType::wait_indefinitely()).unwrap();
    let copied: Vec<[u32; 4]> = bytemuck::pod_collect_to_vec(&staging.get_mapped_range(..).unwrap());
    assert_eq!(copied, input);
    assert_eq!(gpu.transfers().downloads.calls, 0, "the application read the result back, not Lumbre");
}

#[test]
fn a_buffer_without_lumbres_usages_or_too_small_is_refused() {
    let Some(gpu) = test_gpu(wgpu::Features::empty()) else { return };
    let mapped = app_buffer(gpu.device(), 64, wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST);
    let err = Buffer::<u32>::from_wgpu(mapped, 16).unwrap_err().to_string();
    assert!(err.contains("lacks") && err.contains("STORAGE") && err.contains("COPY_SRC"), "{err}");
    let small = app_buffer(gpu.device(), 64, USAGE);
    let err = Buffer::<u32>::from_wgpu(small.clone(), 17).unwrap_err().to_string();
    assert!(err.contains("64 bytes cannot hold 17 values"), "{err}");
    assert_eq!(Buffer::<[u32; 4]>::from_wgpu(small, 4).unwrap().len(), 4);
}

#[test]
fn a_pipeline_that_reads_back_between_stages_refuses_the_applications_encoder() {
    let Some(gpu) = test_gpu(wgpu::Features::empty()) else { return };
    let mut rec = gpu.recorder_on(gpu.device().create_command_encoder(&Default::default()));
    let mut stages = Stages::record(&mut rec);
    let b = stages.upload(&[1u32, 2, 3]).unwrap();
    let err = stages.read(b).unwrap_err().to_string();
    assert!(err.contains("Gpu::recorder"), "{err}");
}
