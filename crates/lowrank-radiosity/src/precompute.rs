//! The precompute, once per geometry: U, `V^T U`, `(I - V^T U)^-1` and
//! `Y = -U (I - V^T U)^-1`, per colour channel (the CPU twins of the kernels
//! `radiosity/precompute_u.wgsl`, `precompute_vtu.wgsl`, `precompute_invert.wgsl` and
//! `precompute_gemm.wgsl`).
//!
//! Layouts (row-major, shared with the GPU and the factor file): U and Y are n x 3k, row e
//! holding channels r, g, b of k values each; `V^T U` and the inverses are 3 x k x k,
//! `[channel][p][q]`.

use lumbre_gpu::{Error, Progress, Report, Result};
use nalgebra::{DMatrix, DMatrixView, DMatrixViewMut};
use rayon::prelude::*;

use crate::factor::Factorization;
use crate::lowrank::LowRank;
use crate::matrix::Matrix;

/// `U(e, ch, q) = (rho_e[ch] * F_eq) * (1 / c_q)`, the products in this order (as the GPU
/// computes them: bit for bit on a device that rounds every f32 operation as IEEE 754 does).
///
/// ```
/// use lumbre_radiosity::twin::u_cpu;
/// use lumbre_radiosity::{LowRank, Matrix};
/// let f = Matrix::new(2, 1, vec![0.5, 0.25]).unwrap();
/// let lr = LowRank::new(vec![0, 2], vec![[0.5, 0.25, 0.0]; 2], f).unwrap();
/// assert_eq!(u_cpu(&lr).row(0), &[0.125, 0.0625, 0.0]);
/// ```
pub fn u_cpu(lr: &LowRank) -> Matrix {
    let k = lr.k();
    let inv = lr.inv_sizes();
    let mut data = vec![0.0f32; lr.n() * 3 * k];
    data.par_chunks_mut(3 * k).enumerate().for_each(|(e, row)| {
        let f = lr.f.row(e);
        for (ch, out) in row.chunks_exact_mut(k).enumerate() {
            let r = lr.rho[e][ch];
            for q in 0..k {
                out[q] = (r * f[q]) * inv[q];
            }
        }
    });
    Matrix { rows: lr.n(), cols: 3 * k, data }
}

/// `(V^T U)[ch][p][q] = Σ_{e in p} U(e, ch, q)`: k segmented sums per column, each summed
/// from 0 in element order (as the GPU sums them).
pub fn vtu_cpu(patch_start: &[u32], u: &Matrix) -> Vec<f32> {
    let k = patch_start.len() - 1;
    let mut out = vec![0.0f32; 3 * k * k];
    out.par_chunks_mut(k).enumerate().for_each(|(cp, row)| {
        let (ch, p) = (cp / k, cp % k);
        for e in patch_start[p] as usize..patch_start[p + 1] as usize {
            let src = &u.row(e)[ch * k..(ch + 1) * k];
            for (o, &v) in row.iter_mut().zip(src) {
                *o += v;
            }
        }
    });
    out
}

/// `(I - V^T U)^-1` per channel by LU with partial pivoting in f64 (nalgebra), rounded to
/// f32. A singular matrix, or one so ill-conditioned that the inverse is not finite, is an
/// error naming the channel.
pub fn inverse_cpu(vtu: &[f32], k: usize) -> Result<Vec<f32>> {
    let inverses: Vec<Result<Vec<f32>>> = (0..3)
        .into_par_iter()
        .map(|ch| {
            let a = DMatrix::<f64>::from_fn(k, k, |p, q| {
                let v = vtu[(ch * k + p) * k + q] as f64;
                if p == q { 1.0 - v } else { -v }
            });
            let inv = a.try_inverse().ok_or_else(|| singular(ch))?;
            let out: Vec<f32> = (0..k * k).map(|i| inv[(i / k, i % k)] as f32).collect();
            if out.iter().any(|v| !v.is_finite()) {
                return Err(singular(ch));
            }
            Ok(out)
        })
        .collect();
    let mut out = Vec::with_capacity(3 * k * k);
    for inv in inverses {
        out.extend(inv?);
    }
    Ok(out)
}

pub(crate) fn singular(ch: usize) -> Error {
    Error::Input(format!(
        "I - V^T U is singular in channel {}: the light would grow without bound (reflectances near 1 \
         in a closed scene, or form factors whose rows sum to more than 1)",
        ["r", "g", "b"][ch]
    ))
}

