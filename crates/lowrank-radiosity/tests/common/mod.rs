//! Helpers shared by the test files.
#![allow(dead_code)]

use std::path::PathBuf;

use lumbre_radiosity::{Matrix, Surfaces};

/// A testdata scene.
pub fn scene(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/scenes").join(name)
}

/// The diffuse Cornell box.
pub fn cornell() -> Surfaces {
    Surfaces::load(&scene("CornellBox-Diffuse.obj")).unwrap()
}

pub use lumbre_gpu::testing::Rng;

/// Random patch ranges of n elements in k non-empty patches.
pub fn partition(n: usize, k: usize, rng: &mut Rng) -> Vec<u32> {
    let mut cuts: Vec<u32> = (1..n as u32).collect();
    // Keep k - 1 random cuts.
    for i in 0..cuts.len() {
        let j = i + rng.below(cuts.len() - i);
        cuts.swap(i, j);
    }
    cuts.truncate(k - 1);
    cuts.sort();
    let mut starts = vec![0];
    starts.extend(cuts);
    starts.push(n as u32);
    starts
}

/// A random symmetric element-to-element F (n x n, row sums at most 1, zero diagonal):
/// reciprocity holds exactly for equal areas.
pub fn symmetric_f(n: usize, rng: &mut Rng) -> Matrix {
    let mut s = vec![0.0f32; n * n];
    for i in 0..n {
        for j in 0..i {
            let v = rng.f32() * rng.f32();
            s[i * n + j] = v;
            s[j * n + i] = v;
        }
    }
    let max = (0..n).map(|i| s[i * n..(i + 1) * n].iter().sum::<f32>()).fold(0.0f32, f32::max).max(1e-3);
    Matrix::new(n, n, s.iter().map(|v| v / max).collect()).unwrap()
}

/// F to patches from F to elements: F_ep = the sum of F_ee' over the elements e' of p.
pub fn aggregate(full: &Matrix, patch_start: &[u32]) -> Matrix {
    let k = patch_start.len() - 1;
    let mut out = Matrix::zeros(full.rows, k);
    for e in 0..full.rows {
        for p in 0..k {
            out.data[e * k + p] = (patch_start[p]..patch_start[p + 1]).map(|j| full.get(e, j as usize)).sum();
        }
    }
    out
}

/// The largest |value|.
pub fn max_abs(v: &[f32]) -> f32 {
    v.iter().fold(0.0, |m, x| m.max(x.abs()))
}
