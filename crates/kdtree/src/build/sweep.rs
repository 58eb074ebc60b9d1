//! The SAH sweep: each axis's sorted events walked once, candidate planes beside the places
//! where triangles start, end or lie, and the counts on each side corrected within the
//! margin of a candidate by counting the events in its window.

use super::clip::{round_down_f32, round_up_f32};
use super::events::{END, Event, START, ev_key, ev_kind, ordered, unordered};
use super::{Ctx, NodeInput, PARALLEL_SWEEP_MIN};

/// The best split found by the sweep.
#[derive(Clone, Copy, Debug)]
pub(super) struct Split {
    pub(super) axis: usize,
    pub(super) pos: f32,
    pub(super) cost: f64,
    /// Triangles in the left and the right child.
    pub(super) counts: [usize; 2],
}

/// What a sweep found: the cheapest split within the node's reference budget, and the cost
/// of splits beyond it, such that the cheapest split regardless of the budget costs
/// `min(best.cost, over_budget)` (only splits beyond the budget that beat the best so far
/// when the sweep met them count: no other can be the cheapest).
#[derive(Clone, Copy, Debug)]
pub(super) struct Found {
    pub(super) best: Option<Split>,
    pub(super) over_budget: f64,
}

impl Found {
    /// The cheaper of two sweeps' findings (on ties, `self`'s split).
    fn or(self, other: Found) -> Found {
        let best = match (self.best, other.best) {
            (Some(a), Some(b)) => Some(if a.cost <= b.cost { a } else { b }),
            (a, b) => a.or(b),
        };
        Found { best, over_budget: self.over_budget.min(other.over_budget) }
    }
}

/// Which events a plane at `x` with margin `m` leaves on one side only, as key thresholds:
/// a triangle reaches the left child if it starts at or before `x + m` (key `<= left`) and
/// stays clear of the right child if it ends before `x - m` (key `< gone`).
#[derive(Clone, Copy, Debug)]
pub(super) struct Window {
    pub(super) left: u32,
    pub(super) gone: u32,
}

impl Window {
    pub(super) fn new(x: f32, m: f64) -> Window {
        let (x, m) = (x as f64, m);
        Window { left: ordered(round_down_f32(x + m) + 0.0), gone: ordered(round_up_f32(x - m) + 0.0) }
    }
}

/// Steps a sweep may take to correct its counts for events within the margin of a
/// candidate plane before giving the candidate up (keeps dense clusters linear).
const WINDOW_STEPS: usize = 32;

/// Sweeps the sorted events of every axis and returns the cheapest split plane (on ties, the
/// first found, axes in order) whose children hold at most the node's budget of references
/// together. Candidates sit `2m` below each position where triangles
/// start or lie and `2m` above each position where they end or lie, at least `m` inside the
/// cell. A triangle counts on the left of a plane `x` if it starts at or before `x + m`, on
/// the right if it ends at or after `x - m`. Large nodes sweep their axes in parallel (the
/// nodes near the root are what keeps the other threads waiting).
pub(super) fn find_split(ctx: &Ctx<'_>, input: &NodeInput) -> Found {
    let size = input.bounds.max.as_dvec3() - input.bounds.min.as_dvec3();
    let area = size.x * size.y + size.x * size.z + size.y * size.z; // half the surface area
    if area <= 0.0 {
        return Found { best: None, over_budget: f64::INFINITY };
    }
    let sweep = |axis| sweep_axis(ctx, input, axis, area);
    let [x, y, z] = if ctx.parallel && input.count >= PARALLEL_SWEEP_MIN {
        let (x, (y, z)) = rayon::join(|| sweep(0), || rayon::join(|| sweep(1), || sweep(2)));
        [x, y, z]
    } else {
        [0, 1, 2].map(sweep)
    };
    x.or(y).or(z)
}

