//! Colour science for the metrics: linear sRGB -> CIE XYZ (D65) -> CIELAB, luminance, and the
//! CIE94 colour difference.

use glam::Vec3;

/// Linear sRGB to CIE XYZ (D65), the matrix of IEC 61966-2-1 (rows give X, Y, Z). Its middle
/// row is the Rec. 709 / sRGB luminance, [`LUMINANCE_WEIGHTS`].
///
/// ```
/// use lumbre_raytrace::metrics::{LUMINANCE_WEIGHTS, SRGB_TO_XYZ};
/// assert_eq!(SRGB_TO_XYZ[1], LUMINANCE_WEIGHTS);
/// ```
pub const SRGB_TO_XYZ: [[f64; 3]; 3] = [[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]];

/// The XYZ of linear sRGB white `(1, 1, 1)` (the row sums of [`SRGB_TO_XYZ`]): the reference
/// white of [`Lab::from_linear_srgb`], so `(1, 1, 1)` is `L* = 100` and every grey has
/// `a* = b* = 0` exactly.
///
/// ```
/// use lumbre_raytrace::metrics::{SRGB_TO_XYZ, SRGB_WHITE_XYZ};
/// assert_eq!(SRGB_WHITE_XYZ, SRGB_TO_XYZ.map(|row| row.iter().sum::<f64>()));
/// ```
pub const SRGB_WHITE_XYZ: [f64; 3] = [0.9505, 1.0, 1.089];

/// Rec. 709 / sRGB luminance weights of linear R, G, B (they sum to 1).
///
/// ```
/// assert_eq!(lumbre_raytrace::metrics::LUMINANCE_WEIGHTS.iter().sum::<f64>(), 1.0);
/// ```
pub const LUMINANCE_WEIGHTS: [f64; 3] = [0.2126, 0.7152, 0.0722];

/// CIE94 weight of the chroma term for graphic arts: `S_C = 1 + K1 * C1`.
///
/// ```
/// assert_eq!(lumbre_raytrace::metrics::CIE94_K1, 0.045);
/// ```
pub const CIE94_K1: f64 = 0.045;
/// CIE94 weight of the hue term for graphic arts: `S_H = 1 + K2 * C1`.
///
/// ```
/// assert_eq!(lumbre_raytrace::metrics::CIE94_K2, 0.015);
/// ```
pub const CIE94_K2: f64 = 0.015;

/// Luminance `Y = 0.2126 R + 0.7152 G + 0.0722 B` of a linear sRGB colour, in f64.
///
/// ```
/// use glam::Vec3;
/// use lumbre_raytrace::metrics::luminance;
/// assert_eq!(luminance(Vec3::ONE), 1.0);
/// assert_eq!(luminance(Vec3::new(0.0, 1.0, 0.0)), 0.7152);
/// ```
pub fn luminance(rgb: Vec3) -> f64 {
    let [r, g, b] = rgb.as_dvec3().to_array();
    LUMINANCE_WEIGHTS[0] * r + LUMINANCE_WEIGHTS[1] * g + LUMINANCE_WEIGHTS[2] * b
}

/// CIE XYZ (D65, `Y = 1` for white) of a linear sRGB colour: `SRGB_TO_XYZ * rgb`, in f64.
/// Values outside `[0, 1]` are transformed as they are.
///
/// ```
/// use glam::Vec3;
/// use lumbre_raytrace::metrics::{SRGB_WHITE_XYZ, linear_srgb_to_xyz};
/// assert_eq!(linear_srgb_to_xyz(Vec3::ONE), SRGB_WHITE_XYZ);
/// ```
pub fn linear_srgb_to_xyz(rgb: Vec3) -> [f64; 3] {
    let c = rgb.as_dvec3().to_array();
    SRGB_TO_XYZ.map(|row| row[0] * c[0] + row[1] * c[1] + row[2] * c[2])
}

/// A CIELAB (CIE 1976 L*a*b*) colour: `L*` is 0 for black and 100 for the reference white.
///
/// ```
/// use glam::Vec3;
/// use lumbre_raytrace::metrics::Lab;
/// assert_eq!(Lab::from_linear_srgb(Vec3::ZERO), Lab { l: 0.0, a: 0.0, b: 0.0 });
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Lab {
    /// Lightness `L*`.
    pub l: f64,
    /// Green (negative) to red (positive) `a*`.
    pub a: f64,
    /// Blue (negative) to yellow (positive) `b*`.
    pub b: f64,
}

/// CIELAB's `f`: the cube root above `(6/29)^3`, the straight line `t / (3 (6/29)^2) + 4/29`
/// below it (CIE 15:2004, with the exact constants 216/24389 and 24389/27). The line also
/// covers negative `t`, so out-of-gamut colours still give finite values.
fn lab_f(t: f64) -> f64 {
    const EPSILON: f64 = 216.0 / 24389.0;
    const KAPPA: f64 = 24389.0 / 27.0;
    if t > EPSILON { t.cbrt() } else { (KAPPA * t + 16.0) / 116.0 }
}

