//! Materials: what an MTL file says, reduced to the five kinds the integrators shade.

use bytemuck::{Pod, Zeroable};
use glam::Vec3;

/// How a surface scatters light; chosen from the MTL fields by the rules on [`Material`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum MaterialKind {
    /// Lambertian: `kd` only.
    #[default]
    Diffuse,
    /// Diffuse plus a Phong highlight: `kd`, `ks`, `ns`.
    Phong,
    /// Perfect specular reflection weighted by `ks`.
    Mirror,
    /// Dielectric: reflection and refraction with index of refraction `ni`.
    Glass,
    /// A light source: emits `ke` (and may also reflect `kd`).
    Emitter,
}

impl MaterialKind {
    /// Every kind, in code order.
    pub const ALL: [MaterialKind; 5] =
        [MaterialKind::Diffuse, MaterialKind::Phong, MaterialKind::Mirror, MaterialKind::Glass, MaterialKind::Emitter];

    /// The integer the GPU sees in [`GpuMaterial::kind`]: Diffuse 0, Phong 1, Mirror 2, Glass 3, Emitter 4.
    ///
    /// ```
    /// use lumbre_raytrace::MaterialKind;
    /// assert_eq!(MaterialKind::Glass.code(), 3);
    /// assert_eq!(MaterialKind::from_code(3), Some(MaterialKind::Glass));
    /// ```
    pub fn code(self) -> u32 {
        match self {
            MaterialKind::Diffuse => 0,
            MaterialKind::Phong => 1,
            MaterialKind::Mirror => 2,
            MaterialKind::Glass => 3,
            MaterialKind::Emitter => 4,
        }
    }

    /// The kind with this [`code`](MaterialKind::code), or `None` for an unknown code.
    pub fn from_code(code: u32) -> Option<MaterialKind> {
        MaterialKind::ALL.get(code as usize).copied()
    }
}

/// A surface material.
///
/// # Mapping from MTL
///
/// Colours and scalars are copied from the MTL statements: `Kd` → `kd`, `Ks` → `ks`, `Ns` →
/// `ns`, `Ke` → `ke`, `Ni` → `ni`, and `opacity` is `d`, or `1 - Tr` when only `Tr` is given.
/// Missing statements take these defaults: `Kd` 0.8 grey, `Ks` 0, `Ns` 1, `Ke` 0, `Ni` 1,
/// opacity 1. The kind is the first rule that matches:
///
/// | rule | kind |
/// | --- | --- |
/// | any component of `Ke` > 0 | [`Emitter`](MaterialKind::Emitter) |
/// | `illum` 3 or 5 (reflection on / Fresnel reflection) | [`Mirror`](MaterialKind::Mirror), reflectance `ks` |
/// | `illum` 4, 6 or 7, or `d` < 1, or `Tr` > 0 | [`Glass`](MaterialKind::Glass); `ni` is `Ni`, or 1.5 when `Ni` is missing or ≤ 1 |
/// | `illum` 2 and any component of `Ks` > 0 | [`Phong`](MaterialKind::Phong) |
/// | otherwise | [`Diffuse`](MaterialKind::Diffuse) |
///
/// ```
/// use lumbre_raytrace::{Material, MaterialKind};
/// let m = Material::default();
/// assert_eq!(m.kind, MaterialKind::Diffuse);
/// assert_eq!(m.kd, glam::Vec3::splat(0.8));
/// let g = m.to_gpu();
/// assert_eq!(g.kind, 0);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Material {
    /// The `newmtl` name (`"default"` for the default material).
    pub name: String,
    /// Diffuse reflectance.
    pub kd: Vec3,
    /// Specular reflectance (Phong highlight colour, or mirror reflectance).
    pub ks: Vec3,
    /// Phong exponent.
    pub ns: f32,
    /// Emitted radiance.
    pub ke: Vec3,
    /// Index of refraction.
    pub ni: f32,
    /// Opacity in `[0, 1]`: 1 is opaque.
    pub opacity: f32,
    /// How the surface is shaded.
    pub kind: MaterialKind,
}

