//! The pinhole camera and its GPU layout (the stratified pixel samples are in `sampling.rs`).

use std::fmt;
use std::str::FromStr;

use bytemuck::{Pod, Zeroable};
use glam::{DVec3, Vec3};

/// A pinhole camera.
///
/// Pixel coordinates are continuous: `(0, 0)` is the top-left corner of the image, `(width,
/// height)` the bottom-right one, and pixel `(i, j)` has its centre at `(i + 0.5, j + 0.5)`.
///
/// ```
/// use glam::Vec3;
/// use lumbre_raytrace::Camera;
/// let cam = Camera { eye: Vec3::new(0.0, 0.0, 5.0), target: Vec3::ZERO, up: Vec3::Y, fov_y_deg: 45.0 };
/// let (origin, dir) = cam.ray(320.0, 240.0, 640, 480); // the image centre
/// assert_eq!(origin, cam.eye);
/// assert!((dir - Vec3::NEG_Z).length() < 1e-6);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Camera {
    /// Where the camera is.
    pub eye: Vec3,
    /// The point seen at the image centre.
    pub target: Vec3,
    /// The up direction (need not be orthogonal to the view direction; must not be parallel).
    pub up: Vec3,
    /// Vertical field of view in degrees, in `(0, 180)`.
    pub fov_y_deg: f32,
}

impl Camera {
    /// Vertical field of view of [`Camera::frame`] and [`Camera::orbit`], in degrees.
    ///
    /// ```
    /// use lumbre_raytrace::Camera;
    /// let cam = Camera::frame((glam::Vec3::ZERO, glam::Vec3::ONE), 1.0);
    /// assert_eq!(cam.fov_y_deg, Camera::FRAME_FOV_Y_DEG);
    /// ```
    pub const FRAME_FOV_Y_DEG: f32 = 40.0;
    /// Elevation of [`Camera::frame`] and [`Camera::orbit`] above the bounds centre, in degrees.
    pub const FRAME_ELEVATION_DEG: f32 = 15.0;
    /// How much farther than strictly needed [`Camera::frame`] places the camera (5 % margin).
    pub const FRAME_MARGIN: f32 = 1.05;

    /// A camera looking at the centre of `bounds` from the +z side,
    /// [`FRAME_ELEVATION_DEG`](Camera::FRAME_ELEVATION_DEG) above it, far enough that the
    /// bounding sphere fits both the vertical field of view
    /// ([`FRAME_FOV_Y_DEG`](Camera::FRAME_FOV_Y_DEG)) and the horizontal one of an image with
    /// the given aspect (width / height), with a 5 % margin.
    ///
    /// Non-finite bounds are replaced by the box `[-1, 1]³`, an empty box by a unit sphere,
    /// and a non-positive or non-finite aspect by 1.
    ///
    /// ```
    /// use glam::Vec3;
    /// use lumbre_raytrace::Camera;
    /// let cam = Camera::frame((Vec3::splat(-1.0), Vec3::splat(1.0)), 16.0 / 9.0);
    /// assert!(cam.eye.z > 1.0 && cam.eye.y > 0.0);
    /// assert_eq!(cam.target, Vec3::ZERO);
    /// ```
    pub fn frame(bounds: (Vec3, Vec3), aspect: f32) -> Camera {
        Camera::orbit(bounds, aspect, 0, 1)
    }

    /// The `i`-th of `n` cameras evenly spaced in azimuth around the bounds (for benchmarks):
    /// the same distance, elevation and field of view as [`Camera::frame`], which is `i = 0`;
    /// `i` is taken modulo `n` (and `n = 0` counts as 1).
    ///
    /// ```
    /// use glam::Vec3;
    /// use lumbre_raytrace::Camera;
    /// let b = (Vec3::splat(-1.0), Vec3::splat(1.0));
    /// let half = Camera::orbit(b, 1.0, 10, 20);
    /// assert!(half.eye.z < 0.0 && half.eye.x.abs() < 1e-4);
    /// ```
    pub fn orbit(bounds: (Vec3, Vec3), aspect: f32, i: u32, n: u32) -> Camera {
        let (lo, hi) = if bounds.0.is_finite() && bounds.1.is_finite() {
            (bounds.0.min(bounds.1), bounds.0.max(bounds.1))
        } else {
            (Vec3::splat(-1.0), Vec3::splat(1.0))
        };
        let centre = (lo + hi) * 0.5;
        let radius = (hi - lo).length() * 0.5;
        let radius = if radius > 0.0 && radius.is_finite() { radius } else { 1.0 };
        let aspect = if aspect.is_finite() && aspect > 0.0 { aspect } else { 1.0 };
        let half_y = (Camera::FRAME_FOV_Y_DEG * 0.5).to_radians();
        let half_x = (aspect * half_y.tan()).atan();
        let distance = radius / half_x.min(half_y).sin() * Camera::FRAME_MARGIN;
        let n = n.max(1);
        let azimuth = std::f32::consts::TAU * (i % n) as f32 / n as f32;
        let elevation = Camera::FRAME_ELEVATION_DEG.to_radians();
        let dir = Vec3::new(azimuth.sin() * elevation.cos(), elevation.sin(), azimuth.cos() * elevation.cos());
        Camera { eye: centre + dir * distance, target: centre, up: Vec3::Y, fov_y_deg: Camera::FRAME_FOV_Y_DEG }
    }

