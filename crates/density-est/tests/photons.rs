//! Photon tracing: power conservation, CPU = GPU up to rare path flips, the furnace.

mod common;

use glam::Vec3;
use lumbre_density::{Bounces, Density, Disk, Method, PhotonOptions, PhotonTracer, Photons, Problem};
use lumbre_gpu::testing::test_gpu;
use lumbre_gpu::{Agree, Compute, Tolerance};
use lumbre_kdtree::StructureOptions;
use lumbre_raytrace::twin::NO_NORMAL;
use lumbre_raytrace::{Emitters, Material, MaterialKind, Prepared, Scene, Triangle};

fn cornell() -> Prepared {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/scenes/CornellBox-Diffuse.obj");
    let (scene, _) = Scene::load_obj(path.as_ref()).unwrap();
    Prepared::new(scene, &Default::default())
}

fn tracer(photons: u32, bounces: Bounces) -> PhotonTracer {
    PhotonTracer { options: PhotonOptions { photons, bounces, ..Default::default() } }
}

#[test]
fn first_flights_carry_the_emitted_power() {
    let p = cornell();
    let total = Emitters::new(&p.scene).unwrap().total_power();
    let photons = tracer(20_000, Bounces::All).cpu(&p).unwrap();
    assert_eq!(photons.photons(), 20_000);
    let direct = photons.power_of_bounce(0);
    for c in 0..3 {
        // Both lights have the same Ke, so every photon carries exactly total / N.
        let rel = (direct[c] - total[c] as f64).abs() / total[c] as f64;
        assert!(rel < 1e-5, "channel {c}: {} vs {}", direct[c], total[c]);
    }
    // Later bounces carry less: the walls absorb.
    let second = photons.power_of_bounce(1);
    assert!((0..3).all(|c| second[c] < direct[c] && second[c] > 0.0));
}

#[test]
fn direct_and_indirect_split_the_flights() {
    let p = cornell();
    let all = tracer(3000, Bounces::All).cpu(&p).unwrap();
    let direct = tracer(3000, Bounces::DirectOnly).cpu(&p).unwrap();
    let indirect = tracer(3000, Bounces::IndirectOnly).cpu(&p).unwrap();
    assert!(direct.segments.iter().all(|s| s.bounce == 0));
    assert!(indirect.segments.iter().all(|s| s.bounce > 0));
    assert_eq!(direct.segments.len() + indirect.segments.len(), all.segments.len());
    let mut merged: Vec<_> =
        direct.segments.iter().chain(&indirect.segments).map(|s| (s.start.to_array(), s.bounce)).collect();
    let mut want: Vec<_> = all.segments.iter().map(|s| (s.start.to_array(), s.bounce)).collect();
    merged.sort_by(|a, b| a.partial_cmp(b).unwrap());
    want.sort_by(|a, b| a.partial_cmp(b).unwrap());
    assert_eq!(merged, want);
    // Flights chain: each starts where the previous one of its photon ended.
    for k in 1..all.segments.len() {
        if all.photon[k] == all.photon[k - 1] {
            assert_eq!(all.segments[k].start, all.segments[k - 1].end);
            assert_eq!(all.segments[k].bounce, all.segments[k - 1].bounce + 1);
        }
    }
}

/// CPU and GPU flights agree to 1e-4 (positions in a box of size 2, power of order 1e-4
/// relative), except for photons whose path flips on a float comparison.
#[test]
fn gpu_tracing_equals_cpu() {
    let Some(gpu) = test_gpu(lumbre_gpu::wgpu::Features::empty()) else { return };
    let p = cornell();
    let t = tracer(20_000, Bounces::All);
    let cpu = t.cpu(&p).unwrap();
    let on_gpu = t.gpu(&gpu, &p).unwrap();
    let tol = Tolerance::within(1e-4, 1e-4);
    assert_eq!(cpu.disagreement(&on_gpu, tol), None);
    // Through the kd-tree (the kernels' other variant): the same flights on both sides.
    let kd = Prepared::new(p.scene.clone(), &StructureOptions::KdTree(Default::default()));
    let on_kd = t.gpu(&gpu, &kd).unwrap();
    assert_eq!(t.cpu(&kd).unwrap().disagreement(&on_kd, tol), None);
    assert_eq!(cpu.disagreement(&on_kd, tol), None);
    // The rate of differing paths, measured at a tight tolerance.
    let differing = count_differing(&cpu, &on_gpu, tol);
    eprintln!("photon paths differing between CPU and GPU: {differing} of 20000");
    // A check that the comparison can fail: perturb one in 50 photons.
    let mut bad = on_gpu.clone();
    for k in 0..bad.segments.len() {
        if bad.photon[k] % 50 == 0 {
            bad.segments[k].end.x += 0.01;
        }
    }
    assert!(cpu.disagreement(&bad, tol).is_some());
}

fn count_differing(a: &Photons, b: &Photons, tol: Tolerance) -> usize {
    // Photons are compared one at a time through Agree on single-photon slices.
    let split = |p: &Photons| {
        let mut m = std::collections::BTreeMap::<u32, Photons>::new();
        for (s, &i) in p.segments.iter().zip(&p.photon) {
            let e = m.entry(i).or_default();
            e.segments.push(*s);
            e.photon.push(i);
        }
        m
    };
    let (x, y) = (split(a), split(b));
    let keys: std::collections::BTreeSet<u32> = x.keys().chain(y.keys()).copied().collect();
    keys.iter()
        .filter(|k| {
            let (p, q) = (x.get(k).cloned().unwrap_or_default(), y.get(k).cloned().unwrap_or_default());
            p.disagreement(&q, tol).is_some()
        })
        .count()
}

