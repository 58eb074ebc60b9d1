//! A one-pass density estimate split by photon ranges: any split of a run's photons, each
//! part traced and estimated on its own, merges into the one-piece run's sums and image
//! bit for bit, on the CPU (proptest over split points) and on the GPU; a range with
//! progressive passes or k nearest radii is refused, and so are sums of another run.

use std::sync::OnceLock;

use lumbre_density::{
    Bounces, CameraDensity, CameraEstimate, Density, DensitySums, Method, PhotonOptions, PhotonRange, PhotonTracer,
};
use lumbre_gpu::testing::test_gpu;
use lumbre_gpu::{Backend, Compute, Error, Gpu};
use lumbre_raytrace::{Camera, Prepared, Scene};
use proptest::prelude::*;

/// Photons of the run every test splits.
const PHOTONS: u32 = 3000;

fn cornell() -> &'static Prepared {
    static P: OnceLock<Prepared> = OnceLock::new();
    P.get_or_init(|| {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/scenes/CornellBox-Diffuse.obj");
        let (scene, _) = Scene::load_obj(path.as_ref()).unwrap();
        Prepared::new(scene, &Default::default())
    })
}

/// The whole run: one pass of [`PHOTONS`] photons, every flight, seen at 24 x 18 pixels.
fn whole(bounces: Bounces, method: Method) -> CameraDensity {
    CameraDensity {
        photons: PhotonOptions { photons: PHOTONS, bounces, seed: 5, ..Default::default() },
        density: Density { method, ..Default::default() },
        ..CameraDensity::new(Camera::parse("0,1,3.9,0,1,0,0,1,0,40").unwrap(), 24, 18, 0.15)
    }
}

/// The run restricted to photons `start..end`.
fn part(alg: &CameraDensity, start: u32, end: u32) -> CameraDensity {
    CameraDensity { photons: PhotonOptions { range: Some(PhotonRange { start, end }), ..alg.photons }, ..*alg }
}

/// The parts of `0..PHOTONS` cut at `cuts` (any order, repeats give empty parts).
fn ranges(cuts: &[u32]) -> Vec<(u32, u32)> {
    let mut at = vec![0];
    at.extend(cuts.iter().copied());
    at.push(PHOTONS);
    at.sort_unstable();
    at.windows(2).map(|w| (w[0], w[1])).collect()
}

/// Runs every part of `alg` cut at `cuts` on `run`, and merges their sums in order.
fn merged(alg: &CameraDensity, cuts: &[u32], run: impl Fn(&CameraDensity) -> CameraEstimate) -> CameraEstimate {
    let mut disks = None;
    let mut sums: Option<DensitySums> = None;
    for (start, end) in ranges(cuts) {
        let out = run(&part(alg, start, end));
        let s = out.sums.expect("a one-pass part has its sums");
        assert_eq!((s.photons, s.traced), (PHOTONS, end - start));
        match &mut sums {
            Some(all) => all.merge(&s).unwrap(),
            None => sums = Some(s),
        }
        // Every part finds the same disks.
        match &disks {
            Some(d) => assert_eq!(d, &out.disks),
            None => disks = Some(out.disks),
        }
    }
    CameraEstimate::from_sums(disks.unwrap(), sums.unwrap()).unwrap()
}

/// Equal bit for bit: the sums, the disks, every irradiance and pixel's bits.
fn assert_same_bits(merged: &CameraEstimate, whole: &CameraEstimate) {
    assert_eq!(merged.sums, whole.sums);
    assert_eq!(merged.disks, whole.disks);
    let bits = |e: &CameraEstimate| e.irradiance.iter().flatten().map(|v| v.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(merged), bits(whole));
    let pixels = |e: &CameraEstimate| e.per_pixel().iter().map(|v| v.to_array().map(f32::to_bits)).collect::<Vec<_>>();
    assert_eq!(pixels(merged), pixels(whole));
}

