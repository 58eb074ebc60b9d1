//! The Whitted integrator on the CPU: the reference the GPU kernel (`raytrace/whitted.wgsl`)
//! follows step by step.
//!
//! Per pixel, `spp` stratified samples; per sample, an iterative trace with an explicit stack
//! of pending rays (no recursion, as on the GPU):
//!
//! - a miss adds `weight * background`;
//! - an emitter seen from the side of its geometric normal adds `weight * Ke` (emitters are
//!   one-sided) and is then shaded like a diffuse surface of its `Kd`;
//! - surfaces other than glass add `weight * (ambient * Kd + sum over lights of visibility *
//!   E * (Kd max(n.l, 0) + Ks max(r.v, 0)^Ns) / pi)`, the specular term only for Phong and
//!   mirror materials: the diffuse term is the physically based `Kd / pi` BRDF, in the units
//!   of the path tracer, so that with ambient 0 the direct light equals the path tracer's.
//!   A point light gives `E = I / d^2`; an area light is sampled at one point per shading
//!   point (from the integer hash, so CPU and GPU pick the same point) and gives
//!   `E = Ke * area * max(0, -n_l.l) / d^2` (zero behind it). Distances and cosines are
//!   measured from the surface point; visibility is an any-hit shadow ray from the point
//!   lifted off the surface.
//! - mirrors push the reflected ray with weight `Ks`; glass pushes reflection and refraction
//!   weighted by Schlick's Fresnel term (total internal reflection: reflection only).
//!
//! Rays deeper than `max_depth` or with weights below 1e-3 are dropped.
//!
//! Each sample's radiance is added to its pixel's sums in 64-bit fixed point ([`SampleSums`]),
//! so that the batches of a render (devices, shards) add up to the bits of the render in one
//! piece; the image is their mean. The unit is [`RenderOptions::scale_log2`]: 32 bits below
//! the brightest radiance the scene and the options give, counting a point light as the
//! radiance it gives a white surface at the distance of the scene's diagonal.

use std::sync::atomic::{AtomicU64, Ordering};

use glam::Vec3;
use lumbre_gpu::{Error, Progress, Report, Result};
use lumbre_kdtree::{QueryOptions, Ray};
use rayon::prelude::*;

use crate::camera::Camera;
use crate::image::Image;
use crate::material::MaterialKind;
use crate::sampling::{PI, light_sample, pixel_seed, stratified};
use crate::scene::{Light, Prepared, Scene};
use crate::sums::{SampleSums, add_quantized};

/// Render settings, shared by the CPU and GPU paths. [`RenderOptions::check`] says which
/// values are allowed; both paths refuse the others.
///
/// ```
/// let o = lumbre_raytrace::RenderOptions::default();
/// assert_eq!((o.width, o.height, o.spp, o.max_depth), (640, 480, 1, 5));
/// assert!(o.check().is_ok());
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RenderOptions {
    /// Image width in pixels.
    pub width: u32,
    /// Image height in pixels.
    pub height: u32,
    /// Samples per pixel (stratified), 1 to [`MAX_SPP`].
    pub spp: u32,
    /// Render only samples `first..first + count` of the `spp` stratified ones, given as
    /// `(first, count)`; the image is their mean (`None`: all `spp`). The fixed-point sums of
    /// batches that cover the `spp` samples once each merge into the bits of the sums of all
    /// of them ([`SampleSums::merge`]).
    pub batch: Option<(u32, u32)>,
    /// Longest chain of reflections and refractions (1: primary rays and shadows only).
    pub max_depth: u32,
    /// Ambient term, times `Kd`.
    pub ambient: f32,
    /// Radiance of rays that leave the scene.
    pub background: Vec3,
    /// Traversal and triangle test of every ray query.
    pub query: QueryOptions,
}

impl Default for RenderOptions {
    fn default() -> Self {
        RenderOptions {
            width: 640,
            height: 480,
            spp: 1,
            batch: None,
            max_depth: 5,
            ambient: 0.05,
            background: Vec3::splat(0.05),
            query: QueryOptions::default(),
        }
    }
}