    /// The largest magnitude of a coordinate [`Camera::parse`] accepts: far beyond any scene
    /// ([`crate::SCENE_SIZE_RANGE`]), small enough for f32 ray arithmetic.
    pub const MAX_COORD: f32 = 1e15;

    /// Parses the CLI form `ex,ey,ez,tx,ty,tz,ux,uy,uz,fov` (eye, target, up, vertical field
    /// of view in degrees; spaces around numbers allowed), and checks the camera is usable:
    /// finite numbers within [`Camera::MAX_COORD`] of the origin, `0 < fov < 180`,
    /// eye ≠ target, up not parallel to the view direction.
    ///
    /// ```
    /// use lumbre_raytrace::Camera;
    /// let cam = Camera::parse("0,1,5, 0,1,0, 0,1,0, 45").unwrap();
    /// assert_eq!(cam.fov_y_deg, 45.0);
    /// assert_eq!(Camera::parse(&cam.to_string()), Ok(cam));
    /// assert!(Camera::parse("0,1,5,0,1,0,0,1,0").unwrap_err().contains("10"));
    /// assert!(Camera::parse("0,1,1e30,0,1,0,0,1,0,45").unwrap_err().contains("eye z 1e30"));
    /// ```
    pub fn parse(s: &str) -> Result<Camera, String> {
        Camera::parse_moved(s, DVec3::ZERO)
    }

    /// [`Camera::parse`], with the eye and target moved by `-shift` in f64 before they are
    /// rounded to f32: a camera given in the coordinates of a scene far from the origin,
    /// for the scene moved near it by `shift` ([`Scene::load_recentred`](crate::Scene::load_recentred)).
    /// Checks are as [`Camera::parse`]'s, on the numbers given (in f32) and on the moved camera.
    ///
    /// ```
    /// use glam::{DVec3, Vec3};
    /// use lumbre_raytrace::Camera;
    /// let shift = DVec3::new(1e6, 1e6 + 1.0, 1e6);
    /// let cam = Camera::parse_moved("1000000,1000001.1,1000003.9, 1e6,1000001,1e6, 0,1,0, 40", shift).unwrap();
    /// assert_eq!(cam, Camera::parse("0,0.1,3.9, 0,0,0, 0,1,0, 40").unwrap()); // f32 first: 0.125, 3.875
    /// assert_eq!(cam.eye, Vec3::new(0.0, 0.1, 3.9));
    /// ```
    pub fn parse_moved(s: &str, shift: DVec3) -> Result<Camera, String> {
        const FORM: &str = "ex,ey,ez,tx,ty,tz,ux,uy,uz,fov";
        let fields: Vec<&str> = s.split(',').map(str::trim).collect();
        if fields.len() != 10 {
            return Err(format!("camera: expected 10 comma-separated numbers ({FORM}), found {}", fields.len()));
        }
        const NAMES: [&str; 9] =
            ["eye x", "eye y", "eye z", "target x", "target y", "target z", "up x", "up y", "up z"];
        let mut v = [0.0f64; 10];
        for (i, (slot, f)) in v.iter_mut().zip(&fields).enumerate() {
            *slot = f.parse().map_err(|_| format!("camera: malformed number \"{f}\" in {FORM}"))?;
            // The range checks on the f32 value, as the camera holds it without a shift.
            let single = *slot as f32;
            if !single.is_finite() {
                return Err(format!("camera: non-finite number \"{f}\""));
            }
            if i < 9 && single.abs() > Self::MAX_COORD {
                return Err(format!(
                    "camera: {} {f} is beyond ±{:e}; give eye, target and up within that of the origin",
                    NAMES[i],
                    Self::MAX_COORD
                ));
            }
        }
        let cam = Camera {
            eye: (DVec3::new(v[0], v[1], v[2]) - shift).as_vec3(),
            target: (DVec3::new(v[3], v[4], v[5]) - shift).as_vec3(),
            up: DVec3::new(v[6], v[7], v[8]).as_vec3(),
            fov_y_deg: v[9] as f32,
        };
        cam.validate()?;
        Ok(cam)
    }

