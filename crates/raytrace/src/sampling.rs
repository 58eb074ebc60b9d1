//! Random numbers and sample warps shared by the integrators, each with a WGSL twin in
//! `shared/sampling.wgsl` written with the same operations in the same order: the integer
//! hash ([`hash_u32`], [`hash_f32`]) and the stratified pixel samples built on it
//! ([`stratified`], [`pixel_seed`], [`light_sample`]), then the warps of the Monte Carlo
//! integrators.
//!
//! The hash and the samples built on it are bit-exact on both sides. The warps agree to a
//! few ulps, not bit for bit: a GPU may fuse a multiply and an add, and
//! Vulkan lets `sqrt` and division round differently from IEEE (the tests allow 2e-6 on unit
//! quantities). The trigonometry of the concentric map is a fixed polynomial rather than the
//! platform's `sin` and `cos`, whose GPU accuracy the Vulkan specification barely bounds.

use glam::{Vec2, Vec3};

/// `pi` in f32 (the WGSL modules use the same literal).
pub const PI: f32 = std::f32::consts::PI;
/// `pi / 4`.
const FRAC_PI_4: f32 = std::f32::consts::FRAC_PI_4;

/// The largest f32 below 1 (`1 - 2^-24`): sample offsets are clamped to it.
pub const ONE_MINUS_EPSILON: f32 = 1.0 - f32::EPSILON / 2.0;

/// A 32-bit integer hash: the PCG hash of Jarzynski and Olano, "Hash Functions for GPU
/// Rendering" (JCGT 2020). Only wrapping u32 operations, so WGSL reproduces it bit for bit:
///
/// ```text
/// state = x * 747796405u + 2891336453u
/// word  = ((state >> ((state >> 28u) + 4u)) ^ state) * 277803737u
/// hash  = (word >> 22u) ^ word
/// ```
///
/// ```
/// use lumbre_raytrace::sampling::hash_u32;
/// assert_eq!(hash_u32(0), 129708002);
/// assert_ne!(hash_u32(1), hash_u32(2));
/// ```
pub fn hash_u32(x: u32) -> u32 {
    let state = x.wrapping_mul(747_796_405).wrapping_add(2_891_336_453);
    let word = ((state >> ((state >> 28) + 4)) ^ state).wrapping_mul(277_803_737);
    (word >> 22) ^ word
}

/// A uniform number in `[0, 1)` from [`hash_u32`]: `(hash_u32(x) >> 8) as f32 / 16777216.0`
/// (24 bits, exact in f32).
///
/// ```
/// use lumbre_raytrace::sampling::hash_f32;
/// assert!((0..1000).map(hash_f32).all(|u| (0.0..1.0).contains(&u)));
/// ```
pub fn hash_f32(x: u32) -> f32 {
    (hash_u32(x) >> 8) as f32 / 16_777_216.0
}

/// The subpixel offset in `[0, 1)²` of sample `index` of `spp` in the pixel whose seed is
/// `pixel_seed` (for example `y * width + x`, mixed with a frame number).
///
/// With `s = isqrt(spp)`, `index` taken modulo `spp` (and `spp = 0` counted as 1):
///
/// ```text
/// key = hash_u32(pixel_seed) + index                    (wrapping)
/// jx  = hash_f32(key)
/// jy  = hash_f32(hash_u32(key))
/// if s * s == spp:  (x, y) = ((index % s + jx) / s, (index / s + jy) / s)      jittered s × s grid
/// else:             (x, y) = ((index + jx) / spp, jy)                           jittered 1D strata in x
/// (x, y) = (min(x, ONE_MINUS_EPSILON), min(y, ONE_MINUS_EPSILON))
/// ```
///
/// with integers converted to f32 before the divisions. The GPU reimplements exactly these
/// operations (integer square root by any method that is exact for u32).
///
/// ```
/// use lumbre_raytrace::sampling::stratified;
/// // 4 samples: one per quadrant.
/// let quads: Vec<(bool, bool)> = (0..4).map(|i| stratified(4, i, 7)).map(|(x, y)| (x < 0.5, y < 0.5)).collect();
/// assert_eq!(quads, vec![(true, true), (false, true), (true, false), (false, false)]);
/// ```
pub fn stratified(spp: u32, index: u32, pixel_seed: u32) -> (f32, f32) {
    let spp = spp.max(1);
    let index = index % spp;
    let key = hash_u32(pixel_seed).wrapping_add(index);
    let jx = hash_f32(key);
    let jy = hash_f32(hash_u32(key));
    let s = spp.isqrt();
    let (x, y) = if s * s == spp {
        (((index % s) as f32 + jx) / s as f32, ((index / s) as f32 + jy) / s as f32)
    } else {
        ((index as f32 + jx) / spp as f32, jy)
    };
    (x.min(ONE_MINUS_EPSILON), y.min(ONE_MINUS_EPSILON))
}

