//! [`compare`]: every figure of a test image against a reference (RMSE, relative error
//! overall, by percentile and per region, CIE94 ΔE), and the size check and nearest-rank
//! percentile the other comparisons share.

use std::fmt;

use glam::Vec3;
use rayon::prelude::*;

use super::colour::{Lab, delta_e94, luminance};
use super::region::Region;
use crate::image::Image;

/// The `eps` of [`relative_error`]: 1% of the luminance of white (`Y = 1`), about the
/// linear value of sRGB 25/255. Below it a reference pixel counts as dark, and the error
/// there is relative to `eps` rather than to the pixel.
///
/// ```
/// use glam::Vec3;
/// use lumbre_raytrace::metrics::{REL_EPS, relative_error};
/// assert_eq!(relative_error(Vec3::ONE, Vec3::ZERO), 1.0 / REL_EPS);
/// ```
pub const REL_EPS: f64 = 0.01;

/// Relative error of one pixel on luminance: `|Y_t - Y_r| / (max(Y_r, 0) + REL_EPS)`, with
/// `Y` from [`luminance`].
///
/// ```
/// use glam::Vec3;
/// use lumbre_raytrace::metrics::relative_error;
/// assert_eq!(relative_error(Vec3::splat(0.5), Vec3::splat(0.5)), 0.0);
/// assert!((relative_error(Vec3::splat(0.55), Vec3::splat(0.49)) - 0.12).abs() < 1e-6);
/// assert!((relative_error(Vec3::splat(0.02), Vec3::ZERO) - 2.0).abs() < 1e-6);
/// ```
pub fn relative_error(test: Vec3, reference: Vec3) -> f64 {
    let r = luminance(reference);
    (luminance(test) - r).abs() / (r.max(0.0) + REL_EPS)
}

/// Two images of different sizes were compared.
///
/// ```
/// use lumbre_raytrace::SizeMismatch;
/// let e = SizeMismatch { a: (4, 4), b: (4, 5) };
/// assert_eq!(e.to_string(), "cannot compare a 4x4 image with a 4x5 one");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SizeMismatch {
    /// `(width, height)` of the first image.
    pub a: (u32, u32),
    /// `(width, height)` of the second image.
    pub b: (u32, u32),
}

impl fmt::Display for SizeMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot compare a {}x{} image with a {}x{} one", self.a.0, self.a.1, self.b.0, self.b.1)
    }
}

impl std::error::Error for SizeMismatch {}

/// Both images have the same size, and each as many pixels as its size says.
pub(super) fn check_size(a: &Image, b: &Image) -> Result<(), SizeMismatch> {
    let consistent = |i: &Image| i.pixels.len() as u64 == u64::from(i.width) * u64::from(i.height);
    if (a.width, a.height) != (b.width, b.height) || !consistent(a) || !consistent(b) {
        return Err(SizeMismatch { a: (a.width, a.height), b: (b.width, b.height) });
    }
    Ok(())
}

/// Index of the nearest-rank `q` quantile (`q` in `[0, 1]`, NaN as 1) of `n > 0` sorted
/// values: `round(q * (n - 1))`.
pub(super) fn nearest_rank(n: usize, q: f64) -> usize {
    let q = if q.is_nan() { 1.0 } else { q.clamp(0.0, 1.0) };
    ((q * (n - 1) as f64).round() as usize).min(n - 1)
}

/// Why two images could not be compared.
///
/// ```
/// use lumbre_raytrace::Image;
/// use lumbre_raytrace::metrics::{CompareError, Region, compare};
/// let a = Image::new(4, 4);
/// let err = compare(&a, &a, &[Region::new("none", 0, 0, 0, 1)]).unwrap_err();
/// assert!(matches!(err, CompareError::EmptyRegion(_)));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CompareError {
    /// The images differ in size.
    Size(SizeMismatch),
    /// A region reaches past the image's right or bottom edge.
    RegionOutside {
        /// The region.
        region: Region,
        /// The image's width.
        width: u32,
        /// The image's height.
        height: u32,
    },
    /// A region has no pixel (zero width or height).
    EmptyRegion(Region),
    /// No pixel is finite in both images (or the images have no pixels).
    NothingToCompare {
        /// Pixels with a NaN or infinite channel in either image.
        non_finite: usize,
    },
}

