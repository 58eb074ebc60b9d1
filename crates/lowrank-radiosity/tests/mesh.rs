//! Meshing: the generated box at the paper's sizes, 2MF on OBJ scenes, 2MCE.

mod common;

use lumbre_gpu::Progress;
use lumbre_radiosity::{Coherence, Surfaces, TwoMesh};

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
}

#[test]
fn cornell_2mf_has_near_uniform_elements() {
    let m = TwoMesh::fixed(common::cornell(), 20_000, 500).unwrap();
    let c = m.patch_sizes()[0];
    assert!(m.patch_sizes().iter().all(|&x| x == c), "every patch has r^2 elements");
    assert_eq!(m.n(), c as usize * m.k());
    assert!(m.k() > 250 && m.k() < 1000, "k = {}", m.k());
    let a = m.area_stats();
    // Faces are cut so that patches have near the target area; elements follow.
    assert!(a.cv < 0.5 && a.max / a.min < 8.0, "{a:?}");
    // Every element lies on its face and inside its patch.
    for (p, w) in m.patch_start.windows(2).enumerate() {
        for e in w[0] as usize..w[1] as usize {
            let (u, v) = m.patches[p].param(m.elements[e].centroid());
            assert!(u > -1e-4 && v > -1e-4 && u < 1.0001 && v < 1.0001, "element {e} outside patch {p}");
        }
    }
    // Emitters: the light's elements and nothing else.
    let lit = m.emission.iter().filter(|e| e[0] > 0.0).count();
    assert!(lit > 0 && lit < m.n() / 20);
    assert!(TwoMesh::fixed(common::cornell(), 0, 10).is_err());
    assert!(TwoMesh::fixed(common::cornell(), 10, 0).is_err());
    assert!(TwoMesh::fixed(common::cornell(), 10, 20).is_err());
}

#[test]
fn surfaces_report_bad_files() {
    let e = Surfaces::load_obj(&common::scene("no-such-file.obj")).unwrap_err();
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
        // Patches of a 2MCE mesh are whole: each element in exactly one, contiguous ranges.
        assert_eq!(m.patch_start.last().copied(), Some(m.n() as u32));
        assert!(m.patch_sizes().iter().all(|&c| c > 0));
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
        let c = m.patches[p].centroid();
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
fn coherence_runs_on_obj_scenes() {
    let (m, r) =
        TwoMesh::coherent(common::cornell(), 4000, 60, &Coherence { threshold: 0.2, ..Coherence::default() }, &())
            .unwrap();
    assert!(m.k() >= 50 && r.evaluated >= m.k() / 4);
    assert!(m.n() >= 2000);
}