/// Seed of the pixel at `(x, y)` of an image `width` pixels wide: `y * width + x`
/// (wrapping), the input of [`stratified`] and of [`light_sample`].
///
/// ```
/// use lumbre_raytrace::sampling::pixel_seed;
/// assert_eq!(pixel_seed(3, 2, 10), 23);
/// ```
pub fn pixel_seed(x: u32, y: u32, width: u32) -> u32 {
    y.wrapping_mul(width).wrapping_add(x)
}

/// The uniform pair that picks the point on light `light` for `sample` of `pixel`, at
/// bounce `depth` (the Whitted integrator's area lights).
///
/// ```
/// use lumbre_raytrace::sampling::light_sample;
/// let (u, v) = light_sample(23, 0, 1, 2);
/// assert!((0.0..1.0).contains(&u) && (0.0..1.0).contains(&v));
/// assert_ne!(light_sample(23, 0, 1, 2), light_sample(23, 0, 1, 3));
/// ```
pub fn light_sample(pixel: u32, sample: u32, depth: u32, light: u32) -> (f32, f32) {
    let k = hash_u32(
        pixel ^ hash_u32(sample.wrapping_mul(64).wrapping_add(depth.wrapping_mul(8)) ^ light.wrapping_mul(0x9e37_79b9)),
    );
    (hash_f32(k), hash_f32(hash_u32(k)))
}

/// `(sin t, cos t)` for `|t| <= pi / 4` by Taylor polynomials to degree 9 and 10 (truncation
/// below 1e-9 there), evaluated by Horner's rule.
fn sin_cos_quarter(t: f32) -> (f32, f32) {
    let t2 = t * t;
    let s = t * (1.0 + t2 * (-1.0 / 6.0 + t2 * (1.0 / 120.0 + t2 * (-1.0 / 5040.0 + t2 * (1.0 / 362_880.0)))));
    let c =
        1.0 + t2 * (-0.5 + t2 * (1.0 / 24.0 + t2 * (-1.0 / 720.0 + t2 * (1.0 / 40_320.0 - t2 * (1.0 / 3_628_800.0)))));
    (s, c)
}

/// Shirley and Chiu's concentric map from `[0, 1)²` to the unit disk: concentric squares to
/// concentric circles, area-preserving up to the factor `pi / 4` (uniform in, uniform out).
///
/// With `(a, b) = (2 u - 1, 2 v - 1)`: where `|a| > |b|`, radius `a` at angle
/// `(pi / 4) (b / a)`; elsewhere radius `b` at angle `pi / 2 - (pi / 4) (a / b)`; the centre
/// maps to the origin.
///
/// ```
/// use lumbre_raytrace::sampling::concentric_disk;
/// assert_eq!(concentric_disk(0.5, 0.5), glam::Vec2::ZERO);
/// let p = concentric_disk(1.0, 0.5); // the middle of the right edge
/// assert!((p - glam::Vec2::X).length() < 1e-6);
/// assert!((0..100).all(|i| concentric_disk(i as f32 / 100.0, 0.37).length() <= 1.0 + 1e-6));
/// ```
pub fn concentric_disk(u: f32, v: f32) -> Vec2 {
    let a = 2.0 * u - 1.0;
    let b = 2.0 * v - 1.0;
    if a == 0.0 && b == 0.0 {
        return Vec2::ZERO;
    }
    if a.abs() > b.abs() {
        let (s, c) = sin_cos_quarter(FRAC_PI_4 * (b / a));
        Vec2::new(a * c, a * s)
    } else {
        // cos and sin of pi/2 - t are sin t and cos t.
        let (s, c) = sin_cos_quarter(FRAC_PI_4 * (a / b));
        Vec2::new(b * s, b * c)
    }
}

/// A cosine-distributed direction about `+z` (Malley's method: a uniform disk point lifted to
/// the hemisphere); its density in solid angle is `z / pi` ([`cosine_hemisphere_pdf`]).
///
/// ```
/// use lumbre_raytrace::sampling::cosine_hemisphere;
/// let d = cosine_hemisphere(0.3, 0.8);
/// assert!((d.length() - 1.0).abs() < 1e-6 && d.z >= 0.0);
/// assert_eq!(cosine_hemisphere(0.5, 0.5), glam::Vec3::Z);
/// ```
pub fn cosine_hemisphere(u: f32, v: f32) -> Vec3 {
    let d = concentric_disk(u, v);
    // 1 - r² from the map's exact radius, not from the rounded point: no cancellation at the rim.
    let r = concentric_radius(u, v);
    let z = ((1.0 - r) * (1.0 + r)).max(0.0).sqrt();
    Vec3::new(d.x, d.y, z)
}

