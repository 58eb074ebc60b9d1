//! Virtual point lights: oriented point lights that stand for light arriving at a surface.

use glam::Vec3;

/// An oriented point light on a diffuse surface: it emits radiant intensity
/// `intensity * max(0, cos theta)` in a direction at angle `theta` from `normal`.
///
/// ```
/// use glam::Vec3;
/// let vpl = lumbre_lightcuts::Vpl { position: Vec3::ZERO, normal: Vec3::Z, intensity: Vec3::splat(2.0) };
/// let d = Vec3::new(0.0, 1.0, 1.0).normalize();
/// assert!((vpl.intensity_towards(d).x - 2.0 * d.z).abs() < 1e-6);
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Vpl {
    /// Where the light sits.
    pub position: Vec3,
    /// Unit normal of the surface it sits on; it emits into this side only.
    pub normal: Vec3,
    /// Radiant intensity along the normal (RGB, W/sr in the units of the scene's `Ke`).
    pub intensity: Vec3,
}

impl Vpl {
    /// Radiant intensity towards the unit direction `dir`.
    pub fn intensity_towards(&self, dir: Vec3) -> Vec3 {
        self.intensity * self.normal.dot(dir).max(0.0)
    }
}
