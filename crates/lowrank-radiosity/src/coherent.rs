//! 2MCE, the paper's Algorithm 1: coarse patches split while their spatial coherence is poor
//! and their area exceeds A_min, taken from a FIFO so that a level is finished before the
//! next one starts.
//!
//! **Metric.** A patch is coherent when the scene looks the same from all its points. The
//! view from a point x is its row of form factors to a fixed set of probe patches (the
//! starting coarse mesh): `f_j(x)`, the exact unoccluded point-to-patch factor times the
//! kernel-weighted visible fraction of N shadow rays (the element-to-patch estimator with
//! x fixed, see [`FormFactors`](crate::FormFactors)). The patch's *dispersion* is
//! `d(P) = mean_s |f(x_s) - f̄|_1 / |f̄|_1` over S stratified points x_s of P, with f̄ their
//! mean row: the mean relative L1 distance of a view from the average view, 0 for a
//! perfectly coherent patch, at most 2. This is what the low-rank factorisation loses: U V^T
//! replaces the entries F_{e e'} of the elements e' of a patch by their mean, and by
//! reciprocity (`A_e F_{e e'} = A_{e'} F_{e' e}`, equal areas) those entries vary over e'
//! exactly as the views of the e' do.
//!
//! **Size.** By default the dispersion is weighed by the patch's diameter relative to the
//! starting patches', `d(P) sqrt(A_P / A_0)`: the error U V^T makes for element e is the sum
//! over the patch's elements e' of `(F_{e e'} - mean) B_{e'}`, which needs both the views and
//! the radiosity to vary across the patch, and a smooth radiosity varies in proportion to
//! the patch's size. Without the weight, small patches where views change fastest (along
//! edges) keep splitting while large ones elsewhere stay whole.
//!
//! **How k follows.** A patch splits (into 4: the midpoint subdivision of its triangle or
//! parallelogram) when `d(P) > threshold`, its area exceeds `min_area` and it is larger
//! than one element; k is whatever the FIFO leaves. Both conditions only stop splits as
//! `threshold` or `min_area` grow, so k never grows with either, and [`Coherence::target`]
//! finds by bisection the threshold whose k is nearest a wanted k (dispersions are cached:
//! a patch's value does not depend on the threshold).

use std::collections::{HashMap, HashSet};

use lumbre_gpu::{Error, Progress, Result};
use lumbre_raytrace::{hash_u32, stratified};
use rayon::prelude::*;

use crate::formfactor::{Occluders, kernel, point_to_shape};
use crate::mesh::{PatchCell, Surfaces, TwoMesh, check_counts};
use crate::shape::{Cell, Shape};

/// Options of 2MCE.
///
/// ```
/// use lumbre_radiosity::{Coherence, TwoMesh};
/// let opts = Coherence { threshold: 0.3, ..Coherence::default() };
/// let (mesh, report) = TwoMesh::coherent_box(24, 3, &opts, &()).unwrap();
/// assert_eq!(mesh.n(), 6 * 24 * 24);
/// assert!(mesh.k() >= 54 && mesh.k() == report.patches);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Coherence {
    /// Split while the dispersion exceeds this.
    pub threshold: f32,
    /// A_min: patches of this area or less are not split.
    pub min_area: f64,
    /// Sample points per patch for its dispersion (a square gives 2D strata).
    pub points: u32,
    /// Point samples per probe patch in a view.
    pub probe_samples: u32,
    /// Seed of the random numbers.
    pub seed: u32,
    /// Instead of `threshold`: find the threshold whose k is nearest this.
    pub target: Option<usize>,
    /// Weigh the dispersion by the patch's size, `d(P) sqrt(A_P / A_0)` with A_0 the mean
    /// area of the starting patches (see the module notes).
    pub size_weighted: bool,
}

impl Default for Coherence {
    fn default() -> Self {
        Coherence {
            threshold: 0.25,
            min_area: 0.0,
            points: 9,
            probe_samples: 4,
            seed: 0,
            target: None,
            size_weighted: true,
        }
    }
}

/// What 2MCE did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CoherenceReport {
    /// Patches at the end (k).
    pub patches: usize,
    /// Patches whose dispersion was measured.
    pub evaluated: usize,
    /// Patches split.
    pub splits: usize,
    /// The threshold used (found by bisection with a target).
    pub threshold: f32,
    /// Rays cast for the dispersions.
    pub rays: u64,
}

