//! The path tracer: the white furnace (CPU and GPU), GPU = CPU per pixel, batches whose
//! fixed-point sums add up exactly, point lights, scenes without light, statistics and bad input.

mod common;

use glam::Vec3;
use lumbre_gpu::Compute;
use lumbre_gpu::testing::{capabilities, test_gpu};
use lumbre_kdtree::StructureOptions;
use lumbre_raytrace::{Camera, Image, Material, MaterialKind, PathOptions, PathRender, Prepared, SampleSums, Scene};
use proptest::prelude::*;

/// A closed box `[-1, 1]³` of 12 triangles wound so that their normals face inwards, every
/// one of albedo `a` emitting `e` (a one-sided emitter facing into the box).
fn furnace(a: f32, e: f32) -> Prepared {
    let mut tris = Vec::new();
    for axis in 0..3 {
        for side in [-1.0f32, 1.0] {
            // Inward normal and two tangents with t1 x t2 = normal.
            let mut normal = Vec3::ZERO;
            normal[axis] = -side;
            let t1 = if axis == 0 { Vec3::Y } else { Vec3::X };
            let t2 = normal.cross(t1);
            let centre = -normal;
            let c = [centre - t1 - t2, centre + t1 - t2, centre + t1 + t2, centre - t1 + t2];
            tris.push([c[0], c[1], c[2]]);
            tris.push([c[0], c[2], c[3]]);
        }
    }
    let mut scene = Scene::from_triangles(&tris);
    scene.materials[0] =
        Material { kd: Vec3::splat(a), ke: Vec3::splat(e), kind: MaterialKind::Emitter, ..Material::default() };
    for (i, t) in scene.triangle_positions().iter().enumerate() {
        let n = (t[1] - t[0]).cross(t[2] - t[0]);
        assert!(n.dot(-t[0]) > 0.0, "triangle {i} faces out");
    }
    Prepared::new(scene, &Default::default())
}

fn inside_camera() -> Camera {
    Camera::parse("0.1,-0.2,0.05, 1,0.3,-0.4, 0,1,0, 100").unwrap()
}

fn cornell() -> Prepared {
    let (scene, _) = Scene::load_obj(&common::testdata("scenes/CornellBox-Diffuse.obj")).unwrap();
    Prepared::new(scene, &Default::default())
}

fn reference_camera() -> Camera {
    Camera::parse("0,1,3.9, 0,1,0, 0,1,0, 40").unwrap()
}

/// Mean of the image's channel means and its standard error (pixels are independent).
fn mean_and_error(image: &Image) -> (f64, f64) {
    let v: Vec<f64> = image.pixels.iter().map(|p| (p.x + p.y + p.z) as f64 / 3.0).collect();
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1.0);
    (mean, (var / n).sqrt())
}

fn furnace_render(spp: u32, max_bounces: u32, rr_depth: u32, size: u32) -> PathRender {
    PathRender {
        camera: inside_camera(),
        options: PathOptions { width: size, height: size, spp, max_bounces, rr_depth, ..Default::default() },
    }
}

/// Radiance in a furnace whose paths stop after `bounces`: `e (1 + a + ... + a^bounces)`.
fn furnace_truth(a: f64, e: f64, bounces: u32) -> f64 {
    (0..=bounces).map(|k| e * a.powi(k as i32)).sum()
}

#[test]
fn white_furnace_converges_on_the_cpu() {
    let (a, e) = (0.6, 0.5);
    let box_ = furnace(a, e);
    // Emission only: exact.
    let only = furnace_render(2, 0, 100, 8).cpu(&box_).unwrap();
    assert!(only.pixels.iter().all(|p| *p == Vec3::splat(e)), "{:?}", &only.pixels[..4]);
    // Truncated at 3 bounces without roulette, then the full series with roulette.
    for (bounces, rr) in [(3, 100), (64, 3)] {
        let image = furnace_render(16, bounces, rr, 32).cpu(&box_).unwrap();
        let (mean, se) = mean_and_error(&image);
        let truth = furnace_truth(a as f64, e as f64, bounces);
        eprintln!("furnace, {bounces} bounces: {mean} +- {se}, truth {truth}");
        assert!((mean - truth).abs() < 4.0 * se, "{bounces} bounces: {mean} +- {se}, truth {truth}");
        assert!(se < 0.01 * truth, "too noisy to mean anything: {se}");
    }
}

