//! Per-point attributes, quantised to 8 bits so node sums are exact integers.

/// Colour and the reflection/refraction factors of a point, each 0..=255.
///
/// ```
/// let a = lumbre_octree::Attrs::from_unit([1.0, 0.5, 0.0], 0.25, 0.0);
/// assert_eq!(a.rgb, [255, 128, 0]);
/// assert_eq!(a.reflection, 64);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Attrs {
    /// Colour.
    pub rgb: [u8; 3],
    /// Reflection factor (255 = perfect mirror).
    pub reflection: u8,
    /// Refraction factor.
    pub refraction: u8,
}

fn unit_to_u8(x: f32) -> u8 {
    (x.clamp(0.0, 1.0) * 255.0).round() as u8
}

impl Attrs {
    /// From 0..1 floats (clamped, rounded to 8 bits).
    pub fn from_unit(rgb: [f32; 3], reflection: f32, refraction: f32) -> Self {
        Attrs { rgb: rgb.map(unit_to_u8), reflection: unit_to_u8(reflection), refraction: unit_to_u8(refraction) }
    }

    /// The two words the GPU reads: `r | g << 8 | b << 16 | reflection << 24`, `refraction`.
    pub fn packed(&self) -> [u32; 2] {
        let [r, g, b] = self.rgb.map(u32::from);
        [r | g << 8 | b << 16 | (self.reflection as u32) << 24, self.refraction as u32]
    }

    /// The five summed channels.
    pub fn channels(&self) -> [u32; 5] {
        [self.rgb[0] as u32, self.rgb[1] as u32, self.rgb[2] as u32, self.reflection as u32, self.refraction as u32]
    }
}
