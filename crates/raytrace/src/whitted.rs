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

use glam::Vec3;
use lumbre_kdtree::{BuildOptions, KdTree, QueryOptions, Ray};
use rayon::prelude::*;

use crate::sampling::PI;
use crate::{Camera, Image, Light, MaterialKind, Scene, hash_f32, hash_u32, stratified};

/// Render settings, shared by the CPU and GPU paths.
///
/// ```
/// let o = lumbre_raytrace::RenderOptions::default();
/// assert_eq!((o.width, o.height, o.spp, o.max_depth), (640, 480, 1, 5));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RenderOptions {
    /// Image width in pixels.
    pub width: u32,
    /// Image height in pixels.
    pub height: u32,
    /// Samples per pixel (stratified).
    pub spp: u32,
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
            max_depth: 5,
            ambient: 0.05,
            background: Vec3::splat(0.05),
            query: QueryOptions::default(),
        }
    }
}

/// Deepest `max_depth` the GPU's fixed ray stack supports.
pub const MAX_TRACE_DEPTH: u32 = 12;

/// A scene ready to render: the scene, its triangles and their kd-tree.
#[derive(Clone, Debug)]
pub struct Prepared {
    /// The scene.
    pub scene: Scene,
    /// `scene.triangle_positions()`.
    pub tris: Vec<[Vec3; 3]>,
    /// The kd-tree over `tris`.
    pub tree: KdTree,
    /// Offset of secondary ray origins along the normal (scene size times 1e-4).
    pub eps: f32,
}

impl Prepared {
    /// Builds the kd-tree of `scene`.
    ///
    /// ```
    /// use glam::Vec3;
    /// let scene = lumbre_raytrace::Scene::from_triangles(&[[Vec3::ZERO, Vec3::X, Vec3::Y]]);
    /// let p = lumbre_raytrace::Prepared::new(scene, &Default::default());
    /// assert_eq!(p.tris.len(), 1);
    /// ```
    pub fn new(scene: Scene, build: &BuildOptions) -> Prepared {
        let tris = scene.triangle_positions();
        let tree = KdTree::build(&tris, build);
        let eps = (scene.bounds.1 - scene.bounds.0).length().max(1e-6) * 1e-4;
        Prepared { scene, tris, tree, eps }
    }
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

/// Seed of the pixel at `(x, y)`: the input of [`stratified`] and of light sampling.
pub fn pixel_seed(x: u32, y: u32, width: u32) -> u32 {
    y.wrapping_mul(width).wrapping_add(x)
}

/// The uniform pair that picks the point on light `light` for `sample` of `pixel`, at
/// bounce `depth`.
pub fn light_sample(pixel: u32, sample: u32, depth: u32, light: u32) -> (f32, f32) {
    let k = hash_u32(
        pixel ^ hash_u32(sample.wrapping_mul(64).wrapping_add(depth.wrapping_mul(8)) ^ light.wrapping_mul(0x9e37_79b9)),
    );
    (hash_f32(k), hash_f32(hash_u32(k)))
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
    pub(crate) fn shade_normal(&self, tri: u32, u: f32, v: f32, ng: Vec3) -> Vec3 {
        let t = self.scene.triangles[tri as usize];
        if !t.has_normals() {
            return ng;
        }
        let [a, b, c] = t.n.map(|i| self.scene.normals[i as usize]);
        let n = a * (1.0 - u - v) + b * u + c * v;
        let len = n.length();
        if len > 0.0 { n / len } else { ng }
    }

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
            let Some(hit) = self.tree.closest_hit(&self.tris, &Ray::new(r.origin, r.dir), 0.0, f32::INFINITY, &o.query)
            else {
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
                    if self.tree.any_hit(&self.tris, &Ray::new(above, shadow / ds), 0.0, ds * (1.0 - 1e-3), &o.query) {
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
    pub fn render_cpu(
        &self,
        camera: &Camera,
        o: &RenderOptions,
        progress: &(dyn Fn(u32) + Sync),
    ) -> (Image, RenderStats) {
        let g = camera.to_gpu(o.width, o.height);
        let spp = o.spp.max(1);
        let rows: Vec<(Vec<Vec3>, u64)> = (0..o.height)
            .into_par_iter()
            .map(|y| {
                let mut rays = 0u64;
                let row = (0..o.width)
                    .map(|x| {
                        let seed = pixel_seed(x, y, o.width);
                        let mut sum = Vec3::ZERO;
                        for s in 0..spp {
                            let (jx, jy) = stratified(spp, s, seed);
                            let (origin, dir) = g.ray(x as f32 + jx, y as f32 + jy);
                            sum += self.radiance(origin, dir, seed, s, o, &mut rays);
                        }
                        sum / spp as f32
                    })
                    .collect();
                progress(y);
                (row, rays)
            })
            .collect();
        let rays = rows.iter().map(|r| r.1).sum();
        let pixels = rows.into_iter().flat_map(|r| r.0).collect();
        let image = Image::from_pixels(o.width, o.height, pixels).expect("width x height pixels");
        (image, RenderStats { rays })
    }
}