impl fmt::Display for CompareError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CompareError::Size(e) => e.fmt(f),
            CompareError::RegionOutside { region: r, width, height } => write!(
                f,
                "region \"{}\" (columns {}..{}, rows {}..{}) reaches outside the {width}x{height} image",
                r.name,
                r.x,
                u64::from(r.x) + u64::from(r.width),
                r.y,
                u64::from(r.y) + u64::from(r.height)
            ),
            CompareError::EmptyRegion(r) => {
                write!(f, "region \"{}\" is empty ({}x{} pixels; it must have at least one)", r.name, r.width, r.height)
            }
            CompareError::NothingToCompare { non_finite: 0 } => {
                write!(f, "nothing to compare: the images have no pixels")
            }
            CompareError::NothingToCompare { non_finite } => {
                write!(f, "nothing to compare: all {non_finite} pixels are NaN or infinite in one of the images")
            }
        }
    }
}

impl std::error::Error for CompareError {}

impl From<SizeMismatch> for CompareError {
    fn from(e: SizeMismatch) -> CompareError {
        CompareError::Size(e)
    }
}

/// The mean relative error over one [`Region`].
///
/// ```
/// use glam::Vec3;
/// use lumbre_raytrace::Image;
/// use lumbre_raytrace::metrics::{Region, compare};
/// let a = Image::from_pixels(1, 1, vec![Vec3::splat(0.5)]).unwrap();
/// let m = compare(&a, &a, &[Region::new("all", 0, 0, 1, 1)]).unwrap();
/// assert_eq!((m.regions[0].pixels, m.regions[0].mean), (1, Some(0.0)));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct RegionError {
    /// The region.
    pub region: Region,
    /// Its pixels that are finite in both images (the ones averaged).
    pub pixels: usize,
    /// Mean [`relative_error`] of those pixels; `None` when there are none.
    pub mean: Option<f64>,
}

/// Every figure of one comparison of a test image with a reference (see the
/// [module documentation](super) for the formulas). `Display` prints them as a small table.
///
/// ```
/// use glam::Vec3;
/// use lumbre_raytrace::Image;
/// use lumbre_raytrace::metrics::compare;
/// let reference = Image::from_pixels(1, 1, vec![Vec3::splat(0.49)]).unwrap();
/// let test = Image::from_pixels(1, 1, vec![Vec3::splat(0.54)]).unwrap();
/// let m = compare(&test, &reference, &[]).unwrap();
/// assert!((m.rel_mean - 0.1).abs() < 1e-6); // 0.05 / (0.49 + 0.01)
/// assert!(m.to_string().contains("relative error, mean    10.00%"));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Metrics {
    /// Image width.
    pub width: u32,
    /// Image height.
    pub height: u32,
    /// Pixels finite in both images: the ones every figure is over.
    pub pixels: usize,
    /// Pixels left out because a channel is NaN or infinite in either image.
    pub non_finite: usize,
    /// RMSE over all channels of linear values.
    pub rmse: f64,
    /// RMSE of each linear channel, R, G, B.
    pub rmse_rgb: [f64; 3],
    /// Mean relative error on luminance.
    pub rel_mean: f64,
    /// Median relative error.
    pub rel_p50: f64,
    /// 90th percentile of the relative error.
    pub rel_p90: f64,
    /// 99th percentile of the relative error.
    pub rel_p99: f64,
    /// Mean relative error of each region, in the order given.
    pub regions: Vec<RegionError>,
    /// Mean CIE94 ΔE.
    pub de94_mean: f64,
    /// 95th percentile of CIE94 ΔE.
    pub de94_p95: f64,
}