/// The one-piece CPU run of the BVH over every flight, once.
fn cpu_whole() -> &'static CameraEstimate {
    static W: OnceLock<CameraEstimate> = OnceLock::new();
    W.get_or_init(|| whole(Bounces::All, Method::Bvh).cpu(cornell()).unwrap())
}

#[test]
fn the_whole_run_has_sums_worth_splitting() {
    let w = cpu_whole();
    let sums = w.sums.as_ref().unwrap();
    let pairs: u64 = sums.disks.iter().map(|d| d.count as u64).sum();
    assert!(pairs > 1000, "{pairs} crossings: too few to test a split");
    assert_eq!((sums.photons, sums.traced, sums.disks.len()), (PHOTONS, PHOTONS, w.disks.disks.len()));
    // The irradiance is the sums' own conversion, and a missing part shows.
    assert_eq!(sums.irradiance(&w.disks.disks).unwrap(), w.irradiance);
    let half = part(&whole(Bounces::All, Method::Bvh), 0, PHOTONS / 2).cpu(cornell()).unwrap();
    assert_ne!(half.sums, w.sums);
    assert_ne!(half.irradiance, w.irradiance);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Any split into 1, 2, 4 or 7 parts merges into the one-piece run's bits; cuts at the
    /// ends come often, so that parts of no photon or of one are among those tried.
    #[test]
    fn any_split_on_the_cpu_merges_to_the_whole(
        cuts in prop::sample::select(vec![1usize, 2, 4, 7]).prop_flat_map(|n| {
            let cut = prop_oneof![3 => 0..=PHOTONS, 1 => prop::sample::select(vec![0, 1, PHOTONS - 1, PHOTONS])];
            prop::collection::vec(cut, n - 1)
        })
    ) {
        let alg = whole(Bounces::All, Method::Bvh);
        let out = merged(&alg, &cuts, |a| a.cpu(cornell()).unwrap());
        assert_same_bits(&out, cpu_whole());
    }
}

#[test]
fn every_method_and_selection_of_flights_merges_to_the_whole() {
    for method in Density::METHODS {
        for bounces in [Bounces::All, Bounces::IndirectOnly] {
            let alg = whole(bounces, method);
            let one = alg.cpu(cornell()).unwrap();
            assert_same_bits(&merged(&alg, &[700, 701, 2400], |a| a.cpu(cornell()).unwrap()), &one);
        }
    }
}

#[test]
fn every_part_shares_the_exponent_and_traces_its_photons_of_the_whole_run() {
    let alg = whole(Bounces::All, Method::Bvh);
    let k = cpu_whole().sums.as_ref().unwrap().scale_exp;
    for (start, end) in [(0, 1), (2999, 3000), (100, 100), (0, PHOTONS)] {
        let s = part(&alg, start, end).cpu(cornell()).unwrap().sums.unwrap();
        assert_eq!((s.scale_exp, s.traced), (k, end - start));
    }
    // The flights of the parts are the whole tracing's, photon for photon.
    let tracer = PhotonTracer { options: alg.photons };
    let all = tracer.cpu(cornell()).unwrap();
    let mut joined = lumbre_density::Photons::default();
    for i in 0..3 {
        let range = PhotonRange::part(i, 3, PHOTONS).unwrap();
        let p = PhotonTracer { options: PhotonOptions { range: Some(range), ..alg.photons } }.cpu(cornell()).unwrap();
        assert!(p.photon.iter().all(|n| (range.start..range.end).contains(n)));
        joined.segments.extend(p.segments);
        joined.photon.extend(p.photon);
    }
    assert_eq!(joined, all);
}

/// The message of an input error.
fn input_error<T: std::fmt::Debug>(r: lumbre_gpu::Result<T>) -> String {
    match r {
        Err(Error::Input(m)) => m,
        other => panic!("expected an input error, got {other:?}"),
    }
}

