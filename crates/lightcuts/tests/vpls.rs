//! VPL generation against closed forms: in a white furnace (a closed box whose every wall
//! has albedo `a` and emits), the bounce VPLs of every path carry `a + a^2 + ...` of the
//! emitted flux, exactly for a fixed number of bounces and in expectation for paths that
//! Russian roulette ends; the expected number of VPLs per path follows from the survival
//! probabilities, which are the same for every path there. Also: the pilot that sizes paths
//! for a VPL count, and bad options.

mod common;

use glam::Vec3;
use lumbre_lightcuts::{MAX_BOUNCES, RR_DEPTH, Vpl, VplOptions, vpls_cpu};
use lumbre_raytrace::twin::ROULETTE_SURVIVAL;
use lumbre_raytrace::{Material, MaterialKind, Prepared, Scene, SceneBuilder};

/// A closed box `[-1, 1]³` of 12 triangles facing inwards, every one of albedo `a` emitting
/// `e` into the box: area 24, emitted flux `pi e 24`.
fn furnace(a: f32, e: f32) -> Prepared {
    let wall = Material { kd: Vec3::splat(a), ke: Vec3::splat(e), kind: MaterialKind::Emitter, ..Material::default() };
    let mut builder = SceneBuilder::new();
    builder.add_box(Vec3::splat(-1.0), Vec3::splat(1.0), wall, true);
    let scene = builder.build();
    Prepared::new(scene, &Default::default())
}

/// The emitted flux of `furnace(_, e)`.
fn emitted(e: f64) -> f64 {
    std::f64::consts::PI * e * 24.0
}

/// The flux a VPL sends into its hemisphere: `pi` times its intensity (grey here).
fn flux(vpls: &[Vpl]) -> f64 {
    vpls.iter().map(|v| std::f64::consts::PI * v.intensity.x as f64).sum()
}

/// In the furnace every path's throughput, and so its survival probabilities, are the same:
/// the expected VPLs per path and the expected bounce flux per unit of a path's emitted
/// flux, summed over bounces `0..o.bounces` with the path tracer's roulette.
fn furnace_expectation(a: f64, o: &VplOptions) -> (f64, f64) {
    let (mut reach, mut throughput, mut count, mut flux) = (1.0, 1.0, 0.0, 0.0);
    let (lo, hi) = (ROULETTE_SURVIVAL.0 as f64, ROULETTE_SURVIVAL.1 as f64);
    for b in 0..o.bounces {
        // Bounce b leaves a VPL of flux `a * throughput` (per unit emitted) where reached.
        count += reach;
        flux += reach * a * throughput;
        throughput *= a;
        if b >= o.rr_depth {
            let survive = throughput.clamp(lo, hi);
            reach *= survive;
            throughput /= survive;
        }
    }
    (count, flux)
}

#[test]
fn fixed_bounces_carry_the_truncated_series_exactly() {
    let (a, e) = (0.6f32, 0.5f32);
    let p = furnace(a, e);
    let o = VplOptions { paths: 4000, direct: 500, bounces: 3, rr_depth: 3, seed: 7 };
    let vpls = vpls_cpu(&p, &o, &Default::default()).unwrap();
    // Every path stays in the closed box and every wall reflects: all slots fill.
    assert_eq!(vpls.len() as u64, o.slots());
    let (direct, bounce) = vpls.split_at(o.direct as usize);
    let phi = emitted(e as f64);
    assert!((flux(direct) / phi - 1.0).abs() < 1e-4, "direct {} of {phi}", flux(direct));
    // Every path carries a, a^2, a^3 of its share: no noise at all.
    let truth = phi * (0.6 + 0.36 + 0.216);
    assert!((flux(bounce) / truth - 1.0).abs() < 1e-4, "bounces {} against {truth}", flux(bounce));
}

