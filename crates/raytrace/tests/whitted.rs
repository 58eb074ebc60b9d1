//! The Whitted renderer's samples in fixed-point sums: any split of a render's samples into
//! batches merges to the bits of the render in one piece (CPU and GPU, whatever the GPU's
//! streams per pixel), the GPU derives the CPU's unit from the scene, and mirrors, glass and a
//! point light next to a wall stay inside the sums' headroom.

mod common;

use glam::Vec3;
use lumbre_gpu::testing::test_gpu;
use lumbre_gpu::{Compute, Gpu};
use lumbre_kdtree::StructureOptions;
use lumbre_raytrace::{Camera, Prepared, RenderOptions, SampleSums, Scene, WhittedRender, add_default_light};
use proptest::prelude::*;

fn scene(name: &str) -> Scene {
    Scene::load_obj(&common::testdata(&format!("scenes/{name}"))).unwrap().0
}

/// The original Cornell box with a glass short box, a mirror tall box and a point light 1 cm
/// in front of the back wall beside the area light: chains of reflections and refractions,
/// and a hot spot of direct light.
fn mirrors_and_glass() -> Prepared {
    Prepared::new(common::mirrors_and_glass(Vec3::new(0.4, 1.5, -1.03), 50.0, 0.9, 0.05), &Default::default())
}

fn reference_camera() -> Camera {
    Camera::parse("0,1,3.9, 0,1,0, 0,1,0, 40").unwrap()
}

fn render(width: u32, height: u32, spp: u32, batch: Option<(u32, u32)>) -> WhittedRender {
    WhittedRender {
        camera: reference_camera(),
        options: RenderOptions { width, height, spp, batch, max_depth: 8, ..Default::default() },
    }
}

fn cpu_sums(p: &Prepared, r: &WhittedRender) -> SampleSums {
    p.render_sums_cpu(&r.camera, &r.options, &|_| ()).unwrap().0
}

#[test]
fn batches_add_up() {
    let p = mirrors_and_glass();
    let sums = |batch| cpu_sums(&p, &render(24, 24, 4, batch));
    let full = sums(None);
    assert_eq!((full.first_sample, full.samples, full.saturated()), (0, 4, 0));
    assert_eq!(full.mean().unwrap().pixels, render(24, 24, 4, None).cpu(&p).unwrap().pixels);
    for split in [&[1u32, 1, 1, 1][..], &[2, 2], &[3, 1], &[1, 3]] {
        let mut merged = SampleSums::new(24, 24, 0, full.scale_log2);
        let mut first = 0;
        for &n in split {
            merged.merge(&sums(Some((first, n)))).unwrap();
            first += n;
        }
        assert_eq!(merged, full, "split {split:?}");
    }
    // A one-sample batch is its sample's radiance, truncated to the sums' unit.
    let unit = (-f64::from(full.scale_log2)).exp2();
    let o = render(24, 24, 4, None).options;
    let g = reference_camera().to_gpu(24, 24);
    let (x, y) = (5u32, 17u32);
    let seed = lumbre_raytrace::sampling::pixel_seed(x, y, 24);
    for s in 0..4 {
        let (jx, jy) = lumbre_raytrace::sampling::stratified(4, s, seed);
        let (origin, dir) = g.ray(x as f32 + jx, y as f32 + jy);
        let exact = p.radiance(origin, dir, seed, s, &o, &mut 0);
        let got = sums(Some((s, 1))).mean().unwrap().pixels[(y * 24 + x) as usize];
        let d = (exact - got).abs().max_element() as f64;
        assert!(got.max_element() > 0.0, "sample {s} is black");
        assert!(d <= unit + f32::EPSILON as f64 * exact.max_element() as f64, "sample {s}: {got} vs {exact}");
    }
    // Other samples give other sums.
    assert_ne!(sums(Some((0, 2))).sums, sums(Some((2, 2))).sums);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]
    /// Any split of a render's samples into batches, merged in any order, gives the sums of
    /// the render in one piece.
    #[test]
    fn any_split_merges_to_the_whole(cuts in proptest::collection::vec(1u32..12, 0..6), order in any::<u64>()) {
        let p = mirrors_and_glass();
        let sums = |a: u32, b: u32| cpu_sums(&p, &render(6, 5, 12, Some((a, b - a))));
        prop_assert_eq!(common::merged_split(cuts, order, 12, sums), sums(0, 12));
    }
}