#[test]
fn white_furnace_converges_on_the_gpu() {
    let Some(gpu) = test_gpu(lumbre_gpu::wgpu::Features::empty()) else { return };
    let (a, e) = (0.6, 0.5);
    let box_ = furnace(a, e);
    let image = furnace_render(8, 64, 3, 16).gpu(&gpu, &box_).unwrap();
    let (mean, se) = mean_and_error(&image);
    let truth = furnace_truth(a as f64, e as f64, 64);
    eprintln!("GPU furnace: {mean} +- {se}, truth {truth}");
    assert!((mean - truth).abs() < 4.0 * se, "{mean} +- {se}, truth {truth}");
}

#[test]
fn the_furnace_check_fails_on_a_wrong_albedo() {
    // The same estimate judged against a furnace of albedo 0.55 instead of 0.6: rejected.
    let image = furnace_render(16, 64, 3, 32).cpu(&furnace(0.6, 0.5)).unwrap();
    let (mean, se) = mean_and_error(&image);
    let wrong = furnace_truth(0.55, 0.5, 64);
    assert!((mean - wrong).abs() > 4.0 * se, "{mean} +- {se} vs {wrong}");
}

#[test]
fn batches_add_up() {
    let p = cornell();
    let render = |first: u32, spp: u32| PathRender {
        camera: reference_camera(),
        options: PathOptions { width: 24, height: 24, spp, first_sample: first, ..Default::default() },
    };
    let sums = |first: u32, spp: u32| render(first, spp).render_sums_cpu(&p, &|| ()).unwrap().0;
    let full = sums(0, 4);
    assert_eq!(full.mean().unwrap().pixels, render(0, 4).cpu(&p).unwrap().pixels);
    // Four one-sample renders, or two of two, add up to the bits of the four-sample render.
    for split in [&[1u32, 1, 1, 1][..], &[2, 2], &[3, 1], &[1, 3]] {
        let mut merged = SampleSums::new(24, 24, 0, full.scale_log2);
        let mut first = 0;
        for &n in split {
            merged.merge(&sums(first, n)).unwrap();
            first += n;
        }
        assert_eq!(merged, full, "split {split:?}");
    }
    // A one-sample render is its sample's value, truncated to the sums' unit.
    let unit = (-f64::from(full.scale_log2)).exp2();
    let (x, y) = (5, 17);
    for s in 0..4 {
        let one = sums(s, 1).mean().unwrap();
        let exact = render(0, 4).pixel_sample(&p, x, y, s).unwrap();
        let got = one.pixels[(y * 24 + x) as usize];
        let d = (exact - got).abs().max_element() as f64;
        assert!(d <= unit + f32::EPSILON as f64 * exact.max_element() as f64, "sample {s}: {got} vs {exact}");
    }
    // And other samples give another image.
    assert_ne!(sums(4, 4).sums, full.sums);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]
    /// Any split of a render's samples into parts, merged in any order, gives the sums of the
    /// render in one piece.
    #[test]
    fn any_split_merges_to_the_whole(cuts in proptest::collection::vec(1u32..12, 0..6), order in any::<u64>()) {
        let p = cornell();
        let render = |first: u32, spp: u32| PathRender {
            camera: reference_camera(),
            options: PathOptions { width: 6, height: 5, spp, first_sample: first, max_bounces: 5, ..Default::default() },
        };
        let sums = |a: u32, b: u32| render(a, b - a).render_sums_cpu(&p, &|| ()).unwrap().0;
        prop_assert_eq!(common::merged_split(cuts, order, 12, sums), sums(0, 12));
    }
}

