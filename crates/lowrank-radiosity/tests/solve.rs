//! The precompute and the solve: GPU against CPU (V^T E exactly, U and V^T U exactly, the
//! inverses, Y and B within stated tolerances), and the oracles: with k = n the low-rank
//! solve is the full solve, and a white furnace gives B = E / (1 - rho).

mod common;

use common::{Rng, aggregate, partition, symmetric_f};
use lumbre_gpu::testing::{capabilities, test_gpu};
use lumbre_gpu::{Agree, Backend, Compute, Tolerance, conformance};
use lumbre_radiosity::{
    Factorization, Form, FormFactors, FullSystem, Jacobi, LowRank, Matrix, Precompute, Solve, Storage, TwoMesh, Vte,
    solve_cpu, solve_tolerance,
};
use proptest::prelude::*;

fn gpu() -> lumbre_gpu::Gpu {
    test_gpu(lumbre_gpu::wgpu::Features::empty()).unwrap()
}

/// Whether the device evaluates f32 operations one by one as IEEE 754 does (lavapipe); SPIR-V
/// lets other drivers fuse and reassociate them.
fn ieee(gpu: &lumbre_gpu::Gpu) -> bool {
    capabilities(gpu).exact_f32
}

/// Bit for bit on an IEEE device, else within as many ulps as the largest segment has terms
/// (sums of non-negative values in another order).
fn segment_tolerance(gpu: &lumbre_gpu::Gpu, patch_start: &[u32]) -> Tolerance {
    if ieee(gpu) {
        return Tolerance::EXACT;
    }
    let c = patch_start.windows(2).map(|w| w[1] - w[0]).max().unwrap_or(1) as f64;
    Tolerance::relative((c + 1.0) * f32::EPSILON as f64)
}

/// A physically consistent random system: symmetric element-to-element factors (reciprocity
/// with equal areas, rows summing to at most 1) aggregated over random patches.
fn system(n: usize, k: usize, seed: u32) -> (LowRank, FullSystem) {
    let mut rng = Rng::new(seed);
    let full = symmetric_f(n, &mut rng);
    let starts = partition(n, k, &mut rng);
    let rho: Vec<[f32; 3]> = (0..n).map(|_| [rng.f32() * 0.9, rng.f32() * 0.9, rng.f32() * 0.9]).collect();
    let emission: Vec<[f32; 3]> = (0..n)
        .map(|_| if rng.f32() < 0.3 { [rng.f32() * 10.0, rng.f32() * 5.0, rng.f32()] } else { [0.0; 3] })
        .collect();
    let lr = LowRank::new(starts.clone(), rho.clone(), aggregate(&full, &starts)).unwrap();
    (lr, FullSystem { f: full, rho, emission })
}

fn lights(n: usize, m: usize, seed: u32) -> Vec<Vec<[f32; 3]>> {
    let mut rng = Rng::new(seed);
    (0..m).map(|_| (0..n).map(|_| [rng.f32() * 4.0, rng.f32(), rng.f32() * 2.0]).collect()).collect()
}

#[test]
fn vte_agrees_bit_for_bit() {
    let gpu = gpu();
    let mut rng = Rng::new(7);
    for (n, k) in [(1, 1), (5, 5), (300, 1), (300, 7), (1000, 999), (4000, 30)] {
        let starts = partition(n, k, &mut rng);
        let emission: Vec<[f32; 3]> = (0..n).map(|_| [rng.f32() * 1e3, rng.f32(), rng.f32() * 1e-3]).collect();
        let tol = segment_tolerance(&gpu, &starts);
        conformance(&Vte { emission }, &gpu, &starts[..], tol).unwrap_or_else(|e| panic!("{n} {k}: {e}"));
    }
}