/// The cheapest split plane on one axis of a node whose cell has half surface area `area`
/// (see [`find_split`]).
fn sweep_axis(ctx: &Ctx<'_>, input: &NodeInput, axis: usize, area: f64) -> Found {
    let lo = input.bounds.min.as_dvec3();
    let hi = input.bounds.max.as_dvec3();
    let size = hi - lo;
    let n = input.count;
    let m = ctx.margin;
    // Costs scaled by the intersection cost over the cell's area, to save work per candidate.
    let scale = ctx.intersection_cost / area;
    let mut best: Option<Split> = None;
    let mut over_budget = f64::INFINITY;
    // The most references the children may hold together (saturates for an infinite budget).
    let budget = input.budget as usize;
    // A candidate beats the best so far when its weighted count is below these (with the
    // empty-space bonus or without).
    let thresholds =
        |cost: f64| ((cost - ctx.traversal_cost) / scale, (cost / ctx.empty_bonus - ctx.traversal_cost) / scale);
    let (mut beat, mut beat_empty) = (f64::INFINITY, f64::INFINITY);
    let (lo_k, hi_k) = (lo[axis], hi[axis]);
    if lo_k >= hi_k {
        return Found { best, over_budget };
    }
    // A child's area as a function of the plane: e * (a + b) + a * b, where `a` and `b`
    // are the other two extents.
    let (a, b) = (size[(axis + 1) % 3], size[(axis + 2) % 3]);
    let (sum, prod) = (a + b, a * b);
    let mut consider = |x: f32, n_left: usize, n_gone: usize| {
        let n_right = n - n_gone;
        let xd = x as f64;
        // The area-weighted count; the full cost is only computed for a new best.
        // (Counts convert through `i64`: one instruction, where `usize` takes several.)
        let weighted =
            ((xd - lo_k) * sum + prod) * n_left as i64 as f64 + ((hi_k - xd) * sum + prod) * n_right as i64 as f64;
        let empty = (n_left == 0) | (n_right == 0);
        if weighted < if empty { beat_empty } else { beat } {
            let bonus = if empty { ctx.empty_bonus } else { 1.0 };
            let cost = bonus * (ctx.traversal_cost + scale * weighted);
            if n_left + n_right > budget {
                over_budget = over_budget.min(cost);
            } else {
                best = Some(Split { axis, pos: x, cost, counts: [n_left, n_right] });
                (beat, beat_empty) = thresholds(cost);
            }
        }
    };
    let events = input.axis(axis);
    let len = events.len();
    let position = |i: usize| if i < len { unordered(ev_key(events[i])) as f64 } else { f64::INFINITY };
    // START and PLANAR events (one per triangle) and END and PLANAR events (one per
    // triangle) before the current group of equal positions.
    let (mut sp_before, mut ep_before) = (0usize, 0usize);
    let (mut prev, mut p) = (f64::NEG_INFINITY, position(0));
    let mut g = 0;
    while g < len {
        let key = ev_key(events[g]);
        let (mut planars, mut starts) = (0usize, 0usize);
        let mut h = g;
        while h < len && ev_key(events[h]) == key {
            // Branch-free: kinds come in no predictable order. The kind's low bit marks
            // PLANAR, its high bit START; the rest are ENDs.
            planars += (events[h] >> 30) as usize & 1;
            starts += (events[h] >> 31) as usize & 1;
            h += 1;
        }
        let ends = h - g - planars - starts;
        let next = position(h);
        // With no other event within `3m` (and a few ulps) of `p`, the running totals
        // give a candidate's counts exactly; otherwise the window is counted.
        let clear = 3.0 * m + 4.0 * f32::EPSILON as f64 * p.abs();
        // A plane `2m` below where triangles start (or lie): this group is right of it.
        if starts + planars > 0 {
            let x = (p - 2.0 * m) as f32;
            if x as f64 - lo_k >= m {
                let counts = if p - prev > clear { Some((0, 0)) } else { count_backward(events, g, Window::new(x, m)) };
                if let Some((sp, ep)) = counts {
                    consider(x, sp_before - sp, ep_before - ep);
                }
            }
        }
        // A plane `2m` above where triangles end (or lie): this group is left of it.
        if ends + planars > 0 {
            let x = (p + 2.0 * m) as f32;
            if hi_k - x as f64 >= m {
                let counts = if next - p > clear { Some((0, 0)) } else { count_forward(events, h, Window::new(x, m)) };
                if let Some((sp, ep)) = counts {
                    consider(x, sp_before + starts + planars + sp, ep_before + ends + planars + ep);
                }
            }
        }
        sp_before += starts + planars;
        ep_before += ends + planars;
        (prev, p) = (p, next);
        g = h;
    }
    Found { best, over_budget }
}

/// For a plane above the events before index `from`: how many START/PLANAR events from
/// `from` on still reach the left child and how many END/PLANAR events from `from` on are
/// already clear of the right one. `None` if that takes more than [`WINDOW_STEPS`] steps.
#[inline]
fn count_forward(events: &[Event], from: usize, w: Window) -> Option<(usize, usize)> {
    let (mut sp, mut ep) = (0, 0);
    for (steps, &e) in events[from..].iter().enumerate() {
        if ev_key(e) > w.left {
            return Some((sp, ep));
        }
        if steps == WINDOW_STEPS {
            return None;
        }
        sp += (ev_kind(e) != END) as usize;
        ep += (ev_kind(e) != START && ev_key(e) < w.gone) as usize;
    }
    Some((sp, ep))
}

