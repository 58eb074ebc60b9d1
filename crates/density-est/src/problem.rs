//! The inputs (photon segments and query disks), their validation, and what every method
//! derives from them once: unit normals, plane tolerances, disk boxes, the root box and the
//! fixed-point scale of the power sums.

use bytemuck::{Pod, Zeroable};
use glam::Vec3;
use lumbre_gpu::{Error, Result};
use lumbre_kdtree::Aabb;

use crate::fixed::scale_exponent;

/// One flight of a photon between two events: from `start` to `end`, carrying `power` (RGB
/// flux, in the units of the emitters' power), `bounce` the number of diffuse bounces before
/// it (0: straight from an emitter).
///
/// ```
/// use glam::Vec3;
/// use lumbre_density::Segment;
/// let s = Segment { start: Vec3::Y, end: Vec3::ZERO, power: [1.0; 3], bounce: 0 };
/// assert_eq!(s.direction(), Vec3::NEG_Y);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Segment {
    /// Where the flight starts (an emitter or the previous hit).
    pub start: Vec3,
    /// Where it ends (the next hit).
    pub end: Vec3,
    /// RGB power carried along the flight.
    pub power: [f32; 3],
    /// Diffuse bounces before this flight.
    pub bounce: u32,
}

impl Segment {
    /// `end - start` (see the type's example).
    pub fn direction(&self) -> Vec3 {
        self.end - self.start
    }
}

/// A query disk on the tangent plane at `centre`: the irradiance there is the power of the
/// segments that cross it from the side `normal` faces, over its area.
///
/// ```
/// use glam::Vec3;
/// use lumbre_density::Disk;
/// let d = Disk { centre: Vec3::ZERO, normal: Vec3::Y, radius: 0.5 };
/// assert!((d.area() - std::f32::consts::PI * 0.25).abs() < 1e-6);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Disk {
    /// The point where irradiance is estimated.
    pub centre: Vec3,
    /// The side that receives light (normalised before use; must not be zero).
    pub normal: Vec3,
    /// The radius, positive.
    pub radius: f32,
}

impl Disk {
    /// `pi r^2` (see the type's example).
    pub fn area(&self) -> f32 {
        std::f32::consts::PI * self.radius * self.radius
    }
}

/// The input of a density estimate: photon segments and query disks.
///
/// ```
/// use glam::Vec3;
/// use lumbre_density::{Disk, Problem, Segment};
/// let p = Problem {
///     segments: vec![Segment { start: Vec3::Y, end: Vec3::ZERO, power: [1.0; 3], bounce: 0 }],
///     disks: vec![Disk { centre: Vec3::ZERO, normal: Vec3::Y, radius: 0.1 }],
/// };
/// assert!(p.validate().is_ok());
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Problem {
    /// Photon segments.
    pub segments: Vec<Segment>,
    /// Query disks.
    pub disks: Vec<Disk>,
}

/// The largest coordinate magnitude (and radius) accepted, 2^60: squared distances between
/// any two accepted points stay finite in f32.
///
/// ```
/// assert_eq!(lumbre_density::MAX_COORD, (1u64 << 60) as f32);
/// ```
pub const MAX_COORD: f32 = (1u64 << 60) as f32;

/// The plane tolerance of a disk relative to its size and position:
/// `eps = PLANE_EPS * (max(|centre.x|, |centre.y|, |centre.z|) + radius)`, 2^-16. A segment
/// whose end lies within `eps` of a disk's plane ends on it (see [`crossing`](crate::twin::crossing)).
///
/// ```
/// assert_eq!(lumbre_density::twin::PLANE_EPS, 1.0 / 65536.0);
/// ```
pub const PLANE_EPS: f32 = 1.0 / 65536.0;

/// The padding of every box of the indices relative to the scene's largest coordinate,
/// 2^-20: far above f32 rounding (2^-24 relative), so a crossing point computed with
/// rounding always lies in the padded boxes of both its disk and its segment.
pub(crate) const BOX_PAD: f32 = 1.0 / 1_048_576.0;