/// The GPU's sums add up the same way: two parts merged equal one render, bit for bit, and
/// the download's mean is the sums' mean.
#[test]
fn gpu_batches_add_up() {
    let Some(gpu) = test_gpu(lumbre_gpu::wgpu::Features::empty()) else { return };
    let p = cornell();
    let render = |first: u32, spp: u32| PathRender {
        camera: reference_camera(),
        options: PathOptions { width: 20, height: 12, spp, first_sample: first, ..Default::default() },
    };
    let sums = |first: u32, spp: u32| {
        let r = render(first, spp);
        let placed = r.upload(&gpu, &p).unwrap();
        let mut rec = gpu.recorder();
        let out = r.record(&mut rec, &placed).unwrap();
        rec.submit().unwrap();
        let image = gpu.download(&out.pixels).unwrap();
        (r.download_sums(&gpu, &out).unwrap(), image)
    };
    // 40 samples cross the render's batches of 16 samples.
    let (full, on_gpu) = sums(0, 40);
    let mean = full.mean().unwrap();
    assert_eq!(mean.pixels, render(0, 40).gpu(&gpu, &p).unwrap().pixels);
    for (a, b) in mean.pixels.iter().zip(&on_gpu) {
        assert!(
            (*a - Vec3::new(b[0], b[1], b[2])).abs().max_element() <= 1e-6 * (1.0 + a.max_element()),
            "{a} vs {b:?}"
        );
    }
    let mut merged = sums(0, 17).0;
    merged.merge(&sums(17, 23).0).unwrap();
    assert_eq!(merged, full);
    assert_eq!(full.saturated(), 0);
}

/// GPU = CPU per pixel: the same random numbers trace the same paths, except where a float
/// comparison decided by rounding (a ray grazing an edge, a roulette or lobe draw within an
/// ulp of its threshold) sends one path elsewhere. A pixel "differs" when a channel differs
/// by more than `1e-3 (1 + value)`; at most `max_far` of the pixels may differ, and the mean
/// absolute difference over the image must stay below `max_mad` times the mean radiance.
fn gpu_agrees(p: &Prepared, render: &PathRender, max_far: f64, max_mad: f64) -> (f64, f64) {
    let Some(gpu) = test_gpu(lumbre_gpu::wgpu::Features::empty()) else { return (0.0, 0.0) };
    let (cpu, cpu_report) = render.cpu_reported(p, &()).unwrap();
    let (on_gpu, gpu_report) = render.run_reported(&lumbre_gpu::Backend::Gpu(gpu), p, &()).unwrap();
    let n = cpu.pixels.len() as f64;
    let mut far = 0usize;
    let mut abs_sum = 0.0f64;
    let mut mean = 0.0f64;
    for (a, b) in cpu.pixels.iter().zip(&on_gpu.pixels) {
        assert!(b.is_finite(), "GPU pixel {b}");
        let d = (*a - *b).abs().max_element();
        abs_sum += d as f64;
        mean += a.max_element() as f64;
        if d > 1e-3 * (1.0 + a.max_element()) {
            far += 1;
        }
    }
    let (frac, mad) = (far as f64 / n, abs_sum / n);
    eprintln!("GPU vs CPU: {far} of {n} pixels beyond 1e-3, mean |diff| {mad:e} (mean radiance {})", mean / n);
    assert!(frac <= max_far, "{far} of {n} pixels differ");
    assert!(mad <= max_mad * mean / n, "mean absolute difference {mad}");
    // The same paths: the same counts, up to the paths that flipped and the shadow rays whose
    // cosine's sign rounding decides (a point on an emitter sampling its own plane: cast on
    // one side, not on the other, contributing nothing either way).
    assert_eq!(cpu_report.get("paths"), gpu_report.get("paths"));
    for stat in ["rays", "extension rays", "shadow rays"] {
        let (c, g) = (cpu_report.get(stat).unwrap(), gpu_report.get(stat).unwrap());
        assert!((c - g).abs() <= max_far * c, "{stat}: CPU {c}, GPU {g}");
    }
    (frac, mad)
}

/// Diffuse scenes: paths flip only at knife edges (no pixel of the 32x32 Cornell box differs
/// beyond 1e-3 on lavapipe or an H100; mean differences 1e-8 and 6e-8).
const DIFFUSE_FAR: f64 = 0.01;
const DIFFUSE_MAD: f64 = 1e-3;
/// With glass, a path that refracts into a box and reflects inside it turns a last-bit
/// difference of a hit distance into another path more often: the CPU alone, run with the
/// Moller-Trumbore instead of the watertight triangle test, differs on 28 of 4096 pixel
/// samples of this scene. Measured GPU against CPU: 23 of 1024 pixels and a mean difference
/// of 0.32% on lavapipe, 35 of 1024 and 0.76% on an H100.
const GLASS_FAR: f64 = 0.08;
const GLASS_MAD: f64 = 0.02;

