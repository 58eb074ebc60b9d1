//! Per-pixel lightcuts (Walter et al. 2005) on the CPU, step by step as
//! `lightcuts/cuts.wgsl` runs them on the GPU (`gpu/cuts.rs`).
//!
//! A cut starts at the root. Every cluster in it is estimated by its representative light
//! (`kd / pi * I_C * G_rep * V_rep`) and bounded by `kd / pi * I_C * G_ub` (visibility
//! bounded by 1), with `G_ub` the product of the two cosine bounds over the clamped squared
//! distance to the cluster's box. The cluster with the largest bound is refined (replaced
//! by its children; the child that shares the parent's representative reuses its
//! `G * V`) until the largest bound is at most `error` times the cut's estimate, or the cut
//! holds `max_cut` clusters. Bounds and estimates are compared as sums of their channels.
//!
//! The refinable clusters wait in a max-heap of `heap` entries, which on the GPU is a
//! fixed array per thread. When it is full, the entry with the smallest bound (the new one
//! or the smallest queued one) stays in the cut unrefined; this is part of the algorithm on
//! both sides, so the cuts are the same. The largest bound left unrefined this way is
//! remembered; if it exceeds `error` times the final estimate, the pixel's cut may differ
//! from the unbounded algorithm's and [`CUT_INEXACT`] is set. With `heap >= max_cut`
//! nothing is left out: that is Walter et al.'s algorithm.

use std::sync::atomic::{AtomicU64, Ordering};

use bytemuck::{Pod, Zeroable};
use glam::Vec3;
use lumbre_gpu::{Error, Progress, Report, Result};
use lumbre_kdtree::QueryOptions;
use lumbre_raytrace::Image;
use lumbre_raytrace::sampling::hash_u32;
use rayon::prelude::*;

use crate::bounds::{box_dist2, dot, light_cos_upper, receiver_cos_upper};
use crate::gbuffer::GPixel;
use crate::shading::Visibility;
use crate::shading::{
    DEFAULT_CLAMP, INV_PI, Lit, Shading, ShadingRef, Vis, check_shading, geometry, ism_cpu, min_distance2, vis_for,
};
use crate::tree::{LightNode, LightTree};

/// `CutPixel::flags` bit: a cluster left unrefined to keep the heap within its size had a
/// bound above the final threshold.
pub const CUT_INEXACT: u32 = 1;
/// `CutPixel::flags` bit: the cut stopped at `max_cut` clusters with a bound above the
/// threshold.
pub const CUT_MAX_REACHED: u32 = 2;

/// Lightcut settings.
///
/// ```
/// let o = lumbre_lightcuts::CutOptions::default();
/// assert_eq!((o.error, o.max_cut, o.heap), (0.02, 1000, 64));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CutOptions {
    /// Relative error threshold (Walter et al.: 2%).
    pub error: f32,
    /// Largest cut (Walter et al.: 1000).
    pub max_cut: u32,
    /// Entries of the per-pixel heap of refinable clusters (the GPU has 32, 64 and 128;
    /// the CPU any; `max_cut` or more is the unbounded algorithm). 64 by default: with shadow
    /// maps the GPU keeps up to 64 in workgroup memory, and the Cornell box's error against
    /// instant radiosity is within a few hundredths of a point of 128's (`benches/RESULTS.md`).
    pub heap: u32,
}

impl Default for CutOptions {
    fn default() -> Self {
        CutOptions { error: 0.02, max_cut: 1000, heap: 64 }
    }
}

impl CutOptions {
    /// Checks the settings: `error` finite and >= 0, `max_cut` and `heap` >= 1.
    ///
    /// ```
    /// use lumbre_lightcuts::CutOptions;
    /// assert!(CutOptions { max_cut: 0, ..Default::default() }.validate().is_err());
    /// ```
    pub fn validate(&self) -> Result<()> {
        if !(self.error >= 0.0 && self.error.is_finite()) {
            return Err(Error::Input(format!("cut error threshold {}: must be finite and >= 0", self.error)));
        }
        if self.max_cut == 0 {
            return Err(Error::Input("max cut 0: a cut holds at least the root (max cut >= 1)".into()));
        }
        if self.heap == 0 {
            return Err(Error::Input("heap of 0 entries: need at least 1".into()));
        }
        Ok(())
    }
}

