//! Lightcuts against instant radiosity on the CPU (the oracle): the cluster bounds bound,
//! a threshold of 0 gives instant radiosity, 2% stays within 2% nearly everywhere; and bad
//! input is an error on both paths.

mod common;

use common::{cornell, relative_error, stream, surface_lights};
use glam::Vec3;
use lumbre_gpu::testing::test_gpu;
use lumbre_gpu::{Backend, Compute, wgpu};
use lumbre_lightcuts::twin::{box_dist2, geometry, light_cos_upper, receiver_cos_upper};
use lumbre_lightcuts::{
    CUT_INEXACT, CutOptions, GBufferPass, GreedyTree, InstantRadiosity, LightTree, Lightcuts, Method, MortonTree,
    Render, Shading, View, Visibility, Vpl, VplOptions, VplPass,
};
use lumbre_raytrace::{Camera, Prepared, Scene};
use proptest::prelude::*;

/// A floor, a back wall, a few boxes of random colours and a square light facing down.
fn random_scene(seed: u32) -> Prepared {
    let mut r = stream(seed);
    let mut obj = String::from("mtllib s.mtl\n");
    let mut mtl = String::from("newmtl light\nKd 0.5 0.5 0.5\nKe 10 9 7\n");
    let mut v = 0;
    let mut quad = |obj: &mut String, m: &str, c: [Vec3; 4]| {
        obj.push_str(&format!("usemtl {m}\n"));
        for p in c {
            obj.push_str(&format!("v {} {} {}\n", p.x, p.y, p.z));
        }
        obj.push_str(&format!("f {} {} {} {}\n", v + 1, v + 2, v + 3, v + 4));
        v += 4;
    };
    mtl.push_str("newmtl white\nKd 0.7 0.7 0.7\n");
    quad(
        &mut obj,
        "white",
        [Vec3::new(-1.0, 0.0, -1.0), Vec3::new(-1.0, 0.0, 1.0), Vec3::new(1.0, 0.0, 1.0), Vec3::new(1.0, 0.0, -1.0)],
    );
    quad(
        &mut obj,
        "white",
        [Vec3::new(-1.0, 0.0, -1.0), Vec3::new(1.0, 0.0, -1.0), Vec3::new(1.0, 2.0, -1.0), Vec3::new(-1.0, 2.0, -1.0)],
    );
    let s = 0.2 + 0.2 * r();
    quad(
        &mut obj,
        "light",
        [Vec3::new(-s, 1.9, -s), Vec3::new(s, 1.9, -s), Vec3::new(s, 1.9, s), Vec3::new(-s, 1.9, s)],
    );
    let boxes = 1 + (r() * 3.0) as u32;
    for b in 0..boxes {
        mtl.push_str(&format!("newmtl box{b}\nKd {} {} {}\n", r(), r(), r()));
        let c = Vec3::new(r() * 1.4 - 0.7, 0.0, r() * 1.4 - 0.7);
        let h = Vec3::new(0.1 + 0.2 * r(), 0.2 + 0.6 * r(), 0.1 + 0.2 * r());
        let (lo, hi) = (c - Vec3::new(h.x, 0.0, h.z), c + Vec3::new(h.x, h.y, h.z));
        let p = |x: bool, y: bool, z: bool| {
            Vec3::new(if x { hi.x } else { lo.x }, if y { hi.y } else { lo.y }, if z { hi.z } else { lo.z })
        };
        let m = format!("box{b}");
        quad(&mut obj, &m, [p(false, true, false), p(false, true, true), p(true, true, true), p(true, true, false)]);
        quad(&mut obj, &m, [p(false, false, true), p(true, false, true), p(true, true, true), p(false, true, true)]);
        quad(
            &mut obj,
            &m,
            [p(true, false, false), p(false, false, false), p(false, true, false), p(true, true, false)],
        );
        quad(
            &mut obj,
            &m,
            [p(false, false, false), p(false, false, true), p(false, true, true), p(false, true, false)],
        );
        quad(&mut obj, &m, [p(true, false, true), p(true, false, false), p(true, true, false), p(true, true, true)]);
    }
    let (scene, _) = Scene::load_obj_bytes("s.obj".as_ref(), obj.as_bytes(), &[("s.mtl", mtl.as_bytes())]).unwrap();
    Prepared::new(scene, &Default::default())
}

fn view(width: u32, height: u32) -> View {
    let camera =
        Camera { eye: Vec3::new(0.0, 1.0, 3.5), target: Vec3::new(0.0, 0.6, 0.0), up: Vec3::Y, fov_y_deg: 45.0 };
    View { camera, width, height }
}

