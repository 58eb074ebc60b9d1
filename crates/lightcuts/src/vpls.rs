//! Virtual point lights (VPLs), oriented point lights that stand for light arriving at a
//! surface, made from the scene's emitters (the paper's section 2.2, Keller's instant
//! radiosity): the CPU twin of `lightcuts/vpls.wgsl` (the GPU half is `gpu/vpls.rs`).
//!
//! - Direct light: `direct` points drawn on the emitters by power become VPLs on the light
//!   itself (normal: the emitter's; intensity `Ke / (pdf_area * direct)`, the radiance
//!   times the area each point stands for). The whole lighting then goes through one light
//!   tree, as Walter et al. do with area lights, so lightcuts scale direct and indirect
//!   light alike and instant radiosity is the same sum without clusters.
//! - Indirect light: `paths` light paths leave points drawn by power in cosine-distributed
//!   directions (Shirley–Chiu's concentric map lifted by Malley's method) carrying flux
//!   `pi Ke / (pdf_area * paths)`; at each of their first `bounces` hits on a diffuse
//!   surface a VPL is left with intensity `kd * flux / pi` (facing the incoming ray), and
//!   the path goes on in a cosine direction about that surface with flux and throughput
//!   times `kd`. Mirrors, glass and black surfaces end a path, and so does leaving the scene.
//! - Russian roulette, as the path tracer's (`lumbre_raytrace::path`): after bounce
//!   `b >= rr_depth` a path goes on with probability
//!   `clamp(max(throughput), ROULETTE_SURVIVAL)` and divides its flux and throughput by it,
//!   so the expected flux of every later VPL is unchanged (unbiased). With `bounces` at
//!   [`MAX_BOUNCES`] (the default) paths run until roulette ends them; the cap only bounds
//!   the slots.
//!
//! Slots: direct VPL `k` in slot `k`, bounce `b` of path `k` in slot
//! `direct + k * bounces + b`; the VPLs are the filled slots in slot order. Random numbers
//! come from [`vpl_uniform`](crate::twin::vpl_uniform) with explicit dimensions (the origin 0..3, the first direction
//! 3..5, bounce `b`'s direction `5 + 2b` and `6 + 2b`, its roulette [`DIM_ROULETTE`](crate::twin::DIM_ROULETTE)` + b`),
//! so the GPU draws the same numbers.

use glam::Vec3;
use lumbre_gpu::{Error, Progress, Report, Result};
use lumbre_kdtree::{QueryOptions, Ray};
use lumbre_raytrace::sampling::{PI, hash_f32, hash_u32};
use lumbre_raytrace::twin::ROULETTE_SURVIVAL;
use lumbre_raytrace::{Emitters, MaterialKind, Prepared};
use rayon::prelude::*;