/// What the cut of one pixel was: 16 bytes, as `cuts.wgsl` writes it.
///
/// ```
/// assert_eq!(std::mem::size_of::<lumbre_lightcuts::CutPixel>(), 16);
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Pod, Zeroable)]
pub struct CutPixel {
    /// Clusters in the cut (0 for pixels the VPLs do not light).
    pub size: u32,
    /// Wrapping sum of `hash_u32(node)` over the cut's nodes: equal cuts have equal sums.
    pub hash: u32,
    /// Visibility queries (shadow rays or ISM lookups).
    pub queries: u32,
    /// [`CUT_INEXACT`], [`CUT_MAX_REACHED`].
    pub flags: u32,
}

/// A queued cluster: its bound, node and the `G * V` of its representative.
#[derive(Clone, Copy, Debug, Default)]
struct Entry {
    bound: f32,
    node: u32,
    gv: f32,
}

/// The fixed-capacity max-heap of `cuts.wgsl`, operation by operation.
struct Heap {
    items: Vec<Entry>,
    cap: usize,
}

impl Heap {
    fn sift_up(&mut self, mut i: usize) {
        while i > 0 {
            let parent = (i - 1) / 2;
            if self.items[parent].bound >= self.items[i].bound {
                break;
            }
            self.items.swap(parent, i);
            i = parent;
        }
    }

    fn sift_down(&mut self, mut i: usize) {
        let len = self.items.len();
        loop {
            let (l, r) = (2 * i + 1, 2 * i + 2);
            let mut big = i;
            if l < len && self.items[l].bound > self.items[big].bound {
                big = l;
            }
            if r < len && self.items[r].bound > self.items[big].bound {
                big = r;
            }
            if big == i {
                break;
            }
            self.items.swap(i, big);
            i = big;
        }
    }

    /// Queues `e`; when full, returns whichever of `e` and the smallest entry is left out.
    fn push(&mut self, e: Entry) -> Option<Entry> {
        if self.items.len() < self.cap {
            self.items.push(e);
            let last = self.items.len() - 1;
            self.sift_up(last);
            return None;
        }
        // The smallest entry is a leaf of the heap: positions len / 2 ..
        let len = self.items.len();
        let mut m = len / 2;
        for k in len / 2 + 1..len {
            if self.items[k].bound < self.items[m].bound {
                m = k;
            }
        }
        if e.bound <= self.items[m].bound {
            return Some(e);
        }
        let out = self.items[m];
        self.items[m] = e;
        self.sift_up(m);
        Some(out)
    }

    fn pop(&mut self) -> Entry {
        let top = self.items[0];
        let last = self.items.pop().expect("pop of an empty heap");
        if !self.items.is_empty() {
            self.items[0] = last;
            self.sift_down(0);
        }
        top
    }
}

/// Lightcuts: each pixel of a G-buffer lit by the cut of a light tree (see the module
/// documentation of the algorithm, and [`CutOptions`]).
///
/// ```no_run
/// use glam::Vec3;
/// use lumbre_gpu::{Compute, Gpu};
/// use lumbre_lightcuts::{GBufferPass, Lightcuts, MortonTree, Shading, View, Vpl};
/// use lumbre_raytrace::{Prepared, Scene};
/// let (scene, _) = Scene::load_obj("testdata/scenes/CornellBox-Diffuse.obj".as_ref()).unwrap();
/// let prepared = Prepared::new(scene, &Default::default());
/// let gbuffer = GBufferPass { view: View::cornell(64, 64), query: Default::default() }.cpu(&prepared)?;
/// let vpls: Vec<Vpl> = (0..100)
///     .map(|i| Vpl { position: Vec3::new(i as f32 / 100.0 - 0.5, 1.9, 0.0), normal: -Vec3::Y, intensity: Vec3::splat(0.01) })
///     .collect();
/// let tree = MortonTree::default().build(&vpls)?;
/// let lit = Lightcuts::default().gpu(&Gpu::new()?, &Shading { prepared, tree, gbuffer })?;
/// assert!(lit.cuts.iter().all(|c| c.size <= 100));
/// # Ok::<(), lumbre_gpu::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Lightcuts {
    /// Threshold, maximum cut and heap size.
    pub cut: CutOptions,
    /// The `1 / d^2` clamp distance as a fraction of the scene's diagonal.
    pub clamp: f32,
    /// Shadow rays, imperfect shadow maps or none.
    pub visibility: Visibility,
    /// Traversal and triangle test of the shadow rays.
    pub query: QueryOptions,
}

impl Default for Lightcuts {
    fn default() -> Self {
        Lightcuts {
            cut: CutOptions::default(),
            clamp: DEFAULT_CLAMP,
            visibility: Visibility::Rays,
            query: QueryOptions::default(),
        }
    }
}

