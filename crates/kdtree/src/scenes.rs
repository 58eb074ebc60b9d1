//! Deterministic test and benchmark inputs shared with other crates' benches.

use glam::Vec3;

use crate::triangle::Ray;

/// A deterministic mesh of exactly `n` triangles: a bumpy sphere of radius about 1 around
/// the origin (a latitude/longitude grid with its poles cut off, displaced by smooth waves
/// and a little hashed noise), triangles emitted band by band, so a smaller `n` leaves the
/// last band open. The same output on every call; `sin` and `cos` come from the platform's
/// math library, so another platform may differ in the last bits.
///
/// ```
/// use lumbre_kdtree::{is_valid_triangle, scenes::generated_scene};
///
/// let tris = generated_scene(1000);
/// assert_eq!(tris.len(), 1000);
/// assert!(tris.iter().all(is_valid_triangle));
/// assert_eq!(tris, generated_scene(1000));
/// assert!(tris.iter().flatten().all(|v| v.length() < 1.3));
/// ```
pub fn generated_scene(n: usize) -> Vec<[Vec3; 3]> {
    // rows x cols quads of two triangles each, with cols = 2 rows, at least n triangles.
    let rows = ((n as f64 / 4.0).sqrt().ceil() as usize).max(1);
    let cols = 2 * rows;
    let vertex = |i: usize, j: usize| {
        let theta = std::f32::consts::PI * (0.05 + 0.9 * i as f32 / rows as f32);
        let phi = std::f32::consts::TAU * (j % cols) as f32 / cols as f32;
        let noise = (hash(i as u32, (j % cols) as u32) as f32 / u32::MAX as f32) * 2.0 - 1.0;
        let r = 1.0 + 0.15 * (5.0 * theta).sin() * (7.0 * phi).cos() + 0.02 * noise;
        r * Vec3::new(theta.sin() * phi.cos(), theta.cos(), theta.sin() * phi.sin())
    };
    let mut tris = Vec::with_capacity(n);
    'bands: for i in 0..rows {
        for j in 0..cols {
            let (a, b, c, d) = (vertex(i, j), vertex(i + 1, j), vertex(i + 1, j + 1), vertex(i, j + 1));
            for tri in [[a, b, c], [a, c, d]] {
                if tris.len() == n {
                    break 'bands;
                }
                tris.push(tri);
            }
        }
    }
    tris
}

/// A deterministic fan of `n` long thin triangles: a disc of radius 1 around the origin in
/// the plane `y = 0`, triangulated from its centre (every triangle shares the centre and
/// spans the radius, its rim vertices `n`-th turns apart), facing `+y` (counter-clockwise
/// seen from above). Every split of a cell that holds the centre cuts most of the
/// triangles in it. For `n >= 3` every triangle is valid. (`sin` and `cos` come from the
/// platform's math library, as in [`generated_scene`].)
///
/// ```
/// use glam::Vec3;
/// use lumbre_kdtree::{is_valid_triangle, scenes::fan};
///
/// let tris = fan(500);
/// assert_eq!(tris.len(), 500);
/// assert!(tris.iter().all(is_valid_triangle));
/// assert!(tris.iter().all(|t| t[0] == Vec3::ZERO), "every triangle has the centre");
/// assert!(tris.iter().flatten().all(|v| v.y == 0.0 && v.length() < 1.0 + 1e-6));
/// let [a, b, c] = tris[7];
/// assert!((b - a).cross(c - a).y > 0.0, "facing up");
/// ```
pub fn fan(n: usize) -> Vec<[Vec3; 3]> {
    let rim = |i: usize| disc_point(i % n.max(1), n);
    (0..n).map(|i| [Vec3::ZERO, rim(i), rim(i + 1)]).collect()
}