use crate::bounds::dot;
use crate::gbuffer::unit;
use crate::shading::INV_PI;

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
pub fn validate_vpls(vpls: &[Vpl]) -> Result<()> {
    let bad = |i: usize, what: String| Err(Error::Input(format!("VPL {i}: {what}")));
    if vpls.is_empty() {
        return Err(Error::Input("no VPLs: a light tree and its cuts need at least one light".into()));
    }
    if vpls.len() >= u32::MAX as usize / 2 {
        return Err(Error::Input(format!("{} VPLs: at most 2^31 - 1", vpls.len())));
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

/// Seed stream of the direct VPLs (the paths use the seed itself).
pub(crate) const DIRECT_STREAM: u32 = 0x6a09_e667;

/// The most diffuse bounces of a light path: the cap, for safety, of paths that run until
/// Russian roulette ends them, as the path tracer's `max_bounces`. Past the first roulette
/// a path goes on with probability about the albedo of the surface it left (at most 0.95):
/// in a white box it reaches the cap with probability `0.95^61` (4%), where surfaces
/// reflect 80% about `0.8^61` (1e-6).
pub const MAX_BOUNCES: u32 = 64;

/// The bounce from which Russian roulette ends light paths by default: the path tracer's
/// (`PathOptions::default().rr_depth`), so the first three bounces are always traced.
pub const RR_DEPTH: u32 = 3;

/// First dimension of [`vpl_uniform`] of the roulette of bounce `b` (`DIM_ROULETTE + b`),
/// past the dimensions of every bounce's direction.
pub const DIM_ROULETTE: u32 = 5 + 2 * MAX_BOUNCES;

/// How many VPLs to make, and how.
///
/// The default traces light paths until Russian roulette ends them (full global
/// illumination: every bounce of light); [`VplOptions::one_bounce`] is the paper's setting
/// (one bounce of indirect light); [`VplOptions::with_count`] sizes either for about `n`
/// VPLs in a given scene.
///
/// ```
/// use lumbre_lightcuts::{MAX_BOUNCES, RR_DEPTH, VplOptions};
/// let o = VplOptions::default();
/// assert_eq!((o.bounces, o.rr_depth), (MAX_BOUNCES, RR_DEPTH));
/// assert!(o.until_roulette());
/// let paper = VplOptions::one_bounce(1000);
/// assert_eq!((paper.direct, paper.paths, paper.bounces), (250, 750, 1));
/// assert_eq!(paper.slots(), 1000);
/// assert!(!paper.until_roulette());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct VplOptions {
    /// Light paths traced from the emitters.
    pub paths: u32,
    /// VPLs drawn on the emitters themselves (direct light).
    pub direct: u32,
    /// The most diffuse bounces of a path, each leaving a VPL, in `1..=MAX_BOUNCES` (the
    /// paper: 1; the default: [`MAX_BOUNCES`], a cap that roulette makes a formality).
    pub bounces: u32,
    /// Russian roulette decides whether a path goes on after each bounce `b >= rr_depth`
    /// (0-based: 3 keeps bounces 0 to 3 of every path that stays in the scene). At or
    /// above `bounces`: no roulette, every path runs `bounces` bounces unless it leaves.
    pub rr_depth: u32,
    /// Seed of every random number.
    pub seed: u32,
}

/// Paths of the pilot by which [`VplOptions::with_count`] estimates the VPLs per path.
pub const PILOT_PATHS: u32 = 4096;

/// The share of the VPLs on the emitters (direct light) in the defaults.
pub const DIRECT_SHARE: f32 = 0.25;

/// VPLs with which lightcuts over shadow rays ([`Visibility::Rays`](crate::shading::Visibility::Rays))
/// come within 3.5% (mean relative error) of the path tracer on the diffuse Cornell box at
/// 256x256; [`VplOptions::default`] makes about this many there.
pub const RAYS_VPLS: u32 = 80_000;

/// VPLs with which lightcuts over imperfect shadow maps (the default
/// [`IsmOptions`](crate::ism::IsmOptions)) come within 5% of the path tracer on the
/// diffuse Cornell box at 256x256 (with fewer lights than shadow rays need: each VPL's map
/// costs more than its shadow rays, and the maps' own error dominates past this count).
pub const ISM_VPLS: u32 = 12_000;

/// Direct VPLs of [`VplOptions::default`]: [`DIRECT_SHARE`] of [`RAYS_VPLS`].
pub const DEFAULT_DIRECT: u32 = 20_000;

/// Light paths of [`VplOptions::default`]: with paths until roulette ends them, they leave
/// the other 60000 of [`RAYS_VPLS`] in the diffuse Cornell box (2.8 VPLs per path; what a
/// pilot of [`VplOptions::with_count`] finds there).
pub const DEFAULT_PATHS: u32 = 21_700;

impl Default for VplOptions {
    /// Full global illumination: paths until Russian roulette ends them ([`MAX_BOUNCES`],
    /// [`RR_DEPTH`]), [`DEFAULT_DIRECT`] VPLs on the emitters and [`DEFAULT_PATHS`] paths:
    /// about [`RAYS_VPLS`] VPLs in the diffuse Cornell box.
    fn default() -> Self {
        VplOptions { paths: DEFAULT_PATHS, direct: DEFAULT_DIRECT, bounces: MAX_BOUNCES, rr_depth: RR_DEPTH, seed: 0 }
    }
}

impl VplOptions {
    /// The paper's setting: `n` VPLs with one bounce of indirect light, a quarter of them
    /// direct, the rest light paths (paths that leave the scene or end on a mirror leave
    /// none, so the count may be a little lower).
    pub fn one_bounce(n: u32) -> VplOptions {
        let direct = n / 4;
        VplOptions { paths: n - direct, direct, bounces: 1, rr_depth: 1, seed: 0 }
    }

    /// These options (bounces, roulette, seed) with the direct VPLs and the paths set for
    /// about `n` VPLs in `p`: `direct_share` of them (in `[0, 1]`) on the emitters, and as
    /// many paths as leave the rest by a pilot of [`PILOT_PATHS`] paths traced on the CPU
    /// (the same numbers on every run and backend). Errors: no emitters, `n` of 0, a share
    /// outside `[0, 1]`.
    ///
    /// ```
    /// use lumbre_lightcuts::{VplOptions, vpls_cpu};
    /// use lumbre_raytrace::{Prepared, Scene};
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/scenes/CornellBox-Diffuse.obj");
    /// let p = Prepared::new(Scene::load_obj(path.as_ref()).unwrap().0, &Default::default());
    /// let o = VplOptions::default().with_count(&p, 2000, 0.25)?;
    /// assert_eq!(o.direct, 500);
    /// let made = vpls_cpu(&p, &o, &Default::default())?.len();
    /// assert!((1800..2200).contains(&made), "{made}");
    /// # Ok::<(), lumbre_gpu::Error>(())
    /// ```
    pub fn with_count(&self, p: &Prepared, n: u32, direct_share: f32) -> Result<VplOptions> {
        if n == 0 {
            return Err(Error::Input("VPL count 0: at least one VPL".into()));
        }
        if !(0.0..=1.0).contains(&direct_share) {
            return Err(Error::Input(format!("direct share {direct_share}: must be in [0, 1]")));
        }
        let direct = ((n as f64 * direct_share as f64).round() as u32).min(n);
        let indirect = n - direct;
        if indirect == 0 {
            return Ok(VplOptions { direct, paths: 0, ..*self });
        }
        let pilot = VplOptions { paths: PILOT_PATHS, direct: 0, ..*self };
        pilot.validate()?;
        let em = emitters(p)?;
        let q = QueryOptions::default();
        let made: usize = (0..PILOT_PATHS).into_par_iter().map(|k| path_vpls(p, &em, &pilot, k, &q).len()).sum();
        // Where every pilot path leaves the scene: one path per VPL asked (which leave none
        // either; vpls_cpu then says so).
        let per_path = if made == 0 { 1.0 } else { made as f64 / PILOT_PATHS as f64 };
        let paths = (indirect as f64 / per_path).round().clamp(1.0, (u32::MAX / 2) as f64) as u32;
        Ok(VplOptions { direct, paths, ..*self })
    }

    /// Whether paths run until Russian roulette ends them (roulette starts below the cap).
    pub fn until_roulette(&self) -> bool {
        self.rr_depth < self.bounces
    }

    /// The number of slots, the most VPLs there can be: `direct + paths * bounces`.
    pub fn slots(&self) -> u64 {
        self.direct as u64 + self.paths as u64 * self.bounces as u64
    }

    /// Checks the counts: at least one VPL, at most 2^31 slots, 1 to [`MAX_BOUNCES`] bounces.
    pub fn validate(&self) -> Result<()> {
        if self.bounces == 0 || self.bounces > MAX_BOUNCES {
            return Err(Error::Input(format!("VPL options: {} bounces, must be in 1..={MAX_BOUNCES}", self.bounces)));
        }
        if self.slots() == 0 {
            return Err(Error::Input("VPL options: no direct VPLs and no paths: no VPLs".into()));
        }
        if self.slots() >= 1 << 31 {
            return Err(Error::Input(format!(
                "VPL options: {} slots (direct + paths x bounces), at most 2^31 - 1",
                self.slots()
            )));
        }
        Ok(())
    }
}

/// Making the VPLs of a scene (see [`VplOptions`] and the module notes): [`vpls_cpu`] on
/// the CPU, `lightcuts/vpls.wgsl` on the GPU, through [`Compute`](lumbre_gpu::Compute).
///
/// ```
/// use lumbre_gpu::{Backend, Compute};
/// use lumbre_lightcuts::{VplOptions, VplPass};
/// use lumbre_raytrace::{Prepared, Scene};
/// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/scenes/CornellBox-Diffuse.obj");
/// let prepared = Prepared::new(Scene::load_obj(path.as_ref()).unwrap().0, &Default::default());
/// let pass = VplPass { options: VplOptions::one_bounce(1000), query: Default::default() };
/// let vpls = pass.run(&Backend::Cpu, &prepared)?; // or Backend::Gpu: the same lights
/// // 250 on the light; a light path that leaves the box through its open side leaves none.
/// assert!((800..=1000).contains(&vpls.len()), "{}", vpls.len());
/// # Ok::<(), lumbre_gpu::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct VplPass {
    /// How many and how.
    pub options: VplOptions,
    /// Traversal and triangle test of the light paths.
    pub query: QueryOptions,
}

