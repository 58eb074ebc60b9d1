//! Meshing: the generated box at the paper's sizes, 2MF and 2MCE on any triangle scene
//! (exact cover of the scene's area, one patch per element, connected patches, n and k near
//! the request), by proptest over random meshes and soups.

mod common;

use std::collections::{HashMap, HashSet};

use glam::Vec3;
use lumbre_gpu::Progress;
use lumbre_radiosity::{Coherence, Surfaces, TwoMesh};
use lumbre_raytrace::Scene;
use proptest::prelude::*;

/// Checks what every mesh must satisfy: the pieces of each face tile it exactly once, every
/// piece in one element and every element in one patch (ranges that partition), every
/// element's pieces of one material, every patch connected through shared corners; and the
/// hit lookup finds each piece.
fn check_mesh(m: &TwoMesh) {
    let s = &m.surfaces;
    assert_eq!(*m.piece_start.last().unwrap() as usize, m.pieces.len());
    assert_eq!(*m.patch_start.last().unwrap() as usize, m.n());
    assert!(m.piece_start.windows(2).all(|w| w[1] > w[0]), "an empty element");
    assert!(m.patch_start.windows(2).all(|w| w[1] > w[0]), "an empty patch");
    // Every cell is exactly one piece.
    let cells = *m.face_first.last().unwrap() as usize;
    assert_eq!(m.pieces.len(), cells);
    let mut seen = vec![false; cells];
    for &c in &m.piece_cell {
        assert!(!std::mem::replace(&mut seen[c as usize], true), "cell {c} twice");
    }
    // The pieces of each face cover its area.
    let mut area = vec![0.0f64; s.faces.len()];
    for (i, p) in m.pieces.iter().enumerate() {
        let f = m.face_first.partition_point(|&x| x <= m.piece_cell[i]) - 1;
        area[f] += p.area() as f64;
        assert_eq!(m.piece_of_cell[m.piece_cell[i] as usize] as usize, i);
    }
    for (f, face) in s.faces.iter().enumerate() {
        let want = face.shape.area() as f64;
        assert!((area[f] - want).abs() <= 1e-4 * want, "face {f}: pieces cover {} of {want}", area[f]);
    }
    // Elements: one material each.
    for e in 0..m.n() {
        let range = m.piece_start[e] as usize..m.piece_start[e + 1] as usize;
        let mats: HashSet<u32> =
            range.map(|i| s.faces[m.face_first.partition_point(|&x| x <= m.piece_cell[i]) - 1].material).collect();
        assert_eq!(mats.len(), 1, "element {e} mixes materials");
        assert!(
            m.element_pieces(e)
                .iter()
                .all(|p| m.element_of_piece[m.piece_start[e] as usize] == e as u32 && p.area() > 0.0)
        );
    }
    // Patches connected through shared corners.
    for p in 0..m.k() {
        let a = m.piece_start[m.patch_start[p] as usize] as usize;
        let b = m.piece_start[m.patch_start[p + 1] as usize] as usize;
        let mut at: HashMap<u32, Vec<usize>> = HashMap::new();
        for i in a..b {
            for &c in m.piece_corners[i].iter().filter(|&&c| c != u32::MAX) {
                at.entry(c).or_default().push(i);
            }
        }
        let mut reached = HashSet::from([a]);
        let mut stack = vec![a];
        while let Some(i) = stack.pop() {
            for &c in m.piece_corners[i].iter().filter(|&&c| c != u32::MAX) {
                for &j in &at[&c] {
                    if reached.insert(j) {
                        stack.push(j);
                    }
                }
            }
        }
        assert_eq!(reached.len(), b - a, "patch {p} is not connected");
    }
}

/// A height field of `side x side` quads (two triangles each) over `[0, size]^2`, heights
/// from `h(i, j)`, one material.
fn height_field(side: u32, size: f32, h: impl Fn(u32, u32) -> f32) -> Vec<[Vec3; 3]> {
    let at = |i: u32, j: u32| Vec3::new(i as f32 * size / side as f32, h(i, j), j as f32 * size / side as f32);
    let mut tris = Vec::new();
    for j in 0..side {
        for i in 0..side {
            tris.push([at(i, j), at(i, j + 1), at(i + 1, j + 1)]);
            tris.push([at(i, j), at(i + 1, j + 1), at(i + 1, j)]);
        }
    }
    tris
}