#[test]
fn cluster_bounds_bound_every_light() {
    let p = cornell();
    let vpls = surface_lights(&p, 400, 2);
    let min_d2 = 1e-4;
    let mut r = stream(9);
    for tree in [MortonTree::default().build(&vpls).unwrap(), GreedyTree::default().build(&vpls).unwrap()] {
        let under = leaf_lists(&tree);
        for _ in 0..200 {
            let x = p.scene.bounds.0 + (p.scene.bounds.1 - p.scene.bounds.0) * Vec3::new(r(), r(), r());
            let n = Vec3::new(r() - 0.5, r() - 0.5, r() - 0.5).normalize();
            let kd = Vec3::new(r(), r(), r());
            for (i, node) in tree.nodes.iter().enumerate() {
                let g = receiver_cos_upper(x, n, node.lo, node.hi) * light_cos_upper(x, node.cone(), node.lo, node.hi)
                    / box_dist2(x, node.lo, node.hi).max(min_d2);
                let bound = g * kd.dot(node.intensity);
                let actual: f32 = under[i]
                    .iter()
                    .map(|&k| geometry(x, n, &tree.vpls[k as usize], min_d2) * kd.dot(tree.vpls[k as usize].intensity))
                    .sum();
                assert!(actual <= bound * (1.0 + 1e-4) + 1e-9, "node {i}: {actual} > bound {bound}");
            }
        }
    }
}

/// The lights under each node.
fn leaf_lists(tree: &LightTree) -> Vec<Vec<u32>> {
    let mut out = vec![Vec::new(); tree.nodes.len()];
    fn walk(t: &LightTree, i: u32, out: &mut Vec<Vec<u32>>) -> Vec<u32> {
        let n = t.nodes[i as usize];
        let v = if n.is_leaf() {
            vec![n.rep]
        } else {
            let mut a = walk(t, n.left, out);
            a.extend(walk(t, n.right, out));
            a
        };
        out[i as usize] = v.clone();
        v
    }
    walk(tree, 0, &mut out);
    out
}

/// Instant radiosity and lightcuts of one scene with the same lights and visibility.
fn both(p: &Prepared, vpls: &[Vpl], tree: LightTree, cut: CutOptions, v: View) -> (Vec<Vec3>, Vec<Vec3>, Vec<u32>) {
    let gbuffer = GBufferPass { view: v, query: Default::default() }.cpu(p).unwrap();
    let input = Shading { prepared: p.clone(), tree, gbuffer };
    let ir = InstantRadiosity::default().cpu(&input).unwrap();
    let lc = Lightcuts { cut, ..Default::default() }.cpu(&input).unwrap();
    assert_eq!(input.tree.vpls.len(), vpls.len());
    (ir.image.pixels, lc.image.pixels, lc.cuts.iter().map(|c| c.flags).collect())
}

#[test]
fn threshold_zero_is_instant_radiosity() {
    let p = cornell();
    let vpls = surface_lights(&p, 300, 4);
    for tree in [MortonTree::default().build(&vpls).unwrap(), GreedyTree::default().build(&vpls).unwrap()] {
        let exact = CutOptions { error: 0.0, max_cut: 1000, heap: 1000 };
        let (ir, lc, flags) = both(&p, &vpls, tree, exact, View::cornell(24, 20));
        assert!(flags.iter().all(|f| *f == 0));
        for (i, (a, b)) in lc.iter().zip(&ir).enumerate() {
            // Summed in another order: rounding only.
            assert!(relative_error(*a, *b) < 1e-4 || (*a - *b).abs().max_element() < 1e-7, "pixel {i}: {a} vs {b}");
        }
    }
}

/// Fraction of pixels whose radiance is more than `limit` (relative, channel sums) off.
fn over(lc: &[Vec3], ir: &[Vec3], limit: f32) -> f32 {
    lc.iter().zip(ir).filter(|(a, b)| relative_error(**a, **b) > limit).count() as f32 / lc.len() as f32
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    /// Walter et al.'s criterion bounds each cluster's error by 2% of the pixel's estimate,
    /// not the pixel's total error (a cut of many clusters may add up more), and the
    /// estimate uses the representatives' visibility: some pixels go beyond 2%. Allowed:
    /// a tenth of them, and a mean error under 1%.
    #[test]
    fn two_percent_stays_within_two_percent_nearly_everywhere(seed in 0u32..1000, n in 100usize..500) {
        let p = random_scene(seed);
        let vpls = lumbre_lightcuts::vpls_cpu(&p, &VplOptions { seed, ..VplOptions::one_bounce(n as u32) }, &Default::default()).unwrap();
        let tree = MortonTree { bounds: Some(p.scene.bounds), ..Default::default() }.build(&vpls).unwrap();
        let (ir, lc, _) = both(&p, &vpls, tree, CutOptions { heap: 1000, ..Default::default() }, view(24, 18));
        let mean: f32 = lc.iter().zip(&ir).map(|(a, b)| relative_error(*a, *b).min(1.0)).sum::<f32>() / lc.len() as f32;
        let frac = over(&lc, &ir, 0.02);
        prop_assert!(frac <= 0.10, "{} of the pixels over 2%", frac);
        prop_assert!(mean < 0.01, "mean relative error {}", mean);
    }
}

