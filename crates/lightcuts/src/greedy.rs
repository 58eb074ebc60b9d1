//! The greedy agglomerative light-tree build of the paper (section 2.3, after Walter et al.
//! 2005 and Walter et al. 2008): start with one cluster per light and repeatedly merge the
//! pair whose merged cluster is smallest by the chosen [`ClusterMetric`], finding each
//! cluster's best partner with a kd-tree and keeping the pairs in a priority queue.
//!
//! Every cluster sits in the kd-tree at the position of its representative light (a real
//! light, so no point is ever inserted: a merge leaves the merged cluster at one of its two
//! points and empties the other, as the paper notes). A partner search prunes a kd-subtree
//! when even the nearest possible partner in it, one whose representative lies in the
//! subtree's box, would give a metric no smaller than the best found: the merged box then
//! spans at least the cluster's own box and the nearest point of that box, and the other
//! terms are at least 0. This is the paper's eq. 1 argument (colour and direction terms
//! are bounded, so the spatial term decides what can be skipped), made exact.
//!
//! The queue holds for each cluster its best partner at the time it was found; a popped
//! pair whose partner has been merged away meanwhile is searched again (the lazy update of
//! Walter et al. 2008). Building is O(n log n) in the usual case.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use glam::Vec3;
use lumbre_gpu::{Error, Result};
use rayon::prelude::*;

use crate::metric::ClusterMetric;
use crate::metric::{Prepared, Summary};
use crate::tree::{LightNode, LightTree};
use crate::vpls::{Vpl, validate_vpls};

/// Lights per kd-tree leaf.
const KD_LEAF: usize = 8;

/// No cluster.
const NONE: u32 = u32::MAX;

/// The greedy agglomerative builder (CPU).
///
/// ```
/// use glam::Vec3;
/// use lumbre_lightcuts::{ClusterMetric, GreedyTree, Vpl};
/// let vpls: Vec<Vpl> = (0..100)
///     .map(|i| Vpl { position: Vec3::new((i % 10) as f32, (i / 10) as f32, 0.0), normal: Vec3::Z, intensity: Vec3::ONE })
///     .collect();
/// for metric in [ClusterMetric::Walter, ClusterMetric::PAPER] {
///     let tree = GreedyTree { metric, ..Default::default() }.build(&vpls).unwrap();
///     assert_eq!(tree.nodes.len(), 199);
///     assert_eq!(tree.nodes[0].intensity, Vec3::splat(100.0));
///     tree.validate().unwrap();
/// }
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct GreedyTree {
    /// The metric.
    pub metric: ClusterMetric,
    /// Seed of the representatives' draws.
    pub seed: u32,
    /// The scene's diagonal (`alpha_S`, and Walter's `c`); `None`: the diagonal of the
    /// lights' box.
    pub diagonal: Option<f32>,
}

/// A node of the kd-tree over the lights' positions.
#[derive(Clone, Copy, Debug)]
struct KdNode {
    lo: Vec3,
    hi: Vec3,
    /// Range of `Kd::order`.
    start: u32,
    end: u32,
    /// Children, or `NONE` for a leaf.
    left: u32,
    right: u32,
    parent: u32,
    /// Lights in the subtree that hold a live cluster.
    occupied: u32,
    /// The smallest intensity weight of the subtree's lights: a cluster sitting at one of
    /// them contains it, so weighs at least that.
    min_weight: f32,
}

/// A kd-tree over points whose points can be emptied (and not refilled).
struct Kd {
    nodes: Vec<KdNode>,
    order: Vec<u32>,
    /// The leaf holding each point.
    leaf_of: Vec<u32>,
}

impl Kd {
    fn build(points: &[Vec3], weights: &[f32]) -> Kd {
        let mut order: Vec<u32> = (0..points.len() as u32).collect();
        let mut nodes = Vec::with_capacity(2 * points.len() / KD_LEAF + 2);
        let mut leaf_of = vec![0u32; points.len()];
        let mut at = Split { points, weights, nodes: &mut nodes, leaf_of: &mut leaf_of };
        at.split(&mut order, 0, NONE);
        Kd { nodes, order, leaf_of }
    }

    /// Point `p` no longer holds a cluster.
    fn vacate(&mut self, p: u32) {
        let mut k = self.leaf_of[p as usize];
        while k != NONE {
            self.nodes[k as usize].occupied -= 1;
            k = self.nodes[k as usize].parent;
        }
    }
}

/// The kd-tree's recursive build.
struct Split<'a> {
    points: &'a [Vec3],
    weights: &'a [f32],
    nodes: &'a mut Vec<KdNode>,
    leaf_of: &'a mut [u32],
}

