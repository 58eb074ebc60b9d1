//! The reference path tracer on the CPU: the ground truth of the global-illumination crates,
//! and the oracle `raytrace/path.wgsl` follows step by step.
//!
//! Unidirectional path tracing in the units of the scene's `Ke`. Per sample, a camera ray
//! jittered uniformly in its pixel, then a loop over the path's vertices (`depth` 0 is the
//! first hit):
//!
//! - a miss adds `throughput * background` and ends the path;
//! - an emitter seen from its front side (the side of its geometric normal) adds
//!   `throughput * Ke`, weighted by the power heuristic against emitter sampling when the
//!   previous vertex scattered diffusely (fully after the camera or a specular bounce);
//! - at `depth == max_bounces` the path ends (1: direct light only, 0: emitters only);
//! - `Diffuse` surfaces and emitters (which also reflect their `Kd`) have the BRDF
//!   `Kd / pi`; `Phong` surfaces add the normalized Phong lobe
//!   `Ks (Ns + 2) / (2 pi) max(0, r . wi)^Ns` about the mirror direction `r`. Next-event
//!   estimation draws one point on the emitters ([`Emitters::sample`]) and casts a shadow
//!   ray, weighted by the power heuristic against the BRDF sampling density, and adds every
//!   point light (without MIS: they cannot be hit); the path then continues in a direction
//!   drawn from the cosine density or the Phong lobe, picked in proportion to `max(Kd)` and
//!   `max(Ks)`, weighted by the BRDF over the mixture's density;
//! - mirrors reflect with weight `Ks` and may also be diffuse (`Kd`): one of the two lobes
//!   is picked in proportion to `max(Ks)` and `max(Kd)`, and next-event estimation covers
//!   the diffuse lobe;
//! - glass reflects or refracts as the Whitted integrator does, picking reflection with
//!   Schlick's Fresnel probability (total internal reflection: always);
//! - from `depth >= rr_depth`, Russian roulette continues with probability
//!   `clamp(max(throughput), 0.05, 0.95)` and divides the throughput by it.
//!
//! Every random number is [`path_uniform`]`(pixel, sample, depth, dimension)`, so the GPU
//! draws the same numbers, and a sample's value does not depend on how the samples are
//! batched.

use std::sync::atomic::{AtomicU64, Ordering};

use glam::Vec3;
use lumbre_gpu::{Error, Progress, Report, Result};
use lumbre_kdtree::{QueryOptions, Ray};
use rayon::prelude::*;

use crate::camera::{Camera, GpuCamera};
use crate::emitters::Emitters;
use crate::image::Image;
use crate::material::MaterialKind;
use crate::sampling::{
    PI, cosine_hemisphere, cosine_hemisphere_pdf, hash_f32, hash_u32, phong_lobe, phong_lobe_pdf, pixel_seed,
    power_heuristic, to_world,
};
use crate::scene::{Light, Prepared, Scene};
use crate::sums::{SampleSums, add_quantized};
use crate::whitted::schlick;

/// Settings of a path-traced render, shared by the CPU and GPU paths.
///
/// ```
/// let o = lumbre_raytrace::PathOptions::default();
/// assert_eq!((o.width, o.height, o.spp, o.first_sample), (256, 256, 16, 0));
/// assert_eq!((o.max_bounces, o.rr_depth), (64, 3));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PathOptions {
    /// Image width in pixels.
    pub width: u32,
    /// Image height in pixels.
    pub height: u32,
    /// Samples per pixel in this render.
    pub spp: u32,
    /// Index of the first sample: a render of samples `[a, b)` then one of `[b, c)` draw the
    /// same samples as one render of `[a, c)`.
    pub first_sample: u32,
    /// Longest path in bounces: 0 shows the emitters only, 1 direct light only.
    pub max_bounces: u32,
    /// Russian roulette from this bounce on (`depth >= rr_depth`).
    pub rr_depth: u32,
    /// Radiance of rays that leave the scene.
    pub background: Vec3,
    /// Traversal and triangle test of every ray query.
    pub query: QueryOptions,
    /// How the GPU schedules the paths (the CPU traces each path alone; the image is the
    /// same bits either way).
    pub schedule: PathSchedule,
}

