//! Form factors: closed forms, occlusion, reciprocity, row sums, and the GPU against the CPU.

mod common;

use glam::Vec3;
use lumbre_gpu::testing::test_gpu;
use lumbre_gpu::{Compute, Tolerance, conformance};
use lumbre_kdtree::StructureOptions;
use lumbre_radiosity::{Clusters, FormFactors, Occluders, Shape, TwoMesh, point_to_shape};
use lumbre_raytrace::{Prepared, Scene};
use proptest::prelude::*;

/// Parallel coaxial rectangles a x b at distance c (Howell's catalogue, C-11).
fn parallel(a: f64, b: f64, c: f64) -> f64 {
    let (x, y) = (a / c, b / c);
    let (x1, y1) = ((1.0 + x * x).sqrt(), (1.0 + y * y).sqrt());
    2.0 / (std::f64::consts::PI * x * y)
        * ((((1.0 + x * x) * (1.0 + y * y)) / (1.0 + x * x + y * y)).sqrt().ln()
            + x * y1 * (x / y1).atan()
            + y * x1 * (y / x1).atan()
            - x * x.atan()
            - y * y.atan())
}

/// Perpendicular rectangles with a common edge of length l, widths w (from) and h (to)
/// (Howell's catalogue, C-14).
fn perpendicular(l: f64, w: f64, h: f64) -> f64 {
    let (w, h) = (w / l, h / l);
    let (w2, h2) = (w * w, h * h);
    let s = (w2 + h2).sqrt();
    let a = (1.0 + w2) * (1.0 + h2) / (1.0 + w2 + h2);
    let b = (w2 * (1.0 + w2 + h2) / ((1.0 + w2) * (w2 + h2))).powf(w2);
    let c = (h2 * (1.0 + h2 + w2) / ((1.0 + h2) * (h2 + w2))).powf(h2);
    (w * (1.0 / w).atan() + h * (1.0 / h).atan() - s * (1.0 / s).atan() + 0.25 * (a * b * c).ln())
        / (std::f64::consts::PI * w)
}

/// From a point to a parallel rectangle a x b whose corner is at distance c along the normal.
fn point_corner(a: f64, b: f64, c: f64) -> f64 {
    let (x, y) = (a / c, b / c);
    let (x1, y1) = ((1.0 + x * x).sqrt(), (1.0 + y * y).sqrt());
    (x / x1 * (y / x1).atan() + y / y1 * (x / y1).atan()) / (2.0 * std::f64::consts::PI)
}

fn prepared(shapes: &[Shape]) -> Prepared {
    let tris: Vec<[Vec3; 3]> = shapes
        .iter()
        .flat_map(|s| {
            let c = s.corners();
            if s.triangle { vec![[c[0], c[1], c[2]]] } else { vec![[c[0], c[1], c[2]], [c[0], c[2], c[3]]] }
        })
        .collect();
    Prepared::new(Scene::from_triangles(&tris), &Default::default())
}

/// Two shapes as two one-piece elements, each its own patch.
fn two(from: &Shape, to: &Shape) -> Clusters {
    let ids = |s: &Shape, first: u32| {
        if s.triangle { [first, first + 1, first + 2, u32::MAX] } else { [first, first + 1, first + 2, first + 3] }
    };
    Clusters::new(vec![*from, *to], &[ids(from, 0), ids(to, 4)], vec![0, 1, 2], vec![0, 1, 2])
}

fn square(origin: Vec3, u: Vec3, v: Vec3) -> Shape {
    Shape { origin, edge_u: u, edge_v: v, triangle: false }
}

#[test]
fn point_to_shape_matches_the_closed_form() {
    for (a, b, c) in [(1.0, 1.0, 1.0), (2.0, 0.5, 0.7), (0.1, 3.0, 2.0)] {
        // Point at the origin facing +z; the rectangle faces -z with a corner above it.
        let s = square(Vec3::new(0.0, 0.0, c as f32), Vec3::Y * b as f32, Vec3::X * a as f32);
        let f = point_to_shape(Vec3::ZERO, Vec3::Z, &s) as f64;
        assert!((f - point_corner(a, b, c)).abs() < 2e-6, "{a} {b} {c}: {f} vs {}", point_corner(a, b, c));
        // Behind the rectangle (or it behind the point): nothing.
        assert_eq!(point_to_shape(Vec3::new(0.0, 0.0, 2.0 * c as f32), Vec3::Z, &s), 0.0);
        assert_eq!(point_to_shape(Vec3::ZERO, -Vec3::Z, &s), 0.0);
    }
    // A rectangle crossing the point's horizon is clipped to the visible part: a wall
    // rising from below the floor counts as the part above it.
    let wall = square(Vec3::new(-5.0, 1.0, -1.0), Vec3::new(10.0, 0.0, 0.0), Vec3::new(0.0, 0.0, 2.0));
    let above = square(Vec3::new(-5.0, 1.0, 0.0), Vec3::new(10.0, 0.0, 0.0), Vec3::new(0.0, 0.0, 1.0));
    let (fw, fa) = (point_to_shape(Vec3::ZERO, Vec3::Z, &wall), point_to_shape(Vec3::ZERO, Vec3::Z, &above));
    assert!((fw - fa).abs() < 1e-6 && fa > 0.0, "{fw} vs {fa}");
}