#[test]
fn gpu_matches_cpu_on_the_cornell_box() {
    let render = PathRender {
        camera: reference_camera(),
        options: PathOptions { width: 32, height: 32, spp: 4, ..Default::default() },
    };
    gpu_agrees(&cornell(), &render, DIFFUSE_FAR, DIFFUSE_MAD);
    // Direct light only (the emitter-sampling and MIS code without long paths).
    let mut direct = render;
    direct.options.max_bounces = 1;
    gpu_agrees(&cornell(), &direct, DIFFUSE_FAR, DIFFUSE_MAD);
    // The original box: Phong boxes (Kd 0, Ks 0.725, Ns 200), through pow on the GPU.
    let (scene, _) = Scene::load_obj(&common::testdata("scenes/CornellBox-Original.obj")).unwrap();
    gpu_agrees(&Prepared::new(scene, &Default::default()), &render, DIFFUSE_FAR, DIFFUSE_MAD);
}

/// The BVH (the default) against the kd-tree: the same hits (up to ties between triangles at
/// one distance), so the same image on the CPU up to knife-edge paths; and the kd-tree's
/// kernels on the GPU agree with the CPU's kd-tree.
#[test]
fn the_bvh_renders_the_kd_trees_image_and_the_gpu_agrees_through_it() {
    let render = PathRender {
        camera: reference_camera(),
        options: PathOptions { width: 32, height: 32, spp: 4, ..Default::default() },
    };
    let bvh_scene = cornell();
    let kd =
        render.cpu(&Prepared::new(bvh_scene.scene.clone(), &StructureOptions::KdTree(Default::default()))).unwrap();
    let bvh = render.cpu(&bvh_scene).unwrap();
    let far = kd.pixels.iter().zip(&bvh.pixels).filter(|(a, b)| (**a - **b).abs().max_element() > 1e-3).count();
    assert!(far as f64 <= DIFFUSE_FAR * kd.pixels.len() as f64, "{far} pixels differ between the kd-tree and the BVH");
    let kd_scene = Prepared::new(bvh_scene.scene.clone(), &StructureOptions::KdTree(Default::default()));
    gpu_agrees(&kd_scene, &render, DIFFUSE_FAR, DIFFUSE_MAD);
    let mut direct = render;
    direct.options.max_bounces = 1;
    gpu_agrees(&kd_scene, &direct, DIFFUSE_FAR, DIFFUSE_MAD);
}

#[test]
fn gpu_matches_cpu_with_mirrors_glass_and_point_lights() {
    let scene = common::mirrors_and_glass(Vec3::new(0.5, 1.5, 1.0), 0.8, 0.8, 0.1);
    let render = PathRender {
        camera: reference_camera(),
        options: PathOptions { width: 32, height: 32, spp: 4, ..Default::default() },
    };
    gpu_agrees(&Prepared::new(scene, &Default::default()), &render, GLASS_FAR, GLASS_MAD);
}

#[test]
fn point_light_direct_light_is_analytic() {
    // A large floor (kd 0.5) lit by a point light of intensity I at height h, seen from the
    // light's position looking straight down through a narrow field of view: radiance
    // Kd / pi * I / h² at the centre.
    let s = 50.0;
    let floor = [
        [Vec3::new(-s, 0.0, -s), Vec3::new(s, 0.0, s), Vec3::new(s, 0.0, -s)],
        [Vec3::new(-s, 0.0, -s), Vec3::new(-s, 0.0, s), Vec3::new(s, 0.0, s)],
    ];
    let mut scene = Scene::from_triangles(&floor);
    scene.materials[0].kd = Vec3::splat(0.5);
    let (h, i) = (2.0, 3.0);
    scene.add_point_light(Vec3::new(0.0, h, 0.0), Vec3::splat(i));
    let p = Prepared::new(scene, &Default::default());
    let render = PathRender {
        camera: Camera::parse("0,2,0, 0,0,0, 0,0,-1, 2").unwrap(),
        options: PathOptions { width: 9, height: 9, spp: 4, max_bounces: 1, ..Default::default() },
    };
    let want = 0.5 / std::f32::consts::PI * i / (h * h);
    let mut images = vec![render.cpu(&p).unwrap()];
    if let Some(gpu) = test_gpu(lumbre_gpu::wgpu::Features::empty()) {
        images.push(render.gpu(&gpu, &p).unwrap());
    }
    for image in images {
        let c = image.pixels[4 * 9 + 4];
        assert!((c - Vec3::splat(want)).abs().max_element() < 1e-3 * want, "{c} vs {want}");
        // More bounces add nothing: there is nothing else to bounce off.
    }
    let mut more = render;
    more.options.max_bounces = 8;
    let c = more.cpu(&p).unwrap().pixels[4 * 9 + 4];
    assert!((c - Vec3::splat(want)).abs().max_element() < 1e-3 * want, "{c} vs {want}");
}