/// The refusals of a photon range: with passes, with k, outside the run.
fn refusals(run: impl Fn(&CameraDensity) -> lumbre_gpu::Result<CameraEstimate>) {
    let one = part(&whole(Bounces::All, Method::Bvh), 0, 1000);
    let m = input_error(run(&CameraDensity { passes: 2, ..one }));
    assert!(m.contains("photon range 0..1000") && m.contains("2 passes"), "{m}");
    let m = input_error(run(&CameraDensity { k: Some(8), ..one }));
    assert!(m.contains("photon range 0..1000") && m.contains("k = 8"), "{m}");
    let m = input_error(run(&part(&one, 2000, 3001)));
    assert!(m.contains("2000..3001") && m.contains("0..3000"), "{m}");
    let m = input_error(run(&part(&one, 20, 10)));
    assert!(m.contains("20..10"), "{m}");
    // Without a range, passes and k are a whole run's.
    assert!(run(&CameraDensity { passes: 2, photons: PhotonOptions { range: None, ..one.photons }, ..one }).is_ok());
}

#[test]
fn a_range_with_passes_or_k_or_outside_the_run_is_refused_on_the_cpu() {
    refusals(|a| a.run(&Backend::Cpu, cornell()));
    let bad = PhotonTracer {
        options: PhotonOptions { photons: 10, range: Some(PhotonRange { start: 5, end: 11 }), ..Default::default() },
    };
    assert!(input_error(bad.cpu(cornell())).contains("5..11"));
    assert!(input_error(PhotonRange::part(7, 7, 10)).contains("part 7 of 7"));
}

#[test]
fn sums_of_another_run_do_not_merge() {
    let w = cpu_whole().sums.clone().unwrap();
    let other = |alg: CameraDensity| part(&alg, 0, 10).cpu(cornell()).unwrap().sums.unwrap();
    let base = whole(Bounces::All, Method::Bvh);
    // Another image size: other disks.
    let smaller = other(CameraDensity { width: 12, ..base });
    assert!(input_error(w.clone().merge(&smaller)).contains("disks"));
    // Another photon count: another power per photon and exponent.
    let more = other(CameraDensity { photons: PhotonOptions { photons: 64 * PHOTONS, ..base.photons }, ..base });
    assert_ne!(more.scale_exp, w.scale_exp);
    assert!(w.clone().merge(&more).is_err());
    // The same part twice holds more photons than the run.
    let half = other(base);
    let mut twice = half.clone();
    twice.merge(&DensitySums { traced: PHOTONS, ..half.clone() }).unwrap_err();
    // A failed merge leaves the sums as they were.
    assert_eq!(twice, half);
}

/// The GPU run of `alg`.
fn on_gpu(gpu: &Gpu, alg: &CameraDensity) -> CameraEstimate {
    alg.gpu(gpu, cornell()).unwrap()
}

/// The GPU splits into `cuts` and merges to the GPU's one-piece run, with the CPU's exponent.
fn gpu_split(cuts: &[u32], method: Method) {
    let Some(gpu) = test_gpu(lumbre_gpu::wgpu::Features::empty()) else { return };
    let alg = whole(Bounces::All, method);
    let one = on_gpu(&gpu, &alg);
    let sums = one.sums.as_ref().unwrap();
    assert_eq!(sums.scale_exp, cpu_whole().sums.as_ref().unwrap().scale_exp);
    assert!(sums.disks.iter().map(|d| d.count as u64).sum::<u64>() > 1000);
    assert_same_bits(&merged(&alg, cuts, |a| on_gpu(&gpu, a)), &one);
}

#[test]
fn two_parts_on_the_gpu_merge_to_the_whole_by_every_method() {
    for method in Density::METHODS {
        gpu_split(&[1234], method);
    }
}

#[test]
fn seven_parts_on_the_gpu_merge_to_the_whole() {
    // Uneven parts, one photon alone and two empty ones.
    gpu_split(&[1, 400, 400, 1800, 2999, 3000], Method::Bvh);
}

#[test]
fn a_range_with_passes_or_k_or_outside_the_run_is_refused_on_the_gpu() {
    let Some(gpu) = test_gpu(lumbre_gpu::wgpu::Features::empty()) else { return };
    refusals(|a| a.gpu(&gpu, cornell()));
}
