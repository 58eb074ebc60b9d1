//! Photon tracing: photons leave the scene's emitters and bounce diffusely with Russian
//! roulette; every flight between two events becomes a [`Segment`]. The WGSL twin is
//! `density/photons.wgsl`; both draw the same numbers from the integer hash, indexed by
//! photon, bounce and use.

use std::sync::atomic::{AtomicU64, Ordering};

use glam::Vec3;
use lumbre_gpu::{Agree, Error, Progress, Report, Result, Tolerance};
use lumbre_kdtree::{QueryOptions, Ray};
use lumbre_raytrace::sampling::{PI, concentric_disk, hash_f32, hash_u32};
use lumbre_raytrace::{Emitters, Prepared};
use rayon::prelude::*;

use crate::problem::Segment;

/// Photon tracing through [`Compute`](lumbre_gpu::Compute): input a [`Prepared`](lumbre_raytrace::Prepared)
/// scene, output the [`Photons`]' flights. Photons leave the emitters (picked by power, a
/// uniform point, a cosine direction on the emitting side, drawn without a tangent frame so
/// that rounding of the normal cannot flip it), bounce diffusely off every
/// surface (emitters too) with Russian roulette by albedo (continue with probability
/// `max(Kd)`, power scaled by `Kd / max(Kd)`), and stop when a cosine direction about the
/// shading normal points into the surface. A photon that escapes is cut where it leaves the
/// scene's box. CPU and GPU draw the same numbers
/// ([`twin::photon_random`](crate::twin::photon_random)).
///
/// ```
/// use lumbre_density::{PhotonOptions, PhotonTracer};
/// use lumbre_gpu::{Backend, Compute};
/// use lumbre_raytrace::{Prepared, Scene};
/// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/scenes/CornellBox-Diffuse.obj");
/// let (scene, _) = Scene::load_obj(path.as_ref()).unwrap();
/// let prepared = Prepared::new(scene, &Default::default());
/// let tracer = PhotonTracer { options: PhotonOptions { photons: 1000, ..Default::default() } };
/// let photons = tracer.run(&Backend::Cpu, &prepared)?;
/// assert_eq!(photons.photons(), 1000);
/// assert!(photons.segments.len() > 1000);
/// # Ok::<(), lumbre_gpu::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PhotonTracer {
    /// How many photons, and which flights to keep.
    pub options: PhotonOptions,
}

impl PhotonTracer {
    /// The CPU path: the photons' flights.
    ///
    /// ```
    /// use lumbre_density::{PhotonOptions, PhotonTracer};
    /// use lumbre_raytrace::{Prepared, Scene};
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/scenes/CornellBox-Diffuse.obj");
    /// let (scene, _) = Scene::load_obj(path.as_ref())?;
    /// let tracer = PhotonTracer { options: PhotonOptions { photons: 100, ..Default::default() } };
    /// assert_eq!(tracer.cpu(&Prepared::new(scene, &Default::default()))?.photons(), 100);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn cpu(&self, input: &Prepared) -> Result<Photons> {
        self.run_cpu(input, &()).map(|(out, _)| out)
    }

    /// [`cpu`](PhotonTracer::cpu) with progress: stage `trace photons`; stats `photons`
    /// and `segments`.
    pub fn run_cpu(&self, input: &Prepared, progress: &dyn Progress) -> Result<(Photons, Report)> {
        self.options.check()?;
        let mut report = Report::default();
        let out = report.time("trace photons", || trace_cpu(input, &self.options, progress))?;
        report.stat("photons", self.options.indices().len() as f64);
        report.stat("segments", out.segments.len() as f64);
        Ok((out, report))
    }
}

/// Which flights a tracing keeps.
///
/// ```
/// assert_eq!(lumbre_density::Bounces::default(), lumbre_density::Bounces::All);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Bounces {
    /// Every flight.
    #[default]
    All,
    /// Flights straight from the emitters (bounce 0): direct light.
    DirectOnly,
    /// Flights after at least one bounce: indirect light.
    IndirectOnly,
}

impl Bounces {
    /// Whether a flight after `bounce` bounces is kept.
    ///
    /// ```
    /// use lumbre_density::Bounces;
    /// assert!(Bounces::IndirectOnly.keeps(2) && !Bounces::IndirectOnly.keeps(0));
    /// ```
    pub fn keeps(self, bounce: u32) -> bool {
        match self {
            Bounces::All => true,
            Bounces::DirectOnly => bounce == 0,
            Bounces::IndirectOnly => bounce > 0,
        }
    }
}

