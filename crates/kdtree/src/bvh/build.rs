//! Binned SAH build (Wald 2007): top down, each node's triangles binned by centroid along
//! every axis, the cheapest of the bins' boundaries taken; subtrees of many triangles are
//! built in parallel with rayon, then the tree is laid out depth first.

use glam::Vec3;

use super::wide;
use super::{BVH_MAX_DEPTH, Bvh, BvhNode};
use rayon::prelude::*;

use crate::aabb::Aabb;
use crate::build::clip::{GrownCells, clipped_boxes};
use crate::triangle::is_valid_triangle;

/// Options of [`Bvh::build`].
///
/// ```
/// use lumbre_kdtree::BvhOptions;
/// assert_eq!(BvhOptions::default().leaf_size, 4);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BvhOptions {
    /// Most triangles a leaf holds unless its triangles cannot be told apart by centroid
    /// (or the tree is [`BVH_MAX_DEPTH`](crate::BVH_MAX_DEPTH) deep); below it the SAH decides.
    pub leaf_size: u32,
    /// Cost of visiting a node against testing one triangle, in the SAH.
    pub traversal_cost: f32,
}

impl Default for BvhOptions {
    fn default() -> Self {
        BvhOptions { leaf_size: 4, traversal_cost: 1.0 }
    }
}

const BINS: usize = 16;
/// Subtrees with fewer triangles are built on the calling thread.
const PARALLEL_MIN: usize = 4096;

#[derive(Clone, Copy)]
struct Prim {
    bounds: Aabb,
    centroid: Vec3,
    index: u32,
}

enum Tree {
    Leaf { bounds: Aabb, first: u32, count: u32 },
    Inner { bounds: Aabb, depth: u32, children: Box<[Tree; 2]> },
}

impl Tree {
    fn bounds(&self) -> Aabb {
        match self {
            Tree::Leaf { bounds, .. } | Tree::Inner { bounds, .. } => *bounds,
        }
    }
    fn depth(&self) -> u32 {
        match self {
            Tree::Leaf { .. } => 0,
            Tree::Inner { depth, .. } => *depth,
        }
    }
}

impl Bvh {
    /// Builds the hierarchy of the valid triangles of `tris` (a long thin triangle may be
    /// listed in several leaves, each holding part of it). Node boxes are widened by 2^-20 of
    /// the scene's size, so rays along a box's face or through a vertex on it still enter.
    ///
    /// ```
    /// use lumbre_kdtree::{scenes, Bvh, BvhOptions};
    /// let bvh = Bvh::build(&scenes::generated_scene(1000), &BvhOptions::default());
    /// assert!(bvh.nodes.len() > 1 && bvh.prim_indices.len() >= 1000);
    /// ```
    pub fn build(tris: &[[Vec3; 3]], opts: &BvhOptions) -> Bvh {
        // In triangle order whatever the threads (fold and reduce keep it).
        let mut prims: Vec<Prim> = tris
            .par_iter()
            .enumerate()
            .filter(|(_, t)| is_valid_triangle(t))
            .fold(Vec::new, |mut out, (i, t)| {
                references(i as u32, t, &mut out);
                out
            })
            .reduce(Vec::new, |mut a, mut b| {
                a.append(&mut b);
                a
            });
        let bounds = prims.iter().fold(Aabb::EMPTY, |b, p| b.union(&p.bounds));
        let margin = if prims.is_empty() { 0.0 } else { bounds.size().max_element() * (-20f32).exp2() };
        let opts = BvhOptions { leaf_size: opts.leaf_size.max(1), ..*opts };
        let tree = split(&mut prims, 0, 0, &opts);
        let pad = |b: Aabb| if b.is_empty() { b } else { Aabb::new(b.min - margin, b.max + margin) };
        let mut nodes = Vec::new();
        let root_children: Vec<&Tree> = match &tree {
            Tree::Inner { children, .. } => children.iter().collect(),
            leaf => vec![leaf],
        };
        let depth = tree.depth();
        emit(&mut nodes, &root_children, &pad);
        let prim_indices: Vec<u32> = prims.iter().map(|p| p.index).collect();
        let (wide, blocks) = wide::widen(&nodes, &prim_indices, tris);
        let stack_need = wide::stack_need(&wide);
        Bvh { nodes, prim_indices, bounds, depth, wide, blocks, stack_need }
    }
}