#[test]
fn paths_until_roulette_carry_a_over_one_minus_a_in_expectation() {
    let e = 0.5f32;
    let phi = emitted(e as f64);
    for (a, rr_depth) in [(0.5f32, RR_DEPTH), (0.8, RR_DEPTH), (0.8, 0)] {
        let p = furnace(a, e);
        // Batches of paths under different seeds: their spread gives the standard error.
        let batches: Vec<(f64, f64)> = (0..12)
            .map(|seed| {
                let o = VplOptions { paths: 2000, direct: 0, bounces: MAX_BOUNCES, rr_depth, seed };
                let vpls = vpls_cpu(&p, &o, &Default::default()).unwrap();
                (vpls.len() as f64 / o.paths as f64, flux(&vpls) / phi)
            })
            .collect();
        let o = VplOptions { paths: 1, direct: 0, bounces: MAX_BOUNCES, rr_depth, seed: 0 };
        let (count, series) = furnace_expectation(a as f64, &o);
        let a = a as f64;
        // The cap of 64 bounces leaves out a^65 / (1 - a) of the series: below 1e-6 here.
        assert!((series - a / (1.0 - a)).abs() < 1e-5 * series, "{series} against {}", a / (1.0 - a));
        for (what, k, truth) in [("VPLs per path", 0, count), ("bounce flux / emitted", 1, series)] {
            let xs: Vec<f64> = batches.iter().map(|b| if k == 0 { b.0 } else { b.1 }).collect();
            let n = xs.len() as f64;
            let mean = xs.iter().sum::<f64>() / n;
            let se = (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0) / n).sqrt();
            eprintln!("a {a:.2}, roulette from {rr_depth}: {what} {mean:.4} +- {se:.4}, expected {truth:.4}");
            assert!(
                (mean - truth).abs() < 4.0 * se + 1e-9,
                "a {a}, rr {rr_depth}: {what} {mean} +- {se}, truth {truth}"
            );
            assert!(se < 0.01 * truth, "a {a}: {what} too noisy to mean anything ({se} of {truth})");
        }
        // Roulette must end paths long before the cap: a few VPLs per path, not 64.
        assert!(count < 12.0, "{count} VPLs per path");
    }
}

#[test]
fn with_count_sizes_the_paths_for_the_count_asked() {
    let p = common::cornell();
    for (n, share) in [(2000u32, 0.25f32), (20_000, 0.25), (5000, 0.5)] {
        let o = VplOptions::default().with_count(&p, n, share).unwrap();
        assert_eq!(o.direct, (n as f32 * share).round() as u32);
        assert!(o.until_roulette() && o.bounces == MAX_BOUNCES);
        let made = vpls_cpu(&p, &o, &Default::default()).unwrap().len() as f64;
        assert!((made / n as f64 - 1.0).abs() < 0.05, "{made} VPLs for {n}");
    }
    // The defaults make about 80000 VPLs in the Cornell box.
    let made = vpls_cpu(&p, &VplOptions::default(), &Default::default()).unwrap().len() as f64;
    assert!((made / lumbre_lightcuts::RAYS_VPLS as f64 - 1.0).abs() < 0.03, "{made}");
    // Fixed bounces: the pilot counts the paths that leave the open front early.
    let fixed = VplOptions { bounces: 2, rr_depth: 2, ..Default::default() }.with_count(&p, 4000, 0.25).unwrap();
    let made = vpls_cpu(&p, &fixed, &Default::default()).unwrap().len() as f64;
    assert!((made / 4000.0 - 1.0).abs() < 0.05, "{made}");
    // All direct.
    let direct = VplOptions::default().with_count(&p, 100, 1.0).unwrap();
    assert_eq!((direct.direct, direct.paths), (100, 0));
}

#[test]
fn bad_options_are_errors_naming_the_value() {
    let p = common::cornell();
    let e = VplOptions::default().with_count(&p, 0, 0.25).unwrap_err().to_string();
    assert!(e.contains("count 0"), "{e}");
    let e = VplOptions::default().with_count(&p, 100, 1.5).unwrap_err().to_string();
    assert!(e.contains("share 1.5"), "{e}");
    let e = VplOptions::default().with_count(&p, 100, f32::NAN).unwrap_err().to_string();
    assert!(e.contains("share NaN"), "{e}");
    for bounces in [0, MAX_BOUNCES + 1] {
        let e = VplOptions { bounces, ..Default::default() }.validate().unwrap_err().to_string();
        assert!(e.contains(&format!("{bounces} bounces")) && e.contains("1..=64"), "{e}");
    }
    let dark = Prepared::new(Scene::from_triangles(&[[Vec3::ZERO, Vec3::X, Vec3::Y]]), &Default::default());
    let e = VplOptions::default().with_count(&dark, 100, 0.25).unwrap_err().to_string();
    assert!(e.contains("no emitters"), "{e}");
}