/// The unit cube seen from inside: every face emits radiance `le` on its inner side and
/// reflects with albedo `rho`.
fn furnace(le: f32, rho: f32) -> Prepared {
    let mut positions = Vec::new();
    let mut triangles = Vec::new();
    // (corner, u, v) with u x v pointing into the cube.
    let faces = [
        (Vec3::ZERO, Vec3::Y, Vec3::Z),
        (Vec3::X, Vec3::Z, Vec3::Y),
        (Vec3::ZERO, Vec3::Z, Vec3::X),
        (Vec3::Y, Vec3::X, Vec3::Z),
        (Vec3::ZERO, Vec3::X, Vec3::Y),
        (Vec3::Z, Vec3::Y, Vec3::X),
    ];
    for (o, u, v) in faces {
        let base = positions.len() as u32;
        positions.extend([o, o + u, o + u + v, o + v]);
        for t in [[0, 1, 2], [0, 2, 3]] {
            triangles.push(Triangle { v: t.map(|i| base + i), n: [NO_NORMAL; 3], material: 0 });
        }
    }
    let material = Material {
        name: "furnace".into(),
        kd: Vec3::splat(rho),
        ke: Vec3::splat(le),
        kind: MaterialKind::Emitter,
        ..Material::default()
    };
    let scene = Scene {
        positions,
        normals: vec![],
        triangles,
        materials: vec![material],
        lights: vec![],
        bounds: (Vec3::ZERO, Vec3::ONE),
        ..Default::default()
    };
    Prepared::new(scene, &Default::default())
}

/// Disks on every face of the furnace, facing in, away from the edges.
fn furnace_disks(r: f32) -> Vec<Disk> {
    let mut disks = Vec::new();
    for axis in 0..3 {
        for side in [0.0f32, 1.0] {
            for (a, b) in [(0.3, 0.3), (0.7, 0.3), (0.3, 0.7), (0.7, 0.7)] {
                let mut c = Vec3::ZERO;
                c[axis] = side;
                c[(axis + 1) % 3] = a;
                c[(axis + 2) % 3] = b;
                let mut n = Vec3::ZERO;
                n[axis] = if side == 0.0 { 1.0 } else { -1.0 };
                disks.push(Disk { centre: c, normal: n, radius: r });
            }
        }
    }
    disks
}

/// In a closed box whose walls emit `Le` and reflect `rho`, the radiance is `Le / (1 - rho)`
/// everywhere, and the irradiance `pi Le / (1 - rho)` (direct: `pi Le`; indirect: the rest).
/// All flights carry the same power (the roulette keeps `Kd / max(Kd) = 1`), so a disk's
/// estimate is its crossing count times that power over its area, and the count is close to
/// Poisson: each disk must lie within 5 standard deviations (`sqrt(expected count)`) of
/// the analytic value, and the mean of the 24 disks within 4 of the mean's.
#[test]
fn furnace_gives_the_analytic_irradiance() {
    let (le, rho, r, n) = (2.0f32, 0.5f32, 0.1f32, 100_000u32);
    let p = furnace(le, rho);
    let disks = furnace_disks(r);
    let area = std::f32::consts::PI * r * r;
    let gpu = test_gpu(lumbre_gpu::wgpu::Features::empty());
    for (bounces, expected) in [
        (Bounces::All, std::f32::consts::PI * le / (1.0 - rho)),
        (Bounces::DirectOnly, std::f32::consts::PI * le),
        (Bounces::IndirectOnly, std::f32::consts::PI * le * rho / (1.0 - rho)),
    ] {
        let t = tracer(n, bounces);
        let photons = t.cpu(&p).unwrap();
        if let (Some(gpu), Bounces::All) = (&gpu, bounces) {
            // The GPU tracer too (its flights agree with these; see gpu_tracing_equals_cpu).
            let g = t.gpu(gpu, &p).unwrap();
            assert_eq!(photons.disagreement(&g, Tolerance::within(1e-4, 1e-4)), None);
        }
        let power = photons.segments[0].power[0];
        let problem = Problem { segments: photons.segments, disks: disks.clone() };
        let est = Density { method: Method::Bvh, ..Default::default() }.cpu(&problem).unwrap();
        let expected_count = (expected * area / power) as f64;
        let sigma = expected_count.sqrt();
        let mut total = 0.0;
        for (d, (&count, e)) in est.count.iter().zip(&est.irradiance).enumerate() {
            assert!(
                (count as f64 - expected_count).abs() < 5.0 * sigma,
                "{bounces:?} disk {d}: {count} crossings, expected {expected_count:.1} +- {sigma:.1}"
            );
            assert!((e[0] - count as f32 * power / area).abs() <= 1e-5 * e[0]);
            total += count as f64;
        }
        let mean = total / disks.len() as f64;
        let sigma_mean = sigma / (disks.len() as f64).sqrt();
        assert!(
            (mean - expected_count).abs() < 4.0 * sigma_mean,
            "{bounces:?}: mean {mean:.1} crossings, expected {expected_count:.1} +- {sigma_mean:.2}"
        );
    }
}