fn near(got: usize, want: usize, tol: f64) -> bool {
    (got as f64 / want as f64 - 1.0).abs() <= tol + 1e-9
}

#[test]
fn the_box_has_the_papers_sizes() {
    for s in [24u32, 48, 96] {
        for t in [6u32, 12, 24] {
            let m = TwoMesh::closed_box(s, t).unwrap();
            assert_eq!((m.n(), m.k()), (6 * (s * s) as usize, 6 * (t * t) as usize));
            let c = (s / t) * (s / t);
            assert!(m.patch_sizes().iter().all(|&x| x == c));
        }
    }
    let big = TwoMesh::closed_box(192, 24).unwrap();
    assert_eq!((big.n(), big.k()), (221_184, 3456));
    check_mesh(&TwoMesh::closed_box(12, 3).unwrap());
}

#[test]
fn cornell_2mf_meets_the_request() {
    for (elements, patches) in [(2000, 200), (20_000, 500), (500, 50)] {
        let (m, report) = TwoMesh::fixed(common::cornell(), elements, patches).unwrap();
        assert!(
            near(m.n(), elements, 0.1) && near(m.k(), patches, 0.1),
            "{} x {} for {elements} x {patches}",
            m.n(),
            m.k()
        );
        assert!(report.note.is_none());
        check_mesh(&m);
        // Faces are cut so that elements have near the target area.
        let a = m.area_stats();
        assert!(a.cv < 0.5 && a.max / a.min < 12.0, "{a:?}");
        // Emitters: the light's elements and nothing else.
        let lit = m.emission.iter().filter(|e| e[0] > 0.0).count();
        assert!(lit > 0 && lit < m.n() / 20);
    }
    assert!(TwoMesh::fixed(common::cornell(), 0, 10).is_err());
    assert!(TwoMesh::fixed(common::cornell(), 10, 0).is_err());
    assert!(TwoMesh::fixed(common::cornell(), 10, 20).is_err());
}

#[test]
fn a_scanned_mesh_is_clustered_to_the_request() {
    // The teapot: 6320 small triangles, far more than the elements asked for.
    let surfaces = Surfaces::load(&common::scene("teapot.obj")).unwrap();
    let triangles = surfaces.prepared.tris.len();
    for (elements, patches) in [(1000, 60), (3000, 200)] {
        let (m, report) = TwoMesh::fixed(surfaces.clone(), elements, patches).unwrap();
        assert!(
            near(m.n(), elements, 0.1) && near(m.k(), patches, 0.1),
            "{} x {} for {elements} x {patches}",
            m.n(),
            m.k()
        );
        assert!(report.clustered_faces > 0 && report.note.is_none());
        assert!(m.n() < triangles, "elements merge triangles");
        check_mesh(&m);
    }
}

#[test]
fn surfaces_report_bad_files() {
    let e = Surfaces::load(&common::scene("no-such-file.obj")).unwrap_err();
    assert!(e.to_string().contains("no-such-file.obj"), "{e}");
}

#[test]
fn coherence_splits_more_as_the_threshold_falls() {
    let mut last = 0;
    for threshold in [1.0f32, 0.3, 0.1, 0.03] {
        let opts = Coherence { threshold, ..Coherence::default() };
        let (m, r) = TwoMesh::coherent_box(24, 3, &opts, &()).unwrap();
        assert_eq!(m.n(), 6 * 24 * 24);
        assert_eq!(m.k(), r.patches);
        assert!(m.k() >= last, "threshold {threshold}: k {} < {last}", m.k());
        assert_eq!(m.k(), 54 + 3 * r.splits);
        last = m.k();
        check_mesh(&m);
    }
    assert!(last > 54 * 4, "a low threshold splits most patches (k = {last})");
    // A_min stops splitting: the starting patches (area 4/9) split once, their children
    // (area 1/9) are below A_min = 0.2.
    let opts = Coherence { threshold: 0.0, min_area: 0.2, ..Coherence::default() };
    let (m, _) = TwoMesh::coherent_box(24, 3, &opts, &()).unwrap();
    assert_eq!(m.k(), 54 * 4);
    assert!(TwoMesh::coherent_box(24, 5, &Coherence::default(), &()).is_err());
    assert!(TwoMesh::coherent_box(24, 3, &Coherence { threshold: f32::NAN, ..Coherence::default() }, &()).is_err());
}