#[test]
fn scenes_without_light_render_black() {
    let (mut scene, _) = Scene::load_obj(&common::testdata("scenes/suzanne.obj")).unwrap();
    scene.lights.clear();
    let p = Prepared::new(scene, &Default::default());
    let render = PathRender {
        camera: Camera::frame(p.scene.bounds, 1.0),
        options: PathOptions { width: 16, height: 16, spp: 2, ..Default::default() },
    };
    let image = render.cpu(&p).unwrap();
    assert!(image.pixels.iter().all(|p| *p == Vec3::ZERO));
    if let Some(gpu) = test_gpu(lumbre_gpu::wgpu::Features::empty()) {
        assert!(render.gpu(&gpu, &p).unwrap().pixels.iter().all(|p| *p == Vec3::ZERO));
    }
    // A background lights the scene (misses and the light it reflects), still finite.
    let mut lit = render;
    lit.options.background = Vec3::splat(0.5);
    let image = lit.cpu(&p).unwrap();
    assert!(image.pixels.iter().all(|p| p.is_finite() && p.min_element() >= 0.0));
    assert!(mean_and_error(&image).0 > 0.1);
}

#[test]
fn statistics_count_paths_and_rays() {
    let render = PathRender {
        camera: reference_camera(),
        options: PathOptions { width: 16, height: 8, spp: 3, max_bounces: 1, ..Default::default() },
    };
    let (_, report) = render.cpu_reported(&cornell(), &()).unwrap();
    let paths = report.get("paths").unwrap();
    assert_eq!(paths, 16.0 * 8.0 * 3.0);
    let (ext, shadow) = (report.get("extension rays").unwrap(), report.get("shadow rays").unwrap());
    assert_eq!(report.get("rays"), Some(ext + shadow));
    // Direct light only: a camera ray and at most one more per path, at most one shadow ray.
    assert!(ext >= paths && ext <= 2.0 * paths && shadow <= paths, "{report}");
    assert_eq!(report.get("mean path length"), Some(ext / paths));
    // Progress: one step per row.
    let steps = std::sync::atomic::AtomicU64::new(0);
    let count = |_: &str, _: u64, total: u64| {
        assert_eq!(total, 8);
        steps.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    };
    render.cpu_reported(&cornell(), &count).unwrap();
    assert_eq!(steps.into_inner(), 8);
}

#[test]
fn bad_input_is_an_error() {
    let p = cornell();
    let ok =
        PathRender { camera: reference_camera(), options: PathOptions { width: 4, height: 4, ..Default::default() } };
    let cases: [(PathOptions, &str); 4] = [
        (PathOptions { spp: 0, ..ok.options }, "spp 0"),
        (PathOptions { width: 0, ..ok.options }, "0x4"),
        (PathOptions { first_sample: u32::MAX, ..ok.options }, "2^32"),
        (PathOptions { background: Vec3::new(0.0, f32::NAN, 0.0), ..ok.options }, "background"),
    ];
    for (options, needle) in cases {
        let render = PathRender { options, ..ok };
        let err = render.cpu(&p).unwrap_err().to_string();
        assert!(err.contains(needle), "{err}");
        if let Some(gpu) = test_gpu(lumbre_gpu::wgpu::Features::empty()) {
            let err = render.gpu(&gpu, &p).unwrap_err().to_string();
            assert!(err.contains(needle), "{err}");
        }
    }
    let mut bad = p.clone();
    let light = bad.scene.materials.iter_mut().find(|m| m.name == "light").unwrap();
    light.ke = Vec3::new(1.0, -2.0, 0.0);
    let err = ok.cpu(&bad).unwrap_err().to_string();
    assert!(err.contains("\"light\"") && err.contains("Ke"), "{err}");
    let mut bad = p.clone();
    bad.scene.add_point_light(Vec3::ONE, Vec3::splat(f32::INFINITY));
    let err = ok.cpu(&bad).unwrap_err().to_string();
    assert!(err.contains("point light"), "{err}");
}