/// The four children of a patch cell at level `2q` (midpoint subdivision).
pub(crate) fn children(pc: PatchCell, triangle: bool) -> [PatchCell; 4] {
    let (i, j, q) = (pc.cell.i, pc.cell.j, pc.q * 2);
    let c = |i, j, flip| PatchCell { face: pc.face, q, cell: Cell { i, j, flip } };
    if !triangle {
        return [
            c(2 * i, 2 * j, false),
            c(2 * i + 1, 2 * j, false),
            c(2 * i, 2 * j + 1, false),
            c(2 * i + 1, 2 * j + 1, false),
        ];
    }
    if pc.cell.flip {
        [
            c(2 * i + 1, 2 * j + 1, true),
            c(2 * i, 2 * j + 1, true),
            c(2 * i + 1, 2 * j, true),
            c(2 * i + 1, 2 * j + 1, false),
        ]
    } else {
        [c(2 * i, 2 * j, false), c(2 * i + 1, 2 * j, false), c(2 * i, 2 * j + 1, false), c(2 * i, 2 * j, true)]
    }
}

struct Split<'a> {
    surfaces: &'a Surfaces,
    probes: Vec<Shape>,
    base_area: f64,
    opts: Coherence,
    cache: HashMap<PatchCell, f32>,
    rays: u64,
}

impl Split<'_> {
    fn shape(&self, pc: PatchCell) -> Shape {
        self.surfaces.faces[pc.face as usize].shape.cell(pc.q, pc.cell)
    }

    /// The view from `x` (normal `nx`): form factors to every probe, and the rays cast.
    fn view(&self, occ: &Occluders<'_>, x: glam::Vec3, nx: glam::Vec3, seed: u32) -> (Vec<f32>, u64) {
        let n = self.opts.probe_samples.max(1);
        let mut rays = 0;
        let row = self
            .probes
            .iter()
            .enumerate()
            .map(|(j, probe)| {
                let f = point_to_shape(x, nx, probe);
                if f <= 0.0 {
                    return 0.0;
                }
                let np = probe.normal();
                let s = hash_u32(seed ^ hash_u32(j as u32));
                let (mut g_all, mut g_seen) = (0.0f32, 0.0f32);
                for i in 0..n {
                    let (u, v) = stratified(n, i, s);
                    let y = probe.point(u, v);
                    let g = kernel(x, nx, y, np);
                    if g > 0.0 {
                        rays += 1;
                        g_all += g;
                        if !occ.blocked(x, nx, y, np) {
                            g_seen += g;
                        }
                    }
                }
                if g_all > 0.0 { f * g_seen / g_all } else { f }
            })
            .collect();
        (row, rays)
    }

    /// The dispersion of patch `pc`, and the rays cast.
    fn dispersion(&self, occ: &Occluders<'_>, pc: PatchCell) -> (f32, u64) {
        let shape = self.shape(pc);
        let nx = shape.normal();
        let s = self.opts.points.max(1);
        let key = hash_u32(
            self.opts.seed ^ hash_u32(pc.face ^ hash_u32(pc.q ^ hash_u32(pc.cell.local(pc.q, shape.triangle)))),
        );
        let mut rays = 0;
        let views: Vec<Vec<f32>> = (0..s)
            .map(|i| {
                let (u, v) = stratified(s, i, key);
                let (row, r) = self.view(occ, shape.point(u, v), nx, hash_u32(key ^ i));
                rays += r;
                row
            })
            .collect();
        let k = self.probes.len();
        let mean: Vec<f64> = (0..k).map(|j| views.iter().map(|v| v[j] as f64).sum::<f64>() / s as f64).collect();
        let norm: f64 = mean.iter().sum();
        if norm <= 0.0 {
            return (0.0, rays);
        }
        let spread: f64 =
            views.iter().map(|v| v.iter().zip(&mean).map(|(&a, &m)| (a as f64 - m).abs()).sum::<f64>()).sum::<f64>();
        let d = spread / (s as f64 * norm);
        let w = if self.opts.size_weighted { (shape.area() as f64 / self.base_area).sqrt() } else { 1.0 };
        ((d * w) as f32, rays)
    }

    /// Runs the FIFO from `base` with `threshold`: the split cells, the leaves, and how many
    /// patches were evaluated.
    fn run(
        &mut self,
        base: &[PatchCell],
        threshold: f32,
        progress: &dyn Progress,
    ) -> (HashSet<PatchCell>, Vec<PatchCell>, usize) {
        let surfaces = self.surfaces;
        let occ =
            Occluders { tris: &surfaces.prepared.tris, tree: &surfaces.prepared.tree, eps: surfaces.prepared.eps };
        let mut split = HashSet::new();
        let mut leaves = Vec::new();
        let mut level: Vec<PatchCell> = base.to_vec();
        let mut evaluated = 0;
        while !level.is_empty() {
            // Every patch of a level is taken from the FIFO before any of its children, and
            // each decision depends on the patch alone: a level can be measured in parallel.
            let splittable: HashSet<PatchCell> = level
                .iter()
                .copied()
                .filter(|pc| {
                    let face = &self.surfaces.faces[pc.face as usize];
                    face.fine.is_multiple_of(pc.q * 2) && self.shape(*pc).area() as f64 > self.opts.min_area
                })
                .collect();
            let mut todo: Vec<PatchCell> =
                splittable.iter().copied().filter(|pc| !self.cache.contains_key(pc)).collect();
            todo.sort_by_key(|pc| (pc.face, pc.q, pc.cell.j, pc.cell.i, pc.cell.flip));
            let this = &*self;
            let measured: Vec<(PatchCell, f32, u64)> = todo
                .par_iter()
                .map(|&pc| {
                    let (d, r) = this.dispersion(&occ, pc);
                    (pc, d, r)
                })
                .collect();
            for (pc, d, r) in measured {
                self.cache.insert(pc, d);
                self.rays += r;
            }
            evaluated += splittable.len();
            progress.update("2MCE", evaluated as u64, 0);
            let mut next = Vec::new();
            for pc in level {
                let tri = self.surfaces.faces[pc.face as usize].shape.triangle;
                if self.cache.get(&pc).is_some_and(|&d| d > threshold) && splittable.contains(&pc) {
                    split.insert(pc);
                    next.extend(children(pc, tri));
                } else {
                    leaves.push(pc);
                }
            }
            level = next;
        }
        (split, leaves, evaluated)
    }
}