/// The figures of one image row, summed in pixel order.
struct RowSums {
    squares: [f64; 3],
    rel: Vec<f64>,
    de94: Vec<f64>,
    non_finite: usize,
    /// Per region: (sum of relative errors, pixels) over this row's part of it.
    regions: Vec<(f64, usize)>,
}

/// Checks that each region is non-empty and inside a `width` x `height` image.
fn check_regions(regions: &[Region], width: u32, height: u32) -> Result<(), CompareError> {
    for r in regions {
        if r.width == 0 || r.height == 0 {
            return Err(CompareError::EmptyRegion(r.clone()));
        }
        if u64::from(r.x) + u64::from(r.width) > u64::from(width)
            || u64::from(r.y) + u64::from(r.height) > u64::from(height)
        {
            return Err(CompareError::RegionOutside { region: r.clone(), width, height });
        }
    }
    Ok(())
}

fn row_sums(y: u32, test: &[Vec3], reference: &[Vec3], regions: &[Region]) -> RowSums {
    let mut row = RowSums {
        squares: [0.0; 3],
        rel: Vec::with_capacity(test.len()),
        de94: Vec::with_capacity(test.len()),
        non_finite: 0,
        regions: vec![(0.0, 0); regions.len()],
    };
    for (x, (&t, &r)) in test.iter().zip(reference).enumerate() {
        if !(t.is_finite() && r.is_finite()) {
            row.non_finite += 1;
            continue;
        }
        let d = (t.as_dvec3() - r.as_dvec3()).to_array();
        for (sq, dc) in row.squares.iter_mut().zip(d) {
            *sq += dc * dc;
        }
        let rel = relative_error(t, r);
        row.rel.push(rel);
        row.de94.push(delta_e94(Lab::from_linear_srgb(r), Lab::from_linear_srgb(t)));
        for (sum, region) in row.regions.iter_mut().zip(regions) {
            if region.contains(x as u32, y) {
                sum.0 += rel;
                sum.1 += 1;
            }
        }
    }
    row
}

/// Compares `test` with `reference` (both linear RGB, same size) and averages the relative
/// error over each of `regions` (see the [module documentation](super) for every formula).
///
/// Errors: images of different sizes, a region that is empty or reaches outside the image,
/// and images with no pixel finite in both.
///
/// ```
/// use glam::Vec3;
/// use lumbre_raytrace::Image;
/// use lumbre_raytrace::metrics::{CompareError, Region, compare};
/// let a = Image::from_pixels(2, 2, vec![Vec3::splat(0.25); 4]).unwrap();
/// let m = compare(&a, &a, &[]).unwrap();
/// assert_eq!((m.rmse, m.rel_p99, m.de94_p95), (0.0, 0.0, 0.0));
/// assert!(matches!(compare(&a, &Image::new(2, 3), &[]), Err(CompareError::Size(_))));
/// let outside = Region::new("edge", 1, 1, 2, 1);
/// assert!(compare(&a, &a, &[outside]).unwrap_err().to_string().contains("outside the 2x2 image"));
/// ```
pub fn compare(test: &Image, reference: &Image, regions: &[Region]) -> Result<Metrics, CompareError> {
    check_size(test, reference)?;
    let (width, height) = (test.width, test.height);
    check_regions(regions, width, height)?;
    let w = (width as usize).max(1);
    let rows: Vec<RowSums> = test
        .pixels
        .par_chunks(w)
        .zip(reference.pixels.par_chunks(w))
        .enumerate()
        .map(|(y, (t, r))| row_sums(y as u32, t, r, regions))
        .collect();

    let mut squares = [0.0f64; 3];
    let mut region_sums = vec![(0.0f64, 0usize); regions.len()];
    let (mut non_finite, mut rel_sum, mut de94_sum) = (0, 0.0f64, 0.0f64);
    for row in &rows {
        for (total, part) in squares.iter_mut().zip(row.squares) {
            *total += part;
        }
        rel_sum += row.rel.iter().sum::<f64>();
        de94_sum += row.de94.iter().sum::<f64>();
        non_finite += row.non_finite;
        for (total, part) in region_sums.iter_mut().zip(&row.regions) {
            total.0 += part.0;
            total.1 += part.1;
        }
    }
    let mut rel: Vec<f64> = rows.iter().flat_map(|r| r.rel.iter().copied()).collect();
    let mut de94: Vec<f64> = rows.iter().flat_map(|r| r.de94.iter().copied()).collect();
    let n = rel.len();
    if n == 0 {
        return Err(CompareError::NothingToCompare { non_finite });
    }
    rel.par_sort_unstable_by(f64::total_cmp);
    de94.par_sort_unstable_by(f64::total_cmp);
    let quantile = |v: &[f64], q: f64| v[nearest_rank(v.len(), q)];
    let rmse_rgb = squares.map(|s| (s / n as f64).sqrt());
    Ok(Metrics {
        width,
        height,
        pixels: n,
        non_finite,
        rmse: (squares.iter().sum::<f64>() / (3 * n) as f64).sqrt(),
        rmse_rgb,
        rel_mean: rel_sum / n as f64,
        rel_p50: quantile(&rel, 0.50),
        rel_p90: quantile(&rel, 0.90),
        rel_p99: quantile(&rel, 0.99),
        regions: regions
            .iter()
            .zip(region_sums)
            .map(|(region, (sum, pixels))| RegionError {
                region: region.clone(),
                pixels,
                mean: (pixels > 0).then(|| sum / pixels as f64),
            })
            .collect(),
        de94_mean: de94_sum / n as f64,
        de94_p95: quantile(&de94, 0.95),
    })
}