#[test]
fn squares_match_the_closed_forms() {
    let ff = FormFactors { samples: 256, ..FormFactors::default() };
    // Parallel unit squares one apart, facing each other.
    let bottom = square(Vec3::ZERO, Vec3::X, Vec3::Y);
    let top = square(Vec3::Z, Vec3::Y, Vec3::X);
    let p = prepared(&[bottom, top]);
    let occ = Occluders { tris: &p.tris, structure: &p.structure, eps: p.eps };
    let f = ff.pair(&occ, &two(&bottom, &top), 0, 1) as f64;
    assert!((f - parallel(1.0, 1.0, 1.0)).abs() < 2e-3, "parallel: {f} vs {}", parallel(1.0, 1.0, 1.0));
    // Perpendicular unit squares sharing an edge (the floor and a wall).
    let floor = square(Vec3::ZERO, Vec3::X, Vec3::Y);
    let wall = square(Vec3::ZERO, Vec3::Z, Vec3::X);
    let p = prepared(&[floor, wall]);
    let occ = Occluders { tris: &p.tris, structure: &p.structure, eps: p.eps };
    for (from, to) in [(&floor, &wall), (&wall, &floor)] {
        let f = ff.pair(&occ, &two(from, to), 0, 1) as f64;
        assert!((f - perpendicular(1.0, 1.0, 1.0)).abs() < 2e-3, "perpendicular: {f}");
    }
    // A 2 x 1 wall on a 1 x 1 floor: the closed form is not symmetric.
    let tall = square(Vec3::ZERO, Vec3::Z * 2.0, Vec3::X);
    let p = prepared(&[floor, tall]);
    let occ = Occluders { tris: &p.tris, structure: &p.structure, eps: p.eps };
    let f = ff.pair(&occ, &two(&floor, &tall), 0, 1) as f64;
    assert!((f - perpendicular(1.0, 1.0, 2.0)).abs() < 2e-3, "{f} vs {}", perpendicular(1.0, 1.0, 2.0));
}

#[test]
fn occluders_block() {
    let ff = FormFactors { samples: 64, ..FormFactors::default() };
    let bottom = square(Vec3::ZERO, Vec3::X, Vec3::Y);
    let top = square(Vec3::Z, Vec3::Y, Vec3::X);
    let free = {
        let p = prepared(&[bottom, top]);
        ff.pair(&Occluders { tris: &p.tris, structure: &p.structure, eps: p.eps }, &two(&bottom, &top), 0, 1)
    };
    // A large blocker halfway: nothing passes.
    let blocker = square(Vec3::new(-2.0, -2.0, 0.5), Vec3::X * 5.0, Vec3::Y * 5.0);
    let p = prepared(&[bottom, top, blocker]);
    let occ = Occluders { tris: &p.tris, structure: &p.structure, eps: p.eps };
    assert_eq!(ff.pair(&occ, &two(&bottom, &top), 0, 1), 0.0);
    // Half a blocker: some passes.
    let half = square(Vec3::new(-2.0, -2.0, 0.5), Vec3::X * 2.5, Vec3::Y * 5.0);
    let p = prepared(&[bottom, top, half]);
    let occ = Occluders { tris: &p.tris, structure: &p.structure, eps: p.eps };
    let f = ff.pair(&occ, &two(&bottom, &top), 0, 1);
    assert!(f > 0.2 * free && f < 0.8 * free, "{f} of {free}");
}

#[test]
fn closed_box_rows_sum_to_one_and_open_box_rows_less() {
    let mesh = TwoMesh::closed_box(6, 3).unwrap();
    let f = FormFactors::default().cpu(&mesh).unwrap();
    for (e, s) in f.row_sums().iter().enumerate() {
        assert!((s - 1.0).abs() < 1e-4, "element {e}: row sum {s}");
    }
    let cornell = TwoMesh::fixed(common::cornell(), 600, 60).unwrap().0;
    let f = FormFactors::default().cpu(&cornell).unwrap();
    let sums = f.row_sums();
    // With occluders a row's sum is at most 1 up to the visibility estimate's noise (the
    // unoccluded factors of hidden patches, times a sampled visible fraction).
    let max = sums.iter().fold(0.0f64, |m, &s| m.max(s));
    assert!(max <= 1.05, "max row sum {max}");
    // The Cornell box is open at the front: light escapes from every element.
    let mean = sums.iter().sum::<f64>() / sums.len() as f64;
    assert!(mean < 0.95 && mean > 0.4, "mean row sum {mean}");
    assert!(f.data.iter().all(|v| v.is_finite() && *v >= 0.0));
}

