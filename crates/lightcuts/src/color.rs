//! The colour term of the paper's cluster metric: CIE94 colour difference without its
//! lightness term, between the chromaticities of two light intensities.
//!
//! Linear sRGB goes to XYZ (D65) and CIELAB with the standard formulas. CIE94 (graphic-arts
//! weights `K1 = 0.045`, `K2 = 0.015`, `kC = kH = 1`) is asymmetric: its weights use the
//! reference colour's chroma. A metric between clusters must be symmetric, so the weights
//! use the geometric mean of the two chromas (the usual symmetric form).

use glam::Vec3;

/// A colour in CIELAB.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Lab {
    /// Lightness.
    pub l: f32,
    /// Green-red axis.
    pub a: f32,
    /// Blue-yellow axis.
    pub b: f32,
}

impl Lab {
    /// Chroma `sqrt(a^2 + b^2)`.
    pub fn chroma(&self) -> f32 {
        (self.a * self.a + self.b * self.b).sqrt()
    }
}

/// Linear sRGB to CIELAB (D65 white, `Y = 1` for white).
///
/// ```
/// use glam::Vec3;
/// let white = lumbre_lightcuts::linear_srgb_to_lab(Vec3::ONE);
/// assert!((white.l - 100.0).abs() < 1e-3 && white.a.abs() < 1e-2 && white.b.abs() < 1e-2);
/// ```
pub fn linear_srgb_to_lab(rgb: Vec3) -> Lab {
    let x = 0.412_456_4 * rgb.x + 0.357_576_1 * rgb.y + 0.180_437_5 * rgb.z;
    let y = 0.212_672_9 * rgb.x + 0.715_152_2 * rgb.y + 0.072_175 * rgb.z;
    let z = 0.019_333_9 * rgb.x + 0.119_192 * rgb.y + 0.950_304_1 * rgb.z;
    let f = |t: f32| {
        const D: f32 = 6.0 / 29.0;
        if t > D * D * D { t.cbrt() } else { t / (3.0 * D * D) + 4.0 / 29.0 }
    };
    let (fx, fy, fz) = (f(x / 0.950_47), f(y), f(z / 1.088_83));
    Lab { l: 116.0 * fy - 16.0, a: 500.0 * (fx - fy), b: 200.0 * (fy - fz) }
}

/// The chroma and hue part of CIE94, `sqrt((dC / SC)^2 + (dH / SH)^2)` with
/// `SC = 1 + 0.045 C`, `SH = 1 + 0.015 C` and `C` the geometric mean of the two chromas.
///
/// ```
/// use lumbre_lightcuts::{delta_e94_chroma_hue, Lab};
/// let grey = Lab { l: 50.0, a: 0.0, b: 0.0 };
/// let lighter = Lab { l: 80.0, a: 0.0, b: 0.0 };
/// assert_eq!(delta_e94_chroma_hue(grey, lighter), 0.0); // lightness does not count
/// let red = Lab { l: 50.0, a: 40.0, b: 0.0 };
/// assert!((delta_e94_chroma_hue(grey, red) - 40.0).abs() < 1e-4); // C = 0: SC = 1
/// ```
pub fn delta_e94_chroma_hue(p: Lab, q: Lab) -> f32 {
    let (c1, c2) = (p.chroma(), q.chroma());
    let dc = c1 - c2;
    let (da, db) = (p.a - q.a, p.b - q.b);
    let dh2 = (da * da + db * db - dc * dc).max(0.0);
    let c = (c1 * c2).sqrt();
    let (sc, sh) = (1.0 + 0.045 * c, 1.0 + 0.015 * c);
    ((dc / sc) * (dc / sc) + dh2 / (sh * sh)).sqrt()
}

/// The chromaticity of an intensity as a Lab colour: the intensity scaled to a largest
/// channel of 1 (so the colour term does not depend on how bright a light is); black for
/// zero.
pub fn chromaticity(intensity: Vec3) -> Lab {
    let m = intensity.max_element();
    if m > 0.0 { linear_srgb_to_lab(intensity / m) } else { Lab::default() }
}

/// The largest [`delta_e94_chroma_hue`] between the chromaticities of the sRGB primaries,
/// secondaries and white: the scale that maps the colour term into `[0, 1]`.
pub fn max_color_difference() -> f32 {
    let corners = [
        Vec3::X,
        Vec3::Y,
        Vec3::Z,
        Vec3::new(1.0, 1.0, 0.0),
        Vec3::new(0.0, 1.0, 1.0),
        Vec3::new(1.0, 0.0, 1.0),
        Vec3::ONE,
    ];
    let labs: Vec<Lab> = corners.iter().map(|&c| chromaticity(c)).collect();
    let mut m = 0.0f32;
    for &p in &labs {
        for &q in &labs {
            m = m.max(delta_e94_chroma_hue(p, q));
        }
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lab_of_primaries() {
        // Reference values (D65, sRGB): red (53.24, 80.09, 67.20), green (87.73, -86.18,
        // 83.18), blue (32.30, 79.19, -107.86), from Bruce Lindbloom's calculator.
        for (rgb, lab) in
            [(Vec3::X, [53.24, 80.09, 67.20]), (Vec3::Y, [87.73, -86.18, 83.18]), (Vec3::Z, [32.30, 79.19, -107.86])]
        {
            let got = linear_srgb_to_lab(rgb);
            assert!((got.l - lab[0]).abs() < 0.05, "{got:?}");
            assert!((got.a - lab[1]).abs() < 0.1, "{got:?}");
            assert!((got.b - lab[2]).abs() < 0.1, "{got:?}");
        }
    }

    #[test]
    fn difference_is_symmetric_and_bounded() {
        let m = max_color_difference();
        assert!(m > 10.0);
        let cs = [Vec3::new(1.0, 0.5, 0.2), Vec3::new(0.1, 0.9, 0.3), Vec3::new(0.3, 0.3, 0.3), Vec3::X];
        for &a in &cs {
            for &b in &cs {
                let (p, q) = (chromaticity(a), chromaticity(b));
                assert_eq!(delta_e94_chroma_hue(p, q), delta_e94_chroma_hue(q, p));
                assert!(delta_e94_chroma_hue(p, q) <= m * 1.0001);
            }
        }
        assert_eq!(chromaticity(Vec3::new(2.0, 1.0, 0.5)), chromaticity(Vec3::new(4.0, 2.0, 1.0)));
    }
}
