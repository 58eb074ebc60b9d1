//! Stage 1, the scene's point pool: points spread over the triangles by area, in a random
//! order, so that any window of the pool is a random area-uniform subset (each VPL splats
//! the window from its own start). The CPU twin of `lightcuts/ism_points.wgsl`.
//!
//! The area CDF is cut into `count` equal strata, one point each (stratified: a triangle
//! gets its share of the points up to one); pool slot `j` holds the point of stratum
//! `shuffle(j)`, a bijection of `0..count` by a Feistel network. Everything up to the
//! barycentric coordinates is integer arithmetic, so both paths pick the same triangles
//! and the same coordinates on every device; the positions are one f32 expression, equal
//! where the device does not fuse it into multiply-adds (a few ulps apart where it does).

use glam::Vec3;
use lumbre_gpu::{Error, Result};
use lumbre_raytrace::hash_u32;
use rayon::prelude::*;

/// Dimensions of the integer-hash draws (the same in `lightcuts/ism_random.wgsl`).
pub(crate) const DIM_JITTER: u32 = 0;
pub(crate) const DIM_U: u32 = 1;
pub(crate) const DIM_V: u32 = 2;
pub(crate) const DIM_SHUFFLE: u32 = 3;
pub(crate) const DIM_START: u32 = 8;
const SHUFFLE_ROUNDS: u32 = 4;

/// Draw `dim` of item `index` under `seed`.
pub(crate) fn draw(seed: u32, index: u32, dim: u32) -> u32 {
    hash_u32(hash_u32(index) ^ hash_u32(seed ^ dim.wrapping_mul(0x9e37_79b9)))
}

/// A uniform number in `[0, 1)` with 24 bits.
fn unit(bits: u32) -> f32 {
    (bits >> 8) as f32 / 16_777_216.0
}

fn feistel(x: u32, half_bits: u32, seed: u32) -> u32 {
    let mask = (1u32 << half_bits) - 1;
    let (mut left, mut right) = (x >> half_bits, x & mask);
    for r in 0..SHUFFLE_ROUNDS {
        let f = draw(seed, right, DIM_SHUFFLE + r) & mask;
        (left, right) = (right, left ^ f);
    }
    (left << half_bits) | right
}

/// Half the bits of the shuffle's domain: the smallest `h >= 1` with `4^h >= count`.
pub(crate) fn half_bits(count: u32) -> u32 {
    let bits = 32 - (count.max(2) - 1).leading_zeros();
    bits.div_ceil(2).max(1)
}

/// A bijection of `0..count`: the Feistel network over `4^half_bits` values, walked until it
/// lands in range (fewer than four steps on average: the domain is below `4 * count`).
pub(crate) fn shuffle(j: u32, count: u32, half_bits: u32, seed: u32) -> u32 {
    let mut x = feistel(j, half_bits, seed);
    while x >= count {
        x = feistel(x, half_bits, seed);
    }
    x
}

/// Where VPL `vpl`'s window of a pool of `points` starts.
pub(crate) fn start(seed: u32, vpl: u32, points: u32) -> u32 {
    draw(seed, vpl, DIM_START) % points
}

/// Points spread over a scene's triangles by area, in a random order.
///
/// ```
/// use glam::Vec3;
/// use lumbre_lightcuts::ism::ScenePoints;
/// let quad = [
///     [Vec3::ZERO, Vec3::X, Vec3::new(1.0, 0.0, 1.0)],
///     [Vec3::ZERO, Vec3::new(1.0, 0.0, 1.0), Vec3::Z],
/// ];
/// let pool = ScenePoints::sample(&quad, 1000, 7).unwrap();
/// assert_eq!(pool.len(), 1000);
/// // Equal areas: 500 points each, by stratification.
/// assert_eq!(pool.triangles.iter().filter(|&&t| t == 0).count(), 500);
/// assert!(pool.positions.iter().all(|p| p.y == 0.0 && p.x >= 0.0 && p.z <= 1.0));
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ScenePoints {
    /// The points, in the pool's (random) order.
    pub positions: Vec<Vec3>,
    /// The triangle each point lies on (an index into the triangles sampled).
    pub triangles: Vec<u32>,
    /// Bounds of the scene's triangles: `(min, max)`.
    pub bounds: (Vec3, Vec3),
}

