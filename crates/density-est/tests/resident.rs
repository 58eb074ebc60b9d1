//! Density estimation that keeps its data on the GPU: camera disks made there equal the
//! CPU's, a problem derived there from GPU flights and disks gives the estimate the CPU
//! gives for the same flights and disks, progressive passes there follow the CPU's update,
//! and a whole run reads back nothing between stages but a few sizes (the host flow it
//! replaces, which read the flights back and sent them up again, fails that check).

use lumbre_density::{
    Bounces, CameraDensity, CameraDiskPass, Density, Estimate, GpuProblem, GpuProgressive, MAX_FLIP_RATE, Method,
    NO_DISK, OctreeOptions, PhotonOptions, PhotonTracer, Problem, Progressive, nearest_radii,
};
use lumbre_gpu::testing::{between_stages, own_gpu, test_gpu};
use lumbre_gpu::{Agree, Compute, Gpu, Tolerance, compare_slices};
use lumbre_kdtree::StructureOptions;
use lumbre_raytrace::{Camera, Prepared, Scene};

fn cornell() -> Prepared {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/scenes/CornellBox-Diffuse.obj");
    let (scene, _) = Scene::load_obj(path.as_ref()).unwrap();
    Prepared::new(scene, &Default::default())
}

/// The reference view.
fn camera() -> Camera {
    Camera::parse("0,1,3.9,0,1,0,0,1,0,40").unwrap()
}

fn tracer(photons: u32, bounces: Bounces, seed: u32) -> PhotonTracer {
    PhotonTracer { options: PhotonOptions { photons, bounces, seed, ..Default::default() } }
}

/// Crossings the GPU may decide differently from the CPU (a test within a few ulps of its
/// threshold), as the benchmarks allow: MAX_FLIP_RATE of them, at least one.
fn flips_allowed(e: &Estimate) -> u64 {
    ((MAX_FLIP_RATE * e.pairs() as f64) as u64).max(1)
}

#[test]
fn camera_disks_on_the_gpu_are_the_cpus() {
    let Some(gpu) = test_gpu(lumbre_gpu::wgpu::Features::empty()) else { return };
    let p = cornell();
    // From outside the open front, so that some pixels see nothing.
    let pass =
        CameraDiskPass { camera: Camera::parse("0,1,6,0,1,0,0,1,0,40").unwrap(), width: 48, height: 36, radius: 0.03 };
    let cpu = pass.cpu(&p).unwrap();
    let on_gpu = pass.gpu(&gpu, &p).unwrap();
    assert_eq!(on_gpu.pixel_disk.len(), 48 * 36);
    assert!(cpu.pixel_disk.contains(&NO_DISK) && on_gpu.pixel_disk.contains(&NO_DISK));
    // Rays through edges may hit one triangle or its neighbour: the same pixels see the
    // scene but for a few, and those that do on both sides agree to 1e-4 (a box of size 2).
    let mut differ = 0;
    for (a, b) in cpu.pixel_disk.iter().zip(&on_gpu.pixel_disk) {
        match (*a, *b) {
            (NO_DISK, NO_DISK) => {}
            (NO_DISK, _) | (_, NO_DISK) => differ += 1,
            (i, j) => {
                let (c, g) = (cpu.disks[i as usize], on_gpu.disks[j as usize]);
                let close = (c.centre - g.centre).abs().max_element() < 1e-4
                    && (c.normal - g.normal).abs().max_element() < 1e-4
                    && c.radius == g.radius;
                if !close || cpu.material[i as usize] != on_gpu.material[j as usize] {
                    differ += 1;
                }
            }
        }
    }
    assert!(Tolerance::EXACT.beyond(0.01).allows(differ, 48 * 36), "{differ} pixels differ");
    // Disks are listed in pixel order on both paths.
    let order: Vec<u32> = on_gpu.pixel_disk.iter().copied().filter(|&d| d != NO_DISK).collect();
    assert_eq!(order, (0..on_gpu.disks.len() as u32).collect::<Vec<_>>());
    // Through the kd-tree (the kernel's other variant): the same hits, so the same disks.
    let kd = Prepared::new(p.scene.clone(), &StructureOptions::KdTree(Default::default()));
    let on_kd = pass.gpu(&gpu, &kd).unwrap();
    assert_eq!((&on_kd.pixel_disk, &on_kd.disks), (&on_gpu.pixel_disk, &on_gpu.disks));
    // A bad radius is an error, not a run.
    assert!(CameraDiskPass { radius: 0.0, ..pass }.gpu(&gpu, &p).is_err());
}