/// The fine subdivision and the starting patch grid of every face, chosen per face: the
/// fine side `m` nearest `sqrt(face area / (total area / elements))` (as 2MF sizes elements)
/// of the form `q0 * 2^d`, with `q0 * 2^d` no finer than that and `q0` near the side of the
/// starting grid (`base` patches over the scene). Patches split down to single elements.
fn prepare(surfaces: &mut Surfaces, elements: usize, base: usize) -> Result<Vec<u32>> {
    check_counts(elements, base)?;
    let total = surfaces.area();
    let (a_elem, a_base) = (total / elements as f64, total / base as f64);
    let mut q0 = Vec::with_capacity(surfaces.faces.len());
    for f in &mut surfaces.faces {
        let area = f.shape.area() as f64;
        let target = ((area / a_elem).sqrt().round() as u32).clamp(1, 1 << 14);
        let start = ((area / a_base).sqrt().round() as u32).clamp(1, target);
        let mut d = 0;
        while start << (d + 1) <= target {
            d += 1;
        }
        let q = ((target as f64 / (1u32 << d) as f64).round() as u32).max(1);
        f.fine = q << d;
        q0.push(q);
    }
    Ok(q0)
}

impl TwoMesh {
    /// 2MCE on any scene: near `elements` fine elements and a starting coarse mesh of near
    /// `base` patches, each face cut into `q0 * 2^d` elements per side (see the module's
    /// notes); patches split as [`Coherence`] says.
    pub fn coherent(
        mut surfaces: Surfaces,
        elements: usize,
        base: usize,
        opts: &Coherence,
        progress: &dyn Progress,
    ) -> Result<(TwoMesh, CoherenceReport)> {
        let q0 = prepare(&mut surfaces, elements, base)?;
        coherent_from(surfaces, &q0, opts, progress)
    }

