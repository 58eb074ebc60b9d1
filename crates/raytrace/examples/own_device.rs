//! Lumbre inside an application that owns the GPU: the application makes its wgpu instance,
//! adapter, device and queue, hands them to Lumbre with `Gpu::from_wgpu`, and has the
//! Whitted renderer draw the Cornell box into a buffer of its own, recorded into its own
//! command encoder, which it submits and reads back itself. The image is checked against
//! Lumbre's own GPU path, bit for bit.
//!
//! ```text
//! cargo run --example own_device -p lumbre-raytrace [-- out.png]
//! ```

use std::error::Error;
use std::path::Path;

use glam::Vec3;
use lumbre_gpu::{Buffer, Compute, Gpu, OPTIONAL_FEATURES, wgpu};
use lumbre_raytrace::{Camera, GpuScene, Image, Prepared, RenderOptions, Scene, WhittedRender};

const SCENE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/scenes/CornellBox-Original.obj");

/// The application's side: its device, its buffers, its encoder, its submission.
fn render_on_own_device(adapter: wgpu::Adapter, out: Option<&Path>) -> Result<(), Box<dyn Error>> {
    // Lumbre's kernels need more storage buffers per stage than WebGPU's defaults: ask for
    // what the adapter offers, and the optional features Lumbre uses when present.
    let desc = wgpu::DeviceDescriptor {
        label: Some("application"),
        required_features: adapter.features() & OPTIONAL_FEATURES,
        required_limits: adapter.limits(),
        ..Default::default()
    };
    let (device, queue) = pollster::block_on(adapter.request_device(&desc))?;
    let gpu = Gpu::from_wgpu(adapter, device.clone(), queue.clone())?;

    let (scene, _) = Scene::load_obj(SCENE.as_ref())?;
    let (width, height) = (160, 120);
    let camera = Camera::frame(scene.bounds, width as f32 / height as f32);
    let prepared = Prepared::new(scene, &Default::default());
    let render = WhittedRender { camera, options: RenderOptions { width, height, ..Default::default() } };
    let uploaded = GpuScene::upload(&gpu, &prepared)?;

    // The application's buffers: the image (RGB and 1 per pixel) and a staging buffer.
    let bytes = u64::from(width * height) * 16;
    let usage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST;
    let target = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("application image"),
        size: bytes,
        usage,
        mapped_at_creation: false,
    });
    let staging = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("application read-back"),
        size: bytes,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });

    // Lumbre records the render and the copy into the application's buffer into the
    // application's encoder; the application adds its read-back and submits.
    let mut rec = gpu.recorder_on(device.create_command_encoder(&Default::default()));
    let image = render.record_render(&mut rec, &uploaded)?;
    let pixels = Buffer::<[f32; 4]>::from_wgpu(target.clone(), (width * height) as usize)?;
    rec.copy(&image.pixels, &pixels)?;
    let mut encoder = rec.finish();
    encoder.copy_buffer_to_buffer(&target, 0, &staging, 0, bytes);
    queue.submit([encoder.finish()]);

    staging.map_async(wgpu::MapMode::Read, .., |mapped| mapped.expect("the read-back buffer maps"));
    device.poll(wgpu::PollType::wait_indefinitely())?;
    let rgba: Vec<[f32; 4]> = bytemuck::pod_collect_to_vec(&staging.get_mapped_range(..)?);
    let mine = Image::from_pixels(width, height, rgba.iter().map(|p| Vec3::new(p[0], p[1], p[2])).collect())?;

    if let Some(path) = out {
        mine.save(path)?;
        println!("wrote {}", path.display());
    }
    // The walls and the boxes in the light stand out from the background (0.05).
    let lit = mine.pixels.iter().filter(|p| p.max_element() > 0.06).count();
    if lit < mine.pixels.len() / 10 {
        return Err(format!("only {lit} of {} pixels are lit", mine.pixels.len()).into());
    }
    let lumbres = render.gpu(&gpu, &prepared)?;
    if mine.pixels != lumbres.pixels {
        return Err("the image in the application's buffer differs from Lumbre's own GPU render".into());
    }
    println!("rendered {width}x{height} on {} into the application's buffer", gpu.adapter_name());
    Ok(())
}

/// The application's adapter: the first wgpu offers (`WGPU_BACKEND` picks the backend).
fn application_adapter() -> Option<wgpu::Adapter> {
    let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
    desc.backends = wgpu::Backends::from_env().unwrap_or(wgpu::Backends::PRIMARY);
    let instance = wgpu::Instance::new(desc);
    pollster::block_on(instance.request_adapter(&Default::default())).ok()
}

fn main() -> Result<(), Box<dyn Error>> {
    let adapter = application_adapter().ok_or("no GPU adapter")?;
    let out = std::env::args_os().nth(1);
    render_on_own_device(adapter, out.as_deref().map(Path::new))
}

#[cfg(test)]
mod tests {
    #[test]
    fn renders_into_the_applications_buffer() {
        let Some(adapter) = super::application_adapter() else {
            assert!(!lumbre_gpu::testing::gpu_required(), "LUMBRE_REQUIRE_GPU=1 but no adapter");
            return;
        };
        super::render_on_own_device(adapter, None).unwrap();
    }
}
