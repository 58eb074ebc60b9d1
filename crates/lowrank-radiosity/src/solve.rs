//! The fixed-geometry solve `B = E - Y (V^T E)`: `V^T E` as k segmented sums, then a
//! dense n x k matrix-vector product per channel (the CPU twins of `radiosity/solve_vte.wgsl` and
//! `radiosity/solve.wgsl`).

use lumbre_gpu::{Error, Result};
use rayon::prelude::*;

use crate::factor::{Factorization, Form};

/// Lanes of a segmented sum: lane l sums elements `l, l + 64, l + 128, ...` of the segment
/// in order, then lanes are folded in halves (`lane[l] += lane[l + w]` for w = 32, 16, ...,
/// 1). The GPU's workgroup does exactly these additions, so `V^T E` agrees bit for bit on a
/// device that evaluates f32 additions one by one (lavapipe); SPIR-V lets a driver
/// reassociate them, and there the sums of non-negative terms agree within as many ulps as
/// the segment has elements.
pub const SEGMENT_LANES: usize = 64;

/// The sum of `value(i)` for `i` in `start..end`, in the order of [`SEGMENT_LANES`].
///
/// ```
/// let v: Vec<f32> = (0..200).map(|i| i as f32).collect();
/// assert_eq!(lumbre_radiosity::twin::segment_sum(|i| v[i], 0, 200), 19900.0);
/// ```
pub fn segment_sum(value: impl Fn(usize) -> f32, start: usize, end: usize) -> f32 {
    let mut lanes = [0.0f32; SEGMENT_LANES];
    for (l, lane) in lanes.iter_mut().enumerate() {
        let mut s = 0.0f32;
        let mut i = start + l;
        while i < end {
            s += value(i);
            i += SEGMENT_LANES;
        }
        *lane = s;
    }
    let mut w = SEGMENT_LANES / 2;
    while w > 0 {
        for l in 0..w {
            lanes[l] += lanes[l + w];
        }
        w /= 2;
    }
    lanes[0]
}

/// `V^T E`: per channel, the sum of E over each patch's elements (the paper's Equation 8),
/// as `[channel][patch]`.
///
/// ```
/// let x = lumbre_radiosity::twin::vte_cpu(&[0, 1, 3], &[[1.0, 0.0, 0.0], [2.0, 0.0, 0.0], [3.0, 1.0, 0.0]]);
/// assert_eq!(x, [vec![1.0, 5.0], vec![0.0, 1.0], vec![0.0, 0.0]]);
/// ```
pub fn vte_cpu(patch_start: &[u32], e: &[[f32; 3]]) -> [Vec<f32>; 3] {
    let k = patch_start.len().saturating_sub(1);
    [0, 1, 2].map(|ch| {
        (0..k)
            .into_par_iter()
            .map(|p| segment_sum(|i| e[i][ch], patch_start[p] as usize, patch_start[p + 1] as usize))
            .collect()
    })
}

/// A dot product in eight lanes (SIMD-friendly: the compiler keeps the lanes in vector
/// registers).
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0.0f32; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f32 = ca.remainder().iter().zip(cb.remainder()).map(|(x, y)| x * y).sum();
    for (x, y) in ca.zip(cb) {
        for i in 0..8 {
            acc[i] += x[i] * y[i];
        }
    }
    acc.iter().sum::<f32>() + tail
}

/// Checks a lighting vector: n values, all finite.
pub(crate) fn check_emission(e: &[[f32; 3]], n: usize, light: usize) -> Result<()> {
    if e.len() != n {
        return Err(Error::Input(format!("lighting {light} has {} values, the scene has n = {n} elements", e.len())));
    }
    if let Some(i) = e.iter().position(|v| v.iter().any(|c| !c.is_finite())) {
        return Err(Error::Input(format!(
            "lighting {light}: element {i} has a non-finite emission {:?} (NaN or infinite)",
            e[i]
        )));
    }
    Ok(())
}

/// `z_ch = W_ch x_ch` for the factored form (`w` is 3 x k x k), optionally with |W| and |x|.
fn w_times(w: &[f32], x: &[Vec<f32>; 3], k: usize, abs: bool) -> [Vec<f32>; 3] {
    [0, 1, 2].map(|ch| {
        (0..k)
            .into_par_iter()
            .map(|p| {
                let row = &w[(ch * k + p) * k..(ch * k + p + 1) * k];
                if abs { row.iter().zip(&x[ch]).map(|(a, b)| (a * b).abs()).sum() } else { dot(row, &x[ch]) }
            })
            .collect()
    })
}