impl Split<'_> {
    fn split(&mut self, order: &mut [u32], start: usize, parent: u32) -> u32 {
        let points = self.points;
        let (lo, hi) = order.iter().fold((Vec3::INFINITY, Vec3::NEG_INFINITY), |(lo, hi), &i| {
            (lo.min(points[i as usize]), hi.max(points[i as usize]))
        });
        let min_weight = order.iter().map(|&i| self.weights[i as usize]).fold(f32::INFINITY, f32::min);
        let me = self.nodes.len() as u32;
        let end = start + order.len();
        self.nodes.push(KdNode {
            lo,
            hi,
            start: start as u32,
            end: end as u32,
            left: NONE,
            right: NONE,
            parent,
            occupied: order.len() as u32,
            min_weight,
        });
        if order.len() <= KD_LEAF {
            for &i in order.iter() {
                self.leaf_of[i as usize] = me;
            }
            return me;
        }
        let size = hi - lo;
        let axis = if size.x >= size.y && size.x >= size.z {
            0
        } else if size.y >= size.z {
            1
        } else {
            2
        };
        let m = order.len() / 2;
        order.select_nth_unstable_by(m, |&a, &b| {
            points[a as usize][axis].total_cmp(&points[b as usize][axis]).then(a.cmp(&b))
        });
        let (l, r) = order.split_at_mut(m);
        let left = self.split(l, start, me);
        let right = self.split(r, start + m, me);
        self.nodes[me as usize].left = left;
        self.nodes[me as usize].right = right;
        me
    }
}

/// The diagonal of the box around `lo..hi` and the point of `[blo, bhi]` nearest to it.
#[inline]
fn nearest_diagonal(lo: Vec3, hi: Vec3, blo: Vec3, bhi: Vec3) -> f32 {
    let gap = (blo - hi).max(lo - bhi).max(Vec3::ZERO);
    ((hi - lo) + gap).length()
}

/// The build's state: every cluster so far (lights first, then merges in order).
struct Build<'a> {
    metric: Prepared,
    kd: Kd,
    /// The light each kd point is, to its cluster (or `NONE`).
    occupant: Vec<u32>,
    nodes: Vec<LightNode>,
    summaries: Vec<Summary>,
    alive: Vec<bool>,
    /// The cluster each dead cluster was merged into (`NONE` while alive).
    merged_into: Vec<u32>,
    /// The partner last found for each cluster.
    best_of: Vec<u32>,
    vpls: &'a [Vpl],
}

impl Build<'_> {
    /// The live cluster that holds cluster `x` now (`NONE` for `NONE`).
    fn alive_of(&self, mut x: u32) -> u32 {
        while x != NONE && !self.alive[x as usize] {
            x = self.merged_into[x as usize];
        }
        x
    }

    /// The best partner of cluster `c`: `(metric, partner)`; on a tie, the first found in
    /// the (deterministic) search order.
    fn best_partner(&self, c: u32, hints: &[u32]) -> Option<(f32, u32)> {
        let a = &self.summaries[c as usize];
        let mut best = (f32::INFINITY, NONE);
        // A partner found before (or the cluster that absorbed it) bounds the search.
        for &h in hints {
            let h = self.alive_of(h);
            if h != NONE && h != c {
                let size = self.metric.size(a, &self.summaries[h as usize]);
                if size < best.0 {
                    best = (size, h);
                }
            }
        }
        let mut stack = vec![0u32];
        while let Some(k) = stack.pop() {
            let node = &self.kd.nodes[k as usize];
            if node.occupied == 0 {
                continue;
            }
            let bound = self.metric.lower_bound(a, nearest_diagonal(a.lo, a.hi, node.lo, node.hi), node.min_weight);
            if bound >= best.0 {
                continue;
            }
            if node.left == NONE {
                for &p in &self.kd.order[node.start as usize..node.end as usize] {
                    let b = self.occupant[p as usize];
                    if b == NONE || b == c {
                        continue;
                    }
                    let s = &self.summaries[b as usize];
                    let alpha = (a.hi.max(s.hi) - a.lo.min(s.lo)).length();
                    if self.metric.lower_bound(a, alpha, s.weight) >= best.0 {
                        continue;
                    }
                    let size = self.metric.size(a, s);
                    if size < best.0 {
                        best = (size, b);
                    }
                }
                continue;
            }
            // Nearer child last, so it is searched first.
            let (l, r) = (&self.kd.nodes[node.left as usize], &self.kd.nodes[node.right as usize]);
            let dl = nearest_diagonal(a.lo, a.hi, l.lo, l.hi);
            let dr = nearest_diagonal(a.lo, a.hi, r.lo, r.hi);
            if dl <= dr {
                stack.push(node.right);
                stack.push(node.left);
            } else {
                stack.push(node.left);
                stack.push(node.right);
            }
        }
        (best.1 != NONE).then_some(best)
    }
}

/// A queue entry: metric bits (non-negative floats order as their bits), cluster, partner.
type Entry = Reverse<(u32, u32, u32)>;