/// Everything a cut needs besides its pixel.
pub(crate) struct CutContext<'a> {
    pub tree: &'a LightTree,
    pub options: CutOptions,
    pub min_d2: f32,
    pub vis: Vis<'a>,
}

/// The state of one pixel's cut.
struct Cut<'a, 'b> {
    cx: &'b CutContext<'a>,
    px: &'b GPixel,
    heap: Heap,
    /// Radiance (times pi) of the clusters that left the heap for good (leaves, unrefined).
    done: Vec3,
    /// The estimate of the whole cut (times pi), as a sum of channels.
    total: f32,
    queries: u32,
    /// Largest bound left unrefined to keep the heap small.
    dropped: f32,
}

impl Cut<'_, '_> {
    /// `kd * I * gv`, channel by channel: the radiance times pi (the factor is applied
    /// once, to the pixel's sum, and left out of every comparison).
    fn contribution(&self, node: &LightNode, gv: f32) -> Vec3 {
        self.px.albedo * node.intensity * gv
    }

    /// The sum of the channels of [`contribution`](Cut::contribution), computed as
    /// `gv * (kd . I)`: in this factored form a compiler has nothing to refactor.
    fn scalar(&self, node: &LightNode, gv: f32) -> f32 {
        gv * dot(self.px.albedo, node.intensity)
    }

    /// `G * V` of light `rep`.
    fn eval(&mut self, rep: u32) -> f32 {
        let vpl = &self.cx.tree.vpls[rep as usize];
        let g = geometry(self.px.position, self.px.normal, vpl, self.cx.min_d2);
        if g <= 0.0 {
            return 0.0;
        }
        let (visible, queried) = self.cx.vis.of(rep, vpl, self.px.position);
        self.queries += queried as u32;
        g * visible
    }

    /// The error bound of a cluster times pi, as a sum of channels.
    fn bound(&self, node: &LightNode) -> f32 {
        let (x, n) = (self.px.position, self.px.normal);
        let cr = receiver_cos_upper(x, n, node.lo, node.hi);
        let cl = light_cos_upper(x, node.cone(), node.lo, node.hi);
        let g = cr * cl / box_dist2(x, node.lo, node.hi).max(self.cx.min_d2);
        g * dot(self.px.albedo, node.intensity)
    }

    /// Adds cluster `index` to the cut: a leaf, or a cluster whose bound is 0, leaves it at
    /// once; others are queued (and may push another out). `gv` is its representative's
    /// `G * V` when already known.
    fn add(&mut self, index: u32, gv: Option<f32>) {
        let node = self.cx.tree.nodes[index as usize];
        if node.is_leaf() {
            let gv = gv.unwrap_or_else(|| self.eval(node.rep));
            self.done += self.contribution(&node, gv);
            self.total += self.scalar(&node, gv);
            return;
        }
        let bound = self.bound(&node);
        if bound <= 0.0 {
            return;
        }
        let gv = gv.unwrap_or_else(|| self.eval(node.rep));
        self.total += self.scalar(&node, gv);
        let entry = Entry { bound, node: index, gv };
        let out = self.heap.push(entry);
        if let Some(out) = out {
            let node = self.cx.tree.nodes[out.node as usize];
            self.done += self.contribution(&node, out.gv);
            self.dropped = self.dropped.max(out.bound);
        }
    }
}

/// The lightcut of one pixel (the CPU twin of `cuts.wgsl`'s `cut_pixel`): its radiance and
/// what the cut was.
pub(crate) fn cut_pixel(cx: &CutContext<'_>, px: &GPixel) -> (Vec3, CutPixel) {
    if !px.shaded() {
        return (px.emission, CutPixel::default());
    }
    let o = cx.options;
    let mut cut = Cut {
        cx,
        px,
        heap: Heap { items: Vec::with_capacity(o.heap.min(o.max_cut) as usize), cap: o.heap as usize },
        done: Vec3::ZERO,
        total: 0.0,
        queries: 0,
        dropped: 0.0,
    };
    let mut size = 1u32;
    let mut hash = hash_u32(0);
    let mut flags = 0;
    cut.add(0, None);
    while !cut.heap.items.is_empty() {
        let top = cut.heap.items[0];
        if top.bound <= o.error * cut.total {
            break;
        }
        if size >= o.max_cut {
            flags |= CUT_MAX_REACHED;
            break;
        }
        cut.heap.pop();
        let node = cx.tree.nodes[top.node as usize];
        cut.total -= cut.scalar(&node, top.gv);
        size += 1;
        hash =
            hash.wrapping_sub(hash_u32(top.node)).wrapping_add(hash_u32(node.left)).wrapping_add(hash_u32(node.right));
        for child in [node.left, node.right] {
            let same = cx.tree.nodes[child as usize].rep == node.rep;
            cut.add(child, same.then_some(top.gv));
        }
    }
    let mut color = cut.done;
    for e in &cut.heap.items {
        color += cut.contribution(&cx.tree.nodes[e.node as usize], e.gv);
    }
    if cut.dropped > o.error * cut.total {
        flags |= CUT_INEXACT;
    }
    (px.emission + color * INV_PI, CutPixel { size, hash, queries: cut.queries, flags })
}