/// How the GPU path tracer schedules its paths: the same paths and the same sums either way.
///
/// ```
/// use lumbre_raytrace::{PathOptions, PathSchedule};
/// let o = PathOptions { schedule: PathSchedule::wavefront(), ..Default::default() };
/// assert_eq!(o.schedule, PathSchedule::Wavefront { pool: 1 << 20, reorder: false });
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PathSchedule {
    /// One kernel a batch of samples, each thread tracing whole paths one after another.
    #[default]
    Megakernel,
    /// A pool of `pool` paths in flight and one kernel per stage (new paths, extension rays,
    /// vertices, shadow rays) with queues between them; `reorder` sorts the queued rays by
    /// origin and direction before each trace. It reads two counters back every 32 rounds, so
    /// it records through a recorder of its own (`Gpu::recorder`), not an application's
    /// encoder.
    Wavefront {
        /// Paths in flight (rounded up to a multiple of 64).
        pool: u32,
        /// Sort the queued rays by a Morton key of origin and direction octant.
        reorder: bool,
    },
}

impl PathSchedule {
    /// Paths in flight of [`wavefront`](PathSchedule::wavefront): a million, several times
    /// what a large GPU runs at once, so that the queues stay full between rounds.
    pub const POOL: u32 = 1 << 20;

    /// GPU bytes a path in flight takes in the wavefront: its state (80), its queued
    /// next-event estimation (128, the largest buffer's share), its hit (16), its queue entry
    /// and sort key (4 each).
    pub const BYTES_PER_PATH: u64 = 80 + 128 + 16 + 4 + 4;

    /// The share of [`BYTES_PER_PATH`](PathSchedule::BYTES_PER_PATH) in the wavefront's
    /// largest buffer, which must fit one storage binding.
    pub const LARGEST_PER_PATH: u64 = 128;

    /// The wavefront with [`POOL`](PathSchedule::POOL) paths in flight, without ray reordering.
    pub fn wavefront() -> PathSchedule {
        PathSchedule::Wavefront { pool: PathSchedule::POOL, reorder: false }
    }
}

impl Default for PathOptions {
    fn default() -> Self {
        PathOptions {
            width: 256,
            height: 256,
            spp: 16,
            first_sample: 0,
            max_bounces: 64,
            rr_depth: 3,
            background: Vec3::ZERO,
            query: QueryOptions::default(),
            schedule: PathSchedule::Megakernel,
        }
    }
}

impl PathOptions {
    /// Checks the options: a non-empty image, at least one sample, sample indices that fit
    /// in u32.
    pub fn check(&self) -> Result<()> {
        if self.width == 0 || self.height == 0 {
            return Err(Error::Input(format!(
                "path render of {}x{} pixels: both must be >= 1",
                self.width, self.height
            )));
        }
        if (self.width as u64) * (self.height as u64) > u32::MAX as u64 {
            return Err(Error::Input(format!("path render of {}x{} pixels: more than 2^32", self.width, self.height)));
        }
        if self.spp == 0 {
            return Err(Error::Input("path render with spp 0: at least one sample per pixel".into()));
        }
        if self.first_sample.checked_add(self.spp).is_none() {
            return Err(Error::Input(format!(
                "samples [{}, {} + {}) run past 2^32",
                self.first_sample, self.first_sample, self.spp
            )));
        }
        if let PathSchedule::Wavefront { pool: 0, .. } = self.schedule {
            return Err(Error::Input("wavefront path tracer with a pool of 0 paths: at least 1".into()));
        }
        if !self.background.is_finite() || self.background.min_element() < 0.0 {
            return Err(Error::Input(format!("background {}: must be finite and >= 0", self.background)));
        }
        Ok(())
    }
}

/// Dimension of [`path_uniform`] that picks the emitter of next-event estimation.
pub const DIM_LIGHT_PICK: u32 = 0;
/// First of the two dimensions that place the point on the picked emitter.
pub const DIM_LIGHT_POINT: u32 = 1;
/// First of the two dimensions of the scattered direction.
pub const DIM_DIRECTION: u32 = 3;
/// The dimension that picks a lobe (mirror: specular or diffuse; glass: reflect or refract).
pub const DIM_LOBE: u32 = 5;
/// The dimension of Russian roulette.
pub const DIM_ROULETTE: u32 = 6;
/// First of the two dimensions of the camera ray's position in its pixel (depth 0).
pub const DIM_CAMERA: u32 = 7;