/// Deepest `max_depth` the GPU's fixed ray stack supports.
pub const MAX_TRACE_DEPTH: u32 = 12;

/// Most samples per pixel: `2^24`, the last count whose sample indices (and so the
/// stratified sample positions) are exact in f32.
pub const MAX_SPP: u32 = 1 << 24;

/// Most pixels in one image: pixel indices and seeds are 32-bit on both paths.
pub const MAX_PIXELS: u64 = u32::MAX as u64;

/// An error unless `1 <= width`, `1 <= height` and `width * height <= MAX_PIXELS`.
pub(crate) fn check_image_size(width: u32, height: u32) -> Result<(), String> {
    let pixels = u64::from(width) * u64::from(height);
    if width == 0 || height == 0 || pixels > MAX_PIXELS {
        return Err(format!(
            "a {width}x{height} image: width and height must be at least 1 and their product at most {MAX_PIXELS}"
        ));
    }
    Ok(())
}

impl RenderOptions {
    /// An error naming the value and its allowed range, for: a width or height of 0 or more
    /// than [`MAX_PIXELS`] pixels in all, `spp` outside `1..=MAX_SPP`, a batch that is empty
    /// or runs past `spp`, `max_depth` outside `1..=MAX_TRACE_DEPTH`, and a negative or
    /// non-finite ambient term or background.
    ///
    /// ```
    /// use lumbre_raytrace::RenderOptions;
    /// let o = RenderOptions { spp: 0, ..Default::default() };
    /// assert!(o.check().unwrap_err().contains("spp 0"));
    /// let o = RenderOptions { spp: 16, batch: Some((8, 9)), ..Default::default() };
    /// assert!(o.check().is_err());
    /// ```
    pub fn check(&self) -> Result<(), String> {
        check_image_size(self.width, self.height)?;
        if !(1..=MAX_SPP).contains(&self.spp) {
            return Err(format!("spp {}: samples per pixel must be 1..={MAX_SPP}", self.spp));
        }
        let (first, count) = self.samples();
        if count == 0 || first.checked_add(count).is_none_or(|end| end > self.spp) {
            return Err(format!(
                "samples {first}..{first}+{count} of {}: a batch must hold at least one sample and end by the last",
                self.spp
            ));
        }
        if !(1..=MAX_TRACE_DEPTH).contains(&self.max_depth) {
            return Err(format!("max_depth {}: must be 1..={MAX_TRACE_DEPTH}", self.max_depth));
        }
        if !(self.ambient.is_finite() && self.ambient >= 0.0) {
            return Err(format!("ambient {}: must be finite and >= 0", self.ambient));
        }
        if !(self.background.is_finite() && self.background.min_element() >= 0.0) {
            return Err(format!("background {}: must be finite and >= 0", self.background));
        }
        Ok(())
    }

    /// The samples this render takes: `(first, count)` of the batch, or all `spp`.
    pub fn samples(&self) -> (u32, u32) {
        self.batch.unwrap_or((0, self.spp))
    }