/// The smallest box padding (2^-100, a normal f32), for scenes at the origin with no extent.
const MIN_PAD: f32 = 7.888_609e-31;

/// A disk as both paths read it (and as the GPU stores it: two vec4s): centre and radius,
/// unit normal and plane tolerance. Made by [`disk_data`].
///
/// ```
/// assert_eq!(std::mem::size_of::<lumbre_density::twin::DiskData>(), 32);
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct DiskData {
    /// Centre.
    pub centre: [f32; 3],
    /// Radius.
    pub radius: f32,
    /// Unit normal.
    pub normal: [f32; 3],
    /// Plane tolerance ([`PLANE_EPS`]).
    pub eps: f32,
}

/// `b` grown by `pad` on every side.
pub(crate) fn padded(b: Aabb, pad: f32) -> Aabb {
    Aabb::new(b.min - Vec3::splat(pad), b.max + Vec3::splat(pad))
}

/// What every method derives from a valid [`Problem`] (the same on both paths).
#[derive(Clone, Debug)]
pub(crate) struct Prepared {
    /// The disks with unit normals and plane tolerances.
    pub disks: Vec<DiskData>,
    /// Each disk's box: the disk, its plane tolerance and the box padding.
    pub disk_boxes: Vec<Aabb>,
    /// Around every segment and disk box, padded.
    pub root: Aabb,
    /// Padding of every box ([`BOX_PAD`] times the largest coordinate).
    pub pad: f32,
    /// Power sums are integers in units of 2^-scale_exp.
    pub scale_exp: i32,
}

fn finite3(v: Vec3) -> bool {
    v.is_finite() && v.abs().max_element() <= MAX_COORD
}

fn check_segment(i: usize, s: &Segment) -> Result<()> {
    for (what, v) in [("start", s.start), ("end", s.end)] {
        if !finite3(v) {
            return Err(Error::Input(format!(
                "segment {i}: {what} {v} is not finite or exceeds the coordinate limit {MAX_COORD:e}"
            )));
        }
    }
    if !s.power.iter().all(|p| p.is_finite() && *p >= 0.0) {
        return Err(Error::Input(format!("segment {i}: power {:?} must be finite and non-negative", s.power)));
    }
    Ok(())
}

fn check_disk(i: usize, d: &Disk) -> Result<()> {
    if !finite3(d.centre) {
        return Err(Error::Input(format!(
            "disk {i}: centre {} is not finite or exceeds the coordinate limit {MAX_COORD:e}",
            d.centre
        )));
    }
    if !(d.radius.is_finite() && d.radius > 0.0 && d.radius <= MAX_COORD) {
        return Err(Error::Input(format!("disk {i}: radius {} must be positive and at most {MAX_COORD:e}", d.radius)));
    }
    if !d.normal.is_finite() || d.normal.length_squared() == 0.0 || !d.normal.normalize().is_finite() {
        return Err(Error::Input(format!("disk {i}: normal {} must be finite and non-zero", d.normal)));
    }
    Ok(())
}

/// A disk as the methods read it: unit normal, and plane tolerance
/// `PLANE_EPS * (max |centre_i| + radius)`. The disk must be valid ([`Problem::validate`]).
///
/// ```
/// use glam::Vec3;
/// use lumbre_density::Disk;
/// use lumbre_density::twin::{PLANE_EPS, disk_data};
/// let d = disk_data(&Disk { centre: Vec3::new(0.0, 0.0, 2.0), normal: Vec3::new(0.0, 3.0, 0.0), radius: 1.0 });
/// assert_eq!(d.normal, [0.0, 1.0, 0.0]);
/// assert_eq!(d.eps, 3.0 * PLANE_EPS);
/// ```
pub fn disk_data(d: &Disk) -> DiskData {
    let eps = PLANE_EPS * (d.centre.abs().max_element() + d.radius);
    DiskData { centre: d.centre.into(), radius: d.radius, normal: d.normal.normalize().into(), eps }
}