#[test]
fn precompute_agrees() {
    let gpu = gpu();
    // U and V^T U exactly; the inverses and Y within 1e-5 of their largest value, 1e-4
    // relative (f32 Gauss-Jordan without pivoting against f64 LU, GEMMs in other orders).
    let tol = Tolerance::within(1e-5, 1e-4);
    for (n, k, rows) in
        [(1, 1, None), (20, 20, Some(3)), (90, 7, Some(16)), (200, 64, None), (150, 70, Some(64)), (300, 100, Some(64))]
    {
        let (lr, _) = system(n, k, n as u32);
        conformance(&Precompute { block_rows: rows, factored: false }, &gpu, &lr, tol)
            .unwrap_or_else(|e| panic!("n {n} k {k}: {e}"));
    }
    // The box: a real system; U and V^T U bit for bit on an IEEE device.
    let mesh = TwoMesh::closed_box(6, 3).unwrap();
    let lr = LowRank::of_mesh(&mesh, FormFactors::default().cpu(&mesh).unwrap()).unwrap();
    let pc = Precompute { block_rows: Some(100), factored: false };
    let cpu = conformance(&pc, &gpu, &lr, tol).unwrap();
    if ieee(&gpu) {
        let on_gpu = pc.gpu(&gpu, &lr).unwrap();
        assert_eq!((cpu.u, cpu.vtu), (on_gpu.u, on_gpu.vtu));
    }
}

#[test]
fn solve_agrees_in_f32_and_f16_with_many_lights_and_blocks() {
    let gpu = gpu();
    let (lr, _) = system(300, 40, 3);
    let factor = Precompute::default().cpu(&lr).unwrap().factor;
    for storage in [Storage::F32, Storage::F16] {
        for (m, rows) in [(1, None), (3, Some(64)), (11, Some(100)), (1, Some(7))] {
            let ls = lights(300, m, m as u32);
            let tol = solve_tolerance(&factor, &ls);
            let solve = Solve { lights: ls, storage, block_rows: rows };
            let b = conformance(&solve, &gpu, &factor, tol).unwrap_or_else(|e| panic!("{storage:?} m {m}: {e}"));
            assert_eq!((b.len(), b[0].len()), (m, 300));
        }
    }
}

#[test]
fn f16_error_is_small_and_the_check_catches_a_wrong_y() {
    let gpu = gpu();
    let mesh = TwoMesh::closed_box(8, 4).unwrap();
    let lr = LowRank::of_mesh(&mesh, FormFactors::default().cpu(&mesh).unwrap()).unwrap();
    let factor = Precompute::default().cpu(&lr).unwrap().factor;
    let ls = vec![mesh.emission.clone()];
    let exact = solve_cpu(&factor, &ls).unwrap();
    let half = Solve { lights: ls.clone(), storage: Storage::F16, block_rows: None }.gpu(&gpu, &factor).unwrap();
    let bmax = exact[0].iter().flatten().fold(0.0f32, |m, v| m.max(*v));
    let err = exact[0].iter().flatten().zip(half[0].iter().flatten()).fold(0.0f32, |m, (a, b)| m.max((a - b).abs()));
    assert!(err < 1e-3 * bmax, "f16 error {err} of {bmax}");
    // Y off by 1%: the GPU's B disagrees with the CPU's beyond tolerance.
    let mut wrong = factor.clone();
    if let Form::Dense { y } = &mut wrong.form {
        y.data.iter_mut().for_each(|v| *v *= 1.01);
    }
    let solve = Solve::new(ls.clone());
    let cpu = solve.cpu(&factor).unwrap();
    let off = solve.gpu(&gpu, &wrong).unwrap();
    let tol = solve_tolerance(&factor, &ls);
    let diff = cpu[0].iter().flatten().zip(off[0].iter().flatten()).fold(0.0f32, |m, (a, b)| m.max((a - b).abs()));
    assert!(cpu.disagreement(&off, tol).is_some(), "diff {diff} tol {tol:?}");
    assert!(cpu.disagreement(&solve.gpu(&gpu, &factor).unwrap(), tol).is_none());
}