/// The random number of dimension `dim` (below 16) at vertex `depth` of sample `sample` of
/// pixel `pixel` (`y * width + x`): `hash_f32(key ^ hash_u32(16 depth + dim))` with
/// `key = hash_u32(hash_u32(pixel) ^ sample)`, in `[0, 1)` with 24 bits. `raytrace/path.wgsl`
/// computes the same bits.
///
/// ```
/// use lumbre_raytrace::twin::path_uniform;
/// let u = path_uniform(5, 0, 1, 3);
/// assert!((0.0..1.0).contains(&u));
/// assert_ne!(u, path_uniform(5, 1, 1, 3));
/// ```
pub fn path_uniform(pixel: u32, sample: u32, depth: u32, dim: u32) -> f32 {
    path_uniform_key(sample_key(pixel, sample), depth, dim)
}

/// The key of sample `sample` of pixel `pixel` in [`path_uniform`].
fn sample_key(pixel: u32, sample: u32) -> u32 {
    hash_u32(hash_u32(pixel) ^ sample)
}

/// [`path_uniform`] from the sample's key.
fn path_uniform_key(key: u32, depth: u32, dim: u32) -> f32 {
    hash_f32(key ^ hash_u32(depth.wrapping_mul(16).wrapping_add(dim)))
}

/// Counts of one render.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PathCounts {
    /// Rays that extend paths (camera rays included).
    pub extension: u64,
    /// Shadow rays of next-event estimation.
    pub shadow: u64,
}

/// Survival probability of Russian roulette is `max(throughput)` clamped to this range.
pub const ROULETTE_SURVIVAL: (f32, f32) = (0.05, 0.95);

/// The unit geometric normal `normalize((b - a) × (c - a))` of every triangle, computed in f64
/// ([`Scene::face_normal`]). Both paths read these bits rather than
/// each computing its own: the sampling frame (Duff et al.) changes branch where the normal's
/// `z` changes sign, and walls parallel to `z` have a `z` that is zero but for rounding, whose
/// sign a fused multiply-add decides.
pub(crate) fn face_normals(scene: &Scene) -> Vec<Vec3> {
    (0..scene.triangles.len() as u32).map(|i| scene.face_normal(i).unwrap_or(Vec3::ZERO)).collect()
}

/// The non-delta part of a surface's BRDF and how it is sampled: `kd / pi` plus, for Phong
/// materials, the normalized Phong lobe `ks (ns + 2) / (2 pi) max(0, r . wi)^ns` about the
/// mirror direction `r`; a mixture of the cosine density (weight `p_diffuse`) and the lobe's
/// (weight `p_glossy`). A mirror's delta lobe is not part of it.
struct Lobes {
    n: Vec3,
    r: Vec3,
    kd: Vec3,
    ks: Vec3,
    ns: f32,
    p_diffuse: f32,
    p_glossy: f32,
}

impl Lobes {
    /// The BRDF towards `wi` and the mixture's density of `wi` in solid angle.
    fn eval(&self, wi: Vec3) -> (Vec3, f32) {
        let cos = self.n.dot(wi);
        let mut f = self.kd / PI;
        let mut pdf = self.p_diffuse * cosine_hemisphere_pdf(cos);
        if self.p_glossy > 0.0 {
            let c = self.r.dot(wi);
            f += self.ks * ((self.ns + 2.0) / (2.0 * PI) * c.max(0.0).powf(self.ns));
            pdf += self.p_glossy * phong_lobe_pdf(c, self.ns);
        }
        (f, pdf)
    }
}

/// Everything a sample reads: the scene, its emitters and point lights.
pub(crate) struct Tracer<'a> {
    p: &'a Prepared,
    emitters: Emitters,
    /// (position, intensity) of every point light.
    points: Vec<(Vec3, Vec3)>,
    /// Unit geometric normal of every triangle ([`face_normals`]).
    face_normals: Vec<Vec3>,
    o: PathOptions,
}