/// Kd of a material that has none, and of [`Material::default`].
pub(crate) const DEFAULT_KD: f32 = 0.8;
/// Ns of a material that has none.
pub(crate) const DEFAULT_NS: f32 = 1.0;
/// Ni of glass when the MTL has none or one that is not > 1.
pub(crate) const DEFAULT_GLASS_NI: f32 = 1.5;

impl Default for Material {
    /// A grey diffuse material named `default` (kd 0.8).
    fn default() -> Material {
        Material {
            name: "default".to_owned(),
            kd: Vec3::splat(DEFAULT_KD),
            ks: Vec3::ZERO,
            ns: DEFAULT_NS,
            ke: Vec3::ZERO,
            ni: 1.0,
            opacity: 1.0,
            kind: MaterialKind::Diffuse,
        }
    }
}

/// The MTL statements a [`Material`] is made from; `None` where the file has none.
#[derive(Clone, Debug, Default)]
pub(crate) struct MtlParams {
    pub kd: Option<Vec3>,
    pub ks: Option<Vec3>,
    pub ns: Option<f32>,
    pub ke: Option<Vec3>,
    pub ni: Option<f32>,
    pub d: Option<f32>,
    pub tr: Option<f32>,
    pub illum: Option<u8>,
}

impl Material {
    /// The material an MTL entry describes, by the rules in the type's documentation.
    pub(crate) fn from_mtl(name: &str, p: &MtlParams) -> Material {
        let kd = p.kd.unwrap_or(Vec3::splat(DEFAULT_KD));
        let ks = p.ks.unwrap_or(Vec3::ZERO);
        let ke = p.ke.unwrap_or(Vec3::ZERO);
        let opacity = match (p.d, p.tr) {
            (Some(d), _) => d,
            (None, Some(tr)) => 1.0 - tr,
            (None, None) => 1.0,
        }
        .clamp(0.0, 1.0);
        let illum = p.illum;
        let kind = if ke.max_element() > 0.0 {
            MaterialKind::Emitter
        } else if matches!(illum, Some(3 | 5)) {
            MaterialKind::Mirror
        } else if matches!(illum, Some(4 | 6 | 7)) || p.d.is_some_and(|d| d < 1.0) || p.tr.is_some_and(|t| t > 0.0) {
            MaterialKind::Glass
        } else if illum == Some(2) && ks.max_element() > 0.0 {
            MaterialKind::Phong
        } else {
            MaterialKind::Diffuse
        };
        let ni = match (kind, p.ni) {
            (MaterialKind::Glass, Some(ni)) if ni > 1.0 => ni,
            (MaterialKind::Glass, _) => DEFAULT_GLASS_NI,
            (_, ni) => ni.unwrap_or(1.0),
        };
        Material { name: name.to_owned(), kd, ks, ns: p.ns.unwrap_or(DEFAULT_NS), ke, ni, opacity, kind }
    }

    /// Whether this material is a light source.
    pub fn is_emitter(&self) -> bool {
        self.kind == MaterialKind::Emitter
    }

    /// The GPU layout of this material (see [`GpuMaterial`]).
    pub fn to_gpu(&self) -> GpuMaterial {
        GpuMaterial {
            kd: self.kd.to_array(),
            kind: self.kind.code(),
            ks: self.ks.to_array(),
            ns: self.ns,
            ke: self.ke.to_array(),
            ni: self.ni,
            opacity: self.opacity,
            pad: [0; 3],
        }
    }
}

/// A [`Material`] as the GPU reads it: 64 bytes, four 16-byte rows.
///
/// | offset | field | WGSL |
/// | --- | --- | --- |
/// | 0 | `kd: [f32; 3]`, `kind: u32` | `kd: vec3<f32>, kind: u32` |
/// | 16 | `ks: [f32; 3]`, `ns: f32` | `ks: vec3<f32>, ns: f32` |
/// | 32 | `ke: [f32; 3]`, `ni: f32` | `ke: vec3<f32>, ni: f32` |
/// | 48 | `opacity: f32`, `pad: [u32; 3]` | `opacity: f32` (the struct is padded to 64) |
///
/// `kind` is [`MaterialKind::code`]. The same layout works as a WGSL storage-buffer struct,
/// because a `vec3<f32>` is 16-byte aligned and 12 bytes long there.
///
/// ```
/// use lumbre_raytrace::twin::GpuMaterial;
/// assert_eq!(std::mem::size_of::<GpuMaterial>(), 64);
/// assert_eq!(std::mem::offset_of!(GpuMaterial, ks), 16);
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GpuMaterial {
    /// Diffuse reflectance.
    pub kd: [f32; 3],
    /// [`MaterialKind::code`].
    pub kind: u32,
    /// Specular reflectance.
    pub ks: [f32; 3],
    /// Phong exponent.
    pub ns: f32,
    /// Emitted radiance.
    pub ke: [f32; 3],
    /// Index of refraction.
    pub ni: f32,
    /// Opacity in `[0, 1]`.
    pub opacity: f32,
    /// Zero padding to 64 bytes.
    pub pad: [u32; 3],
}