/// Mirrors, glass and a point light 1 cm from the back wall: no pixel saturates, and the mean
/// of the sums is the mean of the samples' radiance (in f64) within the unit.
#[test]
fn mirror_chains_and_a_point_light_nearby_stay_inside_the_headroom() {
    let p = mirrors_and_glass();
    let r = render(16, 16, 4, None);
    let sums = cpu_sums(&p, &r);
    assert_eq!(sums.saturated(), 0);
    // The area light's Ke (17) is the brightest: 32 bits below 2^5.
    assert_eq!((r.options.brightest(&p), sums.scale_log2), (17.0, 27));
    let image = sums.mean().unwrap();
    let g = r.camera.to_gpu(16, 16);
    let unit = (-f64::from(sums.scale_log2)).exp2();
    let mut brightest = 0.0f32;
    for y in 0..16 {
        for x in 0..16 {
            let seed = lumbre_raytrace::sampling::pixel_seed(x, y, 16);
            let mut exact = glam::DVec3::ZERO;
            for s in 0..4 {
                let (jx, jy) = lumbre_raytrace::sampling::stratified(4, s, seed);
                let (origin, dir) = g.ray(x as f32 + jx, y as f32 + jy);
                let v = p.radiance(origin, dir, seed, s, &r.options, &mut 0);
                brightest = brightest.max(v.max_element());
                exact += v.as_dvec3();
            }
            let exact = exact / 4.0;
            let got = image.pixels[(y * 16 + x) as usize].as_dvec3();
            let d = (exact - got).abs().max_element();
            assert!(d <= unit + 1e-7 * exact.max_element(), "pixel {x},{y}: {got} vs {exact}");
        }
    }
    // The hot spot beside the point light outshines the area light, well inside the headroom
    // (a sample may reach 2^32 times the brightest radiance before one sum saturates).
    eprintln!("brightest sample {brightest}");
    assert!(brightest > 16.0 * 17.0, "no hot spot: brightest sample {brightest}");
}

/// The unit follows the scene: point lights count by the radiance they give at the scene's
/// diagonal, so the default light of a scene of any size gives a unit of order 1.
#[test]
fn the_unit_follows_the_brightest_radiance() {
    for size in [1e-1f32, 1.0, 1e3] {
        let mut scene = Scene::from_triangles(&[[Vec3::ZERO, Vec3::X * size, Vec3::Y * size]]);
        let camera = Camera::frame(scene.bounds, 1.0);
        add_default_light(&mut scene, &camera);
        let p = Prepared::new(scene, &Default::default());
        let b = RenderOptions::default().brightest(&p);
        assert!((0.5..1.0).contains(&b), "size {size}: brightest {b}");
        assert_eq!(RenderOptions::default().scale_log2(&p), 32, "size {size}");
    }
    let p = Prepared::new(scene("CornellBox-Original.obj"), &Default::default());
    let bright = RenderOptions { background: Vec3::new(0.0, 40.0, 0.0), ..Default::default() };
    assert_eq!(bright.scale_log2(&p), 32 - 6);
    let ambient = RenderOptions { ambient: 100.0, ..Default::default() };
    assert_eq!(ambient.scale_log2(&p), 32 - 7);
}

/// Renders `r` on the GPU and reads its sums and the GPU's own mean back.
fn gpu_sums(gpu: &Gpu, p: &Prepared, r: &WhittedRender) -> (SampleSums, Vec<[f32; 4]>) {
    let placed = r.upload(gpu, p).unwrap();
    let mut rec = gpu.recorder();
    let out = r.record(&mut rec, &placed).unwrap();
    rec.submit().unwrap();
    let image = gpu.download(&out.pixels).unwrap();
    (r.download_sums(gpu, &out).unwrap(), image)
}

