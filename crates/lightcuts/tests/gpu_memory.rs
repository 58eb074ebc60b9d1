//! VPLs cost no memory beyond their own data: renders that run many dispatches of instant
//! radiosity hold no more host memory than the first (on lavapipe, a kernel whose changing
//! per-dispatch values came in a uniform grew about 1.2 MB per chunk of 128 VPLs). In a program
//! of its own, so that no other test's memory moves the figures.

use lumbre_gpu::testing::test_gpu;
use lumbre_gpu::{Backend, Compute};
use lumbre_lightcuts::{Method, Render, View, VplOptions};
use lumbre_raytrace::{Prepared, Scene};

/// The process's resident memory in MiB (Linux).
fn resident_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    Some(line.split_whitespace().nth(1)?.parse::<f64>().ok()? / 1024.0)
}

#[test]
fn vpl_chunks_cost_no_memory() {
    let Some(gpu) = test_gpu(lumbre_gpu::wgpu::Features::empty()) else { return };
    if resident_mib().is_none() {
        return;
    }
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/scenes/CornellBox-Diffuse.obj");
    let prepared = Prepared::new(Scene::load_obj(path.as_ref()).unwrap().0, &Default::default());
    let vpls = VplOptions { direct: 2000, paths: 2000, ..Default::default() };
    let render = Render { view: View::cornell(8, 8), vpls, method: Method::Instant, ..Default::default() };
    let backend = Backend::Gpu(gpu);
    // Each render: about 35 dispatches of 128 VPLs. The first compile and fill the driver's pools.
    let run = || render.run_reported(&backend, &prepared, &()).unwrap();
    (0..2).for_each(|_| drop(run()));
    let before = resident_mib().unwrap();
    (0..8).for_each(|_| drop(run()));
    let grown = resident_mib().unwrap() - before;
    eprintln!("resident memory grew {grown:.1} MiB over 8 more renders");
    // With the parameters in a uniform: about 1.2 MB a dispatch, 330 MiB.
    assert!(grown < 48.0, "{grown:.1} MiB more after 8 more renders");
}
