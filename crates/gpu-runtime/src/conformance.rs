//! Running both paths of an algorithm on one input and comparing them.

use std::fmt;

use crate::Error;
#[cfg(feature = "wgpu")]
use crate::{Compute, Gpu};

/// How far two results may differ: `|a - b| <= abs + rel * |a|` per floating-point value,
/// and the fraction `beyond` of the values that may differ by more (where a driver's fused
/// multiply-adds may flip a comparison, say). Integer values always compare exactly,
/// whatever the tolerance says, but count towards `beyond` too.
///
/// ```
/// use lumbre_gpu::{Tolerance, compare_slices};
/// assert!(Tolerance::EXACT.accepts(1.0, 1.0));
/// assert!(!Tolerance::EXACT.accepts(1.0, 1.0 + 1e-7));
/// assert!(Tolerance::relative(1e-5).accepts(1000.0, 1000.001));
/// // One value in 100 may be off.
/// let tol = Tolerance::absolute(1e-6).beyond(0.01);
/// let (cpu, mut gpu) = (vec![0.0f32; 100], vec![0.0f32; 100]);
/// gpu[7] = 1.0;
/// assert!(compare_slices(&cpu, &gpu, tol).is_none());
/// gpu[8] = 1.0;
/// assert!(compare_slices(&cpu, &gpu, tol).is_some());
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tolerance {
    /// Absolute slack.
    pub abs: f64,
    /// Slack relative to the CPU value.
    pub rel: f64,
    /// The fraction of values (0 to 1) allowed to differ by more than `abs` and `rel`.
    pub beyond: f64,
}

impl Tolerance {
    /// No difference at all.
    pub const EXACT: Tolerance = Tolerance { abs: 0.0, rel: 0.0, beyond: 0.0 };

    /// Absolute slack only.
    pub const fn absolute(abs: f64) -> Self {
        Tolerance { abs, ..Self::EXACT }
    }

    /// Relative slack only.
    pub const fn relative(rel: f64) -> Self {
        Tolerance { rel, ..Self::EXACT }
    }

    /// Absolute and relative slack.
    ///
    /// ```
    /// assert!(lumbre_gpu::Tolerance::within(1e-6, 1e-4).accepts(1.0, 1.00005));
    /// ```
    pub const fn within(abs: f64, rel: f64) -> Self {
        Tolerance { abs, rel, beyond: 0.0 }
    }

    /// This tolerance, with the fraction `fraction` of the values allowed beyond it.
    ///
    /// ```
    /// let tol = lumbre_gpu::Tolerance::relative(1e-6).beyond(0.005);
    /// assert!(tol.allows(5, 1000) && !tol.allows(6, 1000));
    /// ```
    pub const fn beyond(self, fraction: f64) -> Self {
        Tolerance { beyond: fraction, ..self }
    }

    /// Whether `differing` values of `of` are few enough (at most the fraction `beyond`).
    ///
    /// ```
    /// use lumbre_gpu::Tolerance;
    /// assert!(Tolerance::EXACT.allows(0, 10) && !Tolerance::EXACT.allows(1, 10));
    /// assert!(Tolerance::EXACT.beyond(0.01).allows(17, 48 * 36) && !Tolerance::EXACT.beyond(0.01).allows(18, 48 * 36));
    /// ```
    pub fn allows(&self, differing: usize, of: usize) -> bool {
        differing as f64 <= self.beyond * of as f64
    }

    /// Whether `gpu` is close enough to the reference `cpu`. NaN only matches NaN.
    pub fn accepts(&self, cpu: f64, gpu: f64) -> bool {
        if cpu.is_nan() || gpu.is_nan() {
            return cpu.is_nan() && gpu.is_nan();
        }
        cpu == gpu || (cpu - gpu).abs() <= self.abs + self.rel * cpu.abs()
    }
}

/// Outputs that can be compared between the CPU and GPU paths.
///
/// Implemented for vectors and arrays of integers (exact) and of floats (with tolerance);
/// algorithm crates implement it for their own output types.
///
/// ```
/// use lumbre_gpu::{Agree, Tolerance};
/// assert!(vec![1u32, 2].disagreement(&vec![1, 2], Tolerance::EXACT).is_none());
/// assert!(vec![1u32, 2].disagreement(&vec![1, 3], Tolerance::EXACT).is_some());
/// ```
pub trait Agree {
    /// `None` if `gpu` agrees with the reference `self`, else what differs.
    fn disagreement(&self, gpu: &Self, tol: Tolerance) -> Option<String>;
}

/// Scalars the generic slice comparison knows.
pub trait Scalar: Copy + fmt::Debug {
    /// Whether two values agree.
    fn agrees(cpu: Self, gpu: Self, tol: Tolerance) -> bool;
}