/// The radius of [`concentric_disk`]`(u, v)` without rounding: `max(|2u - 1|, |2v - 1|)`.
fn concentric_radius(u: f32, v: f32) -> f32 {
    (2.0 * u - 1.0).abs().max((2.0 * v - 1.0).abs())
}

/// Density in solid angle of [`cosine_hemisphere`] at a direction whose cosine with the axis
/// is `cos_theta`: `cos_theta / pi`, 0 below the horizon.
///
/// ```
/// let p = lumbre_raytrace::sampling::cosine_hemisphere_pdf(1.0);
/// assert!((p - 1.0 / std::f32::consts::PI).abs() < 1e-7);
/// assert_eq!(lumbre_raytrace::sampling::cosine_hemisphere_pdf(-0.5), 0.0);
/// ```
pub fn cosine_hemisphere_pdf(cos_theta: f32) -> f32 {
    cos_theta.max(0.0) / PI
}

/// A direction about `+z` distributed as the normalized Phong lobe of exponent `ns`: density
/// `(ns + 1) / (2 pi) cos^ns` in solid angle ([`phong_lobe_pdf`]). The concentric disk point
/// gives both numbers without trigonometry: its squared radius `r²` is uniform (so
/// `cos = (r²)^(1 / (ns + 1))`) and its direction is the azimuth.
///
/// ```
/// use lumbre_raytrace::sampling::phong_lobe;
/// let d = phong_lobe(0.3, 0.8, 50.0);
/// assert!((d.length() - 1.0).abs() < 1e-5 && d.z > 0.8);
/// ```
pub fn phong_lobe(u: f32, v: f32, ns: f32) -> Vec3 {
    let d = concentric_disk(u, v);
    let r = concentric_radius(u, v);
    if r <= 0.0 {
        return Vec3::X;
    }
    let cos_a = (r * r).powf(1.0 / (ns + 1.0));
    let sin_a = ((1.0 - cos_a) * (1.0 + cos_a)).max(0.0).sqrt();
    Vec3::new(sin_a * (d.x / r), sin_a * (d.y / r), cos_a)
}

/// Density in solid angle of [`phong_lobe`] at a direction whose cosine with the axis is
/// `cos_a`: `(ns + 1) / (2 pi) cos_a^ns`, 0 below the horizon.
///
/// ```
/// let p = lumbre_raytrace::sampling::phong_lobe_pdf(1.0, 0.0);
/// assert!((p - 0.5 / std::f32::consts::PI).abs() < 1e-7); // exponent 0: uniform hemisphere
/// ```
pub fn phong_lobe_pdf(cos_a: f32, ns: f32) -> f32 {
    if cos_a <= 0.0 {
        return 0.0;
    }
    (ns + 1.0) / (2.0 * PI) * cos_a.powf(ns)
}

/// An orthonormal basis `(t, b)` completing the unit vector `n` (right-handed: `t × b = n`),
/// by Duff et al., "Building an Orthonormal Basis, Revisited" (JCGT 2017): no division by a
/// small number, continuous except where `n.z` changes sign. `n.z = -0.0` counts as positive.
///
/// ```
/// use glam::Vec3;
/// use lumbre_raytrace::sampling::orthonormal_basis;
/// let n = Vec3::new(0.3, -0.4, 0.5).normalize();
/// let (t, b) = orthonormal_basis(n);
/// assert!(t.dot(n).abs() < 1e-6 && b.dot(n).abs() < 1e-6 && t.dot(b).abs() < 1e-6);
/// assert!((t.cross(b) - n).length() < 1e-6);
/// ```
pub fn orthonormal_basis(n: Vec3) -> (Vec3, Vec3) {
    let sign = if n.z >= 0.0 { 1.0 } else { -1.0 };
    let a = -1.0 / (sign + n.z);
    let b = n.x * n.y * a;
    let t = Vec3::new(1.0 + sign * n.x * n.x * a, sign * b, -sign * n.x);
    let bt = Vec3::new(b, sign + n.y * n.y * a, -n.y);
    (t, bt)
}

