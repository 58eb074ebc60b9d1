//! How one VPL lights one receiver, shared by instant radiosity and lightcuts (and by their
//! WGSL twins in `lightcuts/light.wgsl`): the clamped geometric term and visibility, and
//! the shading stages' input and output (their GPU forms are in `gpu/shading.rs`).

use glam::Vec3;
use lumbre_gpu::{Agree, Error, Progress, Report, Result, Tolerance};
use lumbre_kdtree::{QueryOptions, Ray};
use lumbre_raytrace::{Image, Prepared};

use crate::bounds::dot;
use crate::cuts::CutPixel;
use crate::gbuffer::GBuffer;
use crate::ism::{Ism, IsmAtlas, IsmOptions, IsmScene};
use crate::tree::LightTree;
use crate::vpls::{Vpl, validate_vpls};

/// `1 / pi` in f32 (the WGSL twin uses the same literal).
pub const INV_PI: f32 = std::f32::consts::FRAC_1_PI;

/// Default `1 / d^2` clamp distance, as a fraction of the scene's diagonal.
pub const DEFAULT_CLAMP: f32 = 0.02;

/// Shadow rays end this fraction short of the light (which sits on a surface).
pub const SHADOW_END: f32 = 0.999;

/// How visibility between a receiver and a light is decided.
///
/// ```
/// use lumbre_lightcuts::{Visibility, ism::IsmOptions};
/// assert_eq!(Visibility::default(), Visibility::Rays);
/// assert_eq!(Visibility::Ism(IsmOptions::default()).name(), "ism");
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum Visibility {
    /// Exact: an any-hit shadow ray through the scene's kd-tree (the reference).
    #[default]
    Rays,
    /// Every light is visible (no shadows): for tests and to isolate shading costs.
    Unshadowed,
    /// Imperfect shadow maps, one per VPL, built from the scene's triangles with these
    /// options and looked up for a fraction of visibility (see [`crate::ism`]).
    Ism(IsmOptions),
}

impl Visibility {
    /// A short name for tables.
    pub fn name(&self) -> &'static str {
        match self {
            Visibility::Rays => "rays",
            Visibility::Unshadowed => "unshadowed",
            Visibility::Ism(_) => "ism",
        }
    }

    /// Bit 2 of the kernels' `flags`: shadow rays.
    #[cfg(feature = "gpu")]
    pub(crate) fn ray_flag(&self) -> u32 {
        ((*self == Visibility::Rays) as u32) << 2
    }
}

/// How a CPU pass decides visibility, ready to query.
pub(crate) enum Vis<'a> {
    Rays(&'a Prepared, QueryOptions),
    Unshadowed,
    Ism(&'a IsmAtlas),
}

impl Vis<'_> {
    /// The visibility of light `index` (`vpl`) from `x` in `[0, 1]`, and whether it took a
    /// query (a shadow ray or an ISM lookup).
    pub fn of(&self, index: u32, vpl: &Vpl, x: Vec3) -> (f32, bool) {
        match self {
            Vis::Rays(p, q) => (if visible(p, x, vpl.position, q) { 1.0 } else { 0.0 }, true),
            Vis::Unshadowed => (1.0, false),
            Vis::Ism(atlas) => (atlas.visibility(index, vpl, x), true),
        }
    }
}

/// The imperfect shadow maps of `input`'s lights, when `visibility` asks for them (CPU),
/// with the build's report.
pub(crate) fn ism_cpu(
    visibility: &Visibility,
    input: ShadingRef<'_>,
    progress: &dyn Progress,
) -> Result<Option<(IsmAtlas, Report)>> {
    let Visibility::Ism(options) = visibility else { return Ok(None) };
    let scene = IsmScene { triangles: input.prepared.tris.clone(), vpls: input.tree.vpls.clone() };
    Ok(Some(Ism { options: *options }.run_cpu(&scene, progress)?))
}

/// The clamped geometric term between receiver `x` (unit normal `n`) and light `vpl`:
///
/// ```text
/// G = max(0, n . v) max(0, -n_l . v) / (d^2 max(d^2, r^2)),   v = y - x, d = |v|
/// ```
///
/// that is, the two cosines over `max(d, r)^2`: the `1 / d^2` singularity of instant
/// radiosity is clamped at the distance `r` (`min_d2 = r^2`); lightcuts bound it the same
/// way. 0 when `x` is the light's position.
///
/// ```
/// use glam::Vec3;
/// use lumbre_lightcuts::{Vpl, twin::geometry};
/// let light = Vpl { position: Vec3::new(0.0, 2.0, 0.0), normal: -Vec3::Y, intensity: Vec3::ONE };
/// assert_eq!(geometry(Vec3::ZERO, Vec3::Y, &light, 0.01), 0.25); // both cosines 1, d = 2
/// assert_eq!(geometry(Vec3::ZERO, Vec3::Y, &light, 16.0), 1.0 / 16.0); // clamped at r = 4
/// assert_eq!(geometry(Vec3::ZERO, -Vec3::Y, &light, 0.01), 0.0); // facing away
/// ```
#[inline]
pub fn geometry(x: Vec3, n: Vec3, vpl: &Vpl, min_d2: f32) -> f32 {
    let v = vpl.position - x;
    let d2 = dot(v, v);
    let cr = dot(n, v);
    let cl = -dot(vpl.normal, v);
    if !(d2 > 0.0 && cr > 0.0 && cl > 0.0) {
        return 0.0;
    }
    cr * cl / (d2 * d2.max(min_d2))
}