/// `Y = -U M` per channel (M the channel's inverse), by nalgebra's GEMM on strided views of
/// U and Y, in parallel over blocks of rows.
pub fn y_cpu(u: &Matrix, inverse: &[f32], k: usize) -> Matrix {
    let n = u.rows;
    let mut data = vec![0.0f32; n * 3 * k];
    // M^T in column-major order is M in row-major order.
    let mt: Vec<DMatrix<f32>> =
        (0..3).map(|ch| DMatrix::from_column_slice(k, k, &inverse[ch * k * k..(ch + 1) * k * k])).collect();
    let rows = 256;
    data.par_chunks_mut(rows * 3 * k).enumerate().for_each(|(b, y)| {
        let e0 = b * rows;
        let m = y.len() / (3 * k);
        for (ch, mt) in mt.iter().enumerate() {
            // U_ch^T and Y_ch^T as k x m column-major views: column e starts at e * 3k + ch * k.
            let src = &u.data[e0 * 3 * k + ch * k..];
            let ut = DMatrixView::from_slice_with_strides(src, k, m, 1, 3 * k);
            let mut yt = DMatrixViewMut::from_slice_with_strides_mut(&mut y[ch * k..], k, m, 1, 3 * k);
            yt.gemm(-1.0, mt, &ut, 0.0);
        }
    });
    Matrix { rows: n, cols: 3 * k, data }
}

/// Everything the precompute makes, for inspection and tests: U, `V^T U`, the inverses and
/// the factorisation (Y, or its factors).
#[derive(Clone, Debug, PartialEq)]
pub struct Precomputed {
    /// U (n x 3k).
    pub u: Matrix,
    /// `V^T U` (3 x k x k).
    pub vtu: Vec<f32>,
    /// `(I - V^T U)^-1` (3 x k x k).
    pub inverse: Vec<f32>,
    /// Y (or its factors) and the patch ranges.
    pub factor: Factorization,
}

/// The precompute as an algorithm with a CPU and a GPU path (`lumbre_gpu::Compute`): from a
/// [`LowRank`] system to [`Precomputed`] (U, `V^T U`, inverses, Y).
///
/// The GPU inverts `I - V^T U` itself (Gauss–Jordan, `radiosity/precompute_invert.wgsl`): the inverse
/// is 2 k^3 operations per channel, which nalgebra's LU does on one CPU thread while the GPU
/// spreads each elimination step over k^2 threads, and it saves a round trip of 3 k^2 values
/// each way. Without pivoting: by
/// reciprocity the columns of `V^T U` sum to at most max rho < 1, so `I - V^T U` is
/// diagonally dominant by columns, for which elimination needs no pivoting; a pivot that
/// is not finite or below 1e-20 is reported as a singular system.
///
/// ```
/// use lumbre_radiosity::{FormFactors, LowRank, Precompute, TwoMesh};
/// let mesh = TwoMesh::closed_box(4, 2).unwrap();
/// let f = FormFactors::default().cpu(&mesh).unwrap();
/// let out = Precompute::default().cpu(&LowRank::of_mesh(&mesh, f).unwrap()).unwrap();
/// assert_eq!((out.factor.n, out.factor.k), (96, 24));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Precompute {
    /// For tests: at most this many element rows per GPU block.
    pub block_rows: Option<usize>,
    /// Make the factored form ([`crate::Form::Factored`]: F, W and rho, no Y) instead of Y.
    pub factored: bool,
}

impl Precompute {
    /// The CPU path: the precomputation of `lr`.
    ///
    /// ```
    /// use lumbre_radiosity::{FormFactors, LowRank, Precompute, TwoMesh};
    /// let mesh = TwoMesh::closed_box(4, 2)?;
    /// let lr = LowRank::of_mesh(&mesh, FormFactors::default().cpu(&mesh)?)?;
    /// assert_eq!(Precompute::default().cpu(&lr)?.factor.k, 24);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn cpu(&self, lr: &LowRank) -> Result<Precomputed> {
        self.run_cpu(lr, &()).map(|(p, _)| p)
    }

    /// [`cpu`](Precompute::cpu) with progress (four steps) and stage times.
    pub fn run_cpu(&self, lr: &LowRank, progress: &dyn Progress) -> Result<(Precomputed, Report)> {
        let k = lr.k();
        let mut report = Report::default();
        progress.update("precompute", 0, 4);
        let u = report.time("U", || u_cpu(lr));
        progress.update("precompute", 1, 4);
        let vtu = report.time("V^T U", || vtu_cpu(&lr.patch_start, &u));
        progress.update("precompute", 2, 4);
        let inverse = report.time("inverse", || inverse_cpu(&vtu, k))?;
        progress.update("precompute", 3, 4);
        let factor = if self.factored {
            Factorization::factored(lr, &inverse)?
        } else {
            let y = report.time("Y", || y_cpu(&u, &inverse, k));
            Factorization::new(lr.patch_start.clone(), y)?
        };
        progress.update("precompute", 4, 4);
        Ok((Precomputed { u, vtu, inverse, factor }, report))
    }
}