#[test]
fn kept_flights_on_the_gpu_are_the_cpus_for_every_selection() {
    let Some(gpu) = test_gpu(lumbre_gpu::wgpu::Features::empty()) else { return };
    let p = cornell();
    let tol = Tolerance::within(1e-4, 1e-4);
    for bounces in [Bounces::All, Bounces::DirectOnly, Bounces::IndirectOnly] {
        let t = tracer(5000, bounces, 3);
        let (cpu, on_gpu) = (t.cpu(&p).unwrap(), t.gpu(&gpu, &p).unwrap());
        assert!(on_gpu.segments.iter().all(|s| bounces.keeps(s.bounce)), "{bounces:?}");
        assert_eq!(cpu.disagreement(&on_gpu, tol), None, "{bounces:?}");
    }
}

#[test]
fn nearest_hit_radii_on_the_gpu_are_the_cpus() {
    let Some(gpu) = test_gpu(lumbre_gpu::wgpu::Features::empty()) else { return };
    let p = cornell();
    let pass = CameraDiskPass { camera: camera(), width: 32, height: 24, radius: 0.2 };
    let t = tracer(20_000, Bounces::All, 5);
    let scene = t.upload(&gpu, &p).unwrap();
    // Few neighbours (radii well inside the range), many (most at the cap), and more than
    // there are ends within reach (all at the cap).
    for (k, max) in [(1usize, 0.2f32), (10, 0.2), (200, 0.05), (1_000_000, 0.2)] {
        let mut rec = gpu.recorder();
        let disks = pass.record(&mut rec, &scene).unwrap();
        let flights = t.record(&mut rec, &scene).unwrap();
        disks.disks().record_nearest_radii(&mut rec, &flights, k, max / 16.0, max).unwrap();
        rec.submit().unwrap();
        let got = disks.disks().download(&gpu).unwrap();
        let mut want = got.clone();
        nearest_radii(&mut want, &t.download(&gpu, &flights).unwrap().segments, k, max / 16.0, max).unwrap();
        let radii = |d: &[lumbre_density::Disk]| d.iter().map(|d| d.radius).collect::<Vec<f32>>();
        // Squared distances may round differently where a GPU fuses multiply-adds.
        let tol = Tolerance::relative(1e-6).beyond(0.005);
        if let Some(d) = compare_slices(&radii(&want), &radii(&got), tol) {
            panic!("k {k}: radii differ from the CPU's: {d}");
        }
        let inside = want.iter().filter(|d| d.radius > max / 16.0 && d.radius < max).count();
        match k {
            1 | 10 => assert!(inside > want.len() / 2, "k {k}: {inside} radii inside the range"),
            _ => assert!(want.iter().filter(|d| d.radius == max).count() > want.len() / 2, "k {k}"),
        }
    }
}

/// The methods a resident problem is checked with.
fn methods() -> Vec<Density> {
    vec![
        Density { method: Method::BruteForce, ..Default::default() },
        Density { method: Method::Octree, octree: OctreeOptions { max_depth: 5, ..Default::default() } },
        Density { method: Method::Bvh, ..Default::default() },
    ]
}