/// `local` (coordinates in the frame whose `z` is `n`) in world coordinates, through
/// [`orthonormal_basis`].
///
/// ```
/// use glam::Vec3;
/// let w = lumbre_raytrace::sampling::to_world(Vec3::Z, Vec3::new(0.0, 1.0, 0.0).normalize());
/// assert!((w - Vec3::Y).length() < 1e-6);
/// ```
pub fn to_world(local: Vec3, n: Vec3) -> Vec3 {
    let (t, b) = orthonormal_basis(n);
    t * local.x + b * local.y + n * local.z
}

/// Veach's power heuristic with exponent 2: the weight `a² / (a² + b²)` of a sample drawn
/// from the strategy of density `a` when the other strategy has density `b`. Computed
/// through the ratio of the smaller to the larger density, so infinite and huge densities
/// give 1 or 0, never NaN; both zero give 0.
///
/// ```
/// use lumbre_raytrace::sampling::power_heuristic;
/// assert_eq!(power_heuristic(1.0, 1.0), 0.5);
/// assert_eq!(power_heuristic(f32::INFINITY, 3.0), 1.0);
/// assert_eq!(power_heuristic(0.0, 0.0), 0.0);
/// assert!((power_heuristic(3.0, 1.0) - 0.9).abs() < 1e-6);
/// ```
pub fn power_heuristic(a: f32, b: f32) -> f32 {
    if a >= b {
        if a == 0.0 {
            return 0.0;
        }
        let r = b / a;
        1.0 / (1.0 + r * r)
    } else {
        let r = a / b;
        let r2 = r * r;
        r2 / (1.0 + r2)
    }
}

