//! Stage 1, the scene's point pool: points spread over the triangles by area, in a random
//! order, so that any window of the pool is a random area-uniform subset (each VPL splats
//! the window from its own start). The CPU twin of `lightcuts/ism_points.wgsl`
//! (`gpu/ism/points.rs`).
//!
//! The area CDF is cut into `count` equal strata, one point each (stratified: a triangle
//! gets its share of the points up to one); pool slot `j` holds the point of stratum
//! `shuffle(j)`, a bijection of `0..count` by a Feistel network. Everything up to the
//! barycentric coordinates is integer arithmetic, so both paths pick the same triangles
//! and the same coordinates on every device; the positions are one f32 expression, equal
//! where the device does not fuse it into multiply-adds (a few ulps apart where it does).

use glam::Vec3;
use lumbre_gpu::{Agree, Error, Result, Tolerance, compare_slices};
use rayon::prelude::*;

use crate::ism::options::MAX_POINTS;
use crate::ism::random::{DIM_JITTER, DIM_U, DIM_V, draw, half_bits, shuffle, unit};

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
        if count == 0 || count > MAX_POINTS {
            return Err(Error::Input(format!("point pool of {count}: allowed are 1..={MAX_POINTS}")));
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
    /// twin is [`SamplePoints`]). Errors for no triangles, a triangle
    /// with a NaN or infinite corner (naming it), no area at all, or a count outside
    /// `1..=`[`MAX_POINTS`]. Triangles without area get no point.
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

    /// Length of the diagonal of the scene's bounds (the unit of
    /// [`IsmOptions::bias`](crate::ism::IsmOptions::bias)).
    pub fn diagonal(&self) -> f32 {
        (self.bounds.1 - self.bounds.0).length()
    }
}

impl Agree for ScenePoints {
    /// Triangles and bounds exactly, positions within `tol`.
    fn disagreement(&self, gpu: &Self, tol: Tolerance) -> Option<String> {
        if self.bounds != gpu.bounds {
            return Some(format!("bounds differ: cpu {:?} vs gpu {:?}", self.bounds, gpu.bounds));
        }
        if let Some(d) = compare_slices(&self.triangles, &gpu.triangles, Tolerance::EXACT) {
            return Some(format!("triangles: {d}"));
        }
        let xyz = |p: &[Vec3]| p.iter().map(|v| v.to_array()).collect::<Vec<_>>();
        compare_slices(&xyz(&self.positions), &xyz(&gpu.positions), tol).map(|d| format!("positions: {d}"))
    }
}

/// Stage 1: samples the scene's point pool ([`ScenePoints::sample`] on the CPU,
/// `lightcuts/ism_points.wgsl` on the GPU).
///
/// ```
/// use glam::Vec3;
/// use lumbre_gpu::{Backend, Compute};
/// use lumbre_lightcuts::ism::SamplePoints;
/// let pool = SamplePoints { count: 64, seed: 1 }.run(&Backend::Cpu, &[[Vec3::ZERO, Vec3::X, Vec3::Y]])?;
/// assert_eq!(pool.len(), 64);
/// # Ok::<(), lumbre_gpu::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SamplePoints {
    /// Points in the pool.
    pub count: u32,
    /// Seed of the draws and the order.
    pub seed: u32,
}

impl SamplePoints {
    /// The CPU path: [`ScenePoints::sample`].
    ///
    /// ```
    /// use glam::Vec3;
    /// use lumbre_lightcuts::ism::SamplePoints;
    /// let pool = SamplePoints { count: 64, seed: 1 }.cpu(&[[Vec3::ZERO, Vec3::X, Vec3::Y]])?;
    /// assert_eq!(pool.len(), 64);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn cpu(&self, triangles: &[[Vec3; 3]]) -> Result<ScenePoints> {
        ScenePoints::sample(triangles, self.count, self.seed)
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
