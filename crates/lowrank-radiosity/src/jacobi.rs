//! The reference solve: Jacobi iteration of `(I - RF) B = E` on the full element-to-element
//! form factors (the CPU twin of `radiosity/jacobi.wgsl`).

use lumbre_gpu::{Error, Progress, Report, Result};
use rayon::prelude::*;

use crate::lowrank::check_rho;
use crate::matrix::Matrix;
use crate::solve::{SEGMENT_LANES, check_emission};

/// The full radiosity system: form factors F (n x n), reflectances and emission.
#[derive(Clone, Debug, PartialEq)]
pub struct FullSystem {
    /// Element-to-element form factors.
    pub f: Matrix,
    /// Reflectance per element, each channel in `[0, 1)`.
    pub rho: Vec<[f32; 3]>,
    /// Emitted radiosity per element.
    pub emission: Vec<[f32; 3]>,
}

impl FullSystem {
    /// Checks the system: F square and finite, sizes agree, rho in `[0, 1)`, E finite.
    pub fn check(&self) -> Result<()> {
        let n = self.rho.len();
        if n == 0 {
            return Err(Error::Input("n = 0 elements".into()));
        }
        if (self.f.rows, self.f.cols) != (n, n) {
            return Err(Error::Input(format!("F is {}x{}, expected {n}x{n}", self.f.rows, self.f.cols)));
        }
        check_rho(&self.rho)?;
        check_emission(&self.emission, n, 0)?;
        if let Some(i) = self.f.data.iter().position(|v| !v.is_finite() || *v < 0.0) {
            return Err(Error::Input(format!(
                "F[{}][{}] = {} (must be finite and >= 0)",
                i / n,
                i % n,
                self.f.data[i]
            )));
        }
        Ok(())
    }

    /// The contraction bound `q = max_e max_ch rho_e[ch] · Σ_j F_ej` (the infinity norm of RF).
    pub fn contraction(&self) -> f64 {
        self.f
            .row_sums()
            .iter()
            .zip(&self.rho)
            .map(|(s, r)| s * r.iter().fold(0.0f64, |m, &v| m.max(v as f64)))
            .fold(0.0, f64::max)
    }

    /// Sweeps for a relative error below `tol`: with `q < 1`, after m sweeps from `B = E`
    /// the error is at most `q^(m+1) / (1 - q)` times max |E|. `q >= 1` is an error (Jacobi
    /// need not converge).
    pub fn sweeps(&self, tol: f64) -> Result<u32> {
        let q = self.contraction();
        if q >= 1.0 {
            return Err(Error::Input(format!(
                "Jacobi cannot be shown to converge: max rho times the largest row sum of F is {q:.4} >= 1"
            )));
        }
        if q <= 0.0 {
            return Ok(0);
        }
        let m = ((tol * (1.0 - q)).ln() / q.ln() - 1.0).ceil().max(0.0);
        Ok(m.min(100_000.0) as u32)
    }
}

/// One sweep: `B_next(e) = E(e) + rho_e ⊙ Σ_j F(e, j) B(j)`, the sum in the lane order of
/// [`SEGMENT_LANES`] (as the GPU's workgroup adds).
pub fn jacobi_sweep_cpu(s: &FullSystem, b: &[[f32; 3]]) -> Vec<[f32; 3]> {
    let n = b.len();
    let soa: [Vec<f32>; 3] = [0, 1, 2].map(|c| b.iter().map(|v| v[c]).collect());
    (0..n)
        .into_par_iter()
        .map(|e| {
            let row = s.f.row(e);
            let mut lanes = [[0.0f32; SEGMENT_LANES]; 3];
            for (c, lane) in lanes.iter_mut().enumerate() {
                for (fs, bs) in row.chunks(SEGMENT_LANES).zip(soa[c].chunks(SEGMENT_LANES)) {
                    for l in 0..fs.len() {
                        lane[l] += fs[l] * bs[l];
                    }
                }
                let mut w = SEGMENT_LANES / 2;
                while w > 0 {
                    for l in 0..w {
                        lane[l] += lane[l + w];
                    }
                    w /= 2;
                }
            }
            [0, 1, 2].map(|c| s.emission[e][c] + s.rho[e][c] * lanes[c][0])
        })
        .collect()
}

/// The reference solve as an algorithm with a CPU and a GPU path (`lumbre_gpu::Compute`):
/// Jacobi sweeps from `B = E`, as many as [`FullSystem::sweeps`] says for a relative error
/// below `tolerance` (both paths run the same number).
///
/// ```
/// use lumbre_radiosity::{FullSystem, Jacobi, Matrix};
/// // Two elements that see only each other: B = E + rho F B.
/// let f = Matrix::new(2, 2, vec![0.0, 1.0, 1.0, 0.0]).unwrap();
/// let s = FullSystem { f, rho: vec![[0.5; 3]; 2], emission: vec![[1.0; 3], [0.0; 3]] };
/// let b = Jacobi::default().cpu(&s).unwrap();
/// assert!((b[0][0] - 4.0 / 3.0).abs() < 1e-5 && (b[1][0] - 2.0 / 3.0).abs() < 1e-5);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Jacobi {
    /// Relative error bound to reach (of max |E|).
    pub tolerance: f64,
    /// For tests: at most this many rows per GPU block of F.
    pub block_rows: Option<usize>,
}

impl Default for Jacobi {
    fn default() -> Self {
        Jacobi { tolerance: 1e-6, block_rows: None }
    }
}

impl Jacobi {
    /// The CPU path: the radiosity after the sweeps.
    ///
    /// ```
    /// use lumbre_radiosity::{FullSystem, Jacobi, Matrix};
    /// let s = FullSystem { f: Matrix::new(1, 1, vec![0.0])?, rho: vec![[0.5; 3]], emission: vec![[1.0; 3]] };
    /// assert_eq!(Jacobi::default().cpu(&s)?, vec![[1.0; 3]]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn cpu(&self, s: &FullSystem) -> Result<Vec<[f32; 3]>> {
        self.run_cpu(s, &()).map(|(b, _)| b)
    }

    /// [`cpu`](Jacobi::cpu) with progress (one step per sweep); stage `jacobi`, stats
    /// `sweeps` and `contraction`.
    pub fn run_cpu(&self, s: &FullSystem, progress: &dyn Progress) -> Result<(Vec<[f32; 3]>, Report)> {
        s.check()?;
        let sweeps = s.sweeps(self.tolerance)?;
        let mut report = Report::default();
        let mut b = s.emission.clone();
        report.time("jacobi", || {
            for i in 0..sweeps {
                b = jacobi_sweep_cpu(s, &b);
                progress.update("jacobi", i as u64 + 1, sweeps as u64);
            }
        });
        report.stat("sweeps", sweeps as f64);
        report.stat("contraction", s.contraction());
        Ok((b, report))
    }
}
