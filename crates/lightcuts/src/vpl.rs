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

impl Vpl {
    /// The GPU layout ([`GpuVpl`](crate::ism::GpuVpl): position, normal and intensity,
    /// each padded to a vec4).
    ///
    /// ```
    /// use glam::Vec3;
    /// use lumbre_lightcuts::Vpl;
    /// let v = Vpl { position: Vec3::new(1.0, 2.0, 3.0), normal: Vec3::Y, intensity: Vec3::ONE };
    /// assert_eq!(v.to_gpu().position, [1.0, 2.0, 3.0, 0.0]);
    /// assert_eq!(Vpl::from_gpu(&v.to_gpu()), v);
    /// ```
    pub fn to_gpu(&self) -> crate::ism::GpuVpl {
        crate::ism::GpuVpl::from(self)
    }

    /// From the GPU layout.
    pub fn from_gpu(g: &crate::ism::GpuVpl) -> Vpl {
        let v = |a: [f32; 4]| Vec3::new(a[0], a[1], a[2]);
        Vpl { position: v(g.position), normal: v(g.normal), intensity: v(g.intensity) }
    }
}

/// Checks lights before a tree is built over them or they shade anything: at least one,
/// finite positions, unit normals (within 1e-3) and finite non-negative intensities. The
/// error names the first bad light and its value.
///
/// ```
/// use glam::Vec3;
/// use lumbre_lightcuts::{validate_vpls, Vpl};
/// let ok = Vpl { position: Vec3::ZERO, normal: Vec3::Y, intensity: Vec3::ONE };
/// assert!(validate_vpls(&[ok]).is_ok());
/// assert!(validate_vpls(&[]).is_err());
/// let nan = Vpl { intensity: Vec3::new(f32::NAN, 0.0, 0.0), ..ok };
/// assert!(validate_vpls(&[ok, nan]).unwrap_err().to_string().contains("VPL 1"));
/// ```
pub fn validate_vpls(vpls: &[Vpl]) -> lumbre_gpu::Result<()> {
    let bad = |i: usize, what: String| Err(lumbre_gpu::Error::Input(format!("VPL {i}: {what}")));
    if vpls.is_empty() {
        return Err(lumbre_gpu::Error::Input("no VPLs: a light tree and its cuts need at least one light".into()));
    }
    if vpls.len() >= u32::MAX as usize / 2 {
        return Err(lumbre_gpu::Error::Input(format!("{} VPLs: at most 2^31 - 1", vpls.len())));
    }
    for (i, v) in vpls.iter().enumerate() {
        if !v.position.is_finite() {
            return bad(i, format!("position {} is not finite", v.position));
        }
        if !v.normal.is_finite() || (v.normal.length() - 1.0).abs() > 1e-3 {
            return bad(i, format!("normal {} is not a unit vector", v.normal));
        }
        if !v.intensity.is_finite() || v.intensity.min_element() < 0.0 {
            return bad(i, format!("intensity {} must be finite and >= 0 in every channel", v.intensity));
        }
    }
    Ok(())
}

impl lumbre_gpu::Scalar for Vpl {
    /// Every coordinate within `tol` (so `Vec<Vpl>` compares through [`lumbre_gpu::Agree`]).
    fn agrees(cpu: Self, gpu: Self, tol: lumbre_gpu::Tolerance) -> bool {
        [(cpu.position, gpu.position), (cpu.normal, gpu.normal), (cpu.intensity, gpu.intensity)]
            .iter()
            .all(|(a, b)| (0..3).all(|k| tol.accepts(a[k] as f64, b[k] as f64)))
    }
}