/// `B = E - Y (V^T E)` for each lighting vector E (n RGB values), on the CPU: Y (or F, for
/// the factored form: `B = E + rho ⊙ F (W_ch (V^T E)_ch)`) is read once for all of them,
/// each row's dot products taken while it is in cache.
pub fn solve_cpu(f: &Factorization, lights: &[Vec<[f32; 3]>]) -> Result<Radiosity> {
    for (m, e) in lights.iter().enumerate() {
        check_emission(e, f.n, m)?;
    }
    let k = f.k;
    let xs: Vec<[Vec<f32>; 3]> = lights.iter().map(|e| vte_cpu(&f.patch_start, e)).collect();
    let zs: Vec<[Vec<f32>; 3]> = match &f.form {
        Form::Dense { .. } => Vec::new(),
        Form::Factored { w, .. } => xs.iter().map(|x| w_times(w, x, k, false)).collect(),
    };
    let mut out: Vec<Vec<[f32; 3]>> = vec![vec![[0.0; 3]; f.n]; lights.len()];
    let rows = 64;
    let mut chunks: Vec<Vec<&mut [[f32; 3]]>> = (0..f.n.div_ceil(rows)).map(|_| Vec::new()).collect();
    for b in out.iter_mut() {
        for (c, piece) in b.chunks_mut(rows).enumerate() {
            chunks[c].push(piece);
        }
    }
    chunks.into_par_iter().enumerate().for_each(|(c, mut pieces)| {
        for i in 0..pieces.first().map_or(0, |p| p.len()) {
            let e = c * rows + i;
            match &f.form {
                Form::Dense { y } => {
                    let yrow = y.row(e);
                    for ch in 0..3 {
                        let y = &yrow[ch * k..(ch + 1) * k];
                        for (m, piece) in pieces.iter_mut().enumerate() {
                            piece[i][ch] = lights[m][e][ch] - dot(y, &xs[m][ch]);
                        }
                    }
                }
                Form::Factored { f: fm, rho, .. } => {
                    let frow = fm.row(e);
                    for (m, piece) in pieces.iter_mut().enumerate() {
                        for ch in 0..3 {
                            piece[i][ch] = lights[m][e][ch] + rho[e][ch] * dot(frow, &zs[m][ch]);
                        }
                    }
                }
            }
        }
    });
    Ok(Radiosity(out))
}

/// The fixed-geometry solve as an algorithm with a CPU and a GPU path
/// (`lumbre_gpu::Compute`): the input is the [`Factorization`] (placed once on a backend with
/// [`lumbre_gpu::Backend::place`]), the lighting vectors belong to the value, so one placed
/// factorisation serves every relighting ([`lumbre_gpu::Compute::run_placed`]).
///
/// With several lighting vectors Y is read once for up to eight of them at a time (a
/// matrix-matrix product). With [`crate::Storage::F16`] the GPU stores Y in half precision and the
/// CPU path solves with the same rounded Y ([`Factorization::rounded_to_f16`]), so the two
/// agree to rounding; the f16 error itself is Y's rounding against the f32 solve.
///
/// ```
/// use lumbre_gpu::{Backend, Compute};
/// use lumbre_radiosity::{Factorization, Matrix, Solve};
/// // One patch of two elements, Y = -0.5 everywhere: B = E + 0.5 (V^T E).
/// let f = Factorization::new(vec![0, 2], Matrix::new(2, 3, vec![-0.5; 6]).unwrap()).unwrap();
/// let solve = Solve::new(vec![vec![[1.0, 0.0, 2.0], [1.0, 0.0, 0.0]]]);
/// let placed = Backend::Cpu.place(&solve, &f).unwrap();
/// let (b, _) = solve.run_placed(&placed, &()).unwrap();
/// assert_eq!(b[0], vec![[2.0, 0.0, 3.0], [2.0, 0.0, 1.0]]);
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Solve {
    /// The lighting vectors: emitted radiosity per element, RGB.
    pub lights: Vec<Vec<[f32; 3]>>,
    /// How the GPU stores Y.
    pub storage: crate::layout::Storage,
    /// For tests: at most this many element rows per GPU block of Y.
    pub block_rows: Option<usize>,
}

impl Solve {
    /// A solve of these lighting vectors with Y in f32.
    pub fn new(lights: Vec<Vec<[f32; 3]>>) -> Solve {
        Solve { lights, ..Solve::default() }
    }

    /// The CPU path: [`solve_cpu`] with Y as the GPU stores it.
    ///
    /// ```
    /// use lumbre_radiosity::{Factorization, Matrix, Solve};
    /// let f = Factorization::new(vec![0, 2], Matrix::new(2, 3, vec![-0.5; 6])?)?;
    /// let b = Solve::new(vec![vec![[1.0, 0.0, 2.0], [1.0, 0.0, 0.0]]]).cpu(&f)?;
    /// assert_eq!(b[0], vec![[2.0, 0.0, 3.0], [2.0, 0.0, 1.0]]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn cpu(&self, f: &Factorization) -> Result<Radiosity> {
        match self.storage {
            crate::layout::Storage::F32 => solve_cpu(f, &self.lights),
            crate::layout::Storage::F16 => solve_cpu(&f.rounded_to_f16(), &self.lights),
        }
    }
}

