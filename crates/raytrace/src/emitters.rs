//! The scene's area emitters as a distribution to sample: emissive triangles picked in
//! proportion to their power, uniform points on them, cosine directions from them. The WGSL
//! twin is `shared/emitters.wgsl`, fed by [`GpuEmitters`](crate::twin::GpuEmitters).
//!
//! Conventions (shared by every global-illumination crate): a triangle whose material is an
//! [`Emitter`](crate::MaterialKind::Emitter) emits radiance `Ke` on the side of its geometric
//! normal `(b - a) × (c - a)` only; its power is `pi * area * Ke` per channel.

use glam::Vec3;
use lumbre_gpu::{Error, Result};

use crate::sampling::{PI, cosine_hemisphere, to_world, uniform_triangle};
use crate::scene::Scene;

/// `Emitters::index` entry of a triangle that does not emit.
pub const NOT_AN_EMITTER: u32 = u32::MAX;

/// One emissive triangle.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Emitter {
    /// Index into [`Scene::triangles`].
    pub triangle: u32,
    /// Its corners `(a, b, c)`.
    pub corners: [Vec3; 3],
    /// Unit geometric normal, `normalize((b - a) × (c - a))`: the emitting side.
    pub normal: Vec3,
    /// Area.
    pub area: f32,
    /// Emitted radiance (the material's `Ke`).
    pub radiance: Vec3,
    /// Emitted power, `pi * area * Ke`.
    pub power: Vec3,
    /// Probability of picking it: its interval of the CDF.
    pub prob: f32,
    /// Density of its points in area measure, `prob / area`.
    pub pdf_area: f32,
}

/// A point drawn on the emitters by [`Emitters::sample`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EmitterSample {
    /// The point.
    pub point: Vec3,
    /// The emitter's unit geometric normal (the emitting side).
    pub normal: Vec3,
    /// Emitted radiance towards the front side.
    pub radiance: Vec3,
    /// Index of the triangle into [`Scene::triangles`].
    pub triangle: u32,
    /// Density of the point in area measure: pick probability / area.
    pub pdf: f32,
}

/// The emissive triangles of a scene with a CDF by power for picking one.
///
/// Emitters are picked with probability proportional to the sum of their power's three
/// channels (radiometric, so a channel-sum-weighted pick is unbiased for every channel; a
/// luminance weight would starve a pure-blue light). The CDF is stored in f32 with a leading
/// 0 and a final 1, and an emitter's probability is defined as its CDF interval (the
/// difference of two f32 values), so the probabilities the integrators divide by are exactly
/// those of the search they run; an interval rounded to zero makes an emitter that is never
/// picked and has density 0 (still found by paths that hit it).
///
/// ```
/// use lumbre_raytrace::{Emitters, Scene};
/// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/scenes/CornellBox-Diffuse.obj");
/// let (scene, _) = Scene::load_obj(path.as_ref()).unwrap();
/// let emitters = Emitters::new(&scene).unwrap();
/// assert_eq!(emitters.len(), 2);
/// let s = emitters.sample(0.3, 0.5, 0.5).unwrap();
/// assert!((s.point.y - 1.98).abs() < 1e-6 && s.normal.y < -0.99); // the light faces down
/// assert!((emitters.pdf(s.triangle) - s.pdf).abs() == 0.0);
/// let area: f32 = emitters.emitters().iter().map(|e| e.area).sum();
/// assert!((emitters.total_power() - glam::Vec3::new(17.0, 12.0, 4.0) * area * std::f32::consts::PI).length() < 1e-3);
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Emitters {
    emitters: Vec<Emitter>,
    /// `len() + 1` entries: 0, the running sums of the probabilities, 1.
    cdf: Vec<f32>,
    /// Per scene triangle: its index into `emitters`, or [`NOT_AN_EMITTER`].
    index: Vec<u32>,
    total_power: Vec3,
}