/// How many photons to trace and how.
///
/// A run of `photons` photons numbers them `0..photons`; `range` traces only some of them,
/// with the numbers and power they have in the whole run, so that the parts of a run traced
/// apart (on other devices or machines) hold together exactly the flights of the whole.
///
/// ```
/// use lumbre_density::{PhotonOptions, PhotonRange};
/// let o = PhotonOptions::default();
/// assert!(o.max_bounces >= 1);
/// assert_eq!(o.indices(), 0..o.photons);
/// let part = PhotonOptions { photons: 1000, range: Some(PhotonRange { start: 250, end: 500 }), ..o };
/// assert_eq!(part.indices(), 250..500);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PhotonOptions {
    /// Photons of the whole run, leaving the emitters; each carries `1 / photons` of the
    /// emitted power (in expectation, whichever emitter it leaves).
    pub photons: u32,
    /// Flights per photon at most (Russian roulette usually stops it before).
    pub max_bounces: u32,
    /// Seed of the random numbers.
    pub seed: u32,
    /// Which flights to keep (the tracing, and so every number drawn, is the same).
    pub bounces: Bounces,
    /// The photons to trace, a part of `0..photons`; `None`: all of them.
    pub range: Option<PhotonRange>,
}

impl Default for PhotonOptions {
    fn default() -> Self {
        PhotonOptions { photons: 100_000, max_bounces: 16, seed: 0, bounces: Bounces::All, range: None }
    }
}

impl PhotonOptions {
    /// The numbers of the photons traced: `range`, or `0..photons` (see the type's example).
    pub fn indices(&self) -> std::ops::Range<u32> {
        match self.range {
            Some(r) => r.start..r.end,
            None => 0..self.photons,
        }
    }

    /// Checks that `range` lies within `0..photons` (an empty range is a part with no
    /// photon); the error names the range.
    ///
    /// ```
    /// use lumbre_density::{PhotonOptions, PhotonRange};
    /// let o = PhotonOptions { photons: 100, range: Some(PhotonRange { start: 50, end: 101 }), ..Default::default() };
    /// assert!(o.check().unwrap_err().to_string().contains("50..101"));
    /// ```
    pub fn check(&self) -> Result<()> {
        match self.range {
            Some(r) if r.start > r.end || r.end > self.photons => Err(Error::Input(format!(
                "photon range {}..{}: must be a part of the run's photons 0..{}",
                r.start, r.end, self.photons
            ))),
            _ => Ok(()),
        }
    }
}

/// A part of a run's photons: numbers `start..end` (see [`PhotonOptions`]).
///
/// ```
/// use lumbre_density::PhotonRange;
/// let r = PhotonRange { start: 10, end: 30 };
/// assert_eq!((r.len(), r.is_empty()), (20, false));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct PhotonRange {
    /// The first photon.
    pub start: u32,
    /// One past the last photon.
    pub end: u32,
}

impl PhotonRange {
    /// Part `index` of `parts` near-equal parts of `photons` photons:
    /// `photons * index / parts .. photons * (index + 1) / parts` (the parts cover every
    /// photon once; a part may be empty when `parts > photons`). An error unless
    /// `index < parts`.
    ///
    /// ```
    /// use lumbre_density::PhotonRange;
    /// let parts: Vec<PhotonRange> = (0..3).map(|i| PhotonRange::part(i, 3, 10).unwrap()).collect();
    /// assert_eq!(parts, [PhotonRange { start: 0, end: 3 }, PhotonRange { start: 3, end: 6 }, PhotonRange { start: 6, end: 10 }]);
    /// assert!(PhotonRange::part(3, 3, 10).is_err());
    /// ```
    pub fn part(index: u32, parts: u32, photons: u32) -> Result<PhotonRange> {
        if index >= parts {
            return Err(Error::Input(format!("part {index} of {parts}: the index must be below the number of parts")));
        }
        let at = |i: u32| (photons as u64 * i as u64 / parts as u64) as u32;
        Ok(PhotonRange { start: at(index), end: at(index + 1) })
    }

    /// Photons in the range, 0 if `end <= start` (see the type's example).
    pub fn len(&self) -> u32 {
        self.end.saturating_sub(self.start)
    }