/// The Cornell box with its own VPLs: shadow edges under the boxes make visibility vary
/// within clusters, so more pixels pass 2% than in open scenes. Bounds: a fifth of the
/// pixels, a mean under 1%; the default heap of 64 entries keeps to the unbounded
/// algorithm's rate within 3 points, and a heap of 32 is flagged where it cuts short.
#[test]
fn cornell_box_at_two_percent() {
    let p = cornell();
    let vpls = lumbre_lightcuts::vpls_cpu(&p, &VplOptions::one_bounce(3000), &Default::default()).unwrap();
    let tree = MortonTree::default().build(&vpls).unwrap();
    let v = View::cornell(32, 24);
    let (ir, walter, flags) = both(&p, &vpls, tree.clone(), CutOptions { heap: 1000, ..Default::default() }, v);
    assert!(flags.iter().all(|f| f & CUT_INEXACT == 0));
    let mean: f32 = walter.iter().zip(&ir).map(|(a, b)| relative_error(*a, *b).min(1.0)).sum::<f32>() / ir.len() as f32;
    assert!(over(&walter, &ir, 0.02) <= 0.2 && mean < 0.01, "{} over 2%, mean {mean}", over(&walter, &ir, 0.02));
    let (_, default, _) = both(&p, &vpls, tree.clone(), CutOptions::default(), v);
    assert!(over(&default, &ir, 0.02) <= over(&walter, &ir, 0.02) + 0.03);
    let (_, _, small) = both(&p, &vpls, tree, CutOptions { heap: 32, ..Default::default() }, v);
    assert!(small.iter().any(|f| f & CUT_INEXACT != 0));
}

#[test]
fn bad_input_is_an_error_on_both_paths() {
    let gpu = test_gpu(wgpu::Features::empty()).unwrap();
    let p = cornell();
    let backends = [Backend::Cpu, Backend::Gpu(gpu)];
    // A scene without emitters.
    let dark = Prepared::new(Scene::from_triangles(&[[Vec3::ZERO, Vec3::X, Vec3::Y]]), &Default::default());
    for b in &backends {
        let e = VplPass::default().run(b, &dark).unwrap_err().to_string();
        assert!(e.contains("no emitters"), "{e}");
        let e = Render { view: view(8, 8), ..Default::default() }.run(b, &dark).unwrap_err().to_string();
        assert!(e.contains("no emitters"), "{e}");
    }
    // Zero VPLs asked for; a max cut of 0.
    for b in &backends {
        let none = VplPass { options: VplOptions { paths: 0, direct: 0, ..Default::default() }, ..Default::default() };
        assert!(none.run(b, &p).unwrap_err().to_string().contains("no VPLs"));
        let zero = Render {
            view: view(8, 8),
            method: Method::Lightcuts(CutOptions { max_cut: 0, ..Default::default() }),
            ..Default::default()
        };
        assert!(zero.run(b, &p).unwrap_err().to_string().contains("max cut 0"));
    }
    // A NaN intensity and an empty light list, in every consumer of lights.
    let mut vpls = surface_lights(&p, 20, 1);
    vpls[7].intensity.y = f32::NAN;
    for b in &backends {
        let e = MortonTree::default().run(b, &vpls).unwrap_err().to_string();
        assert!(e.contains("VPL 7") && e.contains("intensity"), "{e}");
        assert!(MortonTree::default().run(b, &[]).unwrap_err().to_string().contains("no VPLs"));
    }
    assert!(GreedyTree::default().build(&vpls).unwrap_err().to_string().contains("VPL 7"));
    let good = MortonTree::default().build(&surface_lights(&p, 20, 1)).unwrap();
    let gbuffer = GBufferPass { view: view(8, 8), query: Default::default() }.cpu(&p).unwrap();
    let mut bad_tree = good.clone();
    bad_tree.vpls[3].intensity.x = f32::NAN;
    let input = Shading { prepared: p.clone(), tree: bad_tree, gbuffer: gbuffer.clone() };
    for b in &backends {
        assert!(InstantRadiosity::default().run(b, &input).unwrap_err().to_string().contains("VPL 3"));
        assert!(Lightcuts::default().run(b, &input).unwrap_err().to_string().contains("VPL 3"));
        let bad_clamp = Lightcuts { clamp: 0.0, ..Default::default() };
        let ok = Shading { tree: good.clone(), ..input.clone() };
        assert!(bad_clamp.run(b, &ok).unwrap_err().to_string().contains("clamp"));
        let nan_error = Lightcuts { cut: CutOptions { error: f32::NAN, ..Default::default() }, ..Default::default() };
        assert!(nan_error.run(b, &ok).unwrap_err().to_string().contains("error threshold"));
    }
    let _ = Visibility::Rays;
}