impl Emitters {
    /// The emissive triangles of `scene` (material kind `Emitter`), in triangle order.
    ///
    /// An error names the material and triangle when an emitter's `Ke` has a negative or
    /// non-finite channel, or when a triangle's material or corner index is out of range.
    ///
    /// ```
    /// use glam::Vec3;
    /// use lumbre_raytrace::{Emitters, Scene};
    /// let scene = Scene::from_triangles(&[[Vec3::ZERO, Vec3::X, Vec3::Y]]);
    /// let none = Emitters::new(&scene).unwrap();
    /// assert!(none.is_empty() && none.sample(0.5, 0.5, 0.5).is_none() && none.pdf(0) == 0.0);
    /// ```
    pub fn new(scene: &Scene) -> Result<Emitters> {
        let mut emitters = Vec::new();
        let mut index = vec![NOT_AN_EMITTER; scene.triangles.len()];
        for (i, t) in scene.triangles.iter().enumerate() {
            let m = scene.materials.get(t.material as usize).ok_or_else(|| {
                Error::Input(format!(
                    "triangle {i}: material {} out of range ({} materials)",
                    t.material,
                    scene.materials.len()
                ))
            })?;
            if !m.is_emitter() {
                continue;
            }
            if !m.ke.is_finite() || m.ke.min_element() < 0.0 {
                return Err(Error::Input(format!(
                    "triangle {i}: material \"{}\" emits Ke = {}; every channel must be finite and >= 0",
                    m.name, m.ke
                )));
            }
            let corners = scene
                .triangle(i as u32)
                .ok_or_else(|| Error::Input(format!("triangle {i}: a corner index is out of range")))?;
            let [a, b, c] = corners.map(|p| p.as_dvec3());
            let cross = (b - a).cross(c - a);
            let area = 0.5 * cross.length();
            if !(area > 0.0 && area.is_finite()) {
                return Err(Error::Input(format!("triangle {i}: emitter with area {area}, must be finite and > 0")));
            }
            index[i] = emitters.len() as u32;
            emitters.push(Emitter {
                triangle: i as u32,
                corners,
                normal: (cross / (2.0 * area)).as_vec3(),
                area: area as f32,
                radiance: m.ke,
                power: (m.ke.as_dvec3() * (std::f64::consts::PI * area)).as_vec3(),
                prob: 0.0,
                pdf_area: 0.0,
            });
        }
        let weight = |e: &Emitter| {
            let p = e.power.as_dvec3();
            p.x + p.y + p.z
        };
        let total: f64 = emitters.iter().map(weight).sum();
        let mut cdf = Vec::with_capacity(emitters.len() + 1);
        cdf.push(0.0f32);
        let mut running = 0.0f64;
        for e in &emitters {
            running += weight(e);
            cdf.push(if total > 0.0 { (running / total) as f32 } else { 1.0 });
        }
        // Rounding must not leave the top of the CDF below 1 (u could fall past it).
        if let Some(last) = cdf.last_mut().filter(|_| !emitters.is_empty()) {
            *last = 1.0;
        }
        for (k, e) in emitters.iter_mut().enumerate() {
            let prob = f64::from(cdf[k + 1]) - f64::from(cdf[k]);
            e.prob = prob as f32;
            e.pdf_area = (prob / f64::from(e.area)) as f32;
        }
        let total_power = emitters.iter().fold(Vec3::ZERO, |s, e| s + e.power);
        Ok(Emitters { emitters, cdf, index, total_power })
    }

    /// Number of emissive triangles.
    pub fn len(&self) -> usize {
        self.emitters.len()
    }

    /// Whether the scene has no emissive triangle.
    pub fn is_empty(&self) -> bool {
        self.emitters.is_empty()
    }

    /// The emitters, in scene triangle order.
    pub fn emitters(&self) -> &[Emitter] {
        &self.emitters
    }

    /// The CDF: `len() + 1` entries, `0`, running sums of the pick probabilities, `1`.
    pub fn cdf(&self) -> &[f32] {
        &self.cdf
    }

    /// Per scene triangle, its index into [`emitters`](Emitters::emitters) or
    /// [`NOT_AN_EMITTER`].
    pub fn index(&self) -> &[u32] {
        &self.index
    }

    /// Total emitted power (RGB), `sum of pi * area * Ke`.
    pub fn total_power(&self) -> Vec3 {
        self.total_power
    }

    /// The emitter `u` in `[0, 1)` picks: the first whose CDF entry exceeds `u` (binary
    /// search, as the WGSL twin runs it). `None` when there are none.
    ///
    /// ```
    /// # use lumbre_raytrace::{Emitters, Scene};
    /// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/scenes/CornellBox-Diffuse.obj");
    /// # let (scene, _) = Scene::load_obj(path.as_ref()).unwrap();
    /// let emitters = Emitters::new(&scene).unwrap();
    /// assert_eq!(emitters.pick(0.0), Some(0));
    /// assert_eq!(emitters.pick(0.999), Some(1));
    /// ```
    pub fn pick(&self, u: f32) -> Option<usize> {
        let count = self.emitters.len();
        if count == 0 {
            return None;
        }
        let (mut lo, mut hi) = (1usize, count);
        while lo < hi {
            let mid = (lo + hi) / 2;
            if self.cdf[mid] > u {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        Some(lo - 1)
    }

    /// A point on the emitters from three uniform numbers in `[0, 1)`: `u_pick` picks an
    /// emitter by power, `(u1, u2)` a uniform point on it
    /// ([`uniform_triangle`](crate::sampling::uniform_triangle) on its corners). `None` when
    /// there are no emitters.
    pub fn sample(&self, u_pick: f32, u1: f32, u2: f32) -> Option<EmitterSample> {
        let e = &self.emitters[self.pick(u_pick)?];
        let (w0, w1, w2) = uniform_triangle(u1, u2);
        let [a, b, c] = e.corners;
        Some(EmitterSample {
            point: a * w0 + b * w1 + c * w2,
            normal: e.normal,
            radiance: e.radiance,
            triangle: e.triangle,
            pdf: e.pdf_area,
        })
    }

    /// Density in area measure with which [`sample`](Emitters::sample) draws points of scene
    /// triangle `triangle`: 0 when it does not emit (or is out of range).
    pub fn pdf(&self, triangle: u32) -> f32 {
        match self.index.get(triangle as usize) {
            Some(&k) if k != NOT_AN_EMITTER => self.emitters[k as usize].pdf_area,
            _ => 0.0,
        }
    }

    /// A cosine-distributed direction on the front side of a surface of unit normal `normal`,
    /// and its density in solid angle (`cos / pi`), from two uniform numbers.
    ///
    /// ```
    /// use glam::Vec3;
    /// let (d, pdf) = lumbre_raytrace::Emitters::sample_direction(-Vec3::Y, 0.2, 0.7);
    /// assert!(d.y < 0.0 && (pdf - (-d.y) / std::f32::consts::PI).abs() < 1e-6);
    /// ```
    pub fn sample_direction(normal: Vec3, u1: f32, u2: f32) -> (Vec3, f32) {
        let local = cosine_hemisphere(u1, u2);
        (to_world(local, normal), local.z / PI)
    }
}