    /// Checks the camera is usable (see [`Camera::parse`]); cameras that fail still produce
    /// finite rays (a fallback basis), but not the intended ones.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.eye.is_finite() && self.target.is_finite() && self.up.is_finite() && self.fov_y_deg.is_finite()) {
            return Err("camera: non-finite eye, target, up or fov".into());
        }
        if !(self.fov_y_deg > 0.0 && self.fov_y_deg < 180.0) {
            return Err(format!("camera: fov {} is not between 0 and 180 degrees", self.fov_y_deg));
        }
        // In f64, so that large coordinates cannot overflow the products below.
        let (up, view) = (self.up.as_dvec3(), self.target.as_dvec3() - self.eye.as_dvec3());
        if view.length_squared() == 0.0 {
            return Err("camera: eye and target are the same point".into());
        }
        if up.cross(view).length() <= 1e-6 * up.length() * view.length() {
            return Err("camera: up is zero or parallel to the view direction".into());
        }
        Ok(())
    }

    /// The orthonormal basis `(u right, v up, w backwards)`; falls back to other up vectors
    /// when `up` is unusable and to `w = +z` when eye = target, so it is always finite.
    fn basis(&self) -> (Vec3, Vec3, Vec3) {
        let w = (self.eye - self.target).try_normalize().unwrap_or(Vec3::Z);
        let u = [self.up, Vec3::Y, Vec3::Z, Vec3::X]
            .into_iter()
            .find_map(|up| {
                let u = up.cross(w);
                (u.length() > 1e-6 * up.length()).then(|| u.try_normalize()).flatten()
            })
            .unwrap_or(Vec3::X);
        (u, w.cross(u), w)
    }

    /// The GPU form for a `width` × `height` image (see [`GpuCamera`]); a zero size counts as 1.
    pub fn to_gpu(&self, width: u32, height: u32) -> GpuCamera {
        let (width, height) = (width.max(1) as f32, height.max(1) as f32);
        let (u, v, w) = self.basis();
        let fov = if self.fov_y_deg.is_finite() { self.fov_y_deg.clamp(1e-3, 179.9) } else { Camera::FRAME_FOV_Y_DEG };
        let half_h = (fov.to_radians() * 0.5).tan();
        let half_w = width / height * half_h;
        let horizontal = u * (2.0 * half_w);
        let vertical = v * (2.0 * half_h);
        // Relative to the eye: an absolute corner would lose the image plane's digits to
        // those of the eye when the scene is far from the origin or large.
        let corner = -horizontal * 0.5 - vertical * 0.5 - w;
        GpuCamera {
            eye: self.eye.extend(0.0).to_array(),
            corner: corner.extend(0.0).to_array(),
            horizontal: horizontal.extend(0.0).to_array(),
            vertical: vertical.extend(0.0).to_array(),
            size: [width, height, 0.0, 0.0],
        }
    }

    /// The primary ray through continuous pixel coordinate `(px, py)`: `(origin, unit direction)`.
    ///
    /// Computed by [`GpuCamera::ray`] on `self.to_gpu(width, height)`, the formula the GPU uses;
    /// for many rays, call [`Camera::to_gpu`] once and [`GpuCamera::ray`] per ray.
    pub fn ray(&self, px: f32, py: f32, width: u32, height: u32) -> (Vec3, Vec3) {
        self.to_gpu(width, height).ray(px, py)
    }

    /// Where `point` appears in a `width` × `height` image, as a continuous pixel coordinate,
    /// or `None` when it is not in front of the camera. Points inside the image have
    /// coordinates in `[0, width] × [0, height]`.
    ///
    /// ```
    /// use glam::Vec3;
    /// use lumbre_raytrace::Camera;
    /// let cam = Camera { eye: Vec3::new(0.0, 0.0, 5.0), target: Vec3::ZERO, up: Vec3::Y, fov_y_deg: 45.0 };
    /// let (x, y) = cam.project(Vec3::ZERO, 640, 480).unwrap();
    /// assert!((x - 320.0).abs() < 1e-3 && (y - 240.0).abs() < 1e-3);
    /// ```
    pub fn project(&self, point: Vec3, width: u32, height: u32) -> Option<(f32, f32)> {
        let g = self.to_gpu(width, height);
        let (u, v, w) = self.basis();
        let d = point - self.eye;
        let depth = -d.dot(w);
        if depth.is_nan() || depth <= 0.0 {
            return None;
        }
        // On the image plane at distance 1: the offset from the centre in units of the
        // half-extents, mapped to [0, 1] across and [1, 0] down.
        let half_w = Vec3::from_slice(&g.horizontal[..3]).length() * 0.5;
        let half_h = Vec3::from_slice(&g.vertical[..3]).length() * 0.5;
        let s = (d.dot(u) / depth / half_w + 1.0) * 0.5;
        let t = (d.dot(v) / depth / half_h + 1.0) * 0.5;
        Some((s * g.size[0], (1.0 - t) * g.size[1]))
    }
}