#[test]
fn coherence_finds_a_target_k_and_splits_where_views_change() {
    // Views alone (no size weight): the split follows where views change.
    let opts = Coherence { target: Some(216), size_weighted: false, ..Coherence::default() };
    let seen = std::sync::atomic::AtomicU64::new(0);
    let progress = |_: &str, done: u64, _: u64| {
        seen.fetch_max(done, std::sync::atomic::Ordering::Relaxed);
    };
    let (m, r) = TwoMesh::coherent_box(24, 3, &opts, &progress).unwrap();
    assert!(m.k().abs_diff(216) <= 6, "k = {} for a target of 216", m.k());
    assert!(seen.load(std::sync::atomic::Ordering::Relaxed) > 0);
    assert!(r.threshold > 0.0 && r.threshold < 2.0);
    // Near the box's edges and the light the views change fastest: patches there are
    // smaller than in the middle of the walls.
    let sizes = m.patch_sizes();
    let wall_middle = |p: usize| {
        let c = TwoMesh::centroid(m.patch_pieces(p));
        let d = [c.x.abs(), (c.y - 1.0).abs(), c.z.abs()];
        d.iter().filter(|&&v| v < 0.5).count() == 2
    };
    let (mid, edge): (Vec<usize>, Vec<usize>) = (0..m.k()).partition(|&p| wall_middle(p));
    let mean = |v: &[usize]| v.iter().map(|&p| sizes[p] as f64).sum::<f64>() / v.len().max(1) as f64;
    assert!(mean(&edge) < mean(&mid), "edge patches {} elements, middle {}", mean(&edge), mean(&mid));
    let _ = &progress as &dyn Progress;
    // With the size weight (the default), the target is reached too.
    let (m, _) = TwoMesh::coherent_box(24, 3, &Coherence { target: Some(400), ..Coherence::default() }, &()).unwrap();
    assert!(m.k().abs_diff(400) <= 12, "k = {}", m.k());
}

#[test]
fn coherence_runs_on_any_scene() {
    let (m, r) =
        TwoMesh::coherent(common::cornell(), 4000, 60, &Coherence { threshold: 0.2, ..Coherence::default() }, &())
            .unwrap();
    assert!(m.k() >= 50 && r.evaluated >= m.k() / 4);
    assert!(near(m.n(), 4000, 0.35), "n = {}", m.n());
    check_mesh(&m);
    // Grouped patches of a scanned mesh split by median cuts, to a target k.
    let teapot = Surfaces::load(&common::scene("teapot.obj")).unwrap();
    let opts = Coherence { target: Some(120), ..Coherence::default() };
    let (m, r) = TwoMesh::coherent(teapot, 1200, 30, &opts, &()).unwrap();
    assert!(near(m.k(), 120, 0.1), "k = {} ({r:?})", m.k());
    check_mesh(&m);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    /// Gentle height fields (any request their triangles allow): every property, and n and
    /// k within 10% of the request.
    #[test]
    fn height_fields_mesh_to_the_request(
        side in 6u32..24,
        amp in 0.0f32..0.05,
        seed in any::<u32>(),
        per_tri in 0.3f64..6.0,
        per_patch in 6usize..30,
    ) {
        // Requests of at least 50 elements and 10 patches: below, one cell more or less is
        // already 10%.
        let mut rng = common::Rng::new(seed);
        let heights: Vec<f32> = (0..(side + 1) * (side + 1)).map(|_| rng.f32() * amp).collect();
        let tris = height_field(side, 1.0, |i, j| heights[(j * (side + 1) + i) as usize]);
        let elements = ((tris.len() as f64 * per_tri) as usize).max(50);
        let patches = (elements / per_patch).max(10);
        let surfaces = Surfaces::from_scene(Scene::from_triangles(&tris)).unwrap();
        let (m, report) = TwoMesh::fixed(surfaces, elements, patches).unwrap();
        check_mesh(&m);
        prop_assert!(near(m.n(), elements, 0.1) && near(m.k(), patches, 0.1),
            "{} x {} for {elements} x {patches} ({report:?})", m.n(), m.k());
        prop_assert!(report.note.is_none());
    }

    /// Random soups (triangles anywhere, any orientation, some sharing vertices): the
    /// structural properties hold whatever n and k come out, and a note says why when they
    /// are far from the request.
    #[test]
    fn soups_mesh_whole(count in 1usize..60, seed in any::<u32>(), elements in 1usize..400, per_patch in 1usize..20) {
        let mut rng = common::Rng::new(seed);
        let mut points: Vec<Vec3> = Vec::new();
        let mut tris = Vec::new();
        for _ in 0..count {
            let mut corner = || {
                if !points.is_empty() && rng.f32() < 0.5 {
                    points[rng.below(points.len())]
                } else {
                    let p = Vec3::new(rng.f32(), rng.f32(), rng.f32()) * 4.0;
                    points.push(p);
                    p
                }
            };
            let t = [corner(), corner(), corner()];
            tris.push(t);
        }
        let (scene, _) = Scene::from_triangles_report(&tris);
        prop_assume!(!scene.triangles.is_empty());
        let surfaces = Surfaces::from_scene(scene).unwrap();
        let patches = (elements / per_patch).max(1);
        let (m, report) = TwoMesh::fixed(surfaces, elements, patches).unwrap();
        check_mesh(&m);
        if !(near(m.n(), elements, 0.1) && near(m.k(), patches, 0.1)) {
            prop_assert!(report.note.is_some());
        }
    }
}