impl GreedyTree {
    /// Builds the tree over `vpls` (at least one; finite positions, unit normals, finite
    /// non-negative intensities).
    pub fn build(&self, vpls: &[Vpl]) -> Result<LightTree> {
        validate_vpls(vpls)?;
        let n = vpls.len();
        if n == 1 {
            return LightTree::single(vpls.to_vec());
        }
        let points: Vec<Vec3> = vpls.iter().map(|v| v.position).collect();
        let weights: Vec<f32> = vpls.iter().map(|v| v.intensity.x + v.intensity.y + v.intensity.z).collect();
        let (lo, hi) = points.iter().fold((points[0], points[0]), |(lo, hi), &p| (lo.min(p), hi.max(p)));
        let diagonal = self.diagonal.unwrap_or((hi - lo).length());
        if !(diagonal > 0.0 && diagonal.is_finite()) {
            return Err(Error::Input(format!(
                "greedy light tree: scene diagonal {diagonal} must be finite and > 0 (all lights at one point need a given diagonal)"
            )));
        }
        let metric = Prepared::new(self.metric, diagonal);
        let color = metric.needs_color();
        let mut nodes: Vec<LightNode> = Vec::with_capacity(2 * n - 1);
        nodes.extend(vpls.iter().enumerate().map(|(i, v)| LightNode::leaf(v, i as u32)));
        let mut summaries: Vec<Summary> = Vec::with_capacity(2 * n - 1);
        summaries.extend(nodes.iter().map(|node| Summary::of(node, color)));
        let mut b = Build {
            metric,
            kd: Kd::build(&points, &weights),
            occupant: (0..n as u32).collect(),
            nodes,
            summaries,
            alive: vec![true; n],
            merged_into: vec![NONE; n],
            best_of: vec![NONE; n],
            vpls,
        };
        let first: Vec<Option<(f32, u32)>> = (0..n as u32).into_par_iter().map(|c| b.best_partner(c, &[])).collect();
        for (c, f) in first.iter().enumerate() {
            b.best_of[c] = f.map_or(NONE, |(_, q)| q);
        }
        let mut queue: BinaryHeap<Entry> =
            first.iter().enumerate().filter_map(|(c, p)| p.map(|(s, q)| Reverse((s.to_bits(), c as u32, q)))).collect();
        let mut merges = 0u32;
        while let Some(Reverse((_, a, p))) = queue.pop() {
            if !b.alive[a as usize] {
                continue;
            }
            if !b.alive[p as usize] {
                if let Some((s, q)) = b.best_partner(a, &[p]) {
                    b.best_of[a as usize] = q;
                    queue.push(Reverse((s.to_bits(), a, q)));
                }
                continue;
            }
            // Node index in the final layout: the last merge is the root (0).
            let index = (n - 2) as u32 - merges;
            merges += 1;
            let c = b.nodes.len() as u32;
            let merged = LightNode::merge(&b.nodes[a as usize], a, &b.nodes[p as usize], p, index, self.seed);
            let (ra, rp) = (b.nodes[a as usize].rep, b.nodes[p as usize].rep);
            b.vacate_pair(a, p, ra, rp, merged.rep, c);
            b.summaries.push(Summary::of(&merged, color));
            b.nodes.push(merged);
            b.alive.push(true);
            b.merged_into.push(NONE);
            b.best_of.push(NONE);
            b.alive[a as usize] = false;
            b.alive[p as usize] = false;
            b.merged_into[a as usize] = c;
            b.merged_into[p as usize] = c;
            if merges as usize == n - 1 {
                break;
            }
            let hints = [b.best_of[a as usize], b.best_of[p as usize]];
            if let Some((s, q)) = b.best_partner(c, &hints) {
                b.best_of[c as usize] = q;
                queue.push(Reverse((s.to_bits(), c, q)));
            }
        }
        if merges as usize != n - 1 {
            return Err(Error::Input(format!("greedy light tree: {merges} merges of {n} lights")));
        }
        Ok(b.into_tree(n))
    }
}

impl Build<'_> {
    /// Clusters `a` and `p` (whose representatives are lights `ra`, `rp`) become cluster `c`
    /// represented by light `rep`: `c` takes that light's kd point, the other is emptied.
    fn vacate_pair(&mut self, a: u32, p: u32, ra: u32, rp: u32, rep: u32, c: u32) {
        debug_assert!(self.occupant[ra as usize] == a && self.occupant[rp as usize] == p);
        let other = if rep == ra { rp } else { ra };
        self.occupant[rep as usize] = c;
        self.occupant[other as usize] = NONE;
        self.kd.vacate(other);
    }

    /// The nodes in the tree layout: merge `m` at `n - 2 - m`, light `k` at `n - 1 + k`.
    fn into_tree(self, n: usize) -> LightTree {
        let slot = |c: u32| if (c as usize) < n { (n - 1) as u32 + c } else { (2 * n - 2) as u32 - c };
        let mut nodes = vec![LightNode::default(); 2 * n - 1];
        for (c, node) in self.nodes.iter().enumerate() {
            let mut node = *node;
            if !node.is_leaf() {
                node.left = slot(node.left);
                node.right = slot(node.right);
            }
            nodes[slot(c as u32) as usize] = node;
        }
        LightTree { nodes, vpls: self.vpls.to_vec() }
    }
}