impl fmt::Display for Camera {
    /// The [`Camera::parse`] form.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (e, t, u) = (self.eye, self.target, self.up);
        write!(f, "{},{},{},{},{},{},{},{},{},{}", e.x, e.y, e.z, t.x, t.y, t.z, u.x, u.y, u.z, self.fov_y_deg)
    }
}

impl FromStr for Camera {
    type Err = String;
    /// [`Camera::parse`].
    fn from_str(s: &str) -> Result<Camera, String> {
        Camera::parse(s)
    }
}

/// A camera as the GPU reads it: five `vec4<f32>` (80 bytes), `w` components unused (0).
///
/// | offset | field | meaning |
/// | --- | --- | --- |
/// | 0 | `eye` | ray origin |
/// | 16 | `corner` | from the eye to the lower-left corner of the image plane at distance 1 |
/// | 32 | `horizontal` | image plane width vector (left to right) |
/// | 48 | `vertical` | image plane height vector (bottom to top) |
/// | 64 | `size` | `(width, height, 0, 0)` as f32 |
///
/// The primary ray through continuous pixel coordinate `(px, py)` (origin at the top-left
/// corner, y down) has origin `eye` and direction
///
/// ```text
/// dir = normalize(corner + (px / width) * horizontal + (1 - py / height) * vertical)
/// ```
///
/// evaluated left to right in f32, which is what [`GpuCamera::ray`] (and so [`Camera::ray`])
/// does, so CPU and GPU primary rays agree to rounding of `normalize` (and to fused
/// multiply-adds, if the shader compiler contracts them).
///
/// Precision: every term is a vector of length about 1 relative to the eye, so the direction
/// is accurate to a few ulps wherever the camera is (an absolute corner point would lose the
/// image plane's digits to the eye's at `|eye|` of 1e6 and beyond).
///
/// ```
/// use lumbre_raytrace::Camera;
/// use lumbre_raytrace::twin::GpuCamera;
/// assert_eq!(std::mem::size_of::<GpuCamera>(), 80);
/// let cam = Camera::frame((glam::Vec3::ZERO, glam::Vec3::ONE), 1.0);
/// let g = cam.to_gpu(64, 64);
/// assert_eq!(g.ray(10.5, 20.5), cam.ray(10.5, 20.5, 64, 64));
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GpuCamera {
    /// Ray origin (`w` = 0).
    pub eye: [f32; 4],
    /// From the eye to the lower-left corner of the image plane at distance 1 (`w` = 0).
    pub corner: [f32; 4],
    /// Image plane width vector (`w` = 0).
    pub horizontal: [f32; 4],
    /// Image plane height vector (`w` = 0).
    pub vertical: [f32; 4],
    /// `(width, height, 0, 0)`.
    pub size: [f32; 4],
}

const _: () = assert!(std::mem::size_of::<GpuCamera>() == 80);

impl GpuCamera {
    /// The primary ray through `(px, py)`: `(eye, dir)` with the formula in the type's docs.
    pub fn ray(&self, px: f32, py: f32) -> (Vec3, Vec3) {
        let eye = Vec3::from_slice(&self.eye[..3]);
        let corner = Vec3::from_slice(&self.corner[..3]);
        let horizontal = Vec3::from_slice(&self.horizontal[..3]);
        let vertical = Vec3::from_slice(&self.vertical[..3]);
        let s = px / self.size[0];
        let t = 1.0 - py / self.size[1];
        let dir = corner + horizontal * s + vertical * t;
        (eye, dir.normalize_or_zero())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn degenerate_cameras_give_finite_rays() {
        let cams = [
            Camera { eye: Vec3::ZERO, target: Vec3::ZERO, up: Vec3::Y, fov_y_deg: 45.0 },
            Camera { eye: Vec3::ZERO, target: Vec3::Y, up: Vec3::Y, fov_y_deg: 45.0 },
            Camera { eye: Vec3::ZERO, target: Vec3::Z, up: Vec3::ZERO, fov_y_deg: f32::NAN },
        ];
        for c in cams {
            assert!(c.validate().is_err());
            let (o, d) = c.ray(1.0, 2.0, 0, 0);
            assert!(o.is_finite() && d.is_finite() && (d.length() - 1.0).abs() < 1e-5);
        }
    }
}