/// What both paths need to sample a pool: the area CDF in integer units and the pool's
/// shape. Made on the host once, for both.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct PoolPlan {
    /// `tris + 1` bounds: `cdf[k]` is the CDF at the start of triangle `k`, `cdf[tris]`
    /// is `count * step`.
    pub cdf: Vec<u32>,
    pub count: u32,
    /// CDF units per stratum.
    pub step: u32,
    pub half_bits: u32,
    pub seed: u32,
    pub bounds: (Vec3, Vec3),
}

impl PoolPlan {
    /// Checks the triangles (finite, some area) and builds the integer CDF.
    pub fn new(triangles: &[[Vec3; 3]], count: u32, seed: u32) -> Result<PoolPlan> {
        if count == 0 || count > super::MAX_POINTS {
            return Err(Error::Input(format!("point pool of {count}: allowed are 1..={}", super::MAX_POINTS)));
        }
        if triangles.is_empty() || triangles.len() >= u32::MAX as usize {
            return Err(Error::Input(format!("{} triangles to sample: allowed are 1..{}", triangles.len(), u32::MAX)));
        }
        if let Some(i) = triangles.iter().position(|t| !t.iter().all(|p| p.is_finite())) {
            return Err(Error::Input(format!("triangle {i} has a NaN or infinite corner: {:?}", triangles[i])));
        }
        let areas: Vec<f64> = triangles
            .par_iter()
            .map(|[a, b, c]| 0.5 * (b.as_dvec3() - a.as_dvec3()).cross(c.as_dvec3() - a.as_dvec3()).length())
            .collect();
        let total: f64 = areas.iter().sum();
        if !(total > 0.0 && total.is_finite()) {
            return Err(Error::Input(format!("the triangles' total area is {total}: points need some area")));
        }
        let step = u32::MAX / count;
        let end = count as u64 * step as u64;
        let mut cdf = Vec::with_capacity(triangles.len() + 1);
        let mut acc = 0.0f64;
        for a in &areas {
            cdf.push(((acc / total * end as f64) as u64).min(end) as u32);
            acc += a;
        }
        cdf.push(end as u32);
        let mut lo = triangles[0][0];
        let mut hi = lo;
        for p in triangles.iter().flatten() {
            (lo, hi) = (lo.min(*p), hi.max(*p));
        }
        Ok(PoolPlan { cdf, count, step, half_bits: half_bits(count), seed, bounds: (lo, hi) })
    }

