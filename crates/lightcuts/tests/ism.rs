//! Imperfect shadow maps: CPU against GPU stage by stage (exact), pull-push on a linear
//! ramp, lookups against exact shadow rays, and bad input.

use glam::Vec3;
use lumbre_gpu::testing::test_gpu;
use lumbre_gpu::wgpu::Features;
use lumbre_gpu::{Agree, Compute, Gpu, GpuOptions, Tolerance, compare_slices, conformance};
use lumbre_kdtree::{BuildOptions, KdTree, QueryOptions, Ray};
use lumbre_lightcuts::Vpl;
use lumbre_lightcuts::ism::{
    GpuIsmAtlas, GpuScenePoints, Ism, IsmAtlas, IsmInput, IsmLookup, IsmOptions, IsmQueries, IsmScene, MAX_DIFFERING,
    PullPush, SAME_DEPTH_REL, SamplePoints, ScenePoints, Splat, upload_vpls,
};
use lumbre_lightcuts::workloads::vpls_on;
use proptest::prelude::*;

/// A horizontal square of half-side `r` at height `y`, facing up.
fn quad(y: f32, r: f32, cx: f32, cz: f32) -> [[Vec3; 3]; 2] {
    let c = [
        Vec3::new(cx - r, y, cz + r),
        Vec3::new(cx + r, y, cz + r),
        Vec3::new(cx + r, y, cz - r),
        Vec3::new(cx - r, y, cz - r),
    ];
    [[c[0], c[1], c[2]], [c[0], c[2], c[3]]]
}

/// A floor of half-side 1 at y = 0 and an occluder of half-side 0.3 at y = 0.5.
fn occluder_scene() -> Vec<[Vec3; 3]> {
    quad(0.0, 1.0, 0.0, 0.0).into_iter().chain(quad(0.5, 0.3, 0.0, 0.0)).collect()
}

fn cornell() -> Vec<[Vec3; 3]> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/scenes/CornellBox-Original.obj");
    lumbre_raytrace::Scene::load_obj(path.as_ref()).expect("the Cornell box loads").0.triangle_positions()
}

/// A small xorshift for generated inputs.
fn rng(seed: u32) -> impl FnMut() -> f32 {
    let mut rng = lumbre_gpu::testing::Rng::new(seed);
    move || rng.f32()
}

fn random_triangles(n: usize, seed: u32) -> Vec<[Vec3; 3]> {
    let mut r = rng(seed);
    let mut p = move || Vec3::new(r() * 4.0 - 2.0, r() * 2.0, r() * 4.0 - 2.0);
    (0..n).map(|_| [p(), p(), p()]).collect()
}

fn random_vpls(n: usize, seed: u32) -> Vec<Vpl> {
    let mut r = rng(seed ^ 0xabcd);
    (0..n)
        .map(|_| {
            let position = Vec3::new(r() * 3.0 - 1.5, r() * 2.0, r() * 3.0 - 1.5);
            let normal = Vec3::new(r() - 0.5, r() - 0.5, r() - 0.5).try_normalize().unwrap_or(Vec3::Y);
            Vpl { position, normal, intensity: Vec3::ONE }
        })
        .collect()
}

/// Whether the device computes f32 as the CPU does, operation for operation: lavapipe
/// (LLVM, IEEE 754, no contraction). SPIR-V lets other drivers fuse and reassociate float
/// operations (NVIDIA's do), so there points and depths move by a few ulps and a point within
/// rounding of a texel border can land in the neighbour.
fn ieee(gpu: &Gpu) -> bool {
    lumbre_gpu::testing::capabilities(gpu).exact_f32
}

/// Runs both paths of `alg`: identical atlases on lavapipe; elsewhere at most
/// `MAX_DIFFERING` of the texels differing by more than `SAME_DEPTH_REL`.
fn agree_atlas<C: Compute<Output = IsmAtlas>>(alg: &C, gpu: &Gpu, input: &C::Input) -> Result<IsmAtlas, String> {
    if ieee(gpu) {
        return conformance(alg, gpu, input, Tolerance::EXACT).map_err(|e| e.to_string());
    }
    let cpu = alg.run(&lumbre_gpu::Backend::Cpu, input).map_err(|e| e.to_string())?;
    let on_gpu = alg.gpu(gpu, input).map_err(|e| e.to_string())?;
    let d = cpu.differing_texels(&on_gpu, SAME_DEPTH_REL);
    if !atlas_tolerance().allows(d, cpu.depth.len()) {
        return Err(format!("{}: {d} of {} texels differ", alg.name(), cpu.depth.len()));
    }
    Ok(cpu)
}

