//! The low-rank system: what it is built from (V as the patch ranges, R, F) and the checks
//! that make bad input an error instead of a singular or divergent system.

use lumbre_gpu::{Error, Result};

use crate::matrix::Matrix;
use crate::mesh::TwoMesh;

/// The data of `RF ~ U V^T`: V as the paper's index vector I, the reflectances R, and the
/// element-to-patch form factors F.
///
/// With `c_p` the number of elements of patch p and `U(e, p) = rho_e F_ep / c_p`,
/// `(U V^T)(e, e') = rho_e F_{e P(e')} / c_{P(e')}`. Since `F_ep = Σ_{e' in p} F_{e e'}`, this
/// equals `rho_e F_{e e'} = (RF)(e, e')` exactly when F_{e e'} is the same for every e' of the
/// patch (the row of e is constant over the patch), and is otherwise the mean of F_{e e'}
/// over the patch. That is why c_p counts elements: the approximation assumes elements of
/// near-equal area within a patch (F_{e e'} grows with the area of e'); both mesh builders
/// cut every patch into congruent elements.
///
/// ```
/// use lumbre_radiosity::{LowRank, Matrix};
/// let f = Matrix::new(3, 2, vec![0.0, 0.5, 0.4, 0.1, 0.3, 0.0]).unwrap();
/// let lr = LowRank::new(vec![0, 1, 3], vec![[0.5; 3]; 3], f).unwrap();
/// assert_eq!((lr.n(), lr.k()), (3, 2));
/// assert_eq!(lr.inv_sizes(), vec![1.0, 0.5]);
/// // A patch without elements, a reflectance of 1 and NaN form factors are errors.
/// let f = Matrix::new(3, 2, vec![0.0; 6]).unwrap();
/// assert!(LowRank::new(vec![0, 3, 3], vec![[0.5; 3]; 3], f.clone()).is_err());
/// assert!(LowRank::new(vec![0, 1, 3], vec![[0.5, 1.0, 0.5]; 3], f.clone()).is_err());
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct LowRank {
    /// The paper's I (0-based, length k + 1): the elements of patch p are
    /// `patch_start[p]..patch_start[p + 1]`.
    pub patch_start: Vec<u32>,
    /// Diffuse reflectance per element, RGB, each in `[0, 1)`.
    pub rho: Vec<[f32; 3]>,
    /// Element-to-patch form factors (n x k).
    pub f: Matrix,
}

/// Checks the paper's I: starts at 0, ends at n, no empty patch.
pub(crate) fn check_patches(patch_start: &[u32], n: usize) -> Result<()> {
    if patch_start.len() < 2 {
        return Err(Error::Input(format!(
            "k = {} patches: the low-rank system needs at least one patch",
            patch_start.len().saturating_sub(1)
        )));
    }
    if n == 0 {
        return Err(Error::Input("n = 0 elements: the low-rank system needs at least one element".into()));
    }
    if patch_start[0] != 0 || *patch_start.last().unwrap_or(&0) as usize != n {
        return Err(Error::Input(format!(
            "patch ranges must start at 0 and end at n = {n}, found {} and {}",
            patch_start[0],
            patch_start.last().unwrap_or(&0)
        )));
    }
    if let Some(p) = patch_start.windows(2).position(|w| w[1] <= w[0]) {
        return Err(Error::Input(format!(
            "patch {p} is empty (elements {}..{}): every patch needs at least one element",
            patch_start[p],
            patch_start[p + 1]
        )));
    }
    Ok(())
}

/// Checks reflectances: finite and in `[0, 1)`.
pub(crate) fn check_rho(rho: &[[f32; 3]]) -> Result<()> {
    for (e, r) in rho.iter().enumerate() {
        for (c, &v) in r.iter().enumerate() {
            if !(0.0..1.0).contains(&v) {
                return Err(Error::Input(format!(
                    "element {e} has reflectance {v} in channel {}: radiosity needs 0 <= rho < 1 \
                     (with rho >= 1 a closed scene reflects all its light, I - RF is singular and the \
                     solution has no bound)",
                    ["r", "g", "b"][c]
                )));
            }
        }
    }
    Ok(())
}

impl LowRank {
    /// Checks and assembles the system: k >= 1 patches of at least one element each, n >= 1,
    /// `rho` in `[0, 1)` for every element and channel, F finite and non-negative (n x k).
    pub fn new(patch_start: Vec<u32>, rho: Vec<[f32; 3]>, f: Matrix) -> Result<LowRank> {
        check_patches(&patch_start, rho.len())?;
        let (n, k) = (rho.len(), patch_start.len() - 1);
        if (f.rows, f.cols) != (n, k) {
            return Err(Error::Input(format!("form factors are {}x{}, expected n x k = {n}x{k}", f.rows, f.cols)));
        }
        check_rho(&rho)?;
        if let Some(i) = f.data.iter().position(|v| !v.is_finite() || *v < 0.0) {
            return Err(Error::Input(format!(
                "form factor F[{}][{}] = {} (must be finite and >= 0)",
                i / k,
                i % k,
                f.data[i]
            )));
        }
        Ok(LowRank { patch_start, rho, f })
    }

    /// The system of `mesh` with its form factors `f` (see [`crate::FormFactors`]).
    pub fn of_mesh(mesh: &TwoMesh, f: Matrix) -> Result<LowRank> {
        LowRank::new(mesh.patch_start.clone(), mesh.rho.clone(), f)
    }

    /// Number of elements.
    pub fn n(&self) -> usize {
        self.rho.len()
    }

    /// Number of patches.
    pub fn k(&self) -> usize {
        self.patch_start.len() - 1
    }

    /// `1 / c_p` for every patch (rounded once; the CPU and GPU multiply by it).
    pub fn inv_sizes(&self) -> Vec<f32> {
        self.patch_start.windows(2).map(|w| 1.0 / (w[1] - w[0]) as f32).collect()
    }
}