    /// Whether it holds no photon (see the type's example).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The largest power any flight of a run of `photons` photons can carry, in any channel:
/// the largest a photon leaves an emitter with, `Ke * pi / (pdf * photons)` in f32 as
/// [`trace_photon`] computes it (emitters of zero density are never picked); a bounce
/// scales power by `Kd / max(Kd)`, at most 1. It depends on the scene and the run's photon
/// count alone, so every part of a run derives the same.
pub(crate) fn flight_power_bound(em: &Emitters, photons: u32) -> f64 {
    em.emitters()
        .iter()
        .filter(|e| e.pdf_area > 0.0)
        .map(|e| (e.radiance * (PI / (e.pdf_area * photons as f32))).max_element() as f64)
        .fold(0.0, f64::max)
}

/// Uses of the random numbers: at bounce 0, the emitter pick, the point (two) and the
/// direction (two); at a later bounce `b` (the event that starts flight `b`), Russian
/// roulette and the direction (two).
pub(crate) const DIM_PICK: u32 = 0;
pub(crate) const DIM_POINT: u32 = 1;
pub(crate) const DIM_EMIT_DIR: u32 = 3;
pub(crate) const DIM_ROULETTE: u32 = 5;
pub(crate) const DIM_BOUNCE_DIR: u32 = 6;

/// The uniform number in `[0, 1)` for use `dim` at `bounce` of `photon`:
/// `hash_f32(hash_u32(photon ^ hash_u32(seed)) ^ hash_u32(bounce * 8 + dim))`.
///
/// ```
/// use lumbre_density::twin::photon_random;
/// let u = photon_random(0, 7, 1, 5);
/// assert!((0.0..1.0).contains(&u));
/// assert_ne!(u, photon_random(0, 7, 1, 6));
/// ```
pub fn photon_random(seed: u32, photon: u32, bounce: u32, dim: u32) -> f32 {
    hash_f32(hash_u32(photon ^ hash_u32(seed)) ^ hash_u32(bounce.wrapping_mul(8).wrapping_add(dim)))
}

/// A cosine-distributed direction about the unit normal `n`: `normalize(n + s)`, `s`
/// uniform on the unit sphere (the concentric disk point lifted to the sphere, area for
/// area). No tangent frame is built, so the direction is continuous in `n`: a normal whose
/// components the CPU and the GPU round differently (a wall's `n.z` of `+0` or `-1e-9`)
/// gives nearly the same direction, where a frame's sign switch would send it elsewhere.
/// Falls back to `n` where `n + s` vanishes.
pub(crate) fn cosine_about(n: Vec3, u: f32, v: f32) -> Vec3 {
    let d = concentric_disk(u, v);
    let r2 = d.x * d.x + d.y * d.y;
    let scale = 2.0 * (1.0 - r2).max(0.0).sqrt();
    let w = n + Vec3::new(d.x * scale, d.y * scale, 1.0 - 2.0 * r2);
    let len = w.length();
    if len > 1e-6 { w / len } else { n }
}

/// Where a ray from `o` along `d` leaves the box `(lo, hi)` (`o` inside): the smallest exit
/// parameter over the axes it moves along.
pub(crate) fn exit_distance(o: Vec3, d: Vec3, lo: Vec3, hi: Vec3) -> f32 {
    let mut t = f32::MAX;
    for k in 0..3 {
        if d[k] > 0.0 {
            t = t.min((hi[k] - o[k]) / d[k]);
        } else if d[k] < 0.0 {
            t = t.min((lo[k] - o[k]) / d[k]);
        }
    }
    t.max(0.0)
}

/// The scene box photons that escape are cut at: the scene's bounds grown by `pad` (the
/// scene's `eps`, at least).
pub(crate) fn escape_box(p: &Prepared) -> (Vec3, Vec3) {
    let pad = Vec3::splat(p.eps.max(1e-6));
    (p.scene.bounds.0 - pad, p.scene.bounds.1 + pad)
}

/// Face-forward geometric and shading normals of triangle `tri` at barycentrics `(u, v)`
/// for a ray along `dir` (both on the side the ray comes from).
fn normals_at(p: &Prepared, tri: u32, u: f32, v: f32, dir: Vec3) -> (Vec3, Vec3) {
    let t = p.tris[tri as usize];
    let mut ng = (t[1] - t[0]).cross(t[2] - t[0]).normalize_or_zero();
    let st = p.scene.triangles[tri as usize];
    let mut n = ng;
    if st.has_normals() {
        let [a, b, c] = st.n.map(|i| p.scene.normals[i as usize]);
        let s = a * (1.0 - u - v) + b * u + c * v;
        let len = s.length();
        if len > 0.0 {
            n = s / len;
        }
    }
    if ng.dot(dir) > 0.0 {
        ng = -ng;
    }
    if n.dot(ng) < 0.0 {
        n = -n;
    }
    (ng, n)
}

/// One photon's flights, appended to `out` (all of them; the caller filters by bounce).
pub(crate) fn trace_photon(p: &Prepared, em: &Emitters, o: &PhotonOptions, i: u32, out: &mut Vec<Segment>) {
    let r = |bounce: u32, dim: u32| photon_random(o.seed, i, bounce, dim);
    let Some(s) = em.sample(r(0, DIM_PICK), r(0, DIM_POINT), r(0, DIM_POINT + 1)) else { return };
    if s.pdf <= 0.0 {
        return;
    }
    let mut dir = cosine_about(s.normal, r(0, DIM_EMIT_DIR), r(0, DIM_EMIT_DIR + 1));
    let mut power = s.radiance * (PI / (s.pdf * o.photons as f32));
    let mut start = s.point;
    let mut origin = s.point + s.normal * p.eps;
    let (lo, hi) = escape_box(p);
    let query = QueryOptions::default();
    for bounce in 0..o.max_bounces {
        let hit = p.closest_hit(&Ray::new(origin, dir), f32::INFINITY, &query);
        let Some(hit) = hit else {
            let end = origin + dir * exit_distance(origin, dir, lo, hi);
            out.push(Segment { start, end, power: power.to_array(), bounce });
            return;
        };
        let end = origin + dir * hit.t;
        out.push(Segment { start, end, power: power.to_array(), bounce });
        let next = bounce + 1;
        if next >= o.max_bounces {
            return;
        }
        let material = &p.scene.materials[p.scene.triangles[hit.tri as usize].material as usize];
        let kd = material.kd.clamp(Vec3::ZERO, Vec3::ONE);
        let q = kd.max_element();
        if r(next, DIM_ROULETTE) >= q {
            return;
        }
        power *= kd / q;
        let (ng, n) = normals_at(p, hit.tri, hit.u, hit.v, dir);
        let d = cosine_about(n, r(next, DIM_BOUNCE_DIR), r(next, DIM_BOUNCE_DIR + 1));
        if d.dot(ng) <= 0.0 {
            return;
        }
        dir = d;
        start = end;
        origin = end + ng * p.eps;
    }
}

/// Traces the photons `o.indices()` of a run of `o.photons` on the CPU (rayon over photons;
/// flights in photon order, then bounce order), keeping those `o.bounces` selects.
pub(crate) fn trace_cpu(p: &Prepared, o: &PhotonOptions, progress: &dyn Progress) -> Result<Photons> {
    let em = Emitters::new(&p.scene)?;
    if em.is_empty() {
        return Err(Error::Input("the scene has no emitter (no material with Ke > 0): no photon can leave it".into()));
    }
    const CHUNK: u32 = 1024;
    let done = AtomicU64::new(0);
    let indices = o.indices();
    let total = indices.len() as u64;
    let parts: Vec<Photons> = (0..(indices.len() as u32).div_ceil(CHUNK))
        .into_par_iter()
        .map(|c| {
            let mut part = Photons::default();
            let mut flights = Vec::new();
            let first = indices.start + c * CHUNK;
            let range = first..first.saturating_add(CHUNK).min(indices.end);
            for i in range.clone() {
                flights.clear();
                trace_photon(p, &em, o, i, &mut flights);
                for s in flights.iter().filter(|s| o.bounces.keeps(s.bounce)) {
                    part.segments.push(*s);
                    part.photon.push(i);
                }
            }
            let n = done.fetch_add(range.len() as u64, Ordering::Relaxed) + range.len() as u64;
            progress.update("trace photons", n, total);
            part
        })
        .collect();
    let mut out = Photons::default();
    for part in parts {
        out.segments.extend(part.segments);
        out.photon.extend(part.photon);
    }
    Ok(out)
}

/// Traced flights: the segments, and the photon each belongs to.
///
/// ```
/// let p = lumbre_density::Photons::default();
/// assert_eq!(p.photons(), 0);
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Photons {
    /// The flights, in photon order, then bounce order.
    pub segments: Vec<Segment>,
    /// The photon of each flight.
    pub photon: Vec<u32>,
}

/// The share of photons whose paths the CPU and GPU tracings may trace differently (a
/// float comparison decided differently by a few ulps: a hit on an edge, a Russian
/// roulette number next to the albedo), for [`Agree`] on [`Photons`]: 1 in 200.
///
/// ```
/// assert!(lumbre_density::PATH_MISMATCH_RATE < 0.01);
/// ```
pub const PATH_MISMATCH_RATE: f64 = 0.005;

impl Photons {
    /// Number of distinct photons with at least one flight (see the type's example).
    pub fn photons(&self) -> usize {
        let mut n = 0;
        for (k, &p) in self.photon.iter().enumerate() {
            if k == 0 || self.photon[k - 1] != p {
                n += 1;
            }
        }
        n
    }