    /// Pool slot `j`: (triangle, position).
    fn point(&self, triangles: &[[Vec3; 3]], j: u32) -> (u32, Vec3) {
        let s = shuffle(j, self.count, self.half_bits, self.seed);
        let c = s * self.step + draw(self.seed, s, DIM_JITTER) % self.step;
        // The last k with cdf[k] <= c (an interval that is not empty).
        let (mut lo, mut hi) = (0usize, self.cdf.len() - 1);
        while hi - lo > 1 {
            let mid = (lo + hi) / 2;
            if self.cdf[mid] <= c {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        let mut u = unit(draw(self.seed, s, DIM_U));
        let mut v = unit(draw(self.seed, s, DIM_V));
        if u + v > 1.0 {
            (u, v) = (1.0 - u, 1.0 - v);
        }
        let [a, b, c] = triangles[lo];
        let (e1, e2) = (b - a, c - a);
        // Written per component in the shader's order: (a + e1 * u) + e2 * v.
        let p = Vec3::new(a.x + e1.x * u + e2.x * v, a.y + e1.y * u + e2.y * v, a.z + e1.z * u + e2.z * v);
        (lo as u32, p)
    }
}

impl ScenePoints {
    /// Samples a pool of `count` points over `triangles` with `seed` (on the CPU; the GPU
    /// twin is [`SamplePoints`](super::SamplePoints)). Errors for no triangles, a triangle
    /// with a NaN or infinite corner (naming it), no area at all, or a count outside
    /// `1..=`[`MAX_POINTS`](super::MAX_POINTS). Triangles without area get no point.
    pub fn sample(triangles: &[[Vec3; 3]], count: u32, seed: u32) -> Result<ScenePoints> {
        let plan = PoolPlan::new(triangles, count, seed)?;
        Ok(sample_cpu(&plan, triangles))
    }

    /// Number of points.
    pub fn len(&self) -> usize {
        self.positions.len()
    }

    /// Whether the pool is empty.
    pub fn is_empty(&self) -> bool {
        self.positions.is_empty()
    }

    /// Length of the diagonal of the scene's bounds (the unit of [`IsmOptions::bias`](super::IsmOptions::bias)).
    pub fn diagonal(&self) -> f32 {
        (self.bounds.1 - self.bounds.0).length()
    }
}

/// The CPU twin of `lightcuts/ism_points.wgsl`.
pub(crate) fn sample_cpu(plan: &PoolPlan, triangles: &[[Vec3; 3]]) -> ScenePoints {
    let (triangles, positions): (Vec<u32>, Vec<Vec3>) =
        (0..plan.count).into_par_iter().map(|j| plan.point(triangles, j)).unzip();
    ScenePoints { positions, triangles, bounds: plan.bounds }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shuffle_is_a_permutation() {
        for count in [1u32, 2, 3, 4, 5, 17, 64, 1000, 4097] {
            let h = half_bits(count);
            assert!(1u64 << (2 * h) >= count as u64 && (1u64 << (2 * h)) < 4 * count.max(2) as u64);
            let mut seen = vec![false; count as usize];
            for j in 0..count {
                let s = shuffle(j, count, h, 99) as usize;
                assert!(!seen[s], "count {count}: {s} twice");
                seen[s] = true;
            }
        }
    }

    #[test]
    fn strata_follow_the_area() {
        // Areas 1 : 3 : 0 (a degenerate triangle) : 4.
        let t = |s: f32, x: f32| [Vec3::new(x, 0.0, 0.0), Vec3::new(x + s, 0.0, 0.0), Vec3::new(x, s, 0.0)];
        let tris = [t(1.0, 0.0), t(3f32.sqrt(), 5.0), [Vec3::ZERO, Vec3::X, Vec3::X * 2.0], t(2.0, 10.0)];
        let pool = ScenePoints::sample(&tris, 8000, 3).unwrap();
        let count = |k| pool.triangles.iter().filter(|&&t| t == k).count() as i64;
        assert!((count(0) - 1000).abs() <= 1 && (count(1) - 3000).abs() <= 1 && (count(3) - 4000).abs() <= 1);
        assert_eq!(count(2), 0);
        for (p, &k) in pool.positions.iter().zip(&pool.triangles) {
            let [a, b, c] = tris[k as usize];
            let (lo, hi) = (a.min(b).min(c), a.max(b).max(c));
            assert!(p.cmpge(lo).all() && p.cmple(hi).all(), "{p} outside triangle {k}");
        }
        // The order is random: the first tenth of the pool holds each triangle's share.
        let head = pool.triangles[..800].iter().filter(|&&t| t == 3).count();
        assert!((300..500).contains(&head), "{head}");
    }

    #[test]
    fn bad_triangles_are_errors() {
        let ok = [Vec3::ZERO, Vec3::X, Vec3::Y];
        assert!(ScenePoints::sample(&[], 10, 0).is_err());
        assert!(ScenePoints::sample(&[ok], 0, 0).is_err());
        let e = ScenePoints::sample(&[ok, [Vec3::ZERO, Vec3::NAN, Vec3::Y]], 10, 0).unwrap_err();
        assert!(e.to_string().contains("triangle 1"), "{e}");
        assert!(ScenePoints::sample(&[[Vec3::ZERO, Vec3::X, Vec3::X]], 10, 0).is_err());
    }
}