/// Texels whose depths differ by more than [`SAME_DEPTH_REL`] (or in their holes): at most
/// [`MAX_DIFFERING`] of them.
fn atlas_tolerance() -> Tolerance {
    Tolerance::relative(SAME_DEPTH_REL as f64).beyond(MAX_DIFFERING)
}

/// Both paths' lookups: within 1e-6 on lavapipe (the final division may differ by 2.5 ulp
/// under Vulkan's rules); elsewhere at most 0.5% of them different.
fn agree_lookups(gpu: &Gpu, q: &IsmQueries) -> Vec<f32> {
    if ieee(gpu) {
        return conformance(&IsmLookup, gpu, q, Tolerance::absolute(1e-6)).unwrap();
    }
    let (cpu, on_gpu) = (IsmLookup.cpu(q).unwrap(), IsmLookup.gpu(gpu, q).unwrap());
    if let Some(d) = compare_slices(&cpu, &on_gpu, Tolerance::absolute(1e-6).beyond(0.005)) {
        panic!("lookups: {d}");
    }
    cpu
}

fn gpu() -> Gpu {
    test_gpu(Features::empty()).expect("a GPU (set LUMBRE_REQUIRE_GPU=1 to make its absence a failure)")
}

#[test]
fn point_pools_agree_exactly() {
    let Some(gpu) = test_gpu(Features::empty()) else { return };
    for (tris, count, seed) in [
        (cornell(), 5000, 0),
        (occluder_scene(), 1, 3),
        (occluder_scene(), 4097, 9),
        (random_triangles(300, 5), 20_000, 11),
    ] {
        // Triangles exactly everywhere; positions exactly on lavapipe, else within a few ulps.
        let tol = if ieee(&gpu) { Tolerance::EXACT } else { Tolerance::absolute(1e-5) };
        let pool = conformance(&SamplePoints { count, seed }, &gpu, &tris, tol).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(pool.len(), count as usize);
    }
}

#[test]
fn splats_agree_exactly_at_every_size() {
    let Some(gpu) = test_gpu(Features::empty()) else { return };
    let tris = cornell();
    let points = ScenePoints::sample(&tris, 30_000, 1).unwrap();
    let vpls = vpls_on(&tris, 24, 1).unwrap();
    for size in [32, 64, 128] {
        let opts = IsmOptions { size, points: 30_000, points_per_vpl: 3000, seed: 4, ..Default::default() };
        let input = IsmInput { points: points.clone(), vpls: vpls.clone() };
        let atlas = agree_atlas(&Splat { options: opts }, &gpu, &input).unwrap();
        // Holes and depths both: the test means something.
        let holes = atlas.holes();
        assert!(holes > 0 && holes < atlas.depth.len(), "size {size}: {holes} holes");
    }
}

#[test]
fn whole_builds_agree_exactly_and_report_their_stages() {
    let Some(gpu) = test_gpu(Features::empty()) else { return };
    let scene = IsmScene { triangles: cornell(), vpls: vpls_on(&cornell(), 40, 2).unwrap() };
    let ism = Ism {
        options: IsmOptions {
            size: 64,
            points: 20_000,
            points_per_vpl: 1500,
            pull_push_levels: 3,
            ..Default::default()
        },
    };
    let atlas = agree_atlas(&ism, &gpu, &scene).unwrap();
    let (_, cpu_report) = ism.cpu_reported(&scene, &()).unwrap();
    for stage in ["ism points", "ism splat", "ism pull-push"] {
        assert!(cpu_report.stage(stage).is_some(), "{stage} in {cpu_report}");
    }
    assert!(cpu_report.get("holes after pull-push").unwrap() < cpu_report.get("holes after splat").unwrap());
    assert_eq!(cpu_report.get("atlas width"), Some(7.0 * 64.0));
    let on_gpu = ism.upload(&gpu, &scene).unwrap();
    let (again, gpu_report) = ism.gpu_reported(&gpu, &on_gpu).unwrap();
    assert!(atlas_tolerance().allows(atlas.differing_texels(&again, SAME_DEPTH_REL), atlas.depth.len()));
    assert_eq!(gpu_report.get("atlas height"), Some(6.0 * 64.0), "{gpu_report}");
}