#[test]
fn a_problem_made_on_the_gpu_gives_the_estimate_of_the_same_problem_on_the_host() {
    let Some(gpu) = test_gpu(lumbre_gpu::wgpu::Features::empty()) else { return };
    let p = cornell();
    let pass = CameraDiskPass { camera: camera(), width: 40, height: 30, radius: 0.08 };
    let t = tracer(20_000, Bounces::IndirectOnly, 1);
    let scene = t.upload(&gpu, &p).unwrap();
    for density in methods() {
        let mut rec = gpu.recorder();
        let disks = pass.record(&mut rec, &scene).unwrap();
        let flights = t.record(&mut rec, &scene).unwrap();
        let problem = GpuProblem::resident(&mut rec, &flights, disks.disks()).unwrap();
        let est = density.record(&mut rec, &problem).unwrap();
        rec.submit().unwrap();
        let on_gpu = density.download(&gpu, &est).unwrap();
        // The same flights and disks, read back, through the CPU path.
        let host = Problem {
            segments: t.download(&gpu, &flights).unwrap().segments,
            disks: disks.disks().download(&gpu).unwrap(),
        };
        assert_eq!((problem.segments(), problem.disks()), (host.segments.len(), host.disks.len()));
        assert!(
            host.disks.len() > 600 && host.segments.len() > 10_000,
            "{} disks, {} segments",
            host.disks.len(),
            host.segments.len()
        );
        let cpu = density.cpu(&host).unwrap();
        assert!(cpu.pairs() > 5000, "{density:?}: {} pairs", cpu.pairs());
        assert_eq!(cpu.scale_exp, on_gpu.scale_exp, "{density:?}: the fixed-point scale");
        assert!(
            cpu.agrees_up_to_flips(&on_gpu, flips_allowed(&cpu)),
            "{density:?}: {} flips of {} pairs",
            cpu.flips(&on_gpu),
            cpu.pairs()
        );
    }
}

#[test]
fn progressive_passes_on_the_gpu_follow_the_cpu_update() {
    let Some(gpu) = test_gpu(lumbre_gpu::wgpu::Features::empty()) else { return };
    let p = cornell();
    let pass = CameraDiskPass { camera: camera(), width: 24, height: 18, radius: 0.1 };
    let scene = pass.upload(&gpu, &p).unwrap();
    let mut rec = gpu.recorder();
    let disks = pass.record(&mut rec, &scene).unwrap();
    rec.submit().unwrap();
    let start = disks.disks().download(&gpu).unwrap();
    let mut cpu = Progressive::new(&start, 0.7).unwrap();
    let mut on_gpu = GpuProgressive::new(&gpu, disks.disks(), 0.7).unwrap();
    let density = Density::default();
    for seed in 0..4 {
        let mut rec = gpu.recorder();
        let flights = tracer(8000, Bounces::All, seed).record(&mut rec, &scene).unwrap();
        let problem = GpuProblem::resident(&mut rec, &flights, on_gpu.disks()).unwrap();
        let est = density.record(&mut rec, &problem).unwrap();
        on_gpu.add_pass(&mut rec, &est, 8000).unwrap();
        rec.submit().unwrap();
        // The CPU update of the very same pass.
        cpu.add_pass(&density.download(&gpu, &est).unwrap(), 8000).unwrap();
        let (want, got) = (cpu.disks(), on_gpu.disks().download(&gpu).unwrap());
        assert_eq!(want.len(), got.len());
        for (a, b) in want.iter().zip(&got) {
            // f32 against f64 state: a few ulps per pass.
            assert!((a.radius - b.radius).abs() <= 1e-5 * a.radius, "pass {seed}: {} vs {}", a.radius, b.radius);
        }
    }
    assert!(cpu.disks().iter().zip(&start).any(|(a, b)| a.radius < 0.9 * b.radius), "the radii shrank");
    let (want, got) = (cpu.irradiance(), on_gpu.irradiance(&gpu).unwrap());
    let tol = Tolerance::within(1e-6, 1e-4);
    assert_eq!(want.disagreement(&got, tol), None);
    assert!(want.iter().filter(|e| e[0] > 0.0).count() > want.len() / 2);
    assert!(GpuProgressive::new(&gpu, disks.disks(), 0.0).is_err());
}

/// What a run on the GPU moved: before the scene goes up, after, after every stage has run,
/// and after the result came back.
struct Moved {
    upload: lumbre_gpu::Transfers,
    stages: lumbre_gpu::Transfers,
    result: lumbre_gpu::Transfers,
}

