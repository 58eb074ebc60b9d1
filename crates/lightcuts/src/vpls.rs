//! Virtual point lights from the scene's emitters (the paper's section 2.2, Keller's
//! instant radiosity): the CPU twin of `lightcuts/vpls.wgsl`.
//!
//! - Direct light: `direct` points drawn on the emitters by power become VPLs on the light
//!   itself (normal: the emitter's; intensity `Ke / (pdf_area * direct)`, the radiance
//!   times the area each point stands for). The whole lighting then goes through one light
//!   tree, as Walter et al. do with area lights, so lightcuts scale direct and indirect
//!   light alike and instant radiosity is the same sum without clusters.
//! - Indirect light: `paths` light paths leave points drawn by power in cosine-distributed
//!   directions (Shirley–Chiu's concentric map lifted by Malley's method) carrying flux
//!   `pi Ke / (pdf_area * paths)`; at each of the first `bounces` hits on a diffuse surface
//!   a VPL is left with intensity `kd * flux / pi` (facing the incoming ray), and the path
//!   goes on in a cosine direction about that surface with flux times `kd`. Mirrors, glass
//!   and black surfaces end a path, and so does leaving the scene.
//!
//! Slots: direct VPL `k` in slot `k`, bounce `b` of path `k` in slot
//! `direct + k * bounces + b`; the VPLs are the filled slots in slot order. Random numbers
//! come from [`vpl_uniform`] with explicit dimensions, so the GPU draws the same numbers.

use glam::Vec3;
use lumbre_gpu::{Error, Result};
use lumbre_kdtree::{QueryOptions, Ray};
use lumbre_raytrace::{Emitters, MaterialKind, Prepared, hash_f32, hash_u32, sampling::PI};
use rayon::prelude::*;

use crate::Vpl;
use crate::bounds::dot;
use crate::gbuffer::unit;
use crate::shading::INV_PI;

/// Seed stream of the direct VPLs (the paths use the seed itself).
pub(crate) const DIRECT_STREAM: u32 = 0x6a09_e667;

/// How many VPLs to make, and how.
///
/// ```
/// use lumbre_lightcuts::VplOptions;
/// let o = VplOptions::total(1000);
/// assert_eq!((o.direct, o.paths, o.bounces), (250, 750, 1));
/// assert_eq!(o.slots(), 1000);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct VplOptions {
    /// Light paths traced from the emitters.
    pub paths: u32,
    /// VPLs drawn on the emitters themselves (direct light).
    pub direct: u32,
    /// Diffuse bounces that leave a VPL, per path (the paper: 1).
    pub bounces: u32,
    /// Seed of every random number.
    pub seed: u32,
}

impl Default for VplOptions {
    fn default() -> Self {
        VplOptions::total(1000)
    }
}

impl VplOptions {
    /// About `n` VPLs with one bounce: a quarter of them direct, the rest light paths
    /// (paths that leave the scene or end on a mirror leave none, so the count may be a
    /// little lower).
    pub fn total(n: u32) -> VplOptions {
        let direct = n / 4;
        VplOptions { paths: n - direct, direct, bounces: 1, seed: 0 }
    }

    /// The number of slots, the most VPLs there can be: `direct + paths * bounces`.
    pub fn slots(&self) -> u64 {
        self.direct as u64 + self.paths as u64 * self.bounces as u64
    }

    /// Checks the counts: at least one VPL, at most 2^31 slots, at most 64 bounces.
    pub fn validate(&self) -> Result<()> {
        if self.slots() == 0 {
            return Err(Error::Input("VPL options: no direct VPLs and no paths (or 0 bounces): no VPLs".into()));
        }
        if self.slots() >= 1 << 31 {
            return Err(Error::Input(format!("VPL options: {} slots, at most 2^31 - 1", self.slots())));
        }
        if self.bounces > 64 {
            return Err(Error::Input(format!("VPL options: {} bounces, at most 64", self.bounces)));
        }
        Ok(())
    }
}