/// A deterministic self-overlapping star polygon of `n` vertices, triangulated as a fan
/// from its first vertex: `n - 2` long thin triangles (none for `n < 3`). The vertices lie
/// on the rim of the disc of [`fan`], each `k` `n`-th turns after the one before, with `k`
/// the first number from `n / 256` (rounded, at least 1) on that has no common divisor with
/// `n` (the star polygon {n/k}): one closed line winding `k` times round the centre, so
/// every triangle reaches from the first vertex nearly across the disc and crosses many of
/// the others, and every point of the disc lies in up to `k` of them. Every triangle is
/// valid.
///
/// ```
/// use lumbre_kdtree::{is_valid_triangle, scenes::star_polygon};
///
/// let tris = star_polygon(5000); // winds 21 times round the centre
/// assert_eq!(tris.len(), 4998);
/// assert!(tris.iter().all(is_valid_triangle));
/// assert_eq!(tris, star_polygon(5000));
/// assert!(tris.iter().all(|t| t[0] == tris[0][0]), "a fan from the first vertex");
/// assert!(star_polygon(2).is_empty());
/// ```
pub fn star_polygon(n: usize) -> Vec<[Vec3; 3]> {
    if n < 3 {
        return Vec::new();
    }
    let gcd = |mut a: usize, mut b: usize| {
        while b != 0 {
            (a, b) = (b, a % b);
        }
        a
    };
    let k = ((n as f64 / 256.0).round() as usize).max(1);
    let k = (k..).find(|&k| gcd(n, k) == 1).unwrap_or(1);
    let vertex = |i: usize| disc_point(i * k % n, n);
    (1..n - 1).map(|i| [vertex(0), vertex(i), vertex(i + 1)]).collect()
}

/// Rim point `i` of `n` on the disc of [`fan`] and [`star_polygon`]: `i / n` turns round the
/// unit circle in the plane `y = 0`, counter-clockwise seen from above.
fn disc_point(i: usize, n: usize) -> Vec3 {
    let (s, c) = (std::f64::consts::TAU * i as f64 / n as f64).sin_cos();
    Vec3::new(c as f32, 0.0, -s as f32)
}

/// A small integer hash (lowbias32 of a combined key).
fn hash(a: u32, b: u32) -> u32 {
    let mut x = a.wrapping_mul(0x9e37_79b9) ^ b.wrapping_add(0x7f4a_7c15);
    x ^= x >> 16;
    x = x.wrapping_mul(0x21f0_aaad);
    x ^= x >> 15;
    x = x.wrapping_mul(0x735a_2d97);
    x ^ (x >> 15)
}

/// Directions of rays from a pinhole camera at `eye` looking at `target` (up = +y), one per
/// pixel of a `width` x `height` image with vertical field of view `fov_y` (radians), row by
/// row from the top. Used by the benchmarks and by tests.
///
/// ```
/// use glam::Vec3;
/// let rays = lumbre_kdtree::scenes::camera_rays(Vec3::new(0.0, 0.0, 5.0), Vec3::ZERO, 1.0, 4, 3);
/// assert_eq!(rays.len(), 12);
/// assert!(rays.iter().all(|r| r.origin == Vec3::new(0.0, 0.0, 5.0) && r.dir.z < 0.0));
/// ```
pub fn camera_rays(eye: Vec3, target: Vec3, fov_y: f32, width: u32, height: u32) -> Vec<Ray> {
    let forward = (target - eye).normalize();
    let right = forward.cross(Vec3::Y).normalize();
    let up = right.cross(forward);
    let half_h = (fov_y * 0.5).tan();
    let half_w = half_h * width as f32 / height as f32;
    let mut rays = Vec::with_capacity(width as usize * height as usize);
    for y in 0..height {
        for x in 0..width {
            let sx = ((x as f32 + 0.5) / width as f32 * 2.0 - 1.0) * half_w;
            let sy = (1.0 - (y as f32 + 0.5) / height as f32 * 2.0) * half_h;
            rays.push(Ray::new(eye, forward + sx * right + sy * up));
        }
    }
    rays
}