/// `V^T E` alone as an algorithm with a CPU and a GPU path (`lumbre_gpu::Compute`): the input
/// is the paper's I, the output `[channel][patch]` flattened (3k values). The two paths
/// agree bit for bit where the device adds as IEEE 754 does ([`SEGMENT_LANES`]).
///
/// ```
/// let vte = lumbre_radiosity::Vte { emission: vec![[1.0, 2.0, 3.0]; 3] };
/// assert_eq!(vte.cpu(&[0, 1, 3]).unwrap(), vec![1.0, 2.0, 2.0, 4.0, 3.0, 6.0]);
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Vte {
    /// Emission per element.
    pub emission: Vec<[f32; 3]>,
}

impl Vte {
    /// The CPU path: [`vte_cpu`] of `patch_start`, flattened.
    ///
    /// ```
    /// let vte = lumbre_radiosity::Vte { emission: vec![[1.0, 2.0, 3.0]; 3] };
    /// assert_eq!(vte.cpu(&[0, 1, 3])?, vec![1.0, 2.0, 2.0, 4.0, 3.0, 6.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn cpu(&self, patch_start: &[u32]) -> Result<Vec<f32>> {
        crate::lowrank::check_patches(patch_start, self.emission.len())?;
        check_emission(&self.emission, self.emission.len(), 0)?;
        Ok(vte_cpu(patch_start, &self.emission).concat())
    }
}

/// Radiosity per element (RGB) for each lighting vector of a [`Solve`].
///
/// ```
/// use lumbre_gpu::{Agree, Tolerance};
/// let a = lumbre_radiosity::Radiosity(vec![vec![[1.0, 2.0, 3.0]]]);
/// assert!(a.disagreement(&a.clone(), Tolerance::EXACT).is_none());
/// assert_eq!(a[0][0][2], 3.0);
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Radiosity(pub Vec<Vec<[f32; 3]>>);

impl std::ops::Deref for Radiosity {
    type Target = Vec<Vec<[f32; 3]>>;

    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl lumbre_gpu::Agree for Radiosity {
    fn disagreement(&self, gpu: &Self, tol: lumbre_gpu::Tolerance) -> Option<String> {
        if self.0.len() != gpu.0.len() {
            return Some(format!("{} vs {} lighting vectors", self.0.len(), gpu.0.len()));
        }
        self.0
            .iter()
            .zip(&gpu.0)
            .enumerate()
            .find_map(|(m, (a, b))| lumbre_gpu::compare_slices(a, b, tol).map(|d| format!("lighting {m}: {d}")))
    }
}

/// The tolerance between two computations of `B = E - Y (V^T E)` that sum in different
/// orders (the GPU's partial sums, the CPU's eight lanes, fused multiply-adds): a sum of
/// k + 1 terms is off by at most about (k + 1) ulps of the sum of their magnitudes; twice
/// that, for the largest such sum over elements, channels and lighting vectors (the
/// factored form sums twice, `z = W x` then `F z`, and counts twice as many ulps).
///
/// ```
/// use lumbre_radiosity::{solve_tolerance, Factorization, Matrix};
/// let f = Factorization::new(vec![0, 2], Matrix::new(2, 3, vec![-0.5; 6]).unwrap()).unwrap();
/// let tol = solve_tolerance(&f, &[vec![[1.0, 0.0, 0.0]; 2]]);
/// assert!(tol.abs > 0.0 && tol.abs < 1e-5);
/// ```
pub fn solve_tolerance(f: &Factorization, lights: &[Vec<[f32; 3]>]) -> lumbre_gpu::Tolerance {
    let k = f.k;
    let (sums, ulps) = match &f.form {
        Form::Dense { .. } => (1.0, k as f64 + 2.0),
        Form::Factored { .. } => (2.0, 2.0 * (k as f64 + 2.0)),
    };
    let m = lights
        .par_iter()
        .map(|e| {
            let x = vte_cpu(&f.patch_start, e);
            let zabs = match &f.form {
                Form::Dense { .. } => None,
                Form::Factored { w, .. } => Some(w_times(w, &x, k, true)),
            };
            (0..e.len().min(f.n))
                .into_par_iter()
                .map(|i| {
                    (0..3)
                        .map(|ch| {
                            let s: f64 = match (&f.form, &zabs) {
                                (Form::Dense { y }, _) => {
                                    let y = &y.row(i)[ch * k..(ch + 1) * k];
                                    y.iter().zip(&x[ch]).map(|(a, b)| (a * b).abs() as f64).sum()
                                }
                                (Form::Factored { f: fm, rho, .. }, Some(z)) => {
                                    rho[i][ch] as f64
                                        * fm.row(i).iter().zip(&z[ch]).map(|(a, b)| (a * b).abs() as f64).sum::<f64>()
                                }
                                _ => 0.0,
                            };
                            s + e[i][ch].abs() as f64
                        })
                        .fold(0.0f64, f64::max)
                })
                .reduce(|| 0.0, f64::max)
        })
        .reduce(|| 0.0, f64::max);
    lumbre_gpu::Tolerance::absolute(2.0 * ulps * sums * f32::EPSILON as f64 * m)
}