const _: () = {
    assert!(std::mem::size_of::<GpuMaterial>() == 64);
    assert!(std::mem::offset_of!(GpuMaterial, kind) == 12);
    assert!(std::mem::offset_of!(GpuMaterial, ks) == 16);
    assert!(std::mem::offset_of!(GpuMaterial, ke) == 32);
    assert!(std::mem::offset_of!(GpuMaterial, opacity) == 48);
};

#[cfg(test)]
mod tests {
    use super::*;

    fn mtl(f: impl FnOnce(&mut MtlParams)) -> Material {
        let mut p = MtlParams::default();
        f(&mut p);
        Material::from_mtl("m", &p)
    }

    #[test]
    fn mapping_rules() {
        assert_eq!(mtl(|_| {}).kind, MaterialKind::Diffuse);
        assert_eq!(mtl(|_| {}).kd, Vec3::splat(0.8));
        assert_eq!(mtl(|p| p.ke = Some(Vec3::new(0.0, 1.0, 0.0))).kind, MaterialKind::Emitter);
        // Emission wins over every other rule.
        assert_eq!(
            mtl(|p| {
                p.ke = Some(Vec3::ONE);
                p.illum = Some(3);
            })
            .kind,
            MaterialKind::Emitter
        );
        assert_eq!(mtl(|p| p.illum = Some(3)).kind, MaterialKind::Mirror);
        assert_eq!(mtl(|p| p.illum = Some(5)).kind, MaterialKind::Mirror);
        for illum in [4, 6, 7] {
            let m = mtl(|p| p.illum = Some(illum));
            assert_eq!(m.kind, MaterialKind::Glass);
            assert_eq!(m.ni, 1.5);
        }
        let m = mtl(|p| {
            p.d = Some(0.5);
            p.ni = Some(1.33);
        });
        assert_eq!((m.kind, m.ni, m.opacity), (MaterialKind::Glass, 1.33, 0.5));
        let m = mtl(|p| {
            p.tr = Some(0.25);
            p.ni = Some(1.0);
        });
        assert_eq!((m.kind, m.ni, m.opacity), (MaterialKind::Glass, 1.5, 0.75));
        assert_eq!(
            mtl(|p| {
                p.illum = Some(2);
                p.ks = Some(Vec3::splat(0.5));
            })
            .kind,
            MaterialKind::Phong
        );
        // Ks without illum 2 is not Phong; illum 2 without Ks is not Phong.
        assert_eq!(mtl(|p| p.ks = Some(Vec3::splat(0.5))).kind, MaterialKind::Diffuse);
        assert_eq!(mtl(|p| p.illum = Some(2)).kind, MaterialKind::Diffuse);
        // Non-glass keeps its Ni.
        assert_eq!(mtl(|p| p.ni = Some(1.2)).ni, 1.2);
    }

    #[test]
    fn gpu_layout() {
        let m = Material { kind: MaterialKind::Mirror, ks: Vec3::new(1.0, 2.0, 3.0), ..Material::default() };
        let g = m.to_gpu();
        let words: &[u32] = bytemuck::cast_slice(std::slice::from_ref(&g));
        assert_eq!(words.len(), 16);
        assert_eq!(words[3], 2);
        assert_eq!(f32::from_bits(words[4]), 1.0);
        assert_eq!(f32::from_bits(words[12]), 1.0);
        for k in MaterialKind::ALL {
            assert_eq!(MaterialKind::from_code(k.code()), Some(k));
        }
        assert_eq!(MaterialKind::from_code(5), None);
    }
}