/// Barycentric weights `(w0, w1, w2)` of a uniform point on a triangle from two uniform
/// numbers (the square-root warp): `s = sqrt(u)`, `w0 = 1 - s`, `w1 = v s`, `w2 = s - w1`.
/// Every weight is non-negative in floating point, so the point never leaves the triangle.
///
/// ```
/// let (w0, w1, w2) = lumbre_raytrace::sampling::uniform_triangle(0.25, 0.5);
/// assert_eq!((w0, w1, w2), (0.5, 0.25, 0.25));
/// ```
pub fn uniform_triangle(u: f32, v: f32) -> (f32, f32, f32) {
    let s = u.sqrt();
    let w1 = v * s;
    (1.0 - s, w1, s - w1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_reference_values() {
        // Computed by hand from the formula (the WGSL port must give the same).
        let state = 0u32.wrapping_mul(747_796_405).wrapping_add(2_891_336_453);
        let word = ((state >> ((state >> 28) + 4)) ^ state).wrapping_mul(277_803_737);
        assert_eq!(hash_u32(0), (word >> 22) ^ word);
        assert_eq!(hash_f32(0), (hash_u32(0) >> 8) as f32 / 16_777_216.0);
    }

    #[test]
    fn strata_cover_the_pixel() {
        for spp in [1u32, 2, 3, 4, 5, 9, 16, 17, 64] {
            let samples: Vec<(f32, f32)> = (0..spp).map(|i| stratified(spp, i, 12345)).collect();
            for &(x, y) in &samples {
                assert!((0.0..1.0).contains(&x) && (0.0..1.0).contains(&y));
            }
            let s = spp.isqrt();
            let mut cells: Vec<u32> = samples
                .iter()
                .map(|&(x, y)| {
                    if s * s == spp {
                        (y * s as f32) as u32 * s + (x * s as f32) as u32
                    } else {
                        (x * spp as f32) as u32
                    }
                })
                .collect();
            cells.sort_unstable();
            assert_eq!(cells, (0..spp).collect::<Vec<_>>(), "spp {spp}");
        }
        assert_eq!(stratified(0, 5, 1), stratified(1, 0, 1));
        assert_eq!(stratified(4, 6, 1), stratified(4, 2, 1));
    }

    #[test]
    fn quarter_polynomials_match_libm() {
        for i in -1000..=1000 {
            let t = FRAC_PI_4 * i as f32 / 1000.0;
            let (s, c) = sin_cos_quarter(t);
            assert!((s - t.sin()).abs() <= 2e-7, "sin {t}: {s} vs {}", t.sin());
            assert!((c - t.cos()).abs() <= 2e-7, "cos {t}: {c} vs {}", t.cos());
        }
    }

    #[test]
    fn concentric_map_is_uniform_on_the_disk() {
        // Every point on the disk; the share of a grid in each quarter annulus matches its area.
        let n = 200;
        let mut inner = 0usize;
        let mut quadrant = [0usize; 4];
        for i in 0..n {
            for j in 0..n {
                let p = concentric_disk((i as f32 + 0.5) / n as f32, (j as f32 + 0.5) / n as f32);
                assert!(p.length() <= 1.0 + 1e-6, "{p}");
                inner += (p.length() < std::f32::consts::FRAC_1_SQRT_2) as usize;
                quadrant[(p.x < 0.0) as usize * 2 + (p.y < 0.0) as usize] += 1;
            }
        }
        let total = (n * n) as f64;
        assert!((inner as f64 / total - 0.5).abs() < 0.01, "inner {inner}");
        for q in quadrant {
            assert!((q as f64 / total - 0.25).abs() < 0.01, "{quadrant:?}");
        }
    }

    #[test]
    fn cosine_hemisphere_has_the_cosine_moments() {
        // E[cos] = 2/3 and E[cos²] = 1/2 under the density cos/pi.
        let n = 256;
        let (mut m1, mut m2) = (0.0f64, 0.0f64);
        for i in 0..n {
            for j in 0..n {
                let d = cosine_hemisphere((i as f32 + 0.5) / n as f32, (j as f32 + 0.5) / n as f32);
                assert!((d.length() - 1.0).abs() < 1e-5 && d.z >= 0.0);
                m1 += d.z as f64;
                m2 += (d.z * d.z) as f64;
            }
        }
        let total = (n * n) as f64;
        assert!((m1 / total - 2.0 / 3.0).abs() < 1e-3, "{}", m1 / total);
        assert!((m2 / total - 0.5).abs() < 1e-3, "{}", m2 / total);
    }

    #[test]
    fn phong_lobe_matches_its_density() {
        // E[cos^k] under (n + 1)/(2 pi) cos^n is (n + 1) / (n + k + 1).
        for ns in [1.0f32, 10.0, 200.0] {
            let m = 256;
            let (mut m1, mut m2) = (0.0f64, 0.0f64);
            for i in 0..m {
                for j in 0..m {
                    let d = phong_lobe((i as f32 + 0.5) / m as f32, (j as f32 + 0.5) / m as f32, ns);
                    assert!((d.length() - 1.0).abs() < 1e-5 && d.z >= 0.0, "{d}");
                    m1 += d.z as f64;
                    m2 += (d.z * d.z) as f64;
                }
            }
            let (total, n) = ((m * m) as f64, ns as f64);
            assert!((m1 / total - (n + 1.0) / (n + 2.0)).abs() < 1e-3, "{ns}: {}", m1 / total);
            assert!((m2 / total - (n + 1.0) / (n + 3.0)).abs() < 1e-3, "{ns}: {}", m2 / total);
        }
    }

    #[test]
    fn basis_is_orthonormal_everywhere() {
        let mut k = 1u32;
        let mut normals = vec![Vec3::Z, -Vec3::Z, Vec3::X, -Vec3::Y, Vec3::new(0.0, 0.0, -0.0)];
        for _ in 0..2000 {
            k = hash_u32(k);
            let d = Vec3::new(hash_f32(k), hash_f32(k ^ 1), hash_f32(k ^ 2)) * 2.0 - 1.0;
            if d.length() > 1e-3 {
                normals.push(d.normalize());
            }
        }
        for n in normals {
            let n = if n == Vec3::new(0.0, 0.0, -0.0) { Vec3::Z } else { n };
            let (t, b) = orthonormal_basis(n);
            assert!((t.length() - 1.0).abs() < 1e-5 && (b.length() - 1.0).abs() < 1e-5, "{n}");
            assert!(t.dot(b).abs() < 1e-5 && t.dot(n).abs() < 1e-5 && b.dot(n).abs() < 1e-5, "{n}");
            assert!((t.cross(b) - n).length() < 1e-5, "{n}");
        }
    }

    #[test]
    fn power_heuristic_weights_sum_to_one() {
        for (a, b) in [(1.0, 2.0), (1e-30, 1e30), (0.0, 5.0), (7.0, 0.0), (f32::INFINITY, 1.0), (3e38, 3e38)] {
            let s = power_heuristic(a, b) + power_heuristic(b, a);
            assert!((s - 1.0).abs() < 1e-6, "{a} {b}: {s}");
        }
    }

    #[test]
    fn triangle_weights_stay_in_the_triangle() {
        for u in [0.0, 1e-30, 0.3, 0.999_999_94] {
            for v in [0.0, 0.5, 0.999_999_94] {
                let (a, b, c) = uniform_triangle(u, v);
                assert!(a >= 0.0 && b >= 0.0 && c >= 0.0 && (a + b + c - 1.0).abs() < 1e-6);
            }
        }
    }
}