impl<'a> Tracer<'a> {
    pub(crate) fn new(p: &'a Prepared, o: &PathOptions) -> Result<Tracer<'a>> {
        o.check()?;
        p.scene.check_size().map_err(Error::Input)?;
        let emitters = Emitters::new(&p.scene)?;
        let mut points = Vec::new();
        for (i, l) in p.scene.lights.iter().enumerate() {
            if let Light::Point { position, intensity } = *l {
                if !position.is_finite() || !intensity.is_finite() || intensity.min_element() < 0.0 {
                    return Err(Error::Input(format!(
                        "light {i}: point light at {position} with intensity {intensity}; both must be finite, intensity >= 0"
                    )));
                }
                points.push((position, intensity));
            }
        }
        Ok(Tracer { p, emitters, points, face_normals: face_normals(&p.scene), o: *o })
    }

    fn closest(&self, origin: Vec3, dir: Vec3) -> Option<lumbre_kdtree::Hit> {
        self.p.closest_hit(&Ray::new(origin, dir), f32::INFINITY, &self.o.query)
    }

    fn occluded(&self, origin: Vec3, dir: Vec3, t_max: f32) -> bool {
        self.p.any_hit(&Ray::new(origin, dir), t_max, &self.o.query)
    }

    /// Next-event estimation at `p` (shadow rays leave from `above`, `p` lifted off the
    /// surface) through the non-delta lobes: one emitter point, weighted by the power
    /// heuristic against the lobes' density, and every point light. Distances and cosines are
    /// measured from `p` itself, so the lift does not bias the estimate.
    fn direct(&self, p: Vec3, above: Vec3, lobes: &Lobes, key: u32, depth: u32, counts: &mut PathCounts) -> Vec3 {
        let mut sum = Vec3::ZERO;
        let u = |d| path_uniform_key(key, depth, d);
        if let Some(s) = self.emitters.sample(u(DIM_LIGHT_PICK), u(DIM_LIGHT_POINT), u(DIM_LIGHT_POINT + 1)) {
            let to = s.point - p;
            let d2 = to.length_squared();
            if d2 > 0.0 {
                let l = to / d2.sqrt();
                let cos = lobes.n.dot(l);
                let cos_l = -s.normal.dot(l);
                if cos > 0.0 && cos_l > 0.0 && self.visible(above, s.point, counts) {
                    let (f, pdf) = lobes.eval(l);
                    let pdf_light = s.pdf * d2 / cos_l;
                    let w = power_heuristic(pdf_light, pdf);
                    sum += s.radiance * f * (cos * w / pdf_light);
                }
            }
        }
        for &(position, intensity) in &self.points {
            let to = position - p;
            let d2 = to.length_squared();
            if d2 <= 0.0 {
                continue;
            }
            let l = to / d2.sqrt();
            let cos = lobes.n.dot(l);
            if cos > 0.0 && self.visible(above, position, counts) {
                sum += intensity * lobes.eval(l).0 * (cos / d2);
            }
        }
        sum
    }

    /// Whether nothing lies between `from` and `to` (a shadow ray, stopped 0.1% short of `to`
    /// so that the light's own triangle does not count).
    fn visible(&self, from: Vec3, to: Vec3, counts: &mut PathCounts) -> bool {
        let v = to - from;
        let d = v.length();
        if d.is_nan() || d <= 0.0 {
            return false;
        }
        counts.shadow += 1;
        !self.occluded(from, v / d, d * (1.0 - 1e-3))
    }

    /// Radiance of sample `sample` of pixel `(x, y)`.
    pub(crate) fn sample(&self, camera: &GpuCamera, x: u32, y: u32, sample: u32, counts: &mut PathCounts) -> Vec3 {
        let o = &self.o;
        let key = sample_key(pixel_seed(x, y, o.width), sample);
        let jx = path_uniform_key(key, 0, DIM_CAMERA);
        let jy = path_uniform_key(key, 0, DIM_CAMERA + 1);
        let (mut origin, mut dir) = camera.ray(x as f32 + jx, y as f32 + jy);
        let mut throughput = Vec3::ONE;
        let mut radiance = Vec3::ZERO;
        // Density in solid angle of the last scattered direction; 0 after the camera or a
        // specular bounce (its emitter hit counts fully).
        let mut last_pdf = 0.0f32;
        // Where the last direction was scattered from.
        let mut last_point = origin;
        let mut depth = 0u32;
        loop {
            counts.extension += 1;
            let Some(hit) = self.closest(origin, dir) else {
                radiance += throughput * o.background;
                break;
            };
            let p = origin + dir * hit.t;
            let mut ng = self.face_normals[hit.tri as usize];
            let mut n = self.p.shade_normal(hit.tri, hit.u, hit.v, ng);
            let entering = ng.dot(dir) < 0.0;
            let m = &self.p.scene.materials[self.p.scene.triangles[hit.tri as usize].material as usize];
            if m.kind == MaterialKind::Emitter && entering {
                let mut w = 1.0;
                if last_pdf > 0.0 {
                    // The density with which next-event estimation would have drawn this point.
                    let pdf_light = self.emitters.pdf(hit.tri) * (p - last_point).length_squared() / (-ng.dot(dir));
                    w = power_heuristic(last_pdf, pdf_light);
                }
                radiance += throughput * m.ke * w;
            }
            if depth >= o.max_bounces {
                break;
            }
            if !entering {
                ng = -ng;
            }
            if n.dot(ng) < 0.0 {
                n = -n;
            }
            let above = p + ng * self.p.eps;
            let u = |d| path_uniform_key(key, depth, d);
            if m.kind == MaterialKind::Glass {
                let (n1, n2) = if entering { (1.0, m.ni) } else { (m.ni, 1.0) };
                let eta = n1 / n2;
                let cos_i = (-dir.dot(n)).clamp(0.0, 1.0);
                let sin2_t = eta * eta * (1.0 - cos_i * cos_i);
                let reflected = dir - 2.0 * dir.dot(n) * n;
                if sin2_t >= 1.0 || u(DIM_LOBE) < schlick(cos_i, n1, n2) {
                    (origin, dir) = (above, reflected);
                } else {
                    let cos_t = (1.0 - sin2_t).sqrt();
                    (origin, dir) = (p - ng * self.p.eps, eta * dir + (eta * cos_i - cos_t) * n);
                }
                last_pdf = 0.0;
            } else {
                let mirror = m.kind == MaterialKind::Mirror;
                let glossy = m.kind == MaterialKind::Phong;
                let kd = m.kd.max_element().max(0.0);
                let ks = if mirror || glossy { m.ks.max_element().max(0.0) } else { 0.0 };
                if kd + ks <= 0.0 {
                    break;
                }
                // The mirror's delta lobe or the Phong lobe, picked in proportion to max(Ks).
                let specular_prob = ks / (kd + ks);
                let reflected = dir - 2.0 * dir.dot(n) * n;
                let lobes = Lobes {
                    n,
                    r: reflected,
                    kd: m.kd,
                    ks: if glossy { m.ks } else { Vec3::ZERO },
                    ns: m.ns.max(1.0),
                    p_diffuse: 1.0 - specular_prob,
                    p_glossy: if glossy { specular_prob } else { 0.0 },
                };
                if kd > 0.0 || glossy {
                    radiance += throughput * self.direct(p, above, &lobes, key, depth, counts);
                }
                let pick_specular = u(DIM_LOBE) < specular_prob;
                if mirror && pick_specular {
                    throughput *= m.ks / specular_prob;
                    (origin, dir) = (above, reflected);
                    last_pdf = 0.0;
                } else {
                    let (u1, u2) = (u(DIM_DIRECTION), u(DIM_DIRECTION + 1));
                    let next = if pick_specular {
                        to_world(phong_lobe(u1, u2, lobes.ns), reflected)
                    } else {
                        to_world(cosine_hemisphere(u1, u2), n)
                    };
                    let cos = n.dot(next);
                    // Below the surface (a lobe or a shading normal leaning away): the path ends.
                    if cos <= 0.0 || next.dot(ng) <= 0.0 {
                        break;
                    }
                    let (f, pdf) = lobes.eval(next);
                    if pdf <= 0.0 {
                        break;
                    }
                    throughput *= f * (cos / pdf);
                    last_pdf = pdf;
                    last_point = p;
                    (origin, dir) = (above, next);
                }
            }
            if depth >= o.rr_depth {
                let survive = throughput.max_element().clamp(ROULETTE_SURVIVAL.0, ROULETTE_SURVIVAL.1);
                if u(DIM_ROULETTE) >= survive {
                    break;
                }
                throughput /= survive;
            }
            depth += 1;
        }
        radiance
    }
}

/// A path-traced render through [`lumbre_gpu::Compute`]: the mean of samples
/// `[first_sample, first_sample + spp)` of every pixel, CPU or GPU.
///
/// ```
/// use lumbre_gpu::Compute;
/// use lumbre_raytrace::{Camera, PathOptions, PathRender, Prepared, Scene};
/// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/scenes/CornellBox-Diffuse.obj");
/// let (scene, _) = Scene::load_obj(path.as_ref()).unwrap();
/// let prepared = Prepared::new(scene, &Default::default());
/// let camera = Camera::parse("0,1,3.9,0,1,0,0,1,0,40").unwrap();
/// let render = PathRender { camera, options: PathOptions { width: 16, height: 16, spp: 2, ..Default::default() } };
/// let (image, report) = render.cpu_reported(&prepared, &()).unwrap();
/// assert_eq!(report.get("paths"), Some(512.0));
/// let centre = image.pixels[8 * 16 + 8];
/// assert!(centre.max_element() > 0.0 && centre.is_finite());
/// ```
#[derive(Clone, Copy, Debug)]
pub struct PathRender {
    /// The camera.
    pub camera: Camera,
    /// Size, samples, path length, background, ray queries.
    pub options: PathOptions,
}

impl PathRender {
    /// The radiance of one sample of pixel `(x, y)`: the value every render that includes
    /// sample `sample` averages for that pixel.
    ///
    /// ```
    /// # use lumbre_raytrace::{Camera, PathOptions, PathRender, Prepared, Scene};
    /// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/scenes/CornellBox-Diffuse.obj");
    /// # let prepared = Prepared::new(Scene::load_obj(path.as_ref()).unwrap().0, &Default::default());
    /// let render = PathRender { camera: Camera::parse("0,1,3.9,0,1,0,0,1,0,40").unwrap(), options: PathOptions::default() };
    /// let l = render.pixel_sample(&prepared, 128, 30, 7).unwrap();
    /// assert!(l.is_finite());
    /// ```
    pub fn pixel_sample(&self, p: &Prepared, x: u32, y: u32, sample: u32) -> Result<Vec3> {
        let tracer = Tracer::new(p, &self.options)?;
        let camera = self.camera.to_gpu(self.options.width, self.options.height);
        Ok(tracer.sample(&camera, x, y, sample, &mut PathCounts::default()))
    }