    /// 2MCE on the generated box: `s x s` elements per wall, starting from `t0 x t0` patches
    /// per wall (`s = t0 * 2^d`).
    pub fn coherent_box(
        s: u32,
        t0: u32,
        opts: &Coherence,
        progress: &dyn Progress,
    ) -> Result<(TwoMesh, CoherenceReport)> {
        if t0 == 0 || s == 0 || !s.is_multiple_of(t0) || !(s / t0).is_power_of_two() {
            return Err(Error::Input(format!(
                "elements per side {s} must be the starting patches per side {t0} times a power of two"
            )));
        }
        let mut surfaces = Surfaces::closed_box();
        for f in &mut surfaces.faces {
            f.fine = s;
        }
        coherent_from(surfaces, &[t0; 6], opts, progress)
    }
}

fn coherent_from(
    surfaces: Surfaces,
    q0: &[u32],
    opts: &Coherence,
    progress: &dyn Progress,
) -> Result<(TwoMesh, CoherenceReport)> {
    if !opts.threshold.is_finite() || opts.threshold < 0.0 {
        return Err(Error::Input(format!("coherence threshold {} must be finite and >= 0", opts.threshold)));
    }
    if opts.min_area.is_nan() {
        return Err(Error::Input("A_min is NaN".into()));
    }
    let base: Vec<PatchCell> = surfaces
        .faces
        .iter()
        .enumerate()
        .flat_map(|(f, face)| {
            let q = q0[f];
            (0..q * q).map(move |l| PatchCell { face: f as u32, q, cell: Cell::from_local(l, q, face.shape.triangle) })
        })
        .collect();
    let probes: Vec<Shape> = base.iter().map(|pc| surfaces.faces[pc.face as usize].shape.cell(pc.q, pc.cell)).collect();
    let base_area = probes.iter().map(|p| p.area() as f64).sum::<f64>() / probes.len().max(1) as f64;
    let mut s = Split { surfaces: &surfaces, probes, base_area, opts: *opts, cache: HashMap::new(), rays: 0 };
    let mut threshold = opts.threshold;
    let (split, leaves, evaluated) = match opts.target {
        None => s.run(&base, threshold, progress),
        Some(k) => {
            // k(threshold) does not increase with the threshold: bisect on it.
            let (mut lo, mut hi) = (0.0f32, 2.0f32);
            let mut best = s.run(&base, hi, progress);
            let mut best_t = hi;
            for _ in 0..40 {
                let mid = 0.5 * (lo + hi);
                let r = s.run(&base, mid, progress);
                let better = r.1.len().abs_diff(k) < best.1.len().abs_diff(k);
                if better || (r.1.len().abs_diff(k) == best.1.len().abs_diff(k) && mid > best_t) {
                    (best, best_t) = (r.clone(), mid);
                }
                if r.1.len() > k {
                    lo = mid
                } else {
                    hi = mid
                }
                if r.1.len() == k || hi - lo < 1e-6 {
                    break;
                }
            }
            threshold = best_t;
            best
        }
    };
    let report = CoherenceReport { patches: leaves.len(), evaluated, splits: split.len(), threshold, rays: s.rays };
    let tri: Vec<bool> = surfaces.faces.iter().map(|f| f.shape.triangle).collect();
    let fine: Vec<u32> = surfaces.faces.iter().map(|f| f.fine).collect();
    let q0 = q0.to_vec();
    let mesh = TwoMesh::build(surfaces, |face, cell| {
        let (m, t) = (fine[face as usize], tri[face as usize]);
        let mut q = q0[face as usize];
        let mut pc = PatchCell { face, q, cell: cell.coarsen(m, q, t) };
        while split.contains(&pc) {
            q *= 2;
            pc = PatchCell { face, q, cell: cell.coarsen(m, q, t) };
        }
        pc
    })?;
    Ok((mesh, report))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn children_tile_their_parent() {
        for triangle in [true, false] {
            for q in [1u32, 2, 3] {
                for l in 0..q * q {
                    let pc = PatchCell { face: 0, q, cell: Cell::from_local(l, q, triangle) };
                    for c in children(pc, triangle) {
                        assert_eq!(c.cell.coarsen(2 * q, q, triangle), pc.cell, "{pc:?} -> {c:?}");
                    }
                    let mut locals: Vec<u32> =
                        children(pc, triangle).iter().map(|c| c.cell.local(2 * q, triangle)).collect();
                    locals.sort();
                    locals.dedup();
                    assert_eq!(locals.len(), 4);
                }
            }
        }
    }
}