/// A floor (y = 0) lit by a square emitter facing down, seen at one point through a one-pixel
/// camera with a tiny field of view; the floor is `kind` with `kd`, `ks`, `ns`.
fn lit_floor(kind: MaterialKind, kd: f32, ks: f32, ns: f32) -> (Prepared, PathRender) {
    let s = 5.0;
    let (c, h, ke) = (Vec3::new(1.0, 1.0, 0.0), 0.3, 5.0);
    let tris = [
        [Vec3::new(-s, 0.0, -s), Vec3::new(s, 0.0, s), Vec3::new(s, 0.0, -s)],
        [Vec3::new(-s, 0.0, -s), Vec3::new(-s, 0.0, s), Vec3::new(s, 0.0, s)],
        // The light, wound to face down.
        [c + Vec3::new(-h, 0.0, -h), c + Vec3::new(h, 0.0, -h), c + Vec3::new(h, 0.0, h)],
        [c + Vec3::new(-h, 0.0, -h), c + Vec3::new(h, 0.0, h), c + Vec3::new(-h, 0.0, h)],
    ];
    let mut scene = Scene::from_triangles(&tris);
    scene.materials[0] = Material { kind, kd: Vec3::splat(kd), ks: Vec3::splat(ks), ns, ..Material::default() };
    scene.materials.push(Material { kind: MaterialKind::Emitter, ke: Vec3::splat(ke), ..Material::default() });
    scene.triangles[2].material = 1;
    scene.triangles[3].material = 1;
    let render = PathRender {
        camera: Camera::parse("-1.5,1.2,0, 0,0,0, 0,1,0, 0.01").unwrap(),
        options: PathOptions { width: 1, height: 1, spp: 1, max_bounces: 1, ..Default::default() },
    };
    (Prepared::new(scene, &Default::default()), render)
}

/// Direct light at the origin of [`lit_floor`] seen from the camera, by a 600 x 600 midpoint
/// rule over the light: `integral of f Ke cos cos_l / d² dA`, with `f = kd / pi +
/// ks (ns + 2) / (2 pi) max(0, r . wi)^ns`.
fn lit_floor_truth(kd: f64, ks: f64, ns: f64) -> f64 {
    let eye = glam::DVec3::new(-1.5, 1.2, 0.0);
    let r = {
        let d = -eye.normalize();
        glam::DVec3::new(d.x, -d.y, d.z)
    };
    let (m, h, ke) = (600, 0.3, 5.0);
    let mut sum = 0.0;
    for i in 0..m {
        for j in 0..m {
            let y = glam::DVec3::new(
                1.0 - h + 2.0 * h * (i as f64 + 0.5) / m as f64,
                1.0,
                -h + 2.0 * h * (j as f64 + 0.5) / m as f64,
            );
            let d2 = y.length_squared();
            let wi = y / d2.sqrt();
            let f = kd / std::f64::consts::PI
                + ks * (ns + 2.0) / (2.0 * std::f64::consts::PI) * r.dot(wi).max(0.0).powf(ns);
            sum += f * ke * wi.y * wi.y / d2;
        }
    }
    sum * (2.0 * h) * (2.0 * h) / (m * m) as f64
}