/// A percentage with two decimals: `3.21%`.
fn percent(x: f64) -> String {
    format!("{:.2}%", 100.0 * x)
}

impl fmt::Display for Metrics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [r, g, b] = self.rmse_rgb;
        let rows = [
            (
                "pixels compared",
                format!("{} of {}x{} ({} non-finite left out)", self.pixels, self.width, self.height, self.non_finite),
            ),
            ("RMSE, linear RGB", format!("{:.6}", self.rmse)),
            ("RMSE, R / G / B", format!("{r:.6} / {g:.6} / {b:.6}")),
            ("relative error, mean", percent(self.rel_mean)),
            ("relative error, p50", percent(self.rel_p50)),
            ("relative error, p90", percent(self.rel_p90)),
            ("relative error, p99", percent(self.rel_p99)),
            ("ΔE94, mean", format!("{:.3}", self.de94_mean)),
            ("ΔE94, p95", format!("{:.3}", self.de94_p95)),
        ];
        writeln!(f, "{:<22}  value", "metric")?;
        for (name, value) in rows {
            writeln!(f, "{name:<22}  {value}")?;
        }
        if !self.regions.is_empty() {
            let nw = self.regions.iter().map(|r| r.region.name.chars().count()).max().unwrap_or(0).max(6);
            writeln!(f)?;
            writeln!(f, "{:<nw$}  {:>8}  mean relative error", "region", "pixels")?;
            for r in &self.regions {
                let mean = r.mean.map_or_else(|| "none finite".to_owned(), percent);
                writeln!(f, "{:<nw$}  {:>8}  {mean:>19}", r.region.name, r.pixels)?;
            }
        }
        write!(
            f,
            "relative error: |Y_test - Y_ref| / (Y_ref + {REL_EPS}) on luminance; ΔE94: CIE94 (graphic arts) \
             on CIELAB of linear sRGB, D65"
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_indices() {
        assert_eq!(nearest_rank(1, 0.99), 0);
        assert_eq!(nearest_rank(101, 0.5), 50);
        assert_eq!(nearest_rank(101, 0.99), 99);
        // 0.9 * 9 = 8.1 -> 8; 0.95 * 9 = 8.55 -> 9.
        assert_eq!((nearest_rank(10, 0.9), nearest_rank(10, 0.95)), (8, 9));
        assert_eq!((nearest_rank(10, f64::NAN), nearest_rank(10, -1.0)), (9, 0));
    }
}