    /// The brightest radiance of a Whitted render of `p` with these options, the reference of
    /// its sums' unit: the largest channel of any material's `Ke`, area light's emission,
    /// point light's intensity times `1 / (pi D^2)` (the radiance it gives a white surface
    /// facing it at distance `D`, the diagonal of the kd-tree's box), the background and the
    /// ambient term. Only channels that are positive normal floats count (0 without any).
    ///
    /// A sample sums the direct light of up to `max_depth` surfaces with weights below 1, so
    /// it stays within a few times this value except next to a light (a point light at a
    /// hundredth of `D` gives 10^4 times it), well inside the sums' 32 bits of headroom.
    ///
    /// ```
    /// use lumbre_raytrace::{Prepared, RenderOptions, Scene};
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/scenes/CornellBox-Original.obj");
    /// let (scene, _) = Scene::load_obj(path.as_ref())?;
    /// // The light's Ke is (17, 12, 4).
    /// assert_eq!(RenderOptions::default().brightest(&Prepared::new(scene, &Default::default())), 17.0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn brightest(&self, p: &Prepared) -> f32 {
        brightest_in_scene(p).max(self.brightest_option())
    }

    /// The unit exponent of a Whitted render's sums of `p`: samples are kept in units of
    /// `2^-scale_log2`, 32 bits below [`brightest`](RenderOptions::brightest)
    /// ([`SampleSums::scale_log2_below`]). The GPU derives the same value from the scene on
    /// the device.
    ///
    /// ```
    /// use glam::Vec3;
    /// use lumbre_raytrace::{Camera, Prepared, RenderOptions, Scene, add_default_light};
    /// // A triangle 1000 units across with the default light: its radiance is of order 1,
    /// // whatever the scene's size, and so is the unit's reference.
    /// let mut scene = Scene::from_triangles(&[[Vec3::ZERO, Vec3::X * 1e3, Vec3::Y * 1e3]]);
    /// let camera = Camera::frame(scene.bounds, 1.0);
    /// add_default_light(&mut scene, &camera);
    /// let p = Prepared::new(scene, &Default::default());
    /// assert_eq!(RenderOptions::default().scale_log2(&p), 32);
    /// ```
    pub fn scale_log2(&self, p: &Prepared) -> i32 {
        SampleSums::scale_log2_below(self.brightest(p))
    }

    /// The options' part of [`brightest`](RenderOptions::brightest): background and ambient.
    pub(crate) fn brightest_option(&self) -> f32 {
        positive_max(self.background).max(positive_max(Vec3::splat(self.ambient)))
    }
}

/// The scene's part of [`RenderOptions::brightest`]: emitters, area and point lights (the GPU
/// scene keeps it from its upload).
pub(crate) fn brightest_in_scene(p: &Prepared) -> f32 {
    let b = p.structure.bounds();
    let weight = point_light_weight(b.min, b.max);
    let lights = p.scene.lights.iter().map(|l| match *l {
        Light::Point { intensity, .. } => positive_max(intensity * weight),
        Light::Area { emission, .. } => positive_max(emission),
    });
    p.scene.materials.iter().map(|m| positive_max(m.ke)).chain(lights).fold(0.0, f32::max)
}

/// The largest channel of `v` that is a positive normal f32, else 0 (`raytrace/whitted.wgsl`
/// compares the same channels' bits).
fn positive_max(v: Vec3) -> f32 {
    v.to_array().into_iter().filter(|c| c.is_normal() && *c > 0.0).fold(0.0, f32::max)
}

/// What a point light's intensity is weighed by in [`RenderOptions::brightest`]:
/// `1 / (pi D^2)`, `D` the diagonal of the box `min..max`. Computed here for both paths, so
/// that the GPU multiplies by the same bits.
pub(crate) fn point_light_weight(min: Vec3, max: Vec3) -> f32 {
    1.0 / (PI * (max - min).length_squared())
}

/// Adds a point light near the camera, raised by half the scene's size, when the scene has
/// no light at all (OBJ files without emitters, like the test meshes). Its intensity is
/// `0.6 pi size²` per channel (`size` the diagonal of the scene's box): a diffuse surface of
/// albedo `Kd` facing it at distance `size` shows radiance `0.6 Kd`.
///
/// ```
/// use glam::Vec3;
/// use lumbre_raytrace::{Camera, Scene, add_default_light};
/// let mut scene = Scene::from_triangles(&[[Vec3::ZERO, Vec3::X, Vec3::Y]]);
/// let camera = Camera::frame(scene.bounds, 1.0);
/// add_default_light(&mut scene, &camera);
/// assert_eq!(scene.lights.len(), 1);
/// ```
pub fn add_default_light(scene: &mut Scene, camera: &Camera) {
    if scene.lights.is_empty() {
        let (lo, hi) = scene.bounds;
        let size = (hi - lo).length();
        let pos = camera.eye + camera.up.normalize_or_zero() * 0.5 * size;
        // Radiant intensity: pi times the irradiance scale the images were tuned for when the
        // diffuse term was Kd rather than Kd / pi.
        scene.add_point_light(pos, Vec3::splat(size * size * 0.6 * PI));
    }
}

