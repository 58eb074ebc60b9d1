//! Samples cost no memory: a GPU render of many batches of samples holds no more host
//! memory than one of a few batches (on lavapipe, a kernel whose changing per-batch values
//! came in a uniform grew about 2 MB per batch of 16 samples: 7.9 GB at 65,536 spp). In a
//! program of its own, so that no other test's memory moves the figures.

use lumbre_gpu::Compute;
use lumbre_gpu::testing::test_gpu;
use lumbre_raytrace::{PathOptions, PathRender, Prepared, RenderOptions, Scene, WhittedRender};

/// The process's resident memory in MiB (Linux).
fn resident_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    Some(line.split_whitespace().nth(1)?.parse::<f64>().ok()? / 1024.0)
}

#[test]
fn samples_cost_no_memory() {
    let Some(gpu) = test_gpu(lumbre_gpu::wgpu::Features::empty()) else { return };
    if resident_mib().is_none() {
        return;
    }
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/scenes/CornellBox-Diffuse.obj");
    let (scene, _) = Scene::load_obj(path.as_ref()).unwrap();
    let camera = scene.default_camera(1.0);
    let p = Prepared::new(scene, &Default::default());
    let backend = lumbre_gpu::Backend::Gpu(gpu);
    let options = PathOptions { width: 8, height: 8, spp: 256, ..Default::default() };
    let mut path = PathRender { camera, options };
    let placed = backend.place(&path, &p).unwrap();
    let options = RenderOptions { width: 8, height: 8, spp: 16 * 256, ..Default::default() };
    let mut whitted = WhittedRender { camera, options };
    let whitted_placed = backend.place(&whitted, &p).unwrap();
    // 16 renders of 256 samples per pixel by each renderer, 16 samples a dispatch.
    let mut render = |i: u32| {
        path.options.first_sample = i * 256;
        path.run_placed(&placed, &()).unwrap();
        whitted.options.batch = Some((i * 256, 256));
        whitted.run_placed(&whitted_placed, &()).unwrap();
    };
    // The first renders compile the kernels and fill the driver's pools.
    (0..2).for_each(&mut render);
    let before = resident_mib().unwrap();
    (2..16).for_each(&mut render);
    let grown = resident_mib().unwrap() - before;
    eprintln!("resident memory grew {grown:.1} MiB over 3,584 more samples per pixel of each renderer");
    // With the parameters in uniforms: about 900 MiB (2 MB for each of 448 dispatches).
    assert!(grown < 64.0, "{grown:.1} MiB more after 224 more dispatches of each renderer");
}