#[test]
fn pull_push_agrees_exactly_at_every_level() {
    let Some(gpu) = test_gpu(Features::empty()) else { return };
    let tris = cornell();
    let points = ScenePoints::sample(&tris, 20_000, 3).unwrap();
    let vpls = vpls_on(&tris, 9, 3).unwrap();
    for size in [32, 128] {
        let opts = IsmOptions { size, points: 20_000, points_per_vpl: 600, pull_push_levels: 0, ..Default::default() };
        let splatted = Ism::build_cpu(&points, &vpls, &opts).unwrap();
        for levels in 0..=size.trailing_zeros() {
            let filled = agree_atlas(&PullPush { levels }, &gpu, &splatted)
                .unwrap_or_else(|e| panic!("size {size}, {levels} levels: {e}"));
            if levels > 0 {
                assert!(filled.holes() < splatted.holes(), "size {size}, {levels} levels");
            }
            // Valid texels are never changed.
            let kept = splatted.depth.iter().zip(&filled.depth).all(|(a, b)| !a.is_finite() || a == b);
            assert!(kept, "size {size}, {levels} levels");
        }
    }
}

/// A depth linear in the texel centre, exactly representable with its sums.
fn ramp(x: u32, y: u32) -> f32 {
    4.0 + (2 * x + 1) as f32 / 64.0 + (2 * y + 1) as f32 / 128.0
}

/// Holes over `levels` levels of a `size` map such that every 2x2 block at every level has
/// all, none or a diagonal pair of its texels valid, and no hole lies on the border ring of
/// its level: top level all valid, then per block of a valid parent off the ring, all four
/// children valid or a random diagonal pair.
fn symmetric_holes(size: u32, levels: u32, seed: u32) -> Vec<bool> {
    let mut r = rng(seed);
    let top = size >> levels;
    let mut hole = vec![false; (top * top) as usize];
    for l in (0..levels).rev() {
        let (sc, sf) = (size >> (l + 1), size >> l);
        let mut fine = vec![false; (sf * sf) as usize];
        for y in 0..sc {
            for x in 0..sc {
                let ring = x == 0 || y == 0 || x == sc - 1 || y == sc - 1;
                let children = [(0, 0), (1, 0), (0, 1), (1, 1)];
                let pattern = if hole[(y * sc + x) as usize] {
                    [true; 4]
                } else if ring {
                    [false; 4]
                } else {
                    match (r() * 3.0) as u32 {
                        0 => [false; 4],
                        1 => [true, false, false, true],
                        _ => [false, true, true, false],
                    }
                };
                for (k, (dx, dy)) in children.iter().enumerate() {
                    fine[((2 * y + dy) * sf + 2 * x + dx) as usize] = pattern[k];
                }
            }
        }
        hole = fine;
    }
    hole
}

#[test]
fn pull_push_fills_a_linear_ramp_exactly() {
    let Some(gpu) = test_gpu(Features::empty()) else { return };
    let size = 64;
    for (levels, seed) in [(1, 1), (2, 2), (3, 3), (4, 4), (6, 6)] {
        let holes = symmetric_holes(size, levels, seed);
        let count = holes.iter().filter(|h| **h).count();
        assert!(count > 64, "{levels} levels: only {count} holes");
        let mut atlas = IsmAtlas::empty(size, 2);
        for v in 0..2 {
            for y in 0..size {
                for x in 0..size {
                    let i = (v * size * size + y * size + x) as usize;
                    // The second map is whole: it must come out unchanged.
                    atlas.depth[i] = if v == 0 && holes[(y * size + x) as usize] { f32::INFINITY } else { ramp(x, y) };
                }
            }
        }
        // Exact on every device: the ramp's sums are exact, so no rounding is left to differ.
        let filled = conformance(&PullPush { levels }, &gpu, &atlas, Tolerance::EXACT).unwrap();
        for v in 0..2 {
            for y in 0..size {
                for x in 0..size {
                    assert_eq!(filled.texel(v, x, y), ramp(x, y), "{levels} levels, map {v}, texel ({x}, {y})");
                }
            }
        }
    }
    // The check can fail: a hole that breaks the symmetry (three valid texels in a block)
    // is filled from a biased mean.
    let mut atlas = IsmAtlas::empty(size, 1);
    for y in 0..size {
        for x in 0..size {
            atlas.depth[(y * size + x) as usize] = ramp(x, y);
        }
    }
    atlas.depth[(20 * size + 20) as usize] = f32::INFINITY;
    let filled = PullPush { levels: 1 }.cpu(&atlas).unwrap();
    assert_ne!(filled.texel(0, 20, 20), ramp(20, 20));
    assert!((filled.texel(0, 20, 20) - ramp(20, 20)).abs() < 0.05);
}