/// Schlick's approximation of the Fresnel reflectance.
pub fn schlick(cos_i: f32, n1: f32, n2: f32) -> f32 {
    let r0 = ((n1 - n2) / (n1 + n2)).powi(2);
    let c = 1.0 - cos_i;
    r0 + (1.0 - r0) * c * c * c * c * c
}

#[derive(Clone, Copy)]
struct Pending {
    origin: Vec3,
    dir: Vec3,
    weight: Vec3,
    depth: u32,
}

/// What a render produced besides the image.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RenderStats {
    /// Rays cast: camera, secondary and shadow rays.
    pub rays: u64,
}

impl Prepared {
    /// Radiance along one camera ray; `rays` counts every ray cast.
    pub fn radiance(
        &self,
        origin: Vec3,
        dir: Vec3,
        pixel: u32,
        sample: u32,
        o: &RenderOptions,
        rays: &mut u64,
    ) -> Vec3 {
        let mut stack = [Pending { origin, dir, weight: Vec3::ONE, depth: 0 }; MAX_TRACE_DEPTH as usize + 2];
        let mut top = 1;
        let mut color = Vec3::ZERO;
        while top > 0 {
            top -= 1;
            let r = stack[top];
            *rays += 1;
            let Some(hit) = self.closest_hit(&Ray::new(r.origin, r.dir), f32::INFINITY, &o.query) else {
                color += r.weight * o.background;
                continue;
            };
            let tri = self.tris[hit.tri as usize];
            let p = r.origin + r.dir * hit.t;
            let mut ng = (tri[1] - tri[0]).cross(tri[2] - tri[0]).normalize_or_zero();
            let mut n = self.shade_normal(hit.tri, hit.u, hit.v, ng);
            let entering = ng.dot(r.dir) < 0.0;
            if !entering {
                ng = -ng;
            }
            if n.dot(ng) < 0.0 {
                n = -n;
            }
            let m = &self.scene.materials[self.scene.triangles[hit.tri as usize].material as usize];
            // Emitters emit on the side of their geometric normal only, and reflect like any
            // diffuse surface.
            if m.kind == MaterialKind::Emitter && entering {
                color += r.weight * m.ke;
            }
            let view = -r.dir;
            let above = p + ng * self.eps;
            // Local (Phong) shading with shadow rays, for every kind but glass.
            if m.kind != MaterialKind::Glass {
                let mut local = o.ambient * m.kd;
                for (li, light) in self.scene.lights.iter().enumerate() {
                    let (lp, ln, e) = match *light {
                        Light::Point { position, intensity } => (position, Vec3::ZERO, intensity),
                        Light::Area { emission, area, .. } => {
                            let (su, sv) = light_sample(pixel, sample, r.depth, li as u32);
                            let (q, qn, _) = light.sample(&self.scene, su, sv);
                            (q, qn, emission * area)
                        }
                    };
                    // Distances and cosines from the surface point itself; the shadow ray alone
                    // leaves from the lifted point.
                    let to = lp - p;
                    let d2 = to.length_squared();
                    if d2 <= 0.0 {
                        continue;
                    }
                    let l = to / d2.sqrt();
                    let cos = n.dot(l);
                    if cos <= 0.0 {
                        continue;
                    }
                    let cos_l = if ln == Vec3::ZERO { 1.0 } else { -ln.dot(l) };
                    if cos_l <= 0.0 {
                        continue;
                    }
                    let irradiance = e * (cos_l / d2);
                    let shadow = lp - above;
                    let ds = shadow.length();
                    *rays += 1;
                    if self.any_hit(&Ray::new(above, shadow / ds), ds * (1.0 - 1e-3), &o.query) {
                        continue;
                    }
                    let mut c = m.kd * cos;
                    if matches!(m.kind, MaterialKind::Phong | MaterialKind::Mirror) && m.ks != Vec3::ZERO {
                        let refl = 2.0 * n.dot(l) * n - l;
                        c += m.ks * refl.dot(view).max(0.0).powf(m.ns.max(1.0));
                    }
                    local += c * irradiance / PI;
                }
                color += r.weight * local;
            }
            if r.depth + 1 >= o.max_depth {
                continue;
            }
            let mut push = |origin: Vec3, dir: Vec3, weight: Vec3| {
                if weight.max_element() > 1e-3 && top < stack.len() {
                    stack[top] = Pending { origin, dir, weight, depth: r.depth + 1 };
                    top += 1;
                }
            };
            let reflected = r.dir - 2.0 * r.dir.dot(n) * n;
            match m.kind {
                MaterialKind::Mirror => push(above, reflected, r.weight * m.ks),
                MaterialKind::Glass => {
                    let (n1, n2) = if entering { (1.0, m.ni) } else { (m.ni, 1.0) };
                    let eta = n1 / n2;
                    let cos_i = (-r.dir.dot(n)).clamp(0.0, 1.0);
                    let sin2_t = eta * eta * (1.0 - cos_i * cos_i);
                    if sin2_t >= 1.0 {
                        push(above, reflected, r.weight);
                    } else {
                        let cos_t = (1.0 - sin2_t).sqrt();
                        let refracted = eta * r.dir + (eta * cos_i - cos_t) * n;
                        let f = schlick(cos_i, n1, n2);
                        push(above, reflected, r.weight * f);
                        push(p - ng * self.eps, refracted, r.weight * (1.0 - f));
                    }
                }
                _ => {}
            }
        }
        color
    }