#[test]
fn placed_factor_solves_many_lightings() {
    let gpu = gpu();
    let (lr, _) = system(120, 12, 5);
    let factor = Precompute::default().cpu(&lr).unwrap().factor;
    for backend in [Backend::Cpu, Backend::Gpu(gpu.clone())] {
        let placed = backend.place(&Solve::default(), &factor).unwrap();
        for s in 0..3 {
            let ls = lights(120, 1 + s, 10 + s as u32);
            let solve = Solve::new(ls.clone());
            let (b, report) = solve.run_placed(&placed, &()).unwrap();
            let want = solve_cpu(&factor, &ls).unwrap();
            assert!(want.disagreement(&b, solve_tolerance(&factor, &ls)).is_none(), "{}", backend.name());
            if backend.gpu().is_some() {
                assert!(!report.stages.is_empty());
            }
        }
    }
}

#[test]
fn jacobi_agrees() {
    let gpu = gpu();
    for (n, rows) in [(1, None), (64, Some(5)), (257, None)] {
        let (_, full) = system(n, 1, 9 + n as u32);
        let cpu = Jacobi::default().cpu(&full).unwrap();
        let bmax = cpu.iter().flatten().fold(0.0f32, |m, v| m.max(v.abs())) as f64;
        // Each sweep adds n terms per element (FMA on the GPU): 1e-6 of the largest B.
        let tol = Tolerance::within(1e-6 * bmax.max(1.0), 1e-6);
        conformance(&Jacobi { block_rows: rows, ..Jacobi::default() }, &gpu, &full, tol).unwrap();
    }
}

#[test]
fn low_rank_with_every_element_a_patch_is_the_full_solve() {
    let mesh = TwoMesh::closed_box(6, 6).unwrap();
    assert_eq!(mesh.n(), mesh.k());
    let f = FormFactors::default().cpu(&mesh).unwrap();
    // Patches are the elements, in the same order: F to patches is F to elements.
    let full = FormFactors { full: true, ..FormFactors::default() }.cpu(&mesh).unwrap();
    assert_eq!(f, full);
    let factor = Precompute::default().cpu(&LowRank::of_mesh(&mesh, f).unwrap()).unwrap().factor;
    let low = solve_cpu(&factor, std::slice::from_ref(&mesh.emission)).unwrap();
    let sys = FullSystem { f: full, rho: mesh.rho.clone(), emission: mesh.emission.clone() };
    let reference = Jacobi { tolerance: 1e-7, ..Jacobi::default() }.cpu(&sys).unwrap();
    let bmax = reference.iter().flatten().fold(0.0f32, |m, v| m.max(*v));
    for (a, b) in low[0].iter().flatten().zip(reference.iter().flatten()) {
        assert!((a - b).abs() < 1e-5 * bmax, "{a} vs {b}");
    }
    // And random systems with k = n.
    let (lr, full) = system(80, 80, 11);
    let factor = Precompute::default().cpu(&lr).unwrap().factor;
    let low = solve_cpu(&factor, std::slice::from_ref(&full.emission)).unwrap();
    let reference = Jacobi { tolerance: 1e-7, ..Jacobi::default() }.cpu(&full).unwrap();
    let bmax = reference.iter().flatten().fold(0.0f32, |m, v| m.max(*v));
    for (a, b) in low[0].iter().flatten().zip(reference.iter().flatten()) {
        assert!((a - b).abs() < 1e-5 * bmax, "{a} vs {b}");
    }
}