#[test]
fn lookups_agree_with_the_cpu() {
    let Some(gpu) = test_gpu(Features::empty()) else { return };
    let tris = cornell();
    let points = ScenePoints::sample(&tris, 20_000, 5).unwrap();
    let vpls = vpls_on(&tris, 16, 5).unwrap();
    let mut r = rng(77);
    let receivers = ScenePoints::sample(&tris, 3000, 6).unwrap();
    for taps in [1, 5, 9] {
        let opts = IsmOptions { points: 20_000, points_per_vpl: 2000, taps, ..Default::default() };
        let atlas = Ism::build_cpu(&points, &vpls, &opts).unwrap();
        let queries: Vec<(u32, Vec3)> = receivers.positions.iter().map(|&p| ((r() * 16.0) as u32 % 16, p)).collect();
        let q = IsmQueries { atlas, vpls: vpls.clone(), queries };
        let vis = agree_lookups(&gpu, &q);
        let shadowed = vis.iter().filter(|v| **v < 0.5).count();
        assert!(shadowed > 100 && shadowed < vis.len() - 100, "{taps} taps: {shadowed} of {} shadowed", vis.len());
    }
}

/// Exact visibility of `p` from `light` by a shadow ray.
fn exact_visible(tree: &KdTree, tris: &[[Vec3; 3]], light: &Vpl, p: Vec3) -> bool {
    if (p - light.position).dot(light.normal) <= 0.0 {
        return false;
    }
    let ray = Ray::new(p, light.position - p);
    !tree.any_hit(tris, &ray, 1e-4, 1.0 - 1e-4, &QueryOptions::default())
}