    /// Renders on the CPU in parallel rows; `progress` is called with each finished row.
    /// The image is the mean of the samples of [`RenderOptions::samples`]
    /// ([`render_sums_cpu`](Prepared::render_sums_cpu)). An error for options
    /// [`RenderOptions::check`] refuses or a scene outside
    /// [`SCENE_SIZE_RANGE`](crate::SCENE_SIZE_RANGE).
    pub fn render_cpu(
        &self,
        camera: &Camera,
        o: &RenderOptions,
        progress: &(dyn Fn(u32) + Sync),
    ) -> Result<(Image, RenderStats), String> {
        let (sums, stats) = self.render_sums_cpu(camera, o, progress)?;
        Ok((sums.mean()?, stats))
    }

    /// The per-pixel sums of the samples of [`RenderOptions::samples`] in fixed point
    /// ([`SampleSums`], in units of [`RenderOptions::scale_log2`]), rows in parallel;
    /// `progress` is called with each finished row.
    ///
    /// ```
    /// use lumbre_raytrace::{Camera, Prepared, RenderOptions, Scene};
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/scenes/CornellBox-Original.obj");
    /// let (scene, _) = Scene::load_obj(path.as_ref())?;
    /// let camera = Camera::frame(scene.bounds, 1.0);
    /// let p = Prepared::new(scene, &Default::default());
    /// let batch = |batch| RenderOptions { width: 8, height: 8, spp: 4, batch, ..Default::default() };
    /// // Samples [0, 3) and [3, 4) of the four strata add up to the bits of all four.
    /// let (mut sums, _) = p.render_sums_cpu(&camera, &batch(Some((0, 3))), &|_| ())?;
    /// sums.merge(&p.render_sums_cpu(&camera, &batch(Some((3, 1))), &|_| ())?.0)?;
    /// assert_eq!(sums, p.render_sums_cpu(&camera, &batch(None), &|_| ())?.0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn render_sums_cpu(
        &self,
        camera: &Camera,
        o: &RenderOptions,
        progress: &(dyn Fn(u32) + Sync),
    ) -> Result<(SampleSums, RenderStats), String> {
        o.check()?;
        self.scene.check_size()?;
        let g = camera.to_gpu(o.width, o.height);
        let (first, count) = o.samples();
        let mut sums = SampleSums::new(o.width, o.height, first, o.scale_log2(self));
        let scale = sums.scale_log2;
        let rays = sums
            .sums
            .par_chunks_mut(o.width as usize)
            .enumerate()
            .map(|(y, row)| {
                let y = y as u32;
                let mut rays = 0u64;
                for (x, px) in row.iter_mut().enumerate() {
                    let x = x as u32;
                    let seed = pixel_seed(x, y, o.width);
                    for s in first..first + count {
                        let (jx, jy) = stratified(o.spp, s, seed);
                        let (origin, dir) = g.ray(x as f32 + jx, y as f32 + jy);
                        add_quantized(px, self.radiance(origin, dir, seed, s, o, &mut rays), scale);
                    }
                }
                progress(y);
                rays
            })
            .sum();
        sums.samples = count;
        Ok((sums, RenderStats { rays }))
    }
}

