//! The output: per disk, the crossings found, their power sum and the irradiance.

use lumbre_gpu::{Agree, Tolerance, compare_slices};

use crate::fixed::{Acc, to_f32};
use crate::problem::DiskData;

/// Per disk: how many segments cross it, the sum of their power, and the irradiance
/// `E = power / (pi r^2)` (paper eq. 1).
///
/// Power sums are exact sums of each segment's power truncated to a multiple of 2^-k,
/// where `2^-k` is at most `2^-31` times the largest segment power (and at most `2^-62`
/// times the total power; see [`Estimate::scale_exp`]): every method and both paths give
/// the same bits for the same crossings; against the real sum the error is at most
/// `count * 2^-k` plus the final rounding to f32 (half an ulp).
///
/// ```
/// use glam::Vec3;
/// use lumbre_density::{Density, Disk, Problem, Segment};
/// use lumbre_gpu::{Backend, Compute};
/// let seg = |x: f32| Segment { start: Vec3::new(x, 1.0, 0.0), end: Vec3::new(x, -1.0, 0.0), power: [1.0, 2.0, 3.0], bounce: 0 };
/// let problem = Problem { segments: vec![seg(0.0), seg(0.2), seg(5.0)], disks: vec![Disk { centre: Vec3::ZERO, normal: Vec3::Y, radius: 0.5 }] };
/// let est = Density::default().run(&Backend::Cpu, &problem)?;
/// assert_eq!(est.count, vec![2]);
/// assert_eq!(est.power, vec![[2.0, 4.0, 6.0]]);
/// assert_eq!(est.pairs(), 2);
/// # Ok::<(), lumbre_gpu::Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Estimate {
    /// Segments crossing each disk.
    pub count: Vec<u32>,
    /// Their summed power (RGB).
    pub power: Vec<[f32; 3]>,
    /// `power / (pi r^2)`.
    pub irradiance: Vec<[f32; 3]>,
    /// The fixed-point exponent `k` of the power sums (units of 2^-k).
    pub scale_exp: i32,
}

/// The share of crossings a GPU estimate may decide differently from the CPU's (a test
/// within a few ulps of its threshold, on a GPU that fuses multiply-adds): 1e-4 of the
/// crossings, at least one, for [`Estimate::agrees_up_to_flips`].
///
/// ```
/// assert_eq!(lumbre_density::MAX_FLIP_RATE, 1e-4);
/// ```
pub const MAX_FLIP_RATE: f64 = 1e-4;

impl Estimate {
    /// From per-disk accumulators.
    pub(crate) fn from_accs(accs: &[Acc], disks: &[DiskData], scale_exp: i32) -> Estimate {
        let power: Vec<[f32; 3]> = accs.iter().map(|a| a.power.map(|s| to_f32(s, scale_exp))).collect();
        let irradiance = power
            .iter()
            .zip(disks)
            .map(|(p, d)| {
                let area = std::f32::consts::PI * d.radius * d.radius;
                p.map(|c| c / area)
            })
            .collect();
        Estimate { count: accs.iter().map(|a| a.count).collect(), power, irradiance, scale_exp }
    }

    /// How many crossings differ from `other`'s: the sum over disks of the differences of
    /// their counts. A GPU that fuses multiply-adds may decide a crossing whose test lands
    /// within a few ulps of its threshold (a point on a disk's rim, an end on its plane's
    /// tolerance) differently from the CPU.
    ///
    /// ```
    /// let a = lumbre_density::Estimate { count: vec![3, 1], ..Default::default() };
    /// let b = lumbre_density::Estimate { count: vec![2, 2], ..Default::default() };
    /// assert_eq!(a.flips(&b), 2);
    /// ```
    pub fn flips(&self, other: &Estimate) -> u64 {
        let n = self.count.len().max(other.count.len());
        (0..n)
            .map(|i| {
                let (a, b) = (self.count.get(i).copied().unwrap_or(0), other.count.get(i).copied().unwrap_or(0));
                a.abs_diff(b) as u64
            })
            .sum()
    }

    /// Whether `other` agrees with this estimate except for at most `max_flips` crossings
    /// ([`flips`](Estimate::flips)), with power and irradiance equal on every disk whose
    /// count is equal.
    ///
    /// ```
    /// let a = lumbre_density::Estimate { count: vec![3, 1], power: vec![[3.0; 3], [1.0; 3]], irradiance: vec![[1.0; 3]; 2], scale_exp: 0 };
    /// let mut b = a.clone();
    /// b.count[1] = 2;
    /// b.power[1] = [2.0; 3];
    /// assert!(a.agrees_up_to_flips(&b, 1) && !a.agrees_up_to_flips(&b, 0));
    /// ```
    pub fn agrees_up_to_flips(&self, other: &Estimate, max_flips: u64) -> bool {
        self.count.len() == other.count.len()
            && self.flips(other) <= max_flips
            && (0..self.count.len()).all(|i| {
                self.count[i] != other.count[i]
                    || (self.power[i] == other.power[i] && self.irradiance[i] == other.irradiance[i])
            })
    }

    /// All crossings found (the sum of the counts).
    ///
    /// ```
    /// assert_eq!(lumbre_density::Estimate { count: vec![3, 1], ..Default::default() }.pairs(), 4);
    /// ```
    pub fn pairs(&self) -> u64 {
        self.count.iter().map(|&c| c as u64).sum()
    }
}

impl Agree for Estimate {
    /// Counts exactly; power and irradiance within `tol`.
    fn disagreement(&self, gpu: &Self, tol: Tolerance) -> Option<String> {
        let counts = compare_slices(&self.count, &gpu.count, Tolerance::EXACT).map(|d| format!("counts: {d}"));
        let power = compare_slices(&self.power, &gpu.power, tol).map(|d| format!("power: {d}"));
        let irradiance = compare_slices(&self.irradiance, &gpu.irradiance, tol).map(|d| format!("irradiance: {d}"));
        let all: Vec<String> = [counts, power, irradiance].into_iter().flatten().collect();
        (!all.is_empty()).then(|| all.join("; "))
    }
}
