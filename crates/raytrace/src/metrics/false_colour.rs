//! [`false_colour`]: the per-pixel error of a test image against a reference drawn through a
//! fixed colour ramp.

use glam::Vec3;
use rayon::prelude::*;

use super::colour::{Lab, delta_e94};
use super::compare::{SizeMismatch, check_size, relative_error};
use crate::image::{Image, srgb_to_linear};

/// What a [`false_colour`] image shows, each on a fixed scale.
///
/// ```
/// use lumbre_raytrace::metrics::DiffMap;
/// assert_eq!(DiffMap::Relative.full_scale(), 1.0);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DiffMap {
    /// [`relative_error`], 0 (black) to 1 = 100% (red) and above.
    Relative,
    /// [`delta_e94`], 0 (black) to 20 (red) and above.
    DeltaE94,
}

impl DiffMap {
    /// The value drawn at the top of the ramp (red): 1 for [`DiffMap::Relative`], 20 for
    /// [`DiffMap::DeltaE94`].
    ///
    /// ```
    /// assert_eq!(lumbre_raytrace::metrics::DiffMap::DeltaE94.full_scale(), 20.0);
    /// ```
    pub fn full_scale(self) -> f64 {
        match self {
            DiffMap::Relative => 1.0,
            DiffMap::DeltaE94 => 20.0,
        }
    }

    /// The scale in words, for a legend.
    ///
    /// ```
    /// use lumbre_raytrace::metrics::DiffMap;
    /// assert!(DiffMap::Relative.legend().contains("0% black"));
    /// ```
    pub fn legend(self) -> &'static str {
        match self {
            DiffMap::Relative => {
                "relative error on luminance: 0% black, 20% blue, 40% cyan, 60% green, 80% yellow, 100% and more \
                 red; magenta: NaN or infinite"
            }
            DiffMap::DeltaE94 => {
                "CIE94 ΔE: 0 black, 4 blue, 8 cyan, 12 green, 16 yellow, 20 and more red; magenta: NaN or infinite"
            }
        }
    }
}

/// The colour of [`false_colour`] pixels with a NaN or infinite channel: magenta, which the
/// ramp never takes.
///
/// ```
/// use lumbre_raytrace::metrics::{NON_FINITE_COLOUR, ramp};
/// assert!((0..=100).all(|i| ramp(i as f64 / 100.0) != NON_FINITE_COLOUR));
/// ```
pub const NON_FINITE_COLOUR: Vec3 = Vec3::new(1.0, 0.0, 1.0);

/// The ramp's stops, sRGB-encoded, evenly spaced from 0 to 1.
const RAMP: [[f32; 3]; 6] =
    [[0.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, 1.0, 1.0], [0.0, 1.0, 0.0], [1.0, 1.0, 0.0], [1.0, 0.0, 0.0]];

/// The false-colour ramp at `x` (clamped to `[0, 1]`; NaN as 1), in linear RGB: black, blue,
/// cyan, green, yellow, red at 0, 0.2, 0.4, 0.6, 0.8, 1, interpolated in sRGB-encoded values
/// (so an 8-bit PNG of it has the stops' exact colours).
///
/// ```
/// use glam::Vec3;
/// use lumbre_raytrace::metrics::ramp;
/// assert_eq!(ramp(0.0), Vec3::ZERO);
/// assert_eq!(ramp(0.6), Vec3::new(0.0, 1.0, 0.0));
/// assert_eq!(ramp(7.0), Vec3::new(1.0, 0.0, 0.0));
/// ```
pub fn ramp(x: f64) -> Vec3 {
    let x = if x.is_nan() { 1.0 } else { x.clamp(0.0, 1.0) };
    let pos = x * (RAMP.len() - 1) as f64;
    let i = (pos.floor() as usize).min(RAMP.len() - 2);
    let t = (pos - i as f64) as f32;
    let (a, b) = (Vec3::from(RAMP[i]), Vec3::from(RAMP[i + 1]));
    let encoded = a + (b - a) * t;
    Vec3::from(encoded.to_array().map(srgb_to_linear))
}

/// A false-colour image of the per-pixel error of `test` against `reference`: `map`'s value
/// divided by [`DiffMap::full_scale`] through [`ramp`]; pixels with a NaN or infinite channel
/// in either image are [`NON_FINITE_COLOUR`].
///
/// ```
/// use glam::Vec3;
/// use lumbre_raytrace::Image;
/// use lumbre_raytrace::metrics::{DiffMap, false_colour, ramp};
/// let reference = Image::from_pixels(2, 1, vec![Vec3::splat(0.49); 2]).unwrap();
/// let test = Image::from_pixels(2, 1, vec![Vec3::splat(0.49), Vec3::splat(1.49)]).unwrap();
/// let diff = false_colour(&test, &reference, DiffMap::Relative).unwrap();
/// assert_eq!(diff.get(0, 0), Vec3::ZERO);
/// assert_eq!(diff.get(1, 0), ramp(1.0)); // 200% relative error, at the top of the ramp
/// ```
pub fn false_colour(test: &Image, reference: &Image, map: DiffMap) -> Result<Image, SizeMismatch> {
    check_size(test, reference)?;
    let scale = map.full_scale();
    let pixels = test
        .pixels
        .par_iter()
        .zip(&reference.pixels)
        .map(|(&t, &r)| {
            if !(t.is_finite() && r.is_finite()) {
                return NON_FINITE_COLOUR;
            }
            let value = match map {
                DiffMap::Relative => relative_error(t, r),
                DiffMap::DeltaE94 => delta_e94(Lab::from_linear_srgb(r), Lab::from_linear_srgb(t)),
            };
            ramp(value / scale)
        })
        .collect();
    Ok(Image { width: test.width, height: test.height, pixels })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::image::linear_to_srgb;

    #[test]
    fn ramp_stops_survive_8_bit_encoding() {
        for (i, stop) in RAMP.iter().enumerate() {
            let c = ramp(i as f64 / 5.0);
            let encoded = c.to_array().map(|v| (linear_to_srgb(v) * 255.0 + 0.5) as u8);
            assert_eq!(encoded, stop.map(|v| (v * 255.0) as u8), "stop {i}");
        }
    }
}