#[test]
fn white_furnace_matches_the_analytic_solution() {
    // A closed box, rho = 0.5 everywhere, uniform emission E: the radiosity is E / (1 - rho)
    // everywhere (rows of F sum to 1), for the full solve and for the low-rank one at any k.
    let gpu = gpu();
    let rho = 0.5f32;
    for (s, t) in [(4, 1), (6, 3), (6, 6)] {
        let mut mesh = TwoMesh::closed_box(s, t).unwrap();
        mesh.rho = vec![[rho; 3]; mesh.n()];
        let e = vec![[1.0f32, 2.0, 0.5]; mesh.n()];
        let f = FormFactors::default().cpu(&mesh).unwrap();
        let lr = LowRank::of_mesh(&mesh, f).unwrap();
        let factor = Precompute::default().gpu(&gpu, &lr).unwrap().factor;
        for b in [
            solve_cpu(&factor, std::slice::from_ref(&e)).unwrap(),
            Solve::new(vec![e.clone()]).gpu(&gpu, &factor).unwrap(),
        ] {
            for v in &b[0] {
                for c in 0..3 {
                    let want = e[0][c] / (1.0 - rho);
                    assert!((v[c] - want).abs() < 1e-4 * want, "s {s} t {t}: {} vs {want}", v[c]);
                }
            }
        }
        let full = FormFactors { full: true, ..FormFactors::default() }.cpu(&mesh).unwrap();
        let sys = FullSystem { f: full, rho: mesh.rho.clone(), emission: e.clone() };
        for v in Jacobi::default().gpu(&gpu, &sys).unwrap() {
            assert!((v[0] - 2.0).abs() < 1e-4, "{}", v[0]);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(10))]
    #[test]
    fn random_systems_agree(n in 1usize..120, kf in 0.0f64..1.0, seed in any::<u32>(), m in 1usize..10, half in any::<bool>(), rows in 1usize..50) {
        let gpu = gpu();
        let k = 1 + ((n - 1) as f64 * kf) as usize;
        let (lr, _) = system(n, k, seed);
        let pc = conformance(&Precompute { block_rows: Some(rows), factored: rows % 2 == 0 }, &gpu, &lr, Tolerance::within(1e-5, 1e-4)).unwrap();
        let ls = lights(n, m, seed ^ 5);
        let tol = solve_tolerance(&pc.factor, &ls);
        let storage = if half { Storage::F16 } else { Storage::F32 };
        conformance(&Solve { lights: ls.clone(), storage, block_rows: Some(rows) }, &gpu, &pc.factor, tol).unwrap();
        let emission = ls[0].clone();
        conformance(&Vte { emission }, &gpu, &lr.patch_start[..], segment_tolerance(&gpu, &lr.patch_start)).unwrap();
    }
}

#[test]
fn matrix_shapes_are_checked() {
    assert!(Matrix::new(2, 2, vec![0.0; 3]).is_err());
    assert!(Factorization::new(vec![0, 2], Matrix::zeros(2, 2)).is_err());
}

#[test]
fn factored_form_solves_like_y() {
    // Y = -diag(rho) F W: the factored solve equals the dense one (to rounding), on the CPU
    // and the GPU, in f32 and f16, with one and many lighting vectors and blocks.
    let gpu = gpu();
    let (lr, full) = system(200, 30, 21);
    let dense = Precompute::default().cpu(&lr).unwrap();
    let factored = Precompute { factored: true, ..Precompute::default() }.cpu(&lr).unwrap().factor;
    assert!(matches!(factored.form, Form::Factored { .. }));
    assert_eq!(factored.values(), 200 * 30 + 3 * 30 * 30);
    let y = factored.y();
    let ymax = y.data.iter().fold(0.0f32, |m, v| m.max(v.abs()));
    let Form::Dense { y: yd } = &dense.factor.form else { panic!("dense") };
    for (a, b) in y.data.iter().zip(&yd.data) {
        assert!((a - b).abs() < 1e-5 * ymax, "{a} vs {b}");
    }
    for (m, rows) in [(1, None), (4, Some(33)), (9, Some(200))] {
        let ls = lights(200, m, 40 + m as u32);
        let a = solve_cpu(&dense.factor, &ls).unwrap();
        let b = solve_cpu(&factored, &ls).unwrap();
        let tol = solve_tolerance(&factored, &ls);
        assert!(a.disagreement(&b, Tolerance::within(4.0 * tol.abs, 1e-5)).is_none());
        for storage in [Storage::F32, Storage::F16] {
            let solve = Solve { lights: ls.clone(), storage, block_rows: rows };
            conformance(&solve, &gpu, &factored, tol).unwrap_or_else(|e| panic!("{storage:?} m {m}: {e}"));
        }
    }
    // The GPU precompute makes the same factored form.
    conformance(&Precompute { factored: true, block_rows: Some(64) }, &gpu, &lr, Tolerance::within(1e-5, 1e-4))
        .unwrap();
    // And the factored form is the full solve's approximation as much as Y is.
    let _ = full;
}