fn run_resident(gpu: &Gpu, alg: &CameraDensity, p: &Prepared) -> (lumbre_density::CameraEstimate, Moved) {
    let t0 = gpu.transfers();
    let scene = alg.upload(gpu, p).unwrap();
    let t1 = gpu.transfers();
    let mut rec = gpu.recorder();
    let on_gpu = alg.record(&mut rec, &scene).unwrap();
    rec.submit().unwrap();
    let t2 = gpu.transfers();
    let out = alg.download(gpu, &on_gpu).unwrap();
    let t3 = gpu.transfers();
    (out, Moved { upload: t1 - t0, stages: t2 - t1, result: t3 - t2 })
}

#[test]
fn a_camera_density_run_reads_back_only_sizes_between_stages() {
    let Some(gpu) = own_gpu(lumbre_gpu::wgpu::Features::empty()) else { return };
    let p = cornell();
    for (passes, k) in [(1u32, None), (3, None), (2, Some(16))] {
        let alg = CameraDensity {
            photons: PhotonOptions { photons: 20_000, bounces: Bounces::IndirectOnly, ..Default::default() },
            passes,
            k,
            ..CameraDensity::new(camera(), 32, 24, 0.08)
        };
        let (out, moved) = run_resident(&gpu, &alg, &p);
        // Between the scene's upload and the result: per pass, the tracing's one read of its
        // batch's two sizes (8 bytes; 20000 photons are one batch on any device) and the
        // problem's 16 words (64 bytes); uploads are kernel parameters only.
        between_stages(&moved.stages, 2 * passes as u64, 72 * passes as u64)
            .unwrap_or_else(|e| panic!("{passes} passes, k {k:?}: {e}"));
        assert!(moved.upload.uploads.bytes > 1000, "the scene went up: {}", moved.upload);
        assert_eq!(moved.upload.downloads.calls, 0);
        // The result: the disks (count, 32 bytes each, pixel, material) and per disk the sums
        // (32 bytes) or the progressive state (16 bytes).
        let n = out.disks.disks.len() as u64;
        assert!(n > 300, "{n} disks");
        let per_disk = 40 + if passes == 1 { 32 } else { 16 };
        assert_eq!(moved.result.downloads.bytes, 4 + per_disk * n, "{}", moved.result);
        assert_eq!(moved.result.uploads.calls, 0);
        // And the run is the CPU's: the same photons (but for rare path flips), disks, sums.
        let cpu = alg.cpu(&p).unwrap();
        assert_eq!(cpu.disks.pixel_disk.len(), out.disks.pixel_disk.len());
        let mean = |e: &[[f32; 3]]| e.iter().map(|v| v[0] as f64).sum::<f64>() / e.len().max(1) as f64;
        let (a, b) = (mean(&cpu.irradiance), mean(&out.irradiance));
        assert!((a - b).abs() <= 0.02 * a, "{passes} passes, k {k:?}: mean irradiance cpu {a} gpu {b}");
    }
}

#[test]
fn the_host_flow_it_replaces_fails_the_check() {
    // What `lumbre density` did before: trace on the GPU, read the flights back, make the
    // disks on the CPU, and send flights and disks up again for the estimate.
    let Some(gpu) = own_gpu(lumbre_gpu::wgpu::Features::empty()) else { return };
    let p = cornell();
    let t = tracer(20_000, Bounces::IndirectOnly, 0);
    let scene = t.upload(&gpu, &p).unwrap();
    let before = gpu.transfers();
    let mut rec = gpu.recorder();
    let flights = t.record(&mut rec, &scene).unwrap();
    rec.submit().unwrap();
    let photons = t.download(&gpu, &flights).unwrap();
    let disks = lumbre_density::camera_disks(&p, &camera(), 32, 24, 0.08).unwrap();
    let problem = Problem { segments: photons.segments, disks: disks.disks };
    let density = Density::default();
    let input = density.upload(&gpu, &problem).unwrap();
    let mut rec = gpu.recorder();
    let est = density.record(&mut rec, &input).unwrap();
    rec.submit().unwrap();
    let moved = gpu.transfers() - before;
    let err = between_stages(&moved, 2, 72).unwrap_err();
    assert!(err.contains("read back between stages") && err.contains("sent up between stages"), "{err}");
    assert!(density.download(&gpu, &est).unwrap().pairs() > 0);
}
