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
//! **How k follows.** A patch splits into 4 (the midpoint subdivision of a regular patch's
//! triangle or parallelogram; two rounds of median cuts of a grouped patch's elements) when `d(P) > threshold`, its area exceeds `min_area` and it is larger
//! than one element; k is whatever the FIFO leaves. Both conditions only stop splits as
//! `threshold` or `min_area` grow, so k never grows with either, and [`Coherence::target`]
//! finds by bisection the threshold whose k is nearest a wanted k (dispersions are cached:
//! a patch's value does not depend on the threshold).

use std::collections::{HashMap, HashSet};

use lumbre_gpu::{Error, Progress, Result};
use lumbre_raytrace::sampling::{hash_u32, stratified};
use rayon::prelude::*;

use glam::Vec3;

use crate::cluster::{Graph, split4};
use crate::formfactor::{Occluders, kernel};
use crate::mesh::{MeshReport, PatchCell, Plan, TwoMesh, box_plan, check_counts, face_of_cell, plan_counts};
use crate::outline::{Clusters, area_cdf, sample};
use crate::shape::{Cell, Shape};
use crate::surfaces::Surfaces;

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
    /// How n and the starting k came out against the request.
    pub counts: MeshReport,
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

/// How a node of the split tree divides: a regular coarse cell into its four children, a
/// group of elements by median cuts.
#[derive(Clone, Copy)]
enum Rule {
    Regular(PatchCell),
    Median,
}

/// A node of the split tree: elements `start..end` of the base mesh, its children.
struct Node {
    start: u32,
    end: u32,
    area: f64,
    children: Vec<u32>,
}

/// What building the tree reads of the plan.
struct Ctx<'a> {
    surfaces: &'a Surfaces,
    fine: &'a [u32],
    first: &'a [u32],
    area: Vec<f64>,
    centroid: Vec<Vec3>,
    cells: Vec<Vec<u32>>,
    /// Elements that share a corner.
    graph: Graph,
}

impl Ctx<'_> {
    /// Builds the subtree of elements `set` (indices into `cells`), numbered from `start`,
    /// reordering `set` so that every node is a contiguous range; returns the node's id.
    fn build(&self, nodes: &mut Vec<Node>, set: &mut [u32], start: u32, rule: Rule) -> u32 {
        let id = nodes.len() as u32;
        let area = set.iter().map(|&i| self.area[i as usize]).sum();
        nodes.push(Node { start, end: start + set.len() as u32, area, children: Vec::new() });
        if set.len() < 2 {
            return id;
        }
        let parts: Vec<(usize, usize, Rule)> = match rule {
            Rule::Regular(pc) => {
                let face = &self.surfaces.faces[pc.face as usize];
                let (m, tri) = (self.fine[pc.face as usize], face.shape.triangle);
                if !m.is_multiple_of(pc.q * 2) {
                    return id;
                }
                let kids = children(pc, tri);
                let which = |i: u32| {
                    let (_, l) = face_of_cell(self.first, self.cells[i as usize][0]);
                    let c = Cell::from_local(l, m, tri).coarsen(m, pc.q * 2, tri);
                    kids.iter().position(|k| k.cell == c).unwrap_or(0)
                };
                set.sort_by_key(|&i| which(i));
                let mut parts = Vec::new();
                let mut a = 0;
                for (k, kid) in kids.iter().enumerate() {
                    let b = a + set[a..].iter().take_while(|&&i| which(i) == k).count();
                    if b > a {
                        parts.push((a, b, Rule::Regular(*kid)));
                    }
                    a = b;
                }
                parts
            }
            Rule::Median => {
                // Median cuts, each part then split into its connected pieces, so every
                // patch stays connected.
                let cuts = split4(set, &self.centroid);
                let mut parts = Vec::new();
                for w in cuts.windows(2) {
                    let within = self.graph.components(&mut set[w[0]..w[1]]);
                    parts.extend(within.windows(2).map(|c| (w[0] + c[0], w[0] + c[1], Rule::Median)));
                }
                parts
            }
        };
        for (a, b, r) in parts {
            let child = self.build(nodes, &mut set[a..b], start + a as u32, r);
            nodes[id as usize].children.push(child);
        }
        id
    }
}

struct Split<'a> {
    base: &'a TwoMesh,
    probes: Clusters,
    nodes: Vec<Node>,
    base_area: f64,
    opts: Coherence,
    cache: HashMap<u32, f32>,
    rays: u64,
}

