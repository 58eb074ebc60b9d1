//! Bad input: clear errors, never a panic or a partial result.

mod common;

use lumbre_gpu::testing::test_gpu;
use lumbre_gpu::{Compute, Error};
use lumbre_radiosity::file::VERSION;
use lumbre_radiosity::{
    Factorization, FormFactors, FullSystem, Jacobi, LowRank, Matrix, Precompute, Solve, TwoMesh, Vte,
};

fn message<T: std::fmt::Debug>(r: Result<T, Error>) -> String {
    r.unwrap_err().to_string()
}

fn small() -> (TwoMesh, Factorization) {
    let mesh = TwoMesh::closed_box(4, 2).unwrap();
    let f = FormFactors { samples: 4, ..FormFactors::default() }.cpu(&mesh).unwrap();
    let factor = Precompute::default().cpu(&LowRank::of_mesh(&mesh, f).unwrap()).unwrap().factor;
    (mesh.clone(), factor.with_fingerprint(mesh.fingerprint()))
}

#[test]
fn zero_sizes_and_empty_patches() {
    let m = message(LowRank::new(vec![0], vec![], Matrix::zeros(0, 0)));
    assert!(m.contains("k = 0"), "{m}");
    let m = message(LowRank::new(vec![0, 0], vec![], Matrix::zeros(0, 1)));
    assert!(m.contains("n = 0"), "{m}");
    let m = message(LowRank::new(vec![0, 2, 2, 3], vec![[0.5; 3]; 3], Matrix::zeros(3, 3)));
    assert!(m.contains("patch 1 is empty"), "{m}");
    let m = message(LowRank::new(vec![0, 1, 3], vec![[0.5; 3]; 3], Matrix::zeros(3, 3)));
    assert!(m.contains("3x3, expected n x k = 3x2"), "{m}");
    assert!(TwoMesh::closed_box(0, 0).is_err());
    assert!(message(Vte { emission: vec![[1.0; 3]; 2] }.cpu(&[0, 2, 2])).contains("empty"));
}

#[test]
fn reflectance_of_one_or_more_is_rejected() {
    for bad in [1.0f32, 1.5, -0.1, f32::NAN] {
        let rho = vec![[0.5, bad, 0.5]; 2];
        let m = message(LowRank::new(vec![0, 2], rho.clone(), Matrix::zeros(2, 1)));
        assert!(m.contains("element 0") && m.contains("channel g"), "{m}");
        let sys = FullSystem { f: Matrix::zeros(2, 2), rho, emission: vec![[0.0; 3]; 2] };
        assert!(Jacobi::default().cpu(&sys).is_err());
    }
    // rho below 1 whose rows reach 1 in a closed box: near-singular, still solvable; and a
    // system that is singular outright (form factors far above 1 per row) is detected.
    let f = Matrix::new(2, 2, vec![0.0, 4.0, 4.0, 0.0]).unwrap();
    let lr = LowRank::new(vec![0, 1, 2], vec![[0.25; 3]; 2], f.clone()).unwrap();
    let m = message(Precompute::default().cpu(&lr));
    assert!(m.contains("singular"), "{m}");
    let gpu = test_gpu(lumbre_gpu::wgpu::Features::empty()).unwrap();
    let m = message(Precompute::default().gpu(&gpu, &lr));
    assert!(m.contains("singular"), "{m}");
    let sys = FullSystem { f, rho: vec![[0.25; 3]; 2], emission: vec![[1.0; 3]; 2] };
    let m = message(Jacobi::default().cpu(&sys));
    assert!(m.contains(">= 1"), "{m}");
}

#[test]
fn bad_form_factors_are_rejected() {
    for bad in [f32::NAN, f32::INFINITY, -1.0] {
        let m = message(LowRank::new(vec![0, 2], vec![[0.5; 3]; 2], Matrix::new(2, 1, vec![0.1, bad]).unwrap()));
        assert!(m.contains("F[1][0]"), "{m}");
    }
}

#[test]
fn nan_in_the_emission_is_rejected() {
    let (mesh, factor) = small();
    let gpu = test_gpu(lumbre_gpu::wgpu::Features::empty()).unwrap();
    for bad in [f32::NAN, f32::INFINITY] {
        let mut e = mesh.emission.clone();
        e[17][2] = bad;
        let solve = Solve::new(vec![mesh.emission.clone(), e]);
        let m = message(solve.cpu(&factor));
        assert!(m.contains("lighting 1") && m.contains("element 17"), "{m}");
        assert!(solve.gpu(&gpu, &factor).is_err());
    }
    let short = Solve::new(vec![vec![[0.0; 3]; 5]]);
    assert!(message(short.cpu(&factor)).contains("n = 96"));
}

#[test]
fn factor_files_round_trip_and_bad_ones_are_errors() {
    let (mesh, factor) = small();
    let dir = lumbre_gpu::testing::TempDir::new("radiosity-files");
    let path = dir.join("box.lrr");
    factor.save(&path).unwrap();
    let back = Factorization::load(&path, Some(mesh.fingerprint())).unwrap();
    assert_eq!(back, factor);
    let bytes = std::fs::read(&path).unwrap();

    // Made for another scene.
    let other = TwoMesh::closed_box(4, 1).unwrap().fingerprint();
    let m = message(Factorization::load(&path, Some(other)));
    assert!(m.contains("another scene") && m.contains("box.lrr"), "{m}");
    // Truncated anywhere.
    for cut in [0, 7, 39, 60, bytes.len() / 2, bytes.len() - 1] {
        std::fs::write(&path, &bytes[..cut]).unwrap();
        let m = message(Factorization::load(&path, None));
        assert!(m.contains("truncated"), "cut at {cut}: {m}");
    }
    // Trailing bytes, a flipped bit, another version, not a factor file at all.
    let mut long = bytes.clone();
    long.push(0);
    std::fs::write(&path, &long).unwrap();
    assert!(message(Factorization::load(&path, None)).contains("after the end"));
    let mut flipped = bytes.clone();
    flipped[bytes.len() / 2] ^= 4;
    std::fs::write(&path, &flipped).unwrap();
    assert!(message(Factorization::load(&path, None)).contains("checksum"));
    let mut versioned = bytes.clone();
    versioned[8..12].copy_from_slice(&(VERSION + 1).to_le_bytes());
    std::fs::write(&path, &versioned).unwrap();
    assert!(message(Factorization::load(&path, None)).contains("version"));
    std::fs::write(&path, b"v 0 0 0\nv 1 0 0\n".repeat(10)).unwrap();
    assert!(message(Factorization::load(&path, None)).contains("magic"));
    assert!(message(Factorization::load(&dir.join("missing.lrr"), None)).contains("missing.lrr"));
}