#[test]
fn factored_files_round_trip() {
    let (lr, _) = system(50, 9, 2);
    let factored = Precompute { factored: true, ..Precompute::default() }.cpu(&lr).unwrap().factor.with_fingerprint(7);
    let dir = lumbre_gpu::testing::TempDir::new("radiosity-factored");
    let path = dir.join("factored.lrr");
    factored.save(&path).unwrap();
    assert_eq!(Factorization::load(&path, Some(7)).unwrap(), factored);
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() - 9]).unwrap();
    assert!(Factorization::load(&path, Some(7)).unwrap_err().to_string().contains("truncated"));
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn a_factor_made_on_the_gpu_solves_like_the_cpu() {
    // A scanned mesh (merged elements, grouped patches): form factors, precompute and layout
    // on the GPU with nothing but the pivot state and the f16 scale read back, against the
    // CPU's factorisation. Both make their own form factors, which agree to a few 1e-6 (see
    // the form factor test), so B agrees to 1e-3 of its largest value.
    let gpu = gpu();
    let teapot = lumbre_radiosity::Surfaces::load(&common::scene("teapot.obj")).unwrap();
    let (mesh, _) = TwoMesh::fixed(teapot, 300, 30).unwrap();
    let ff = FormFactors { samples: 4, ..FormFactors::default() };
    for (count, factored) in [(1, false), (2, false), (1, true), (2, true)] {
        let ls = lights(mesh.n(), count, 3);
        let pc = Precompute { factored, ..Precompute::default() };
        let lr = LowRank::of_mesh(&mesh, ff.cpu(&mesh).unwrap()).unwrap();
        let cpu_factor = pc.cpu(&lr).unwrap().factor;
        let exact = solve_cpu(&cpu_factor, &ls).unwrap();
        let bmax = exact.iter().flatten().flatten().fold(0.0f32, |m, v| m.max(v.abs())) as f64;
        for storage in [Storage::F32, Storage::F16] {
            let made = lumbre_radiosity::GpuFactor::compute(&gpu, &mesh, &ff, &pc, storage, true, &()).unwrap();
            assert!(made.report.stage("form factors").is_some() && made.gpu_time() > std::time::Duration::ZERO);
            let placed = lumbre_gpu::Placed::<Solve>::Gpu(gpu.clone(), made.factor.clone());
            let (b, _) = Solve { lights: ls.clone(), storage, block_rows: None }.run_placed(&placed, &()).unwrap();
            let tol = Tolerance::within(1e-3 * bmax, 1e-3);
            if let Some(d) = exact.disagreement(&b, tol) {
                panic!("factored {factored} {storage:?}: {d}");
            }
            // The kept precompute downloads to the CPU's factorisation.
            let down = made.download(&gpu, &mesh).unwrap();
            assert_eq!((down.n, down.k, down.fingerprint), (mesh.n(), mesh.k(), mesh.fingerprint()));
            assert!(solve_cpu(&down, &ls).unwrap().disagreement(&exact, tol).is_none());
        }
    }
    // Without keep there is nothing to download, and the run reads back only the pivot
    // state (16 bytes) and, in f16, the largest value (4): no matrix makes a round trip. A
    // context of its own, so that no other test's transfers are counted.
    let gpu = lumbre_gpu::testing::own_gpu(lumbre_gpu::wgpu::Features::empty()).expect("a GPU");
    for storage in [Storage::F32, Storage::F16] {
        let before = gpu.transfers();
        let made = lumbre_radiosity::GpuFactor::compute(&gpu, &mesh, &ff, &Precompute::default(), storage, false, &())
            .unwrap();
        let moved = gpu.transfers() - before;
        assert!(moved.downloads.bytes <= 20 && moved.downloads.calls <= 2, "{storage:?}: {moved:?}");
        assert!(made.download(&gpu, &mesh).is_err());
    }
}