impl VplPass {
    /// The CPU path: [`vpls_cpu`].
    ///
    /// ```
    /// use lumbre_lightcuts::{VplOptions, VplPass};
    /// use lumbre_raytrace::{Prepared, Scene};
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/scenes/CornellBox-Diffuse.obj");
    /// let prepared = Prepared::new(Scene::load_obj(path.as_ref())?.0, &Default::default());
    /// let vpls = VplPass { options: VplOptions::one_bounce(100), query: Default::default() }.cpu(&prepared)?;
    /// assert!(vpls.len() <= 100);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn cpu(&self, p: &Prepared) -> Result<Vec<Vpl>> {
        vpls_cpu(p, &self.options, &self.query)
    }

    /// [`cpu`](VplPass::cpu), reported: stage `vpls`, stat `vpls`.
    pub fn run_cpu(&self, p: &Prepared, _: &dyn Progress) -> Result<(Vec<Vpl>, Report)> {
        let (vpls, mut report) = Report::timed("vpls", || self.cpu(p))?;
        report.stat("vpls", vpls.len() as f64);
        Ok((vpls, report))
    }
}

/// The uniform number in `[0, 1)` of dimension `dim` of sample `index` (the WGSL twin is
/// `vpl_uniform` in `lightcuts/vpls.wgsl`).
///
/// ```
/// let u = lumbre_lightcuts::twin::vpl_uniform(7, 3, 0);
/// assert!((0.0..1.0).contains(&u));
/// assert_ne!(u, lumbre_lightcuts::twin::vpl_uniform(7, 3, 1));
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
    // The flux's factor since the emitter: what roulette weighs, as the path tracer does.
    let mut throughput = Vec3::ONE;
    let mut origin = s.point + s.normal * p.eps;
    for b in 0..o.bounces {
        let Some(hit) = p.closest_hit(&Ray::new(origin, dir), f32::INFINITY, query) else { break };
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
        throughput *= m.kd;
        if b >= o.rr_depth {
            let survive = throughput.max_element().clamp(ROULETTE_SURVIVAL.0, ROULETTE_SURVIVAL.1);
            if u(DIM_ROULETTE + b) >= survive {
                break;
            }
            flux /= survive;
            throughput /= survive;
        }
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