#[test]
fn lookups_agree_with_shadow_rays() {
    let Some(gpu) = test_gpu(Features::empty()) else { return };
    let tris = occluder_scene();
    let tree = KdTree::build(&tris, &BuildOptions::default());
    let vpls: Vec<Vpl> = [(0.0, 1.5, 0.0), (0.5, 1.2, -0.4), (-0.7, 0.9, 0.6), (0.2, 1.0, 0.9)]
        .into_iter()
        .map(|(x, y, z)| Vpl { position: Vec3::new(x, y, z), normal: -Vec3::Y, intensity: Vec3::ONE })
        .collect();
    // Receivers: a grid on the floor and one on the occluder's top, off the edges' rows.
    let mut receivers = Vec::new();
    for i in 0..48 {
        for j in 0..48 {
            let (u, v) = ((i as f32 + 0.5) / 48.0, (j as f32 + 0.5) / 48.0);
            receivers.push(Vec3::new(2.0 * u - 1.0, 0.0, 2.0 * v - 1.0));
            if i % 4 == 0 && j % 4 == 0 {
                receivers.push(Vec3::new(0.6 * u - 0.3, 0.5, 0.6 * v - 0.3));
            }
        }
    }
    let opts = IsmOptions { size: 64, points: 1 << 16, points_per_vpl: 8192, ..Default::default() };
    let points = ScenePoints::sample(&tris, opts.points, opts.seed).unwrap();
    let atlas = Ism::build_cpu(&points, &vpls, &opts).unwrap();
    let queries: Vec<(u32, Vec3)> =
        (0..vpls.len() as u32).flat_map(|v| receivers.iter().map(move |&p| (v, p))).collect();
    let q = IsmQueries { atlas: atlas.clone(), vpls: vpls.clone(), queries };
    let vis = agree_lookups(&gpu, &q);
    let (mut false_shadow, mut false_light, mut shadowed) = (0, 0, 0);
    for (&(v, p), &f) in q.queries.iter().zip(&vis) {
        let exact = exact_visible(&tree, &tris, &vpls[v as usize], p);
        shadowed += usize::from(!exact);
        false_shadow += usize::from(exact && f < 0.5);
        false_light += usize::from(!exact && f >= 0.5);
    }
    let wrong = false_shadow + false_light;
    let rate = wrong as f64 / vis.len() as f64;
    eprintln!(
        "ISM against shadow rays: {false_shadow} false shadows and {false_light} false lights of {} lookups, {shadowed} shadowed",
        vis.len()
    );
    assert!(shadowed > vis.len() / 20, "the scene casts shadows: {shadowed}");
    // Maps of 64x64 dilate the occluder by about a texel: lit receivers next to the shadow's
    // edge read as shadowed; holes let through almost nothing.
    assert!(rate < 0.05 && false_light < vis.len() / 200, "{false_shadow} + {false_light} of {} disagree", vis.len());
    // The comparison can fail: without pull-push, and with too few points, holes let light
    // through the occluder.
    let sparse = IsmOptions { points_per_vpl: 256, pull_push_levels: 0, ..opts };
    let holey = Ism::build_cpu(&points, &vpls, &sparse).unwrap();
    let wrong_sparse = q
        .queries
        .iter()
        .filter(|&&(v, p)| {
            exact_visible(&tree, &tris, &vpls[v as usize], p) != (holey.visibility(v, &vpls[v as usize], p) >= 0.5)
        })
        .count();
    assert!(wrong_sparse as f64 > 3.0 * rate * vis.len() as f64, "{wrong_sparse} vs {wrong}");
}

#[test]
fn atlases_longer_than_a_binding_go_in_pieces() {
    let Some(shared) = test_gpu(Features::empty()) else { return };
    // Bindings of 40 KiB: two 64x64 maps (16 KiB each) per piece.
    let opts = GpuOptions {
        adapter: Some(shared.adapter_choice().to_string()),
        max_binding_size: Some(40 << 10),
        ..Default::default()
    };
    let gpu = Gpu::with_options(&opts).unwrap();
    let tris = cornell();
    let scene = IsmScene { triangles: tris.clone(), vpls: vpls_on(&tris, 7, 8).unwrap() };
    let ism =
        Ism { options: IsmOptions { points: 2000, points_per_vpl: 1000, pull_push_levels: 6, ..Default::default() } };
    let atlas = agree_atlas(&ism, &gpu, &scene).unwrap();
    assert_eq!(atlas.vpls, 7);
    // Lookups bind the atlas whole: a clear error names the limit.
    let on_gpu = GpuIsmAtlas::upload(&gpu, &atlas).unwrap();
    let Err(err) = on_gpu.lookup_bindings(&gpu) else { panic!("an atlas over one binding was bound") };
    assert!(err.to_string().contains("max_storage_buffer_binding_size"), "{err}");
}

#[test]
fn the_comparison_sees_one_wrong_texel() {
    let mut a = IsmAtlas::empty(32, 2);
    a.depth[5] = 1.0;
    let mut b = a.clone();
    assert!(a.disagreement(&b, Tolerance::EXACT).is_none());
    b.depth[5] = f32::from_bits(1.0f32.to_bits() + 1);
    assert!(a.disagreement(&b, Tolerance::EXACT).is_some());
    b.depth[5] = 1.0;
    b.depth[2047] = 3.0; // a hole filled
    assert!(a.disagreement(&b, Tolerance::relative(1e-3)).is_some());
}