    /// The CPU render, rows in parallel; `row_done` is called after each row: the mean of
    /// [`render_sums_cpu`](PathRender::render_sums_cpu).
    pub fn render_cpu(&self, p: &Prepared, row_done: &(dyn Fn() + Sync)) -> Result<(Image, PathCounts)> {
        let (sums, counts) = self.render_sums_cpu(p, row_done)?;
        Ok((sums.mean().map_err(Error::Input)?, counts))
    }

    /// The CPU render's per-pixel sums in fixed point ([`SampleSums`]), rows in parallel;
    /// `row_done` is called after each row.
    ///
    /// ```
    /// use lumbre_raytrace::{Camera, PathOptions, PathRender, Prepared, Scene};
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/scenes/CornellBox-Diffuse.obj");
    /// let (scene, _) = Scene::load_obj(path.as_ref())?;
    /// let camera = Camera::frame(scene.bounds, 1.0);
    /// let p = Prepared::new(scene, &Default::default());
    /// let part = |first_sample, spp| PathRender {
    ///     camera,
    ///     options: PathOptions { width: 8, height: 8, spp, first_sample, ..Default::default() },
    /// };
    /// // Samples [0, 3) and [3, 4) add up to the bits of samples [0, 4).
    /// let (mut sums, _) = part(0, 3).render_sums_cpu(&p, &|| ())?;
    /// sums.merge(&part(3, 1).render_sums_cpu(&p, &|| ())?.0)?;
    /// assert_eq!(sums, part(0, 4).render_sums_cpu(&p, &|| ())?.0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn render_sums_cpu(&self, p: &Prepared, row_done: &(dyn Fn() + Sync)) -> Result<(SampleSums, PathCounts)> {
        let tracer = Tracer::new(p, &self.options)?;
        let o = &self.options;
        let camera = self.camera.to_gpu(o.width, o.height);
        let mut sums = SampleSums::new(o.width, o.height, o.first_sample, self.scale_log2(p));
        let scale = sums.scale_log2;
        let counts = sums
            .sums
            .par_chunks_mut(o.width as usize)
            .enumerate()
            .map(|(y, row)| {
                let mut counts = PathCounts::default();
                for (x, px) in row.iter_mut().enumerate() {
                    for s in o.first_sample..o.first_sample + o.spp {
                        add_quantized(px, tracer.sample(&camera, x as u32, y as u32, s, &mut counts), scale);
                    }
                }
                row_done();
                counts
            })
            .reduce(PathCounts::default, |a, r| PathCounts {
                extension: a.extension + r.extension,
                shadow: a.shadow + r.shadow,
            });
        sums.samples = o.spp;
        Ok((sums, counts))
    }

