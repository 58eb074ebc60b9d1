//! [`diff_stats`]: how two images differ on display values, for golden-image and
//! GPU-against-CPU tests.

use rayon::prelude::*;

use super::compare::{SizeMismatch, check_size, nearest_rank};
use crate::image::{Image, linear_to_srgb};

/// How two images differ on display values: sRGB-encoded values in `[0, 1]` (each linear
/// channel clamped to `[0, 1]` and encoded by [`linear_to_srgb`], not quantized), so
/// differences weigh as they look and thresholds read in 8-bit steps; for golden-image and
/// GPU-vs-CPU tests. A channel that is NaN or infinite in exactly one of the images counts as
/// the largest difference, 1; in both, as 0 only when both are the same value.
#[derive(Clone, Debug, PartialEq)]
pub struct DiffStats {
    /// Root mean square of the per-channel differences.
    pub rmse: f32,
    /// Mean of the absolute per-channel differences.
    pub mean_abs: f32,
    /// Largest absolute per-channel difference.
    pub max_abs: f32,
    /// Peak signal-to-noise ratio in dB, `-20 log10(rmse)` (infinite when identical).
    pub psnr: f32,
    /// Number of pixels compared.
    pub pixels: usize,
    /// Per-pixel error (the largest of its three channel differences), sorted ascending.
    sorted_errors: Vec<f32>,
}

impl DiffStats {
    /// The fraction of pixels whose error (largest channel difference) is greater than
    /// `threshold`: 0 for identical images; in `[0, 1]`. An empty image gives 0.
    ///
    /// ```
    /// use lumbre_raytrace::{Image, diff_stats};
    /// let a = Image::new(2, 2);
    /// assert_eq!(diff_stats(&a, &a).unwrap().fraction_over(0.0), 0.0);
    /// ```
    pub fn fraction_over(&self, threshold: f32) -> f32 {
        if self.pixels == 0 {
            return 0.0;
        }
        let at_or_below = self.sorted_errors.partition_point(|&e| e <= threshold);
        (self.pixels - at_or_below) as f32 / self.pixels as f32
    }

    /// The per-pixel error at quantile `q` in `[0, 1]` (0: smallest, 1: largest; nearest rank,
    /// as in the [module documentation](super)). An empty image gives 0.
    ///
    /// ```
    /// use lumbre_raytrace::{Image, diff_stats};
    /// let a = Image::new(2, 2);
    /// assert_eq!(diff_stats(&a, &a).unwrap().percentile(0.5), 0.0);
    /// ```
    pub fn percentile(&self, q: f32) -> f32 {
        if self.sorted_errors.is_empty() {
            return 0.0;
        }
        self.sorted_errors[nearest_rank(self.sorted_errors.len(), f64::from(q))]
    }

    /// Per-pixel errors (largest channel difference of each pixel), sorted ascending.
    ///
    /// ```
    /// use lumbre_raytrace::{Image, diff_stats};
    /// assert_eq!(diff_stats(&Image::new(2, 2), &Image::new(2, 2)).unwrap().pixel_errors(), &[0.0; 4]);
    /// ```
    pub fn pixel_errors(&self) -> &[f32] {
        &self.sorted_errors
    }
}

fn channel_diff(a: f32, b: f32) -> f32 {
    match (a.is_finite(), b.is_finite()) {
        (true, true) => (linear_to_srgb(a) - linear_to_srgb(b)).abs(),
        (false, false) if a.to_bits() == b.to_bits() => 0.0,
        _ => 1.0,
    }
}

/// Compares two images on display values (see [`DiffStats`]).
///
/// ```
/// use glam::Vec3;
/// use lumbre_raytrace::{Image, diff_stats};
/// let a = Image::new(8, 8);
/// let mut b = a.clone();
/// b.set(0, 0, Vec3::ONE);
/// let d = diff_stats(&a, &b).unwrap();
/// assert_eq!(d.max_abs, 1.0);
/// assert_eq!(d.fraction_over(0.5), 1.0 / 64.0);
/// assert!(diff_stats(&a, &Image::new(8, 9)).is_err());
/// ```
pub fn diff_stats(a: &Image, b: &Image) -> Result<DiffStats, SizeMismatch> {
    check_size(a, b)?;
    let per_pixel: Vec<[f32; 3]> = a
        .pixels
        .par_iter()
        .zip(&b.pixels)
        .map(|(p, q)| [channel_diff(p.x, q.x), channel_diff(p.y, q.y), channel_diff(p.z, q.z)])
        .collect();
    let pixels = per_pixel.len();
    let (mut sum, mut sum_sq, mut max_abs) = (0.0f64, 0.0f64, 0.0f32);
    for d in per_pixel.iter().flatten() {
        sum += f64::from(*d);
        sum_sq += f64::from(*d) * f64::from(*d);
        max_abs = max_abs.max(*d);
    }
    let n = (3 * pixels).max(1) as f64;
    let rmse = (sum_sq / n).sqrt() as f32;
    let mut sorted_errors: Vec<f32> = per_pixel.iter().map(|d| d[0].max(d[1]).max(d[2])).collect();
    sorted_errors.sort_unstable_by(f32::total_cmp);
    Ok(DiffStats {
        rmse,
        mean_abs: (sum / n) as f32,
        max_abs,
        psnr: if rmse > 0.0 { -20.0 * rmse.log10() } else { f32::INFINITY },
        pixels,
        sorted_errors,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_finite_channels_count_as_full_difference() {
        assert_eq!(channel_diff(f32::NAN, 0.0), 1.0);
        assert_eq!(channel_diff(f32::INFINITY, f32::INFINITY), 0.0);
        assert_eq!(channel_diff(0.2, 0.2), 0.0);
    }
}