/// The uniform number in `[0, 1)` of dimension `dim` of sample `index` (the WGSL twin is
/// `vpl_uniform` in `lightcuts/vpls.wgsl`).
///
/// ```
/// let u = lumbre_lightcuts::vpl_uniform(7, 3, 0);
/// assert!((0.0..1.0).contains(&u));
/// assert_ne!(u, lumbre_lightcuts::vpl_uniform(7, 3, 1));
/// ```
pub fn vpl_uniform(seed: u32, index: u32, dim: u32) -> f32 {
    hash_f32(hash_u32(index) ^ hash_u32(seed.wrapping_mul(0x9e37_79b9).wrapping_add(dim.wrapping_mul(0x85eb_ca6b))))
}

/// Direct VPL `k` (the twin of `vpls.wgsl`'s `direct_vpl`), or none when the draw has no
/// density.
pub(crate) fn direct_vpl(em: &Emitters, o: &VplOptions, k: u32, eps: f32) -> Option<Vpl> {
    let seed = o.seed ^ DIRECT_STREAM;
    let s = em.sample(vpl_uniform(seed, k, 0), vpl_uniform(seed, k, 1), vpl_uniform(seed, k, 2))?;
    if s.pdf.is_nan() || s.pdf <= 0.0 {
        return None;
    }
    Some(Vpl {
        position: s.point + s.normal * eps,
        normal: s.normal,
        intensity: s.radiance * (1.0 / (s.pdf * o.direct as f32)),
    })
}

/// The VPLs of light path `k` (the twin of `vpls.wgsl`'s `path_vpls`), one per bounce.
pub(crate) fn path_vpls(p: &Prepared, em: &Emitters, o: &VplOptions, k: u32, query: &QueryOptions) -> Vec<Vpl> {
    let mut out = Vec::new();
    let u = |dim: u32| vpl_uniform(o.seed, k, dim);
    let Some(s) = em.sample(u(0), u(1), u(2)) else { return out };
    if s.pdf.is_nan() || s.pdf <= 0.0 {
        return out;
    }
    let (mut dir, _) = Emitters::sample_direction(s.normal, u(3), u(4));
    let mut flux = s.radiance * (PI / (s.pdf * o.paths as f32));
    let mut origin = s.point + s.normal * p.eps;
    for b in 0..o.bounces {
        let Some(hit) = p.tree.closest_hit(&p.tris, &Ray::new(origin, dir), 0.0, f32::INFINITY, query) else { break };
        let [a, bb, c] = p.tris[hit.tri as usize];
        let point = origin + dir * hit.t;
        let mut n = unit((bb - a).cross(c - a));
        if dot(n, dir) > 0.0 {
            n = -n;
        }
        let m = &p.scene.materials[p.scene.triangles[hit.tri as usize].material as usize];
        if !matches!(m.kind, MaterialKind::Diffuse | MaterialKind::Phong | MaterialKind::Emitter) || m.kd == Vec3::ZERO
        {
            break;
        }
        let position = point + n * p.eps;
        out.push(Vpl { position, normal: n, intensity: m.kd * (flux * INV_PI) });
        flux *= m.kd;
        dir = Emitters::sample_direction(n, u(5 + 2 * b), u(6 + 2 * b)).0;
        origin = position;
    }
    out
}

/// Every VPL of a scene on the CPU, in slot order: direct ones, then path by path.
pub fn vpls_cpu(p: &Prepared, o: &VplOptions, query: &QueryOptions) -> Result<Vec<Vpl>> {
    o.validate()?;
    let em = emitters(p)?;
    let mut vpls: Vec<Vpl> = (0..o.direct).into_par_iter().filter_map(|k| direct_vpl(&em, o, k, p.eps)).collect();
    let paths: Vec<Vec<Vpl>> = (0..o.paths).into_par_iter().map(|k| path_vpls(p, &em, o, k, query)).collect();
    vpls.extend(paths.into_iter().flatten());
    if vpls.is_empty() {
        return Err(Error::Input("no VPL was made: every light path left the scene".into()));
    }
    Ok(vpls)
}

/// The scene's emitters; an error when it has none.
pub(crate) fn emitters(p: &Prepared) -> Result<Emitters> {
    let em = Emitters::new(&p.scene)?;
    if em.is_empty() {
        return Err(Error::Input(
            "the scene has no emitters (materials with Ke > 0): VPLs come from area lights".into(),
        ));
    }
    Ok(em)
}