/// Statistics of a set of cuts: average size over the lit pixels, pixels flagged.
pub(crate) fn cut_stats(cuts: &[CutPixel], report: &mut Report) {
    let lit: Vec<&CutPixel> = cuts.iter().filter(|c| c.size > 0).collect();
    let sum: u64 = lit.iter().map(|c| c.size as u64).sum();
    report.stat("average cut", if lit.is_empty() { 0.0 } else { sum as f64 / lit.len() as f64 });
    report.stat("largest cut", lit.iter().map(|c| c.size).max().unwrap_or(0) as f64);
    report.stat("visibility queries", cuts.iter().map(|c| c.queries as f64).sum());
    report.stat("inexact pixels", cuts.iter().filter(|c| c.flags & CUT_INEXACT != 0).count() as f64);
    report.stat("max-cut pixels", cuts.iter().filter(|c| c.flags & CUT_MAX_REACHED != 0).count() as f64);
}

impl Lightcuts {
    /// The CPU path: the shaded image.
    ///
    /// ```
    /// use glam::Vec3;
    /// use lumbre_lightcuts::{GBufferPass, Lightcuts, LightTree, Shading, View, Vpl};
    /// use lumbre_raytrace::{Prepared, Scene};
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/scenes/CornellBox-Diffuse.obj");
    /// let prepared = Prepared::new(Scene::load_obj(path.as_ref())?.0, &Default::default());
    /// let gbuffer = GBufferPass { view: View::cornell(8, 8), query: Default::default() }.cpu(&prepared)?;
    /// let light = Vpl { position: Vec3::new(0.0, 1.9, 0.0), normal: -Vec3::Y, intensity: Vec3::ONE };
    /// let input = Shading { prepared, tree: LightTree::single(vec![light])?, gbuffer };
    /// assert_eq!(Lightcuts::default().cpu(&input)?.image.pixels.len(), 64);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn cpu(&self, input: &Shading) -> Result<Lit> {
        self.shade_cpu(input.by_ref(), &()).map(|(lit, _)| lit)
    }

    /// [`cpu`](Lightcuts::cpu) with progress (pixels) and a report, on borrowed input.
    pub fn shade_cpu(&self, input: ShadingRef<'_>, progress: &dyn Progress) -> Result<(Lit, Report)> {
        self.cut.validate()?;
        check_shading(input)?;
        let min_d2 = min_distance2(input.prepared, self.clamp)?;
        let mut report = Report::default();
        let atlas = ism_cpu(&self.visibility, input, progress)?.map(|(atlas, r)| {
            report.merge(r);
            atlas
        });
        let vis = vis_for(&self.visibility, input, self.query, atlas.as_ref());
        let cx = CutContext { tree: input.tree, options: self.cut, min_d2, vis };
        let g = input.gbuffer;
        let total = g.pixels.len() as u64;
        let done = AtomicU64::new(0);
        let out: Vec<(Vec3, CutPixel)> = report.time("lightcuts", || {
            g.pixels
                .par_chunks(256)
                .flat_map_iter(|chunk| {
                    let out: Vec<_> = chunk.iter().map(|px| cut_pixel(&cx, px)).collect();
                    progress.update(
                        "lightcuts",
                        done.fetch_add(chunk.len() as u64, Ordering::Relaxed) + chunk.len() as u64,
                        total,
                    );
                    out
                })
                .collect()
        });
        let (pixels, cuts): (Vec<_>, Vec<_>) = out.into_iter().unzip();
        cut_stats(&cuts, &mut report);
        let queries = cuts.iter().map(|c| c.queries as u64).sum();
        let image = Image::from_pixels(g.width, g.height, pixels).map_err(Error::Input)?;
        Ok((Lit { image, cuts, queries }, report))
    }
}