#[test]
fn bad_options_and_inputs_are_errors() {
    let ok = IsmOptions::default();
    let cases: [(IsmOptions, &str); 11] = [
        (IsmOptions { size: 16, ..ok }, "size 16"),
        (IsmOptions { size: 256, ..ok }, "size 256"),
        (IsmOptions { points: 0, ..ok }, "points 0"),
        (IsmOptions { points: (1 << 28) + 1, ..ok }, "points 268435457"),
        (IsmOptions { points_per_vpl: 0, ..ok }, "points_per_vpl 0"),
        (IsmOptions { points: 100, points_per_vpl: 101, ..ok }, "points_per_vpl 101"),
        (IsmOptions { size: 32, pull_push_levels: 6, ..ok }, "pull_push_levels 6"),
        (IsmOptions { taps: 4, ..ok }, "taps 4"),
        (IsmOptions { bias: -0.1, ..ok }, "bias -0.1"),
        (IsmOptions { bias: f32::NAN, ..ok }, "bias NaN"),
        (IsmOptions { slope_bias: f32::INFINITY, ..ok }, "slope_bias inf"),
    ];
    for (opts, named) in cases {
        let e = opts.validate().expect_err(named).to_string();
        assert!(e.contains(named), "{e} should name {named}");
    }
    let tris = occluder_scene();
    let points = ScenePoints::sample(&tris, 1000, 0).unwrap();
    let good = Vpl { position: Vec3::Y, normal: -Vec3::Y, intensity: Vec3::ONE };
    let small = IsmOptions { points: 1000, points_per_vpl: 500, ..ok };
    assert!(Ism::build_cpu(&points, &[good], &small).is_ok());
    for (i, bad) in [
        Vpl { position: Vec3::NAN, ..good },
        Vpl { normal: Vec3::ZERO, ..good },
        Vpl { normal: Vec3::new(0.0, -2.0, 0.0), ..good },
        Vpl { position: Vec3::INFINITY, ..good },
    ]
    .into_iter()
    .enumerate()
    {
        let e = Ism::build_cpu(&points, &[good, bad], &small).expect_err("a bad VPL").to_string();
        assert!(e.contains("VPL 1"), "case {i}: {e}");
    }
    // A pool smaller than the window.
    let e = Ism::build_cpu(&points, &[good], &IsmOptions { points: 5000, points_per_vpl: 2000, ..ok }).unwrap_err();
    assert!(e.to_string().contains("1000 points"), "{e}");
    // Pull-push over more levels than the map has, and negative depths.
    let atlas = IsmAtlas::empty(32, 1);
    assert!(PullPush { levels: 6 }.cpu(&atlas).is_err());
    let mut negative = atlas.clone();
    negative.depth[3] = -1.0;
    assert!(PullPush { levels: 1 }.cpu(&negative).unwrap_err().to_string().contains("depth 3"));
    // Lookups with a VPL index out of range.
    let q = IsmQueries { atlas, vpls: vec![good], queries: vec![(0, Vec3::ZERO), (1, Vec3::ZERO)] };
    assert!(IsmLookup.cpu(&q).unwrap_err().to_string().contains("query 1"));
    // The GPU paths refuse the same.
    let gpu = gpu();
    assert!(upload_vpls(&gpu, &[good, Vpl { normal: Vec3::ZERO, ..good }]).is_err());
    let on_gpu = GpuScenePoints::upload(&gpu, &points).unwrap();
    let vpls = upload_vpls(&gpu, &[good]).unwrap();
    let mut rec = gpu.recorder();
    let too_many = Ism { options: IsmOptions { points: 5000, points_per_vpl: 2000, ..ok } };
    assert!(too_many.record_build(&mut rec, &on_gpu, &vpls).is_err());
    assert!(Ism { options: IsmOptions { size: 48, ..ok } }.record_build(&mut rec, &on_gpu, &vpls).is_err());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(6))]
    #[test]
    fn generated_scenes_build_identically(
        tris in 1usize..200,
        vpls in 1usize..12,
        seed in any::<u32>(),
        size_log in 5u32..=7,
        levels in 0u32..=5,
        per_vpl in 1u32..3000,
    ) {
        let Some(gpu) = test_gpu(Features::empty()) else { return Ok(()) };
        let scene = IsmScene { triangles: random_triangles(tris, seed), vpls: random_vpls(vpls, seed) };
        let options = IsmOptions {
            size: 1 << size_log,
            points: 3000,
            points_per_vpl: per_vpl,
            pull_push_levels: levels,
            seed,
            ..Default::default()
        };
        agree_atlas(&Ism { options }, &gpu, &scene).map_err(TestCaseError::fail)?;
    }
}