/// Lays out a node with these children (one or two) at the end of `nodes`, then their
/// subtrees, and returns its index.
fn emit(nodes: &mut Vec<BvhNode>, children: &[&Tree], pad: &dyn Fn(Aabb) -> Aabb) -> u32 {
    let at = nodes.len();
    nodes.push(BvhNode::zeroed_empty());
    let mut refs = [(Aabb::EMPTY, 0u32, 0u32); 2];
    for (slot, child) in children.iter().enumerate() {
        refs[slot] = match child {
            Tree::Leaf { bounds, first, count } => (pad(*bounds), *first, *count),
            Tree::Inner { bounds, children, .. } => {
                let index = emit(nodes, &[&children[0], &children[1]], pad);
                (pad(*bounds), index, 0)
            }
        };
    }
    let [(a, a_ref, a_count), (b, b_ref, b_count)] = refs;
    nodes[at] = BvhNode {
        a_min: a.min.to_array(),
        a_ref,
        a_max: a.max.to_array(),
        b_ref,
        b_min: b.min.to_array(),
        a_count,
        b_max: b.max.to_array(),
        b_count,
    };
    at as u32
}

impl BvhNode {
    fn zeroed_empty() -> BvhNode {
        let e = Aabb::EMPTY;
        BvhNode {
            a_min: e.min.to_array(),
            a_ref: 0,
            a_max: e.max.to_array(),
            b_ref: 0,
            b_min: e.min.to_array(),
            a_count: 0,
            b_max: e.max.to_array(),
            b_count: 0,
        }
    }
}

/// A triangle whose box's surface area exceeds this many times its own area (an
/// axis-aligned right triangle's is 4) enters the hierarchy as several references.
const SPLIT_RATIO: f64 = 16.0;
/// Halvings of a triangle's box at most: up to 8 references a triangle.
const SPLIT_DEPTH: u32 = 3;

/// The references of triangle `index` (early split clipping, Ernst and Greiner 2007): its box,
/// or, for a long thin triangle whose box is mostly empty (the fan, the star polygon), the
/// boxes of its parts in the halves of its box, split at the middle of the longest axis until
/// each part's box is small against the part (about half the area a halving) or
/// [`SPLIT_DEPTH`]. The parts are clipped in `f64` and rounded outward, so every point of the
/// triangle lies in some reference's box.
fn references(index: u32, tri: &[Vec3; 3], out: &mut Vec<Prim>) {
    let [a, b, c] = tri.map(|v| v.as_dvec3());
    let area = 0.5 * (b - a).cross(c - a).length();
    let prim = |bounds: Aabb| Prim { bounds, centroid: (bounds.min + bounds.max) * 0.5, index };
    let own = Aabb::from_points(tri.iter().copied());
    if (own.surface_area() as f64) <= SPLIT_RATIO * area {
        out.push(prim(own));
        return;
    }
    let mut todo = vec![(own, 0u32)];
    while let Some((bounds, level)) = todo.pop() {
        let part = area / f64::from(1u32 << level);
        if level >= SPLIT_DEPTH || (bounds.surface_area() as f64) <= SPLIT_RATIO * part {
            out.push(prim(bounds));
            continue;
        }
        let axis = bounds.size().max_position();
        let pos = (bounds.min[axis] + bounds.max[axis]) * 0.5;
        let cells = GrownCells::new(&bounds, axis, pos, 0.0);
        let (lo, hi) = clipped_boxes(tri, &cells, axis, pos, 0.0);
        for half in [lo, hi] {
            if !half.is_empty() {
                todo.push((half, level + 1));
            }
        }
    }
}