/// For a plane below the events from index `to` on: how many START/PLANAR events before
/// `to` do not reach the left child after all, and how many END/PLANAR events before `to`
/// are not yet clear of the right one. `None` if that takes more than [`WINDOW_STEPS`] steps.
#[inline]
fn count_backward(events: &[Event], to: usize, w: Window) -> Option<(usize, usize)> {
    let (mut sp, mut ep) = (0, 0);
    for (steps, &e) in events[..to].iter().rev().enumerate() {
        if ev_key(e) < w.gone {
            return Some((sp, ep));
        }
        if steps == WINDOW_STEPS {
            return None;
        }
        sp += (ev_kind(e) != END && ev_key(e) > w.left) as usize;
        ep += (ev_kind(e) != START) as usize;
    }
    Some((sp, ep))
}

#[cfg(test)]
mod tests {
    use glam::Vec3;

    use super::super::MARGIN;
    use crate::build::BuildOptions;
    use crate::node::KdTree;

    #[test]
    fn sweep_finds_the_gap_between_two_clusters() {
        let mut tris = Vec::new();
        for i in 0..20 {
            let x = if i < 10 { 0.0 } else { 10.0 };
            let o = Vec3::new(x, i as f32 * 0.1, 0.0);
            tris.push([o, o + Vec3::new(1.0, 0.0, 0.0), o + Vec3::new(0.0, 1.0, 1.0)]);
        }
        let tree = KdTree::build(&tris, &BuildOptions { parallel: false, ..Default::default() });
        let root = tree.nodes[0];
        assert_eq!(root.axis(), 0);
        assert!(root.split() >= 1.0 && root.split() <= 10.0, "{}", root.split());
    }

    #[test]
    fn empty_bonus_cuts_empty_space_off_a_single_cluster() {
        // One small cluster in the corner of a big cell: the bonus makes cutting the empty
        // part off worthwhile even when splitting the cluster itself is not.
        let mut tris = vec![[Vec3::ZERO, Vec3::new(100.0, 0.0, 0.0), Vec3::new(0.0, 0.0, 100.0)]];
        for i in 0..8 {
            let o = Vec3::new(90.0 + i as f32 * 0.1, 90.0, 90.0);
            tris.push([o, o + Vec3::X, o + Vec3::Y]);
        }
        let opts = BuildOptions { max_leaf_size: 0, parallel: false, ..Default::default() };
        let with_bonus = KdTree::build(&tris, &opts).stats();
        assert!(with_bonus.empty_leaves > 0);
        let without = KdTree::build(&tris, &BuildOptions { empty_bonus: 1.0, ..opts }).stats();
        assert!(without.empty_leaves <= with_bonus.empty_leaves);
        assert!(with_bonus.sah_cost < 1.5 * tris.len() as f32);
    }

    #[test]
    fn planar_triangles_go_to_the_cheaper_side() {
        // Every triangle spans the whole cell in y and z, so only x splits make sense. A wall
        // lies in x = 1, between a triangle spanning x in [lo, 0.9] and one spanning
        // [1.1, hi]. The best planes are just beside the wall, and putting the wall on the
        // narrower (cheaper) side wins.
        fn spanning(x0: f32, x1: f32) -> [Vec3; 3] {
            [Vec3::new(x0, 0.0, 0.0), Vec3::new(x1, 10.0, 0.0), Vec3::new(x0, 10.0, 10.0)]
        }
        let wall = [
            [Vec3::new(1.0, 0.0, 0.0), Vec3::new(1.0, 10.0, 0.0), Vec3::new(1.0, 0.0, 10.0)],
            [Vec3::new(1.0, 10.0, 10.0), Vec3::new(1.0, 10.0, 0.0), Vec3::new(1.0, 0.0, 10.0)],
        ];
        let opts = BuildOptions { max_leaf_size: 1, parallel: false, ..Default::default() };
        for (lo, hi, wall_below) in [(0.0, 3.0, true), (-1.0, 2.0, false)] {
            let tris = [wall[0], wall[1], spanning(lo, 0.9), spanning(1.1, hi)];
            let tree = KdTree::build(&tris, &opts);
            let root = tree.nodes[0];
            // Twice the margin (10 * 2^-20 here) beside the wall, away from where it goes.
            let m = 10.0 * MARGIN;
            let plane = if wall_below { 1.0 + 2.0 * m } else { 1.0 - 2.0 * m };
            assert_eq!((root.is_leaf(), root.axis()), (false, 0));
            assert!((root.split() - plane).abs() < 1e-6, "{} vs {plane}", root.split());
            let leaf_prims = |i: usize| {
                let n = tree.nodes[i];
                assert!(n.is_leaf());
                let mut p = tree.prim_indices[n.prim_offset() as usize..][..n.prim_count() as usize].to_vec();
                p.sort_unstable();
                p
            };
            let (below, above) = (leaf_prims(1), leaf_prims(root.above_child() as usize));
            if wall_below {
                assert_eq!((below, above), (vec![0, 1, 2], vec![3]));
            } else {
                assert_eq!((below, above), (vec![2], vec![0, 1, 3]));
            }
        }
    }
}
