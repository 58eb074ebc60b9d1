//! Image metrics: how far a rendering (the test image) is from a reference, the figures by
//! which every rendering method is judged against the reference path tracer.
//!
//! For two linear-RGB [`Image`](crate::image::Image)s of the same size, [`compare`] gives a
//! [`Metrics`]:
//!
//! - **RMSE** over linear values, per channel `c`: `sqrt(mean_p (t_pc - r_pc)^2)`, and over
//!   all channels together: `sqrt(mean_{p,c} (t_pc - r_pc)^2)` (the root of the mean of the
//!   three channels' squares). Radiance units, not display values.
//! - **Relative error** per pixel on luminance ([`luminance`], Rec. 709 weights):
//!   `|Y_t - Y_r| / (max(Y_r, 0) + REL_EPS)` with [`REL_EPS`] ` = 0.01`, so a black reference
//!   pixel gives `100 |Y_t|` instead of infinity ([`relative_error`]); its mean and its 50th,
//!   90th and 99th percentiles, and its mean over each named [`Region`]
//!   ([`Region::cornell`] for the Cornell box from the reference camera).
//! - **CIE94 ΔE** per pixel ([`delta_e94`], graphic arts: `k_L = 1`, `K1 = 0.045`,
//!   `K2 = 0.015`, the reference as the first colour), after linear sRGB -> XYZ (D65,
//!   IEC 61966-2-1 matrix) -> CIELAB ([`Lab::from_linear_srgb`]); its mean and 95th
//!   percentile.
//!
//! Percentiles are nearest-rank: the `q`-th of `n` sorted values is the one at index
//! `round(q / 100 * (n - 1))`. Sums run row by row in pixel order, so results do not depend
//! on the thread count. Pixels with a NaN or infinite channel in either image are left out
//! of every figure and counted ([`Metrics::non_finite`]). [`false_colour`] draws the
//! relative error (0 to 100%) or ΔE94 (0 to 20) through a fixed colour ramp.
//!
//! [`diff_stats`] is the other comparison: on display (sRGB-encoded) values in `[0, 1]`,
//! with non-finite channels counted as full differences, for golden-image and GPU-vs-CPU
//! tests whose thresholds are in 8-bit steps.
//!
//! ```
//! use glam::Vec3;
//! use lumbre_raytrace::Image;
//! use lumbre_raytrace::metrics::{Region, compare};
//!
//! let reference = Image::from_pixels(2, 1, vec![Vec3::splat(0.5), Vec3::splat(0.2)]).unwrap();
//! let test = Image::from_pixels(2, 1, vec![Vec3::splat(0.5), Vec3::splat(0.3)]).unwrap();
//! let m = compare(&test, &reference, &[Region::new("right", 1, 0, 1, 1)]).unwrap();
//! assert!((m.rmse - 0.1 / 2f64.sqrt()).abs() < 1e-6);
//! // Pixel 1: |0.3 - 0.2| / (0.2 + 0.01); pixel 0 has no error.
//! assert!((m.regions[0].mean.unwrap() - 0.1 / 0.21).abs() < 1e-6);
//! assert!((m.rel_mean - 0.5 * 0.1 / 0.21).abs() < 1e-6);
//! println!("{m}");
//! ```

mod colour;
mod compare;
mod diff_stats;
mod false_colour;
mod region;

pub use colour::{
    CIE94_K1, CIE94_K2, LUMINANCE_WEIGHTS, Lab, SRGB_TO_XYZ, SRGB_WHITE_XYZ, delta_e94, delta_e94_chroma_hue,
    linear_srgb_to_xyz, luminance,
};
pub use compare::{CompareError, Metrics, REL_EPS, RegionError, SizeMismatch, compare, relative_error};
pub use diff_stats::{DiffStats, diff_stats};
pub use false_colour::{DiffMap, NON_FINITE_COLOUR, false_colour, ramp};
pub use region::Region;