impl Lab {
    /// CIELAB of tristimulus values `xyz` relative to the reference white `white` (same
    /// scale): `L* = 116 f(Y/Yn) - 16`, `a* = 500 (f(X/Xn) - f(Y/Yn))`,
    /// `b* = 200 (f(Y/Yn) - f(Z/Zn))`.
    ///
    /// ```
    /// use lumbre_raytrace::metrics::Lab;
    /// let white = [0.9505, 1.0, 1.089];
    /// assert_eq!(Lab::from_xyz(white, white), Lab { l: 100.0, a: 0.0, b: 0.0 });
    /// ```
    pub fn from_xyz(xyz: [f64; 3], white: [f64; 3]) -> Lab {
        let [fx, fy, fz] = [0, 1, 2].map(|i| lab_f(xyz[i] / white[i]));
        Lab { l: 116.0 * fy - 16.0, a: 500.0 * (fx - fy), b: 200.0 * (fy - fz) }
    }

    /// CIELAB of a linear sRGB colour: [`linear_srgb_to_xyz`], then [`Lab::from_xyz`] with
    /// the white [`SRGB_WHITE_XYZ`]. Values above 1 give `L* > 100` (CIELAB's formula extends
    /// there), so bright pixels such as emitters still count.
    ///
    /// ```
    /// use glam::Vec3;
    /// use lumbre_raytrace::metrics::Lab;
    /// let grey = Lab::from_linear_srgb(Vec3::splat(0.18));
    /// assert!((grey.l - 49.496).abs() < 1e-3 && grey.a == 0.0 && grey.b == 0.0);
    /// ```
    pub fn from_linear_srgb(rgb: Vec3) -> Lab {
        Lab::from_xyz(linear_srgb_to_xyz(rgb), SRGB_WHITE_XYZ)
    }

    /// Chroma `C* = sqrt(a*^2 + b*^2)`.
    ///
    /// ```
    /// use lumbre_raytrace::metrics::Lab;
    /// assert_eq!(Lab { l: 50.0, a: 3.0, b: 4.0 }.chroma(), 5.0);
    /// ```
    pub fn chroma(&self) -> f64 {
        self.a.hypot(self.b)
    }
}

/// The three weighted CIE94 terms `(dL / S_L, dC / S_C, dH / S_H)` with graphic-arts weights
/// (`k_L = k_C = k_H = 1`, `S_L = 1`, `S_C = 1 + K1 C1`, `S_H = 1 + K2 C1`, `C1` the
/// reference's chroma). `dH^2 = da^2 + db^2 - dC^2`, clamped at 0 against rounding.
fn cie94_terms(reference: Lab, sample: Lab) -> [f64; 3] {
    let c1 = reference.chroma();
    let dl = reference.l - sample.l;
    let dc = c1 - sample.chroma();
    let (da, db) = (reference.a - sample.a, reference.b - sample.b);
    let dh = (da * da + db * db - dc * dc).max(0.0).sqrt();
    [dl, dc / (1.0 + CIE94_K1 * c1), dh / (1.0 + CIE94_K2 * c1)]
}

/// CIE94 colour difference (graphic arts: `k_L = 1`, `K1 = 0.045`, `K2 = 0.015`):
///
/// `ΔE94 = sqrt((ΔL*/(k_L S_L))^2 + (ΔC*/(k_C S_C))^2 + (ΔH*/(k_H S_H))^2)`,
/// `S_L = 1`, `S_C = 1 + K1 C*_1`, `S_H = 1 + K2 C*_1`, `k_C = k_H = 1`.
///
/// It is not symmetric: `C*_1` is the chroma of `reference`, the first argument.
///
/// ```
/// use lumbre_raytrace::metrics::{Lab, delta_e94};
/// let grey = Lab { l: 50.0, a: 0.0, b: 0.0 };
/// assert_eq!(delta_e94(grey, Lab { l: 53.0, ..grey }), 3.0);
/// assert_eq!(delta_e94(grey, grey), 0.0);
/// ```
pub fn delta_e94(reference: Lab, sample: Lab) -> f64 {
    let [l, c, h] = cie94_terms(reference, sample);
    (l * l + c * c + h * h).sqrt()
}

/// [`delta_e94`] without its lightness term: `sqrt((ΔC*/S_C)^2 + (ΔH*/S_H)^2)`, the colour
/// (chroma and hue) part alone, as in the lightcuts cluster metric ("CIE94 without the
/// lightness term").
///
/// ```
/// use lumbre_raytrace::metrics::{Lab, delta_e94_chroma_hue};
/// let grey = Lab { l: 50.0, a: 0.0, b: 0.0 };
/// assert_eq!(delta_e94_chroma_hue(grey, Lab { l: 80.0, ..grey }), 0.0);
/// assert_eq!(delta_e94_chroma_hue(grey, Lab { a: 3.0, b: 4.0, ..grey }), 5.0);
/// ```
pub fn delta_e94_chroma_hue(reference: Lab, sample: Lab) -> f64 {
    let [_, c, h] = cie94_terms(reference, sample);
    (c * c + h * h).sqrt()
}