#[test]
fn direct_light_matches_quadrature_for_diffuse_and_phong() {
    // The estimator combines emitter sampling and BRDF sampling with MIS weights; a density
    // that did not match its sampler would bias the sum.
    let gpu = test_gpu(lumbre_gpu::wgpu::Features::empty());
    for (kind, kd, ks, ns) in [(MaterialKind::Diffuse, 0.7, 0.0, 1.0), (MaterialKind::Phong, 0.2, 0.6, 30.0)] {
        let (p, render) = lit_floor(kind, kd, ks, ns);
        let truth = lit_floor_truth(kd as f64, ks as f64, ns as f64);
        let n = 20_000u32;
        let values: Vec<f64> = (0..n).map(|s| render.pixel_sample(&p, 0, 0, s).unwrap().x as f64).collect();
        let mean = values.iter().sum::<f64>() / n as f64;
        let sd = (values.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (n - 1) as f64).sqrt();
        let se = sd / (n as f64).sqrt();
        eprintln!("{kind:?}: {mean} +- {se}, quadrature {truth}");
        assert!((mean - truth).abs() < 4.0 * se, "{kind:?}: {mean} +- {se}, quadrature {truth}");
        if let Some(gpu) = &gpu {
            let mut all = render;
            all.options.spp = 1024;
            let g = all.gpu(gpu, &p).unwrap().pixels[0].x as f64;
            let se = sd / 1024f64.sqrt();
            eprintln!("{kind:?} on the GPU: {g} +- {se}");
            assert!((g - truth).abs() < 4.0 * se, "{kind:?} GPU: {g} +- {se}, quadrature {truth}");
        }
    }
}

#[test]
fn a_driver_loop_limit_is_an_error_not_a_wrong_image() {
    // A closed box of perfect mirrors: paths never end before max_bounces. Lavapipe ends an
    // invocation's loops after 65535 iterations; the render must then fail, not return the
    // partial sums. Other drivers finish it (black: there is no light).
    let Some(gpu) = test_gpu(lumbre_gpu::wgpu::Features::empty()) else { return };
    let mut p = furnace(0.0, 0.0);
    p.scene.materials[0] =
        Material { kind: MaterialKind::Mirror, kd: Vec3::ZERO, ks: Vec3::ONE, ..Material::default() };
    let render = PathRender {
        camera: inside_camera(),
        options: PathOptions {
            width: 1,
            height: 1,
            spp: 16,
            max_bounces: 5000,
            rr_depth: u32::MAX,
            ..Default::default()
        },
    };
    let cpu = render.cpu(&p).unwrap();
    assert_eq!(cpu.pixels[0], Vec3::ZERO);
    match render.gpu(&gpu, &p) {
        Err(e) => assert!(e.to_string().contains("stopped before their last sample"), "{e}"),
        Ok(image) => {
            let limit = capabilities(&gpu).loop_limit;
            assert!(
                limit.is_none(),
                "a driver that ends loops after {limit:?} iterations cut the paths short without an error"
            );
            assert_eq!(image.pixels[0], Vec3::ZERO);
        }
    }
}

#[test]
fn whitted_direct_light_equals_path_direct_light() {
    // With ambient 0 and background 0, Whitted at depth 1 (camera and shadow rays) and the
    // path tracer at one bounce estimate the same direct light in the same units: compared
    // over 16 blocks of the image, each within 4.5 standard errors of the per-pixel
    // differences (the two use independent random numbers).
    use lumbre_raytrace::{RenderOptions, WhittedRender};
    let p = cornell();
    let size = 64u32;
    let whitted = WhittedRender {
        camera: reference_camera(),
        options: RenderOptions {
            width: size,
            height: size,
            spp: 128,
            max_depth: 1,
            ambient: 0.0,
            background: Vec3::ZERO,
            ..Default::default()
        },
    };
    let path = PathRender {
        camera: reference_camera(),
        options: PathOptions { width: size, height: size, spp: 128, max_bounces: 1, ..Default::default() },
    };
    let (w, pt) = (whitted.cpu(&p).unwrap(), path.cpu(&p).unwrap());
    let block = size / 4;
    let mut worst = 0.0f64;
    for by in 0..4 {
        for bx in 0..4 {
            for c in 0..3 {
                let d: Vec<f64> = (0..block * block)
                    .map(|k| {
                        let i = ((by * block + k / block) * size + bx * block + k % block) as usize;
                        (w.pixels[i][c] - pt.pixels[i][c]) as f64
                    })
                    .collect();
                let n = d.len() as f64;
                let mean = d.iter().sum::<f64>() / n;
                let se = (d.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1.0) / n).sqrt();
                let z = if se > 0.0 { mean.abs() / se } else { 0.0 };
                assert!(mean.abs() <= 4.5 * se + 1e-6, "block ({bx}, {by}) channel {c}: {mean} +- {se}");
                worst = worst.max(z);
            }
        }
    }
    let (mw, _) = mean_and_error(&w);
    let (mp, _) = mean_and_error(&pt);
    let diff = Image::from_pixels(size, size, w.pixels.iter().zip(&pt.pixels).map(|(a, b)| *a - *b).collect()).unwrap();
    let (md, se) = mean_and_error(&diff);
    eprintln!(
        "Whitted direct {mw}, path direct {mp}: difference {md} +- {se}; largest block difference {worst:.2} standard errors"
    );
    assert!(md.abs() <= 4.0 * se, "image mean difference {md} +- {se}");
    // A Whitted image in the old units (diffuse term Kd, pi times brighter) is far outside.
    assert!((mw * std::f64::consts::PI - mp).abs() > 0.5 * mp);
}

