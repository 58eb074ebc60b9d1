//! Form factors with visibility, element to patch (the CPU twin of
//! `radiosity/formfactor.wgsl`).
//!
//! For element e and patch p, `F_ep = 1/A_e ∫_e F(x -> p) dx`, where the point-to-patch
//! factor with visibility is `F(x -> p) = ∫_p V(x, y) cos θ_x cos θ_y / (π r^2) dy`.
//!
//! **Estimator.** N points x_i on e (a jittered `sqrt(N) x sqrt(N)` grid from
//! [`lumbre_raytrace::sampling::stratified`], seeded by e alone, so a row shares its points) and N
//! points y_i on p (another jittered grid, seeded by the pair, paired with the x_i through
//! the permutation `i -> (a i + b) mod N`, a coprime to N):
//!
//! `F_ep ≈ (1/N Σ_i F_u(x_i -> p)) · (Σ_i G_i V_i / Σ_i G_i)`
//!
//! where `F_u(x -> p)` is the *exact unoccluded* point-to-polygon form factor (Lambert's
//! contour integral over p's pieces clipped to the half-space in front of x,
//! [`point_to_shape`], or over p's boundary where that is the same, see
//! [`Clusters`](crate::Clusters)); points on elements and patches made of several pieces
//! are uniform in area ([`crate::sample`]);
//! `G_i = cos θ_x cos θ_y / r^2` of the pair (x_i, y_i) and `V_i` its shadow ray (x_i and
//! y_i lifted off their surfaces by the scene's `eps`; any hit between them occludes). The
//! second factor, the kernel-weighted visible fraction, is 1 when nothing occludes (then
//! the estimate is exact in y and stratified Monte Carlo in x only) and 0 when everything
//! does; with no pair above the cosine cut-off (1e-5) it counts as 1. The point-pair
//! estimator `A_p/N Σ G_i V_i / π` alone has unbounded variance where elements share an
//! edge (r -> 0); `F_u` is bounded by 1, and with the row's shared points, a closed
//! unoccluded scene has row sums of exactly 1 up to rounding. The ratio makes the estimate
//! consistent rather than unbiased under partial occlusion.

use std::f32::consts::PI;

use glam::Vec3;
use lumbre_gpu::{Progress, Report, Result};
use lumbre_kdtree::{QueryOptions, Ray, Structure};
use lumbre_raytrace::sampling::{hash_u32, stratified};
use rayon::prelude::*;

use crate::matrix::Matrix;
use crate::mesh::TwoMesh;
use crate::outline::Clusters;
use crate::shape::Shape;

/// Pairs whose cosines fall below this count 0 (squared: compared with `cos^2 r^2`).
pub(crate) const COS2_MIN: f32 = 1e-10;

/// How form factors are estimated: `samples` points per element-patch pair (each with one
/// shadow ray; a square such as 16 gives 2D strata on both sides), and the seed of the
/// integer hash.
///
/// ```
/// let ff = lumbre_radiosity::FormFactors::default();
/// assert_eq!((ff.samples, ff.seed), (16, 0));
/// assert_eq!(ff.multiplier(), 9); // 2 sqrt(16) + 1, coprime to 16
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FormFactors {
    /// Point pairs per element-patch pair (at least 1).
    pub samples: u32,
    /// Seed of the random numbers.
    pub seed: u32,
    /// Element to element (n x n, the reference) instead of element to patch (n x k).
    pub full: bool,
    /// For tests: at most this many rows per GPU block (else as many as fit one binding).
    pub block_rows: Option<usize>,
}

impl Default for FormFactors {
    fn default() -> Self {
        FormFactors { samples: 16, seed: 0, full: false, block_rows: None }
    }
}

fn gcd(a: u32, b: u32) -> u32 {
    if b == 0 { a } else { gcd(b, a % b) }
}

impl FormFactors {
    /// The multiplier `a` of the pairing permutation: the first odd number from
    /// `2 sqrt(N) + 1` that is coprime to N.
    pub fn multiplier(&self) -> u32 {
        let n = self.samples.max(1);
        let mut a = 2 * n.isqrt() + 1;
        while gcd(a, n) != 1 {
            a += 2;
        }
        a
    }
}

/// The seed of element e's points (shared by its whole row).
pub fn element_seed(e: u32, seed: u32) -> u32 {
    hash_u32(e ^ hash_u32(seed ^ 0x27d4_eb2f))
}

/// The hashes of pair (e, p): the seed of the points on p, and the offset b of the pairing
/// permutation (`< samples`).
pub fn pair_seeds(e: u32, p: u32, seed: u32, samples: u32) -> (u32, u32) {
    let pair = hash_u32(e ^ hash_u32(p ^ hash_u32(seed)));
    (hash_u32(pair), hash_u32(pair ^ 0xc2b2_ae35) % samples.max(1))
}