/// Whether the light at `y` is visible from the receiver `x` (an any-hit ray from `x` over
/// `[0, SHADOW_END]` of the segment to `y`).
#[inline]
pub(crate) fn visible(p: &Prepared, x: Vec3, y: Vec3, query: &QueryOptions) -> bool {
    !p.any_hit(&Ray::new(x, y - x), SHADOW_END, query)
}

/// The clamp distance `r` of a scene: `clamp` times its diagonal, checked (> 0, finite).
pub(crate) fn min_distance2(p: &Prepared, clamp: f32) -> Result<f32> {
    let d = (p.scene.bounds.1 - p.scene.bounds.0).length();
    let r = clamp * d;
    if !(r > 0.0 && r.is_finite()) {
        return Err(Error::Input(format!("clamp distance {clamp} x scene diagonal {d} = {r}: must be finite and > 0")));
    }
    Ok(r * r)
}

/// The input of the shading stages: a scene, the tree of its lights, and a G-buffer.
#[derive(Clone, Debug)]
pub struct Shading {
    /// The scene and its kd-tree (shadow rays).
    pub prepared: Prepared,
    /// The lights and their tree (instant radiosity uses only the lights).
    pub tree: LightTree,
    /// What each pixel sees.
    pub gbuffer: GBuffer,
}

/// A [`Shading`] input by reference, for the CPU passes.
#[derive(Clone, Copy, Debug)]
pub struct ShadingRef<'a> {
    /// The scene and its kd-tree.
    pub prepared: &'a Prepared,
    /// The lights and their tree.
    pub tree: &'a LightTree,
    /// What each pixel sees.
    pub gbuffer: &'a GBuffer,
}

impl Shading {
    /// This input by reference.
    pub fn by_ref(&self) -> ShadingRef<'_> {
        ShadingRef { prepared: &self.prepared, tree: &self.tree, gbuffer: &self.gbuffer }
    }
}

/// How a CPU pass decides visibility for `input`: its atlas when it has one.
pub(crate) fn vis_for<'a>(
    visibility: &Visibility,
    input: ShadingRef<'a>,
    query: QueryOptions,
    atlas: Option<&'a IsmAtlas>,
) -> Vis<'a> {
    match (visibility, atlas) {
        (Visibility::Rays, _) => Vis::Rays(input.prepared, query),
        (_, Some(atlas)) => Vis::Ism(atlas),
        _ => Vis::Unshadowed,
    }
}

/// A shaded image and, for lightcuts, each pixel's cut.
#[derive(Clone, Debug, PartialEq)]
pub struct Lit {
    /// Linear RGB radiance.
    pub image: Image,
    /// Per pixel, what its cut was (empty for instant radiosity).
    pub cuts: Vec<CutPixel>,
    /// Visibility queries (shadow rays or ISM lookups).
    pub queries: u64,
}

impl Agree for Lit {
    /// Cuts and query counts exactly, radiances channel by channel within `tol` (all but the
    /// fraction `tol.beyond` of pixels, whose shadow rays may graze an edge).
    fn disagreement(&self, gpu: &Self, tol: Tolerance) -> Option<String> {
        let (a, b) = (&self.image, &gpu.image);
        if (a.width, a.height) != (b.width, b.height) {
            return Some(format!("{}x{} vs {}x{}", a.width, a.height, b.width, b.height));
        }
        if self.cuts.len() != gpu.cuts.len() {
            return Some(format!("{} vs {} cuts", self.cuts.len(), gpu.cuts.len()));
        }
        let cuts: Vec<usize> = (0..self.cuts.len()).filter(|&i| self.cuts[i] != gpu.cuts[i]).collect();
        if let Some(&i) = cuts.first() {
            return Some(format!(
                "{} pixels have other cuts; pixel {i}: cpu {:?} gpu {:?}",
                cuts.len(),
                self.cuts[i],
                gpu.cuts[i]
            ));
        }
        let close = |p: Vec3, q: Vec3| (0..3).all(|k| tol.accepts(p[k] as f64, q[k] as f64));
        let bad: Vec<usize> = (0..a.pixels.len()).filter(|&i| !close(a.pixels[i], b.pixels[i])).collect();
        if let Some(&i) = bad.first().filter(|_| !tol.allows(bad.len(), a.pixels.len())) {
            return Some(format!("{} pixels differ; pixel {i}: cpu {} gpu {}", bad.len(), a.pixels[i], b.pixels[i]));
        }
        (self.queries != gpu.queries).then(|| format!("{} vs {} visibility queries", self.queries, gpu.queries))
    }
}

/// Checks a [`Shading`] input: valid lights and tree, a G-buffer of `width x height`
/// pixels.
pub(crate) fn check_shading(input: ShadingRef<'_>) -> Result<()> {
    validate_vpls(&input.tree.vpls)?;
    input.tree.validate()?;
    let g = &input.gbuffer;
    if g.pixels.len() as u64 != g.width as u64 * g.height as u64 || g.pixels.is_empty() {
        return Err(Error::Input(format!("G-buffer of {} pixels for {}x{}", g.pixels.len(), g.width, g.height)));
    }
    Ok(())
}