#[test]
fn a_dominant_ground_keeps_detail_near_what_stands_on_it() {
    // A 100 x 100 ground (two triangles) under a unit cube: the ground is cut into a grid of
    // sub-faces, and elements near the cube are far smaller than those far from it.
    let (s, o) = (100.0f32, Vec3::new(-50.0, 0.0, -50.0));
    let mut tris = vec![[o, o + Vec3::Z * s, o + Vec3::new(s, 0.0, s)], [o, o + Vec3::new(s, 0.0, s), o + Vec3::X * s]];
    let c = |x: f32, y: f32, z: f32| Vec3::new(x - 0.5, y, z - 0.5);
    let quads = [
        [c(0., 0., 0.), c(1., 0., 0.), c(1., 1., 0.), c(0., 1., 0.)],
        [c(0., 0., 1.), c(0., 1., 1.), c(1., 1., 1.), c(1., 0., 1.)],
        [c(0., 0., 0.), c(0., 1., 0.), c(0., 1., 1.), c(0., 0., 1.)],
        [c(1., 0., 0.), c(1., 0., 1.), c(1., 1., 1.), c(1., 1., 0.)],
        [c(0., 1., 0.), c(1., 1., 0.), c(1., 1., 1.), c(0., 1., 1.)],
    ];
    for q in quads {
        tris.push([q[0], q[1], q[2]]);
        tris.push([q[0], q[2], q[3]]);
    }
    let surfaces = Surfaces::from_scene(Scene::from_triangles(&tris)).unwrap();
    assert_eq!(surfaces.faces.len(), 64 * 64 + 5);
    let (m, report) = TwoMesh::fixed(surfaces, 3000, 200).unwrap();
    assert!(near(m.n(), 3000, 0.1) && near(m.k(), 200, 0.1), "{} x {} ({report:?})", m.n(), m.k());
    check_mesh(&m);
    let mean_area = |keep: &dyn Fn(Vec3) -> bool| {
        let areas: Vec<f64> = (0..m.n())
            .filter(|&e| m.element_pieces(e)[0].normal().y > 0.9 && keep(TwoMesh::centroid(m.element_pieces(e))))
            .map(|e| m.element_pieces(e).iter().map(|p| p.area() as f64).sum())
            .collect();
        areas.iter().sum::<f64>() / areas.len().max(1) as f64
    };
    let near_cube = mean_area(&|p| p.length() < 3.0);
    let far_away = mean_area(&|p| p.length() > 30.0);
    assert!(near_cube > 0.0 && near_cube * 16.0 < far_away, "near {near_cube}, far {far_away}");
    // Hits on the ground find the element whose piece holds them.
    for (x, z) in [(0.7f32, 0.2f32), (10.3, -20.1), (-49.9, 49.9), (33.0, 0.0)] {
        let p = Vec3::new(x, 0.0, z);
        let piece = m.piece_at(0, p).or_else(|| m.piece_at(1, p)).unwrap() as usize;
        let (u, v) = m.pieces[piece].param(p);
        assert!((-1e-3..=1.001).contains(&u) && (-1e-3..=1.001).contains(&v), "{p}: piece {piece} at ({u}, {v})");
    }
}