/// The subtree of `prims`, which start at `first` in the final order.
fn split(prims: &mut [Prim], first: u32, depth: u32, opts: &BvhOptions) -> Tree {
    let bounds = prims.iter().fold(Aabb::EMPTY, |b, p| b.union(&p.bounds));
    let n = prims.len();
    let leaf = Tree::Leaf { bounds, first, count: n as u32 };
    if n <= 1 || depth + 1 >= BVH_MAX_DEPTH {
        return leaf;
    }
    let cb = prims.iter().fold(Aabb::EMPTY, |b, p| b.grow(p.centroid));
    let extent = cb.size();
    let mid = match best_split(prims, &cb, &bounds, opts) {
        Some((axis, bin, cost)) => {
            if n as u32 <= opts.leaf_size && cost >= n as f32 {
                return leaf;
            }
            let bin_of = |p: &Prim| bin_index(p.centroid[axis], cb.min[axis], extent[axis]);
            partition(prims, |p| bin_of(p) <= bin)
        }
        // Centroids that coincide: halves by index, unless the leaf may hold them.
        None if n as u32 <= opts.leaf_size => return leaf,
        None => n / 2,
    };
    let (lo, hi) = prims.split_at_mut(mid);
    let (a, b) = if n >= PARALLEL_MIN {
        rayon::join(|| split(lo, first, depth + 1, opts), || split(hi, first + mid as u32, depth + 1, opts))
    } else {
        (split(lo, first, depth + 1, opts), split(hi, first + mid as u32, depth + 1, opts))
    };
    let depth = 1 + a.depth().max(b.depth());
    debug_assert_eq!(a.bounds().union(&b.bounds()), bounds);
    Tree::Inner { bounds, depth, children: Box::new([a, b]) }
}

fn bin_index(c: f32, lo: f32, extent: f32) -> usize {
    (((c - lo) / extent * BINS as f32) as usize).min(BINS - 1)
}

/// The cheapest split, as (axis, last bin of the left side, SAH cost in triangle tests), or
/// `None` where all centroids coincide.
fn best_split(prims: &[Prim], cb: &Aabb, bounds: &Aabb, opts: &BvhOptions) -> Option<(usize, usize, f32)> {
    let extent = cb.size();
    let area = bounds.surface_area().max(f32::MIN_POSITIVE);
    let mut best: Option<(usize, usize, f32)> = None;
    for axis in 0..3 {
        if extent[axis] <= 0.0 {
            continue;
        }
        let mut boxes = [Aabb::EMPTY; BINS];
        let mut counts = [0u32; BINS];
        for p in prims {
            let b = bin_index(p.centroid[axis], cb.min[axis], extent[axis]);
            boxes[b] = boxes[b].union(&p.bounds);
            counts[b] += 1;
        }
        // Areas and counts left of each boundary, then sweep from the right.
        let mut left = [(0.0f32, 0u32); BINS - 1];
        let (mut acc, mut count) = (Aabb::EMPTY, 0);
        for i in 0..BINS - 1 {
            acc = acc.union(&boxes[i]);
            count += counts[i];
            left[i] = (if count > 0 { acc.surface_area() } else { 0.0 }, count);
        }
        let (mut acc, mut count) = (Aabb::EMPTY, 0);
        for i in (0..BINS - 1).rev() {
            acc = acc.union(&boxes[i + 1]);
            count += counts[i + 1];
            let (l_area, l_count) = left[i];
            if l_count == 0 || count == 0 {
                continue;
            }
            let cost = opts.traversal_cost + (l_area * l_count as f32 + acc.surface_area() * count as f32) / area;
            if best.is_none_or(|(_, _, c)| cost < c) {
                best = Some((axis, i, cost));
            }
        }
    }
    best
}

/// Moves the prims for which `left` holds to the front; returns how many.
fn partition(prims: &mut [Prim], left: impl Fn(&Prim) -> bool) -> usize {
    let mut i = 0;
    for j in 0..prims.len() {
        if left(&prims[j]) {
            prims.swap(i, j);
            i += 1;
        }
    }
    i
}