fn inside() -> impl Strategy<Value = Vec3> {
    (-0.9f32..0.9, -0.9f32..0.9, -0.9f32..0.9).prop_map(|(x, y, z)| Vec3::new(x, y, z))
}

/// One generated triangle inside the box: corners, material kind (0 diffuse, 1 Phong,
/// 2 emitter), Kd, Ks or Ke.
type Piece = ([Vec3; 3], u8, f32, f32);

/// The furnace box (grey, not emitting) with generated triangles inside it, each with a
/// material of its own.
fn box_with(pieces: &[Piece]) -> Prepared {
    let mut p = furnace(0.5, 0.0);
    p.scene.materials[0].kind = MaterialKind::Diffuse;
    let mut tris = p.scene.triangle_positions();
    tris.extend(pieces.iter().map(|x| x.0));
    let mut scene = Scene::from_triangles(&tris);
    scene.materials[0] = p.scene.materials[0].clone();
    for (i, (_, kind, a, b)) in pieces.iter().enumerate() {
        let Some(t) = scene.triangles.get_mut(12 + i) else { break };
        let m = match kind {
            0 => Material { kd: Vec3::new(*a, 0.5, 0.3), ..Material::default() },
            1 => Material {
                kind: MaterialKind::Phong,
                kd: Vec3::splat(*a),
                ks: Vec3::splat(*b),
                ns: 40.0,
                ..Material::default()
            },
            _ => Material {
                kind: MaterialKind::Emitter,
                kd: Vec3::splat(*a),
                ke: Vec3::new(10.0 * b, 5.0, 1.0),
                ..Material::default()
            },
        };
        scene.materials.push(m);
        t.material = (scene.materials.len() - 1) as u32;
    }
    Prepared::new(scene, &Default::default())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 8, ..ProptestConfig::default() })]

    /// Generated scenes (diffuse, Phong and emitting triangles in a closed box, a camera
    /// looking in a generated direction): GPU = CPU. Random triangles meet at more knife
    /// edges than a modelled scene, so the looser (glass) bounds apply; lavapipe has shown no
    /// pixel beyond 1e-3.
    #[test]
    fn gpu_matches_cpu_on_generated_scenes(
        pieces in prop::collection::vec(([inside(), inside(), inside()], 0u8..3, 0.0f32..0.9, 0.0f32..0.9), 1..10),
        look in inside(),
    ) {
        // At least one emitter.
        let mut pieces = pieces;
        pieces[0].1 = 2;
        let p = box_with(&pieces);
        let camera = Camera { eye: Vec3::new(0.05, -0.02, 0.9), target: look, up: Vec3::Y, fov_y_deg: 70.0 };
        prop_assume!((look - camera.eye).length() > 0.1 && (look - camera.eye).normalize().dot(Vec3::Y).abs() < 0.99);
        let render = PathRender { camera, options: PathOptions { width: 16, height: 16, spp: 2, ..Default::default() } };
        gpu_agrees(&p, &render, GLASS_FAR, GLASS_MAD);
    }
}