    /// Each photon's range of flights, by photon number.
    fn ranges(&self) -> std::collections::BTreeMap<u32, std::ops::Range<usize>> {
        let mut m = std::collections::BTreeMap::new();
        let mut start = 0;
        for k in 0..self.photon.len() {
            if k + 1 == self.photon.len() || self.photon[k + 1] != self.photon[k] {
                m.insert(self.photon[k], start..k + 1);
                start = k + 1;
            }
        }
        m
    }

    /// Sum of the power of the flights of bounce `bounce`.
    ///
    /// ```
    /// let p = lumbre_density::Photons::default();
    /// assert_eq!(p.power_of_bounce(0), [0.0; 3]);
    /// ```
    pub fn power_of_bounce(&self, bounce: u32) -> [f64; 3] {
        let mut sum = [0f64; 3];
        for s in self.segments.iter().filter(|s| s.bounce == bounce) {
            for (t, p) in sum.iter_mut().zip(s.power) {
                *t += p as f64;
            }
        }
        sum
    }
}

impl Agree for Photons {
    /// Photon by photon: the same flights (bounce numbers equal, ends and power within
    /// `tol`), except for at most [`PATH_MISMATCH_RATE`] of the photons.
    fn disagreement(&self, gpu: &Self, tol: Tolerance) -> Option<String> {
        let (a, b) = (self.ranges(), gpu.ranges());
        let close = |x: f32, y: f32| tol.accepts(x as f64, y as f64);
        let same = |s: &Segment, t: &Segment| {
            s.bounce == t.bounce
                && (0..3).all(|k| close(s.start[k], t.start[k]) && close(s.end[k], t.end[k]))
                && (0..3).all(|k| close(s.power[k], t.power[k]))
        };
        let mut differ = Vec::new();
        let all: std::collections::BTreeSet<u32> = a.keys().chain(b.keys()).copied().collect();
        for p in &all {
            let (x, y) = (a.get(p).cloned().unwrap_or(0..0), b.get(p).cloned().unwrap_or(0..0));
            let ok = x.len() == y.len()
                && self.segments[x.clone()].iter().zip(&gpu.segments[y.clone()]).all(|(s, t)| same(s, t));
            if !ok {
                differ.push(*p);
            }
        }
        let allowed = (PATH_MISMATCH_RATE * all.len() as f64).floor() as usize;
        (differ.len() > allowed).then(|| {
            let p = differ[0];
            format!(
                "{} of {} photons differ (at most {allowed} may): photon {p}: cpu {:?} gpu {:?}",
                differ.len(),
                all.len(),
                a.get(&p).map(|r| &self.segments[r.clone()]),
                b.get(&p).map(|r| &gpu.segments[r.clone()])
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_flight_carries_more_than_the_bound_and_direct_flights_reach_it() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/scenes/CornellBox-Diffuse.obj");
        let (scene, _) = lumbre_raytrace::Scene::load_obj(path.as_ref()).unwrap();
        let p = Prepared::new(scene, &Default::default());
        let o = PhotonOptions { photons: 4000, ..Default::default() };
        let bound = flight_power_bound(&Emitters::new(&p.scene).unwrap(), o.photons);
        let flights = trace_cpu(&p, &o, &()).unwrap().segments;
        let largest = |b: &dyn Fn(u32) -> bool| {
            flights.iter().filter(|s| b(s.bounce)).flat_map(|s| s.power).fold(0f32, f32::max) as f64
        };
        assert!(flights.iter().any(|s| s.bounce > 3));
        assert_eq!(largest(&|b| b == 0), bound);
        assert!(largest(&|b| b > 0) <= bound);
        // A run of twice the photons: half the power each.
        assert_eq!(flight_power_bound(&Emitters::new(&p.scene).unwrap(), 2 * o.photons), bound / 2.0);
    }
}