impl Split<'_> {
    /// The view from `x` (normal `nx`): form factors to every probe, and the rays cast.
    fn view(&self, occ: &Occluders<'_>, x: Vec3, nx: Vec3, seed: u32) -> (Vec<f32>, u64) {
        let n = self.opts.probe_samples.max(1);
        let mut rays = 0;
        let row = (0..self.probes.k())
            .map(|j| {
                let f = self.probes.to_patch(x, nx, j);
                if f <= 0.0 {
                    return 0.0;
                }
                let s = hash_u32(seed ^ hash_u32(j as u32));
                let (mut g_all, mut g_seen) = (0.0f32, 0.0f32);
                for i in 0..n {
                    let (u, v) = stratified(n, i, s);
                    let (y, np) = self.probes.sample_patch(j, u, v);
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

    /// The dispersion of node `id`, and the rays cast.
    fn dispersion(&self, occ: &Occluders<'_>, id: u32) -> (f32, u64) {
        let node = &self.nodes[id as usize];
        let ps = &self.base.piece_start;
        let pieces = &self.base.pieces[ps[node.start as usize] as usize..ps[node.end as usize] as usize];
        let mut cdf = vec![0.0f32; pieces.len()];
        area_cdf(pieces, &[0, pieces.len() as u32], &mut cdf);
        let s = self.opts.points.max(1);
        let key = hash_u32(self.opts.seed ^ hash_u32(node.start ^ hash_u32(node.end)));
        let mut rays = 0;
        let views: Vec<Vec<f32>> = (0..s)
            .map(|i| {
                let (u, v) = stratified(s, i, key);
                let (x, nx) = sample(pieces, &cdf, 0..pieces.len(), u, v);
                let (row, r) = self.view(occ, x, nx, hash_u32(key ^ i));
                rays += r;
                row
            })
            .collect();
        let k = self.probes.k();
        let mean: Vec<f64> = (0..k).map(|j| views.iter().map(|v| v[j] as f64).sum::<f64>() / s as f64).collect();
        let norm: f64 = mean.iter().sum();
        if norm <= 0.0 {
            return (0.0, rays);
        }
        let spread: f64 =
            views.iter().map(|v| v.iter().zip(&mean).map(|(&a, &m)| (a as f64 - m).abs()).sum::<f64>()).sum::<f64>();
        let d = spread / (s as f64 * norm);
        let w = if self.opts.size_weighted { (node.area / self.base_area).sqrt() } else { 1.0 };
        ((d * w) as f32, rays)
    }

    /// Runs the FIFO from the roots with `threshold`: the leaves, how many nodes were
    /// evaluated and how many split.
    fn run(&mut self, roots: &[u32], threshold: f32, progress: &dyn Progress) -> (Vec<u32>, usize, usize) {
        let base = self.base;
        let occ = Occluders::of(base);
        let mut leaves = Vec::new();
        let mut level: Vec<u32> = roots.to_vec();
        let (mut evaluated, mut splits) = (0, 0);
        while !level.is_empty() {
            // Every patch of a level is taken from the FIFO before any of its children, and
            // each decision depends on the patch alone: a level can be measured in parallel.
            let splittable: HashSet<u32> = level
                .iter()
                .copied()
                .filter(|&id| {
                    let node = &self.nodes[id as usize];
                    !node.children.is_empty() && node.area > self.opts.min_area
                })
                .collect();
            let mut todo: Vec<u32> = splittable.iter().copied().filter(|id| !self.cache.contains_key(id)).collect();
            todo.sort_unstable();
            let this = &*self;
            let measured: Vec<(u32, f32, u64)> = todo
                .par_iter()
                .map(|&id| {
                    let (d, r) = this.dispersion(&occ, id);
                    (id, d, r)
                })
                .collect();
            for (id, d, r) in measured {
                self.cache.insert(id, d);
                self.rays += r;
            }
            evaluated += splittable.len();
            progress.update("2MCE", evaluated as u64, 0);
            let mut next = Vec::new();
            for id in level {
                if splittable.contains(&id) && self.cache.get(&id).is_some_and(|&d| d > threshold) {
                    splits += 1;
                    next.extend_from_slice(&self.nodes[id as usize].children);
                } else {
                    leaves.push(id);
                }
            }
            level = next;
        }
        (leaves, evaluated, splits)
    }
}

impl TwoMesh {
    /// 2MCE on any scene: near `elements` fine elements and a starting coarse mesh of near
    /// `base` patches (as [`TwoMesh::fixed`] makes them, with regular faces cut into
    /// `q 2^d` cells per side so their patches split in four down to single cells; grouped
    /// patches split by median cuts); patches split as [`Coherence`] says.
    pub fn coherent(
        surfaces: Surfaces,
        elements: usize,
        base: usize,
        opts: &Coherence,
        progress: &dyn Progress,
    ) -> Result<(TwoMesh, CoherenceReport)> {
        check_counts(elements, base)?;
        let (plan, counts) = plan_counts(&surfaces, elements, base, true);
        let (mesh, report) = coherent_from(surfaces, plan, opts, progress)?;
        Ok((mesh, CoherenceReport { counts, ..report }))
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
        coherent_from(Surfaces::closed_box(), box_plan(s, t0)?, opts, progress)
    }
}

fn coherent_from(
    surfaces: Surfaces,
    mut plan: Plan,
    opts: &Coherence,
    progress: &dyn Progress,
) -> Result<(TwoMesh, CoherenceReport)> {
    if !opts.threshold.is_finite() || opts.threshold < 0.0 {
        return Err(Error::Input(format!("coherence threshold {} must be finite and >= 0", opts.threshold)));
    }
    if opts.min_area.is_nan() {
        return Err(Error::Input("A_min is NaN".into()));
    }
    // The split tree over every starting patch; its depth-first order is the element order.
    let mut nodes = Vec::new();
    let mut roots = Vec::new();
    let mut offset = 0u32;
    for patch in &mut plan.patches {
        let cells = std::mem::take(&mut patch.elements);
        let shapes: Vec<Vec<Shape>> = cells
            .iter()
            .map(|e| {
                e.iter()
                    .map(|&g| {
                        let (f, l) = face_of_cell(&plan.first, g);
                        let face = &surfaces.faces[f];
                        face.shape.cell(plan.fine[f], Cell::from_local(l, plan.fine[f], face.shape.triangle))
                    })
                    .collect()
            })
            .collect();
        let corners: Vec<Vec<u32>> =
            cells.iter().map(|e| e.iter().flat_map(|&g| plan.corners[g as usize]).collect()).collect();
        let ctx = Ctx {
            surfaces: &surfaces,
            fine: &plan.fine,
            first: &plan.first,
            area: shapes.iter().map(|s| s.iter().map(|x| x.area() as f64).sum()).collect(),
            centroid: shapes.iter().map(|s| TwoMesh::centroid(s)).collect(),
            graph: Graph::sharing(cells.len(), |i| &corners[i][..]),
            cells,
        };
        let mut set: Vec<u32> = (0..ctx.cells.len() as u32).collect();
        let rule = patch.cell.map_or(Rule::Median, Rule::Regular);
        roots.push(ctx.build(&mut nodes, &mut set, offset, rule));
        offset += set.len() as u32;
        patch.elements = set.iter().map(|&i| ctx.cells[i as usize].clone()).collect();
    }
    let base = TwoMesh::assemble(surfaces, plan)?;
    let probes = base.clusters();
    let base_area = roots.iter().map(|&r| nodes[r as usize].area).sum::<f64>() / roots.len().max(1) as f64;
    let mut s = Split { base: &base, probes, nodes, base_area, opts: *opts, cache: HashMap::new(), rays: 0 };
    let mut threshold = opts.threshold;
    let (leaves, evaluated, splits) = match opts.target {
        None => s.run(&roots, threshold, progress),
        Some(k) => {
            // k(threshold) does not increase with the threshold: bisect on it.
            let (mut lo, mut hi) = (0.0f32, 2.0f32);
            let mut best = s.run(&roots, hi, progress);
            let mut best_t = hi;
            for _ in 0..40 {
                let mid = 0.5 * (lo + hi);
                let r = s.run(&roots, mid, progress);
                let better = r.0.len().abs_diff(k) < best.0.len().abs_diff(k);
                if better || (r.0.len().abs_diff(k) == best.0.len().abs_diff(k) && mid > best_t) {
                    (best, best_t) = (r.clone(), mid);
                }
                if r.0.len() > k {
                    lo = mid
                } else {
                    hi = mid
                }
                if r.0.len() == k || hi - lo < 1e-6 {
                    break;
                }
            }
            threshold = best_t;
            best
        }
    };
    let rays = s.rays;
    let mut starts: Vec<u32> = leaves.iter().map(|&id| s.nodes[id as usize].start).collect();
    starts.sort_unstable();
    starts.push(base.n() as u32);
    let report =
        CoherenceReport { patches: leaves.len(), evaluated, splits, threshold, rays, counts: MeshReport::default() };
    drop(s);
    Ok((base.with_patches(starts), report))
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