/// The box of a disk: its extent along each axis (`r * sqrt(1 - n_i^2)`), its plane
/// tolerance, and `pad`.
pub(crate) fn disk_box(d: &DiskData, pad: f32) -> Aabb {
    let extent = |n: f32| (1.0 - n * n).max(0.0).sqrt() * d.radius + d.eps + pad;
    let e = Vec3::from(d.normal.map(extent));
    let c = Vec3::from(d.centre);
    Aabb::new(c - e, c + e)
}

impl Problem {
    /// Checks every segment and disk: coordinates finite and within [`MAX_COORD`], power
    /// finite and non-negative, radius positive, normal non-zero. The error names the first
    /// bad index. Empty inputs are valid.
    ///
    /// ```
    /// use glam::Vec3;
    /// use lumbre_density::{Disk, Problem};
    /// let p = Problem { segments: vec![], disks: vec![Disk { centre: Vec3::ZERO, normal: Vec3::Y, radius: 0.0 }] };
    /// assert!(p.validate().unwrap_err().to_string().contains("disk 0"));
    /// ```
    pub fn validate(&self) -> Result<()> {
        if u32::try_from(self.segments.len()).is_err() || u32::try_from(self.disks.len()).is_err() {
            return Err(Error::Input(format!(
                "{} segments and {} disks: at most 2^32 - 1 of each",
                self.segments.len(),
                self.disks.len()
            )));
        }
        self.segments.iter().enumerate().try_for_each(|(i, s)| check_segment(i, s))?;
        self.disks.iter().enumerate().try_for_each(|(i, d)| check_disk(i, d))
    }

    /// Validates and derives what the methods share.
    pub(crate) fn prepare(&self) -> Result<Prepared> {
        self.validate()?;
        let disks: Vec<DiskData> = self.disks.iter().map(disk_data).collect();
        let mut bounds = Aabb::EMPTY;
        for s in &self.segments {
            bounds = bounds.union(&Aabb::new(s.start.min(s.end), s.start.max(s.end)));
        }
        let unpadded: Vec<Aabb> = disks.iter().map(|d| disk_box(d, 0.0)).collect();
        for b in &unpadded {
            bounds = bounds.union(b);
        }
        let mut total = [0f64; 3];
        let mut max = 0f32;
        for s in &self.segments {
            for (t, p) in total.iter_mut().zip(s.power) {
                *t += p as f64;
                max = max.max(p);
            }
        }
        let f = frame(bounds, max, total.into_iter().fold(0.0, f64::max));
        let disk_boxes = unpadded.iter().map(|&b| padded(b, f.pad)).collect();
        Ok(Prepared { disks, disk_boxes, root: f.root, pad: f.pad, scale_exp: f.scale_exp })
    }
}

/// The root box, box padding and fixed-point exponent of an input.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Frame {
    /// Around every segment and disk box, padded.
    pub root: Aabb,
    /// Padding of every box ([`BOX_PAD`] times the largest coordinate).
    pub pad: f32,
    /// Power sums are integers in units of 2^-scale_exp.
    pub scale_exp: i32,
}

/// The frame of an input whose segments and unpadded disk boxes lie in `bounds` (empty:
/// nothing), whose largest segment power (over channels) is `max_power` and whose total
/// power (largest channel) is `total_power`: what [`Problem::prepare`] derives, and what the
/// GPU derives for inputs it made from the same few numbers, reduced on the device.
pub(crate) fn frame(bounds: Aabb, max_power: f32, total_power: f64) -> Frame {
    let largest = if bounds.min.is_finite() { bounds.min.abs().max(bounds.max.abs()).max_element() } else { 0.0 };
    let pad = (BOX_PAD * largest).max(MIN_PAD);
    let root = padded(if bounds.min.is_finite() { bounds } else { Aabb::new(Vec3::ZERO, Vec3::ZERO) }, pad);
    Frame { root, pad, scale_exp: scale_exponent(max_power as f64, total_power) }
}