/// The GPU's sums add up the same way: batches merged equal one render, bit for bit, whatever
/// the dispatches and the streams per pixel each batch has; the download's mean is the sums'
/// mean, and the GPU's own mean is within a few ulp of it.
#[test]
fn gpu_batches_add_up() {
    let Some(gpu) = test_gpu(lumbre_gpu::wgpu::Features::empty()) else { return };
    let p = mirrors_and_glass();
    // 40 samples cross the render's dispatches of 16 samples; a 20x12 image takes 16
    // streams a pixel, a batch of 7 samples 7.
    let sums = |batch| gpu_sums(&gpu, &p, &render(20, 12, 40, batch));
    let (full, on_gpu) = sums(None);
    assert_eq!((full.samples, full.saturated()), (40, 0));
    assert_eq!(full.scale_log2, render(20, 12, 40, None).options.scale_log2(&p), "the GPU's unit");
    let mean = full.mean().unwrap();
    assert_eq!(mean.pixels, render(20, 12, 40, None).gpu(&gpu, &p).unwrap().pixels);
    for (a, b) in mean.pixels.iter().zip(&on_gpu) {
        assert!(
            (*a - Vec3::new(b[0], b[1], b[2])).abs().max_element() <= 1e-6 * (1.0 + a.max_element()),
            "{a} vs {b:?}"
        );
    }
    for split in [&[17u32, 23][..], &[1, 7, 32]] {
        let mut merged = SampleSums::new(20, 12, 0, full.scale_log2);
        let mut first = 0;
        for &n in split {
            merged.merge(&sums(Some((first, n))).0).unwrap();
            first += n;
        }
        assert_eq!(merged, full, "split {split:?}");
    }
    // And the CPU's sums of the same samples are close (the same rays but for rounding).
    let cpu = cpu_sums(&p, &render(20, 12, 40, None)).mean().unwrap();
    let worst = cpu.pixels.iter().zip(&mean.pixels).map(|(a, b)| (*a - *b).abs().max_element()).fold(0.0, f32::max);
    assert!(worst < 0.05, "GPU and CPU differ by {worst}");
}

/// The GPU derives the CPU's unit from the scene on the device, for area and point lights,
/// the background, the ambient term and scenes of very different sizes.
#[test]
fn gpu_unit_is_the_cpus() {
    let Some(gpu) = test_gpu(lumbre_gpu::wgpu::Features::empty()) else { return };
    let mut cases: Vec<(Prepared, RenderOptions)> = Vec::new();
    let small = RenderOptions { width: 4, height: 3, spp: 1, ..Default::default() };
    cases.push((mirrors_and_glass(), small));
    for (size, intensity) in [(1e-2f32, None), (1e4, None), (1.0, Some(3.0e6f32)), (5.0, Some(0.7))] {
        let mut scene = Scene::from_triangles(&[[Vec3::ZERO, Vec3::X * size, Vec3::Y * size]]);
        match intensity {
            None => {
                let camera = Camera::frame(scene.bounds, 1.0);
                add_default_light(&mut scene, &camera)
            }
            Some(i) => scene.add_point_light(Vec3::new(0.2, 0.2, 1.0) * size, Vec3::new(0.1, i, 0.3)),
        }
        cases.push((Prepared::new(scene, &Default::default()), small));
    }
    let p = Prepared::new(scene("CornellBox-Original.obj"), &Default::default());
    cases.push((p.clone(), RenderOptions { background: Vec3::new(0.0, 40.0, 0.0), ..small }));
    cases.push((p, RenderOptions { ambient: 1000.0, background: Vec3::ZERO, ..small }));
    for (i, (p, o)) in cases.iter().enumerate() {
        let r = WhittedRender { camera: Camera::frame(p.scene.bounds, 4.0 / 3.0), options: *o };
        let (sums, _) = gpu_sums(&gpu, p, &r);
        assert_eq!(sums.scale_log2, o.scale_log2(p), "case {i}: brightest {}", o.brightest(p));
    }
}

/// Through the BVH (the default) the Whitted renderer's mirrors and glass give the kd-tree's
/// image, on the CPU and on the GPU.
#[test]
fn the_bvh_gives_the_kd_trees_image() {
    let bvh = mirrors_and_glass();
    let kd = Prepared::new(bvh.scene.clone(), &StructureOptions::KdTree(Default::default()));
    let r = render(20, 12, 8, None);
    let (a, b) = (r.cpu(&kd).unwrap(), r.cpu(&bvh).unwrap());
    let worst = a.pixels.iter().zip(&b.pixels).map(|(a, b)| (*a - *b).abs().max_element()).fold(0.0, f32::max);
    assert!(worst < 1e-4, "kd-tree and BVH differ by {worst} on the CPU");
    let Some(gpu) = test_gpu(lumbre_gpu::wgpu::Features::empty()) else { return };
    let (on_gpu, _) = gpu_sums(&gpu, &bvh, &r);
    let (kd_gpu, _) = gpu_sums(&gpu, &kd, &r);
    let worst = on_gpu
        .mean()
        .unwrap()
        .pixels
        .iter()
        .zip(&kd_gpu.mean().unwrap().pixels)
        .map(|(a, b)| (*a - *b).abs().max_element())
        .fold(0.0, f32::max);
    assert!(worst < 1e-4, "kd-tree and BVH differ by {worst} on the GPU");
}