    /// The unit of this render's sums on `p` ([`SampleSums::scale_log2_for`]).
    pub(crate) fn scale_log2(&self, p: &Prepared) -> i32 {
        SampleSums::scale_log2_for(&p.scene, self.options.background)
    }

    /// The statistics of a render: paths, rays, extension and shadow rays, mean path length
    /// (extension rays per path).
    pub(crate) fn stats(&self, counts: PathCounts) -> Report {
        let o = &self.options;
        let paths = o.width as f64 * o.height as f64 * o.spp as f64;
        let mut report = Report::default();
        report.stat("paths", paths);
        report.stat("rays", (counts.extension + counts.shadow) as f64);
        report.stat("extension rays", counts.extension as f64);
        report.stat("shadow rays", counts.shadow as f64);
        report.stat("mean path length", counts.extension as f64 / paths);
        report
    }

    /// The CPU render ([`render_cpu`](PathRender::render_cpu)).
    ///
    /// ```
    /// use lumbre_raytrace::{Camera, PathOptions, PathRender, Prepared, Scene};
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/scenes/CornellBox-Diffuse.obj");
    /// let (scene, _) = Scene::load_obj(path.as_ref())?;
    /// let camera = Camera::frame(scene.bounds, 1.0);
    /// let render = PathRender { camera, options: PathOptions { width: 16, height: 16, ..Default::default() } };
    /// let image = render.cpu(&Prepared::new(scene, &Default::default()))?;
    /// assert_eq!(image.height, 16);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn cpu(&self, p: &Prepared) -> Result<Image> {
        self.run_cpu(p, &()).map(|(image, _)| image)
    }

    /// [`render_cpu`](PathRender::render_cpu) with one progress step per row, the render
    /// timed and its statistics reported (paths, rays by kind, mean path length).
    pub fn run_cpu(&self, p: &Prepared, progress: &dyn Progress) -> Result<(Image, Report)> {
        let (sums, report) = self.run_sums_cpu(p, progress)?;
        Ok((sums.mean().map_err(Error::Input)?, report))
    }

    /// [`render_sums_cpu`](PathRender::render_sums_cpu) with one progress step per row, the
    /// render timed and its statistics reported.
    pub(crate) fn run_sums_cpu(&self, p: &Prepared, progress: &dyn Progress) -> Result<(SampleSums, Report)> {
        let rows = AtomicU64::new(0);
        let height = self.options.height as u64;
        let mut report = Report::default();
        let (sums, counts) = report.time("render", || {
            self.render_sums_cpu(p, &|| progress.update("render", rows.fetch_add(1, Ordering::Relaxed) + 1, height))
        })?;
        report.merge(self.stats(counts));
        Ok((sums, report))
    }
}