macro_rules! exact_scalar {
    ($($t:ty),*) => {$(
        impl Scalar for $t {
            fn agrees(cpu: Self, gpu: Self, _: Tolerance) -> bool { cpu == gpu }
        }
    )*};
}
exact_scalar!(u8, u16, u32, u64, i8, i16, i32, i64, bool, usize);

impl Scalar for f32 {
    fn agrees(cpu: Self, gpu: Self, tol: Tolerance) -> bool {
        tol.accepts(cpu as f64, gpu as f64)
    }
}

impl Scalar for f64 {
    fn agrees(cpu: Self, gpu: Self, tol: Tolerance) -> bool {
        tol.accepts(cpu, gpu)
    }
}

impl<S: Scalar, const N: usize> Scalar for [S; N] {
    fn agrees(cpu: Self, gpu: Self, tol: Tolerance) -> bool {
        cpu.iter().zip(gpu.iter()).all(|(a, b)| S::agrees(*a, *b, tol))
    }
}

/// Compares two slices value by value and describes the first differences, if more of them
/// differ than `tol.beyond` allows.
pub fn compare_slices<S: Scalar>(cpu: &[S], gpu: &[S], tol: Tolerance) -> Option<String> {
    if cpu.len() != gpu.len() {
        return Some(format!("lengths differ: cpu {} vs gpu {}", cpu.len(), gpu.len()));
    }
    let bad: Vec<usize> = (0..cpu.len()).filter(|&i| !S::agrees(cpu[i], gpu[i], tol)).collect();
    if tol.allows(bad.len(), cpu.len()) {
        return None;
    }
    let shown: Vec<String> = bad.iter().take(5).map(|&i| format!("[{i}] cpu {:?} gpu {:?}", cpu[i], gpu[i])).collect();
    Some(format!("{} of {} values differ (tolerance {tol:?}): {}", bad.len(), cpu.len(), shown.join(", ")))
}

impl<S: Scalar> Agree for Vec<S> {
    fn disagreement(&self, gpu: &Self, tol: Tolerance) -> Option<String> {
        compare_slices(self, gpu, tol)
    }
}

impl<S: Scalar> Agree for [S] {
    fn disagreement(&self, gpu: &Self, tol: Tolerance) -> Option<String> {
        compare_slices(self, gpu, tol)
    }
}

impl Agree for u32 {
    fn disagreement(&self, gpu: &Self, _: Tolerance) -> Option<String> {
        (self != gpu).then(|| format!("cpu {self} vs gpu {gpu}"))
    }
}

impl<A: Agree, B: Agree> Agree for (A, B) {
    fn disagreement(&self, gpu: &Self, tol: Tolerance) -> Option<String> {
        match (self.0.disagreement(&gpu.0, tol), self.1.disagreement(&gpu.1, tol)) {
            (None, None) => None,
            (a, b) => Some(format!(
                "{}; {}",
                a.unwrap_or_else(|| "first agrees".into()),
                b.unwrap_or_else(|| "second agrees".into())
            )),
        }
    }
}

/// Why a conformance check failed.
#[derive(Debug)]
pub enum Mismatch {
    /// One of the paths returned an error.
    Failed {
        /// `"cpu"` or `"gpu"`.
        path: &'static str,
        /// The error.
        error: Error,
    },
    /// Both ran, and their outputs differ.
    Differ {
        /// The algorithm's name.
        algorithm: &'static str,
        /// What differs.
        detail: String,
    },
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Mismatch::Failed { path, error } => write!(f, "the {path} path failed: {error}"),
            Mismatch::Differ { algorithm, detail } => write!(f, "{algorithm}: CPU and GPU disagree: {detail}"),
        }
    }
}

impl std::error::Error for Mismatch {}

/// Runs `alg` on the CPU and on `gpu` with the same input and compares the outputs
/// (exactly for integers, within `tol` for floats). Returns the agreed output.
///
/// ```no_run
/// use lumbre_gpu::{conformance, CopyKernel, Gpu, Tolerance};
/// let gpu = Gpu::new()?;
/// let out = conformance(&CopyKernel, &gpu, &vec![[1u32, 2, 3, 4]; 513], Tolerance::EXACT)?;
/// assert_eq!(out.len(), 513);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[cfg(feature = "wgpu")]
pub fn conformance<A>(alg: &A, gpu: &Gpu, input: &A::Input, tol: Tolerance) -> Result<A::Output, Mismatch>
where
    A: Compute,
    A::Output: Agree,
{
    let cpu = alg.run(&crate::Backend::Cpu, input).map_err(|error| Mismatch::Failed { path: "cpu", error })?;
    let on_gpu = alg.gpu(gpu, input).map_err(|error| Mismatch::Failed { path: "gpu", error })?;
    match cpu.disagreement(&on_gpu, tol) {
        None => Ok(cpu),
        Some(detail) => Err(Mismatch::Differ { algorithm: alg.name(), detail }),
    }
}