#[test]
fn a_factor_made_in_parts_solves_as_the_whole() {
    // Two and three parts on one device, as GPUs of one kind run them (chunks of rows taken as
    // each frees up): the parts' radiosity, put in place, is the whole's bit for bit (dense and factored, f32 and f16, blocks of 64
    // rows so that parts start inside a block), and their rows read back make the whole's
    // factorisation.
    let gpu = gpu();
    let teapot = lumbre_radiosity::Surfaces::load(&common::scene("teapot.obj")).unwrap();
    let (mesh, _) = TwoMesh::fixed(teapot, 300, 30).unwrap();
    let ff = FormFactors { samples: 4, ..FormFactors::default() };
    let ls = lights(mesh.n(), 2, 5);
    for factored in [false, true] {
        let pc = Precompute { factored, block_rows: Some(64) };
        for storage in [Storage::F32, Storage::F16] {
            let whole = lumbre_radiosity::GpuFactor::compute(&gpu, &mesh, &ff, &pc, storage, true, &()).unwrap();
            let solve = Solve { lights: ls.clone(), storage, block_rows: None };
            let (b, _) = solve.run_placed(&lumbre_gpu::Placed::Gpu(gpu.clone(), whole.factor.clone()), &()).unwrap();
            for count in [2, 3] {
                let gpus = vec![gpu.clone(); count];
                let parts =
                    lumbre_radiosity::GpuFactor::compute_parts(&gpus, &mesh, &ff, &pc, storage, true, &|_, _, _, _| {})
                        .unwrap();
                assert_eq!(parts.len(), count);
                let mut joined = vec![vec![[f32::NAN; 3]; mesh.n()]; ls.len()];
                for part in &parts {
                    let held: usize = part.factor.rows.iter().map(|r| r.len()).sum();
                    assert!(held > 0 && held < mesh.n());
                    let placed = lumbre_gpu::Placed::Gpu(gpu.clone(), part.factor.clone());
                    let (rows, _) = solve.run_placed(&placed, &()).unwrap();
                    joined.iter_mut().zip(&rows.0).for_each(|(j, r)| part.factor.scatter(r, j));
                }
                assert!(joined == b.0, "factored {factored} {storage:?}, {count} parts: the radiosity differs");
                let pairs: Vec<_> = parts.iter().map(|p| (&gpu, p)).collect();
                let down = lumbre_radiosity::GpuFactored::download_parts(&pairs, &mesh).unwrap();
                assert!(down == whole.download(&gpu, &mesh).unwrap(), "factored {factored}, {count} parts");
            }
        }
    }
}

proptest! {
    #[test]
    fn parts_hold_whole_patches_of_about_equal_rows(n in 1usize..400, k in 1usize..40, parts in 1usize..9, seed in 0u32..1000) {
        let k = k.min(n);
        let starts = partition(n, k, &mut Rng::new(seed));
        let largest = starts.windows(2).map(|w| (w[1] - w[0]) as usize).max().unwrap();
        let rows = lumbre_radiosity::rows_in_parts(&starts, parts);
        prop_assert_eq!(rows.len(), parts);
        prop_assert_eq!(rows[0].start, 0);
        prop_assert_eq!(rows[parts - 1].end, n);
        for (j, r) in rows.iter().enumerate() {
            prop_assert!(starts.contains(&(r.start as u32)) && starts.contains(&(r.end as u32)));
            if j + 1 < parts {
                prop_assert_eq!(r.end, rows[j + 1].start);
            }
            // Each cut is at most half a patch from the even one.
            prop_assert!(r.end.abs_diff(n * (j + 1) / parts) <= largest / 2 + 1, "{:?} of {}", rows, n);
        }
    }
}