/// A Whitted render through the [`Compute`](lumbre_gpu::Compute) trait: CPU
/// ([`WhittedRender::cpu`], [`Prepared::render_cpu`]) or GPU.
///
/// Both paths add each sample to its pixel's sums in 64-bit fixed point ([`SampleSums`]), so a
/// render cut into batches ([`RenderOptions::batch`]) adds up to the same bits.
/// The GPU renders at most [`SAMPLES_PER_DISPATCH`](crate::twin::SAMPLES_PER_DISPATCH)
/// samples per pixel in one dispatch, so that the loops of one invocation stay short
/// (lavapipe ends an invocation's loops after 65535 iterations in all, silently; the kernel
/// notices and the download refuses the image).
///
/// ```no_run
/// use lumbre_gpu::{Compute, Gpu};
/// use lumbre_raytrace::{Camera, Prepared, RenderOptions, Scene, WhittedRender};
/// let (scene, _) = Scene::load_obj("testdata/scenes/CornellBox-Original.obj".as_ref()).unwrap();
/// let camera = Camera::frame(scene.bounds, 1.0);
/// let prepared = Prepared::new(scene, &Default::default());
/// let render = WhittedRender { camera, options: RenderOptions { width: 128, height: 128, ..Default::default() } };
/// let image = render.gpu(&Gpu::new()?, &prepared)?;
/// # let _ = image;
/// # Ok::<(), lumbre_gpu::Error>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub struct WhittedRender {
    /// The camera.
    pub camera: Camera,
    /// Size, samples, depth, shading constants, ray queries.
    pub options: RenderOptions,
}

impl WhittedRender {
    /// The CPU render ([`Prepared::render_cpu`]).
    ///
    /// ```
    /// use lumbre_raytrace::{Camera, Prepared, RenderOptions, Scene, WhittedRender};
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/scenes/CornellBox-Original.obj");
    /// let (scene, _) = Scene::load_obj(path.as_ref())?;
    /// let camera = Camera::frame(scene.bounds, 1.0);
    /// let render = WhittedRender { camera, options: RenderOptions { width: 16, height: 16, ..Default::default() } };
    /// let image = render.cpu(&Prepared::new(scene, &Default::default()))?;
    /// assert_eq!(image.width, 16);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn cpu(&self, p: &Prepared) -> Result<Image> {
        self.run_cpu(p, &()).map(|(image, _)| image)
    }

    /// [`cpu`](WhittedRender::cpu) with one progress step per row, the render timed and the
    /// rays cast reported.
    pub fn run_cpu(&self, p: &Prepared, progress: &dyn Progress) -> Result<(Image, Report)> {
        let (sums, report) = self.run_sums_cpu(p, progress)?;
        Ok((sums.mean().map_err(Error::Input)?, report))
    }

    /// [`Prepared::render_sums_cpu`] with one progress step per row, the render timed and the
    /// rays cast reported.
    pub(crate) fn run_sums_cpu(&self, p: &Prepared, progress: &dyn Progress) -> Result<(SampleSums, Report)> {
        let rows = AtomicU64::new(0);
        let height = self.options.height as u64;
        let mut report = Report::default();
        let (sums, stats) = report
            .time("render", || {
                p.render_sums_cpu(&self.camera, &self.options, &|_| {
                    progress.update("render", rows.fetch_add(1, Ordering::Relaxed) + 1, height)
                })
            })
            .map_err(Error::Input)?;
        report.stat("rays", stats.rays as f64);
        Ok((sums, report))
    }
}