#[test]
fn reciprocity_holds_within_monte_carlo_error() {
    // A_e F_ep against A_p F_pe, with A_p F_pe = sum over the elements e' of p of
    // A_e' F_e'e (from the element-to-element matrix).
    let mesh = TwoMesh::closed_box(4, 2).unwrap();
    let ff = FormFactors { samples: 64, ..FormFactors::default() };
    let fep = ff.cpu(&mesh).unwrap();
    let full = FormFactors { full: true, ..ff }.cpu(&mesh).unwrap();
    let areas = mesh.areas();
    let (mut diff, mut total, mut worst) = (0.0f64, 0.0f64, 0.0f64);
    for e in 0..mesh.n() {
        for p in 0..mesh.k() {
            let a = areas[e] as f64 * fep.get(e, p) as f64;
            let b: f64 = (mesh.patch_start[p]..mesh.patch_start[p + 1])
                .map(|j| areas[j as usize] as f64 * full.get(j as usize, e) as f64)
                .sum();
            diff += (a - b).abs();
            total += a + b;
            if a + b > 1e-3 {
                worst = worst.max((a - b).abs() / (a + b));
            }
        }
    }
    assert!(diff / total < 0.01, "mean relative reciprocity error {}", diff / total);
    assert!(worst < 0.2, "worst pair {worst}");
    // Element to element, both directions: equal areas, so F_ij ~ F_ji.
    let (mut diff, mut total) = (0.0f64, 0.0f64);
    for i in 0..mesh.n() {
        for j in 0..mesh.n() {
            diff += (full.get(i, j) as f64 - full.get(j, i) as f64).abs();
            total += full.get(i, j) as f64;
        }
    }
    assert!(diff / (2.0 * total) < 0.02, "{}", diff / (2.0 * total));
}

#[test]
fn gpu_form_factors_equal_the_cpu() {
    let gpu = test_gpu(lumbre_gpu::wgpu::Features::empty()).unwrap();
    // FMA contraction and the GPU's atan2 and sqrt move values by a few ulps; a shadow ray
    // can only flip where it grazes an edge, which these scenes avoid. Near a patch,
    // Lambert's sum cancels terms of order 1 (its near edges) to a small factor, so the
    // rounding of either side reaches a few 1e-6 in absolute terms (a patch's bound can also
    // pick the sum over its boundary on one side and over its pieces on the other).
    let tol = Tolerance::within(5e-6, 1e-4);
    let mesh = TwoMesh::fixed(common::cornell(), 400, 100).unwrap().0;
    let bvh = conformance(&FormFactors::default(), &gpu, &mesh, tol).unwrap();
    // Through the kd-tree (the kernel's other variant): the same factors, as the same
    // shadow rays hit the same triangles.
    let mut kd = common::cornell();
    kd.prepared = Prepared::new(kd.prepared.scene.clone(), &StructureOptions::KdTree(Default::default()));
    let mesh_kd = TwoMesh::fixed(kd, 400, 100).unwrap().0;
    let on_kd = conformance(&FormFactors::default(), &gpu, &mesh_kd, tol).unwrap();
    assert_eq!(lumbre_gpu::Agree::disagreement(&bvh, &on_kd, tol), None);
    // A scanned mesh: elements of many triangles, patches of many elements (boundaries,
    // bounds and area tables on both sides).
    let teapot = lumbre_radiosity::Surfaces::load(&common::scene("teapot.obj")).unwrap();
    let mesh = TwoMesh::fixed(teapot, 300, 30).unwrap().0;
    assert!(mesh.pieces.len() > 5 * mesh.n());
    conformance(&FormFactors { samples: 4, ..FormFactors::default() }, &gpu, &mesh, tol).unwrap();
    let full = FormFactors { samples: 4, full: true, ..FormFactors::default() };
    conformance(&full, &gpu, &mesh, tol).unwrap();
    let boxed = TwoMesh::closed_box(4, 2).unwrap();
    let full = FormFactors { full: true, block_rows: Some(7), ..FormFactors::default() };
    let f = conformance(&full, &gpu, &boxed, tol).unwrap();
    assert_eq!((f.rows, f.cols), (96, 96));
    // The check fails on a wrong answer: another seed is another estimate.
    let cpu = FormFactors::default().cpu(&boxed).unwrap();
    let other = FormFactors { seed: 1, ..FormFactors::default() }.gpu(&gpu, &boxed).unwrap();
    assert!(lumbre_gpu::Agree::disagreement(&cpu, &other, tol).is_some());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(8))]
    #[test]
    fn generated_boxes_agree(t in 1u32..4, r in 1u32..3, samples in 1u32..10, seed in any::<u32>(), rows in 1usize..40) {
        let gpu = test_gpu(lumbre_gpu::wgpu::Features::empty()).unwrap();
        let mesh = TwoMesh::closed_box(t * r, t).unwrap();
        let ff = FormFactors { samples, seed, full: false, block_rows: Some(rows) };
        conformance(&ff, &gpu, &mesh, Tolerance::within(1e-6, 1e-4)).unwrap();
    }
}