/// The ray-casting side of a scene: triangles, their BVH or kd-tree, the offset of ray origins.
#[derive(Clone, Copy)]
pub struct Occluders<'a> {
    /// The triangles.
    pub tris: &'a [[Vec3; 3]],
    /// Their BVH or kd-tree.
    pub structure: &'a Structure,
    /// How far points are lifted off their surfaces before a shadow ray.
    pub eps: f32,
}

impl<'a> Occluders<'a> {
    /// The occluders of a meshed scene.
    pub fn of(mesh: &'a TwoMesh) -> Occluders<'a> {
        let p = &mesh.surfaces.prepared;
        Occluders { tris: &p.tris, structure: &p.structure, eps: p.eps }
    }

    /// Whether the segment from `x` (on a surface with normal `nx`) to `y` (normal `ny`) is
    /// blocked.
    pub fn blocked(&self, x: Vec3, nx: Vec3, y: Vec3, ny: Vec3) -> bool {
        let o = x + nx * self.eps;
        let t = y + ny * self.eps;
        self.structure.any_hit(self.tris, &Ray::new(o, t - o), 0.0, 1.0, &QueryOptions::default())
    }
}

/// The kernel `cos θ_x cos θ_y / r^2` of the segment from `x` (normal `nx`) to `y` (normal
/// `ny`), before visibility; 0 where a cosine is below 1e-5.
///
/// ```
/// use glam::Vec3;
/// let g = lumbre_radiosity::twin::kernel(Vec3::ZERO, Vec3::Z, Vec3::new(0.0, 0.0, 2.0), -Vec3::Z);
/// assert_eq!(g, 0.25);
/// ```
pub fn kernel(x: Vec3, nx: Vec3, y: Vec3, ny: Vec3) -> f32 {
    let d = y - x;
    let r2 = d.dot(d);
    let cx = nx.dot(d);
    let cy = -ny.dot(d);
    if cx > 0.0 && cy > 0.0 && cx * cx > COS2_MIN * r2 && cy * cy > COS2_MIN * r2 { cx * cy / (r2 * r2) } else { 0.0 }
}

/// The unoccluded form factor from the point `x` with normal `n` to the front side of
/// `shape`: Lambert's contour integral `-1/(2π) Σ_i γ_i n · (R_i × R_{i+1}) / |R_i × R_{i+1}|`
/// over the corners R_i (relative to x) of the shape clipped to the half-space
/// `n · (y - x) >= 0`, γ_i the angle between R_i and R_{i+1}. 0 when x is behind the shape.
///
/// ```
/// use glam::Vec3;
/// use lumbre_radiosity::{point_to_shape, Shape};
/// // A point under the middle of a large square facing it: almost the whole hemisphere.
/// let sq = Shape { origin: Vec3::new(-100.0, 100.0, 1.0), edge_u: Vec3::X * 200.0, edge_v: -Vec3::Y * 200.0, triangle: false };
/// assert!((point_to_shape(Vec3::ZERO, Vec3::Z, &sq) - 1.0).abs() < 1e-3);
/// ```
pub fn point_to_shape(x: Vec3, n: Vec3, shape: &Shape) -> f32 {
    let np = shape.normal();
    if np.dot(x - shape.origin) <= 0.0 {
        return 0.0;
    }
    let o = shape.origin - x;
    let corners = if shape.triangle {
        [o, o + shape.edge_u, o + shape.edge_v, o]
    } else {
        [o, o + shape.edge_u, o + shape.edge_u + shape.edge_v, o + shape.edge_v]
    };
    let m = if shape.triangle { 3 } else { 4 };
    // Sutherland–Hodgman against the plane n · r >= 0: a convex polygon gains at most one corner.
    let mut poly = [Vec3::ZERO; 5];
    let mut len = 0;
    for i in 0..m {
        let (a, b) = (corners[i], corners[(i + 1) % m]);
        let (sa, sb) = (n.dot(a), n.dot(b));
        if sa >= 0.0 {
            poly[len] = a;
            len += 1;
        }
        if (sa >= 0.0) != (sb >= 0.0) {
            poly[len] = a + (b - a) * (sa / (sa - sb));
            len += 1;
        }
    }
    let mut sum = 0.0f32;
    for i in 0..len {
        let (a, b) = (poly[i], poly[(i + 1) % len]);
        let c = a.cross(b);
        let l = c.length();
        if l > 0.0 {
            sum += n.dot(c) / l * l.atan2(a.dot(b));
        }
    }
    (-sum / (2.0 * PI)).max(0.0)
}

impl FormFactors {
    /// The CPU path: the form factors of `mesh` from every element to every patch (every
    /// element when `full`).
    ///
    /// ```
    /// use lumbre_radiosity::{FormFactors, TwoMesh};
    /// let mesh = TwoMesh::closed_box(4, 2)?;
    /// let f = FormFactors::default().cpu(&mesh)?;
    /// assert_eq!((f.rows, f.cols), (96, 24));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn cpu(&self, mesh: &TwoMesh) -> Result<Matrix> {
        self.run_cpu(mesh, &()).map(|(m, _)| m)
    }

