//! The wavefront path tracer against the megakernel: the same paths, so the same fixed-point
//! sums bit for bit and the same ray counts, with and without ray reordering, for pools
//! smaller and larger than the image, on both structures and every material.

mod common;

use glam::Vec3;
use lumbre_gpu::testing::test_gpu;
use lumbre_gpu::{Compute, Gpu};
use lumbre_kdtree::StructureOptions;
use lumbre_raytrace::{Camera, PathOptions, PathRender, PathSchedule, Prepared, SampleSums, Scene};

fn load(name: &str, structure: &StructureOptions) -> Prepared {
    let (scene, _) = Scene::load_obj(&common::testdata(&format!("scenes/{name}"))).unwrap();
    Prepared::new(scene, structure)
}

/// Every branch of a path's vertex: glass, a mirror, Phong, a point light.
fn every_material() -> Prepared {
    Prepared::new(common::mirrors_and_glass(Vec3::new(0.5, 1.5, 1.0), 0.8, 0.8, 0.1), &Default::default())
}

fn render(schedule: PathSchedule, width: u32, height: u32, first_sample: u32, spp: u32) -> PathRender {
    PathRender {
        camera: Camera::parse("0,1,3.9, 0,1,0, 0,1,0, 40").unwrap(),
        options: PathOptions { width, height, spp, first_sample, schedule, ..Default::default() },
    }
}

/// The GPU render's sums and its (extension, shadow) ray counts.
fn sums(gpu: &Gpu, p: &Prepared, r: &PathRender) -> (SampleSums, (f64, f64)) {
    let placed = r.upload(gpu, p).unwrap();
    let mut rec = gpu.recorder();
    let out = r.record(&mut rec, &placed).unwrap();
    rec.submit().unwrap();
    let stats = r.gpu_stats(gpu, &out).unwrap();
    let counts = (stats.get("extension rays").unwrap(), stats.get("shadow rays").unwrap());
    (r.download_sums(gpu, &out).unwrap(), counts)
}

/// Every schedule's sums and counts equal the megakernel's.
fn schedules_agree(gpu: &Gpu, p: &Prepared, what: &str, (width, height, first, spp): (u32, u32, u32, u32)) {
    let mega = sums(gpu, p, &render(PathSchedule::Megakernel, width, height, first, spp));
    assert!(mega.1.0 > 0.0, "{what}: no rays");
    for (pool, reorder) in [(1 << 20, false), (1 << 20, true), (100, false), (100, true), (64 * 7, true)] {
        let schedule = PathSchedule::Wavefront { pool, reorder };
        let wave = sums(gpu, p, &render(schedule, width, height, first, spp));
        let differ = mega.0.sums.iter().zip(&wave.0.sums).filter(|(a, b)| a != b).count();
        assert_eq!(differ, 0, "{what}, {schedule:?}: {differ} of {} pixels' sums differ", mega.0.sums.len());
        assert_eq!(mega.0, wave.0, "{what}, {schedule:?}");
        assert_eq!(mega.1, wave.1, "{what}, {schedule:?}: (extension, shadow) rays");
    }
}

#[test]
fn the_wavefront_adds_up_to_the_megakernels_sums() {
    let Some(gpu) = test_gpu(lumbre_gpu::wgpu::Features::empty()) else { return };
    // 20x12: tiles that overhang the image; samples from 5 on.
    schedules_agree(&gpu, &load("CornellBox-Diffuse.obj", &Default::default()), "diffuse box", (20, 12, 5, 6));
    schedules_agree(&gpu, &every_material(), "every material", (16, 16, 0, 4));
    let kd = StructureOptions::KdTree(Default::default());
    schedules_agree(&gpu, &load("CornellBox-Original.obj", &kd), "Phong box, kd-tree", (16, 8, 0, 3));
}

/// A pool of one slot is 64 slots; a pool of 0 paths is refused.
#[test]
fn the_pool_is_checked() {
    let r = render(PathSchedule::Wavefront { pool: 0, reorder: false }, 8, 8, 0, 1);
    let err = r.options.check().unwrap_err().to_string();
    assert!(err.contains("pool of 0"), "{err}");
    let Some(gpu) = test_gpu(lumbre_gpu::wgpu::Features::empty()) else { return };
    let p = load("CornellBox-Diffuse.obj", &Default::default());
    let one = sums(&gpu, &p, &render(PathSchedule::Wavefront { pool: 1, reorder: false }, 8, 8, 0, 2));
    assert_eq!(one.0, sums(&gpu, &p, &render(PathSchedule::Megakernel, 8, 8, 0, 2)).0);
}