    /// [`cpu`](FormFactors::cpu) with progress (rows); stage `form factors`, stats `pairs`
    /// and `samples per pair`.
    pub fn run_cpu(&self, mesh: &TwoMesh, progress: &dyn Progress) -> Result<(Matrix, Report)> {
        let mut report = Report::default();
        let clusters = mesh.clusters();
        let f = report.time("form factors", || self.matrix(&Occluders::of(mesh), &clusters, progress));
        report.stat("pairs", (f.rows * f.cols) as f64);
        report.stat("samples per pair", self.samples.max(1) as f64);
        Ok((f, report))
    }

    /// The form factor from element `e` to patch `p` (to element `p` when `full`) of
    /// `clusters`, as the GPU kernel computes it.
    pub fn pair(&self, occ: &Occluders<'_>, clusters: &Clusters, e: u32, p: u32) -> f32 {
        let n = self.samples.max(1);
        let sx = element_seed(e, self.seed);
        let (sy, b) = pair_seeds(e, p, self.seed, n);
        let a = self.multiplier();
        let (e, p) = (e as usize, p as usize);
        let (mut unoccluded, mut g_all, mut g_seen) = (0.0f32, 0.0f32, 0.0f32);
        for i in 0..n {
            let (ux, vx) = stratified(n, i, sx);
            let (x, ne) = clusters.sample_element(e, ux, vx);
            let f = if self.full { clusters.to_element(x, ne, p) } else { clusters.to_patch(x, ne, p) };
            if f <= 0.0 {
                continue;
            }
            unoccluded += f;
            let (uy, vy) = stratified(n, (i * a + b) % n, sy);
            let (y, np) = if self.full { clusters.sample_element(p, uy, vy) } else { clusters.sample_patch(p, uy, vy) };
            let g = kernel(x, ne, y, np);
            if g > 0.0 {
                g_all += g;
                if !occ.blocked(x, ne, y, np) {
                    g_seen += g;
                }
            }
        }
        let visible = if g_all > 0.0 { g_seen / g_all } else { 1.0 };
        unoccluded / n as f32 * visible
    }

    /// The form factors from every element of `clusters` to every patch (every element when
    /// `full`), row-major, in parallel over rows; `progress` hears of finished rows.
    pub fn matrix(&self, occ: &Occluders<'_>, clusters: &Clusters, progress: &dyn Progress) -> Matrix {
        self.matrix_rows(occ, clusters, 0..clusters.n(), progress)
    }

    /// [`matrix`](FormFactors::matrix)'s element rows `rows` only (a shard's part), the same
    /// values as the whole matrix's rows.
    ///
    /// ```
    /// use lumbre_radiosity::{FormFactors, Occluders, TwoMesh};
    /// let mesh = TwoMesh::closed_box(4, 2)?;
    /// let (ff, clusters) = (FormFactors::default(), mesh.clusters());
    /// let whole = ff.matrix(&Occluders::of(&mesh), &clusters, &());
    /// let part = ff.matrix_rows(&Occluders::of(&mesh), &clusters, 16..40, &());
    /// assert_eq!(part.data, whole.data[16 * whole.cols..40 * whole.cols]);
    /// # Ok::<(), lumbre_gpu::Error>(())
    /// ```
    pub fn matrix_rows(
        &self,
        occ: &Occluders<'_>,
        clusters: &Clusters,
        rows: std::ops::Range<usize>,
        progress: &dyn Progress,
    ) -> Matrix {
        let k = if self.full { clusters.n() } else { clusters.k() };
        let mut data = vec![0.0f32; rows.len() * k];
        let done = std::sync::atomic::AtomicU64::new(0);
        let total = rows.len() as u64;
        if k > 0 {
            data.par_chunks_mut(k).enumerate().for_each(|(i, row)| {
                let e = (rows.start + i) as u32;
                for (p, f) in row.iter_mut().enumerate() {
                    *f = self.pair(occ, clusters, e, p as u32);
                }
                let d = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
                if d.is_multiple_of(64) || d == total {
                    progress.update("form factors", d, total);
                }
            });
        }
        Matrix { rows: rows.len(), cols: k, data }
    }
}

/// The full element-to-element form factor matrix (n x n), the reference of the low-rank
/// error: [`FormFactors`] with every element its own patch.
///
/// ```
/// use lumbre_radiosity::{full_form_factors, FormFactors, TwoMesh};
/// let mesh = TwoMesh::closed_box(2, 1).unwrap();
/// let f = full_form_factors(&FormFactors::default(), &mesh, &());
/// assert_eq!((f.rows, f.cols), (24, 24));
/// assert!(f.row_sums().iter().all(|s| (s - 1.0).abs() < 1e-4)); // a closed box
/// ```
pub fn full_form_factors(ff: &FormFactors, mesh: &TwoMesh, progress: &dyn Progress) -> Matrix {
    FormFactors { full: true, ..*ff }.matrix(&Occluders::of(mesh), &mesh.clusters(), progress)
}
