//! The split of a node: its triangles classified as left, right or both, the events divided
//! between the children in order, and the triangles on both sides clipped to each child
//! cell, their fresh events sorted and merged in.

use rayon::prelude::*;

use super::clip::{GrownCells, clipped_boxes};
use super::events::{END, Event, START, ev_key, ev_kind, ev_tri, push_events};
use super::scratch::{Scratch, with_scratch};
use super::sweep::{Split, Window};
use super::{Child, Ctx, NodeInput, PARALLEL_SWEEP_MIN};

// Sides as bits: BOTH includes RIGHT, which the classification's mask relies on.
const LEFT: u8 = 1;
const RIGHT: u8 = 2;
const BOTH: u8 = LEFT | RIGHT;

/// Classifies the node's triangles against the split (left if the clipped extent ends more
/// than the margin before the plane, right if it starts more than the margin after it, both
/// otherwise) and divides the events between the children in linear time; triangles on both
/// sides are clipped to each child cell (grown by the margin) and their new events sorted
/// and merged in. Children at `depth` that will be leaves get only their triangles; the
/// others get a share of the node's reference budget in proportion to their triangles.
pub(super) fn split_node(ctx: &Ctx<'_>, input: NodeInput, split: &Split, depth: u32) -> (Child, Child) {
    let (axis, pos) = (split.axis, split.pos);
    let mut left_bounds = input.bounds;
    left_bounds.max[axis] = pos;
    let mut right_bounds = input.bounds;
    right_bounds.min[axis] = pos;
    let m = ctx.margin;
    let w = Window::new(pos, m);

    with_scratch(|scratch| {
        let Scratch { sides, both, only, fresh, spare } = scratch;
        if sides.len() < ctx.tris.len() {
            sides.resize(ctx.tris.len(), BOTH);
        }
        // A triangle is on one side only when it stays beyond the margin of the other. Its
        // START comes before its END, and its END or PLANAR event settles its side. The
        // events are sorted, so those before the plane's window, in it and past it are three
        // runs: events before it settle LEFT (a START there says BOTH until its END decides),
        // events in it say BOTH, a START or PLANAR past it says RIGHT and an END there keeps
        // what its START said. Branch-free within a run: kinds and sides come in no
        // predictable order. Every settled triangle is written to `both` and to its side's
        // `only`, kept where it belongs.
        let [only_left, only_right] = only;
        for list in [&mut *both, &mut *only_left, &mut *only_right] {
            if list.len() <= input.count {
                list.resize(input.count + 1, 0);
            }
        }
        let events = input.axis(axis);
        let gone_at = events.partition_point(|&e| ev_key(e) < w.gone);
        let past_at = gone_at + events[gone_at..].partition_point(|&e| ev_key(e) <= w.left);
        let (mut n_left, mut n_right, mut n_both) = (0usize, 0usize, 0usize);
        for &e in &events[..gone_at] {
            let (tri, start) = (ev_tri(e), ev_kind(e) == START);
            sides[tri as usize] = if start { BOTH } else { LEFT };
            only_left[n_left] = tri;
            n_left += !start as usize;
        }
        for &e in &events[gone_at..past_at] {
            let tri = ev_tri(e);
            sides[tri as usize] = BOTH;
            both[n_both] = tri;
            n_both += (ev_kind(e) != START) as usize;
        }
        for &e in &events[past_at..] {
            let (tri, kind) = (ev_tri(e), ev_kind(e));
            // An END's START said BOTH or RIGHT: both include RIGHT (a mask, not a branch).
            let side = RIGHT | (sides[tri as usize] & ((kind == END) as u8).wrapping_neg());
            sides[tri as usize] = side;
            both[n_both] = tri;
            n_both += ((kind == END) & (side == BOTH)) as usize;
            only_right[n_right] = tri;
            n_right += ((kind != START) & (side == RIGHT)) as usize;
        }
        let both = &both[..n_both];
        let only = [&only_left[..n_left], &only_right[..n_right]];

        // Children that will be leaves need only their triangles.
        let counts = [n_left + n_both, n_right + n_both];
        let split = counts.map(|n| !ctx.is_leaf(n, depth));
        let leaf = |k: usize| {
            // (Copied element by element: `extend_from_slice` would call `memcpy` for a few.)
            let mut tris = Vec::with_capacity(counts[k]);
            tris.extend(only[k].iter().copied());
            tris.extend(both.iter().copied());
            Child::Leaf(tris)
        };

        // Triangles on both sides: events of their parts in each child cell that is split
        // further, sorted.
        for list in fresh.iter_mut().flatten() {
            list.clear();
        }
        if split[0] || split[1] {
            let cells = GrownCells::new(&input.bounds, axis, pos, m);
            for &tri in both {
                let (l, r) = clipped_boxes(&ctx.tris[tri as usize], &cells, axis, pos, m);
                if split[0] {
                    push_events(&mut fresh[0], &l, tri);
                }
                if split[1] {
                    push_events(&mut fresh[1], &r, tri);
                }
            }
            for list in fresh.iter_mut().flatten() {
                list.sort_unstable();
            }
        }
        // Each child split further gets its lists: the parent's events of its triangles that
        // are on its side only, in order, merged on the way with the fresh ones. A child of
        // `n` triangles keeps each axis's list in its own stretch of `2 n + 1` events (at most
        // two events per triangle, plus one slot that the branch-free merge may write past the
        // end), so that large nodes make all six lists in parallel. A child that becomes a
        // leaf takes no events.
        let stretch = counts.map(|n| 2 * n + 1);
        let [mut left, mut right] =
            [0, 1].map(|k| if split[k] { spare.take(3 * stretch[k], &ctx.large) } else { Vec::new() });
        let (sides, fresh) = (&*sides, &*fresh);
        let mut merges = Vec::with_capacity(6);
        for (k, out) in [&mut left, &mut right].into_iter().enumerate() {
            if split[k] {
                merges.extend(out.chunks_mut(stretch[k]).take(3).enumerate().map(|(axis, out)| (k, axis, out)));
            }
        }
        // On the split axis a triangle on the left only has all its events before the plane's
        // window, one on the right only all its events past it: each child reads its part.
        let split_axis = axis;
        let part = |k: usize, axis: usize| {
            let events = input.axis(axis);
            if axis == split_axis { if k == 0 { &events[..gone_at] } else { &events[past_at..] } } else { events }
        };
        // Child `k` (0 left, 1 right), list of `axis`: its length.
        let merge = |(k, axis, out): (usize, usize, &mut [Event])| {
            (k, axis, merge_side(part(k, axis), &fresh[k][axis], sides, [LEFT, RIGHT][k], out))
        };
        let mut lists = [[(0, 0); 3]; 2];
        if ctx.parallel && input.count >= PARALLEL_SWEEP_MIN {
            let merged: Vec<_> = merges.into_par_iter().map(merge).collect();
            for (k, axis, len) in merged {
                lists[k][axis] = (axis * stretch[k], axis * stretch[k] + len);
            }
        } else if split[0] && split[1] {
            // Both children at once: one read of the parent's events and their sides (on the
            // split axis, where each reads its own part, one after the other).
            for ((axis, l), r) in left.chunks_mut(stretch[0]).take(3).enumerate().zip(right.chunks_mut(stretch[1])) {
                let (nl, nr) = if axis == split_axis {
                    (
                        merge_side(part(0, axis), &fresh[0][axis], sides, LEFT, l),
                        merge_side(part(1, axis), &fresh[1][axis], sides, RIGHT, r),
                    )
                } else {
                    merge_both(input.axis(axis), [&fresh[0][axis], &fresh[1][axis]], sides, [l, r])
                };
                lists[0][axis] = (axis * stretch[0], axis * stretch[0] + nl);
                lists[1][axis] = (axis * stretch[1], axis * stretch[1] + nr);
            }
        } else {
            for (k, axis, len) in merges.into_iter().map(merge) {
                lists[k][axis] = (axis * stretch[k], axis * stretch[k] + len);
            }
        }
        // The node's reference budget, shared in proportion to the children's triangles.
        // (An empty child is a leaf: its share, 0, keeps an infinite budget from making NaN.)
        let budget =
            counts.map(|n| if n == 0 { 0.0 } else { input.budget * n as f64 / (counts[0] + counts[1]) as f64 });
        let left = if split[0] {
            let events = left;
            Child::Node(NodeInput { bounds: left_bounds, count: counts[0], events, lists: lists[0], budget: budget[0] })
        } else {
            leaf(0)
        };
        let right = if split[1] {
            let (bounds, events) = (right_bounds, right);
            Child::Node(NodeInput { bounds, count: counts[1], events, lists: lists[1], budget: budget[1] })
        } else {
            leaf(1)
        };
        spare.give_back(input.events, &ctx.large);
        (left, right)
    })
}

/// Writes to `out` the events of `events` whose triangle is on `side` only, merged with the
/// sorted `fresh` events, and returns their number. `out` must have room for
/// all of them plus one slot: every event is written and kept only if it belongs (sides come
/// in no predictable order, so a branch would mispredict half the time). Fresh events are
/// few, so the loop that puts them in place rarely runs.
#[inline]
fn merge_side(events: &[Event], fresh: &[Event], sides: &[u8], side: u8, out: &mut [Event]) -> usize {
    let mut fresh = fresh.iter().copied();
    let mut n = 0;
    // No event reaches `u64::MAX` (positions are finite), so it ends the fresh ones.
    let mut next = fresh.next().unwrap_or(Event::MAX);
    for &e in events {
        while next < e {
            out[n] = next;
            n += 1;
            next = fresh.next().unwrap_or(Event::MAX);
        }
        out[n] = e;
        n += (sides[ev_tri(e) as usize] == side) as usize;
    }
    while next != Event::MAX {
        out[n] = next;
        n += 1;
        next = fresh.next().unwrap_or(Event::MAX);
    }
    n
}

/// [`merge_side`] for both children at once: the events of triangles on one side only go to
/// that side's list, merged with its fresh events; returns both lengths.
#[inline]
fn merge_both(events: &[Event], fresh: [&[Event]; 2], sides: &[u8], out: [&mut [Event]; 2]) -> (usize, usize) {
    let [out_l, out_r] = out;
    let (mut fresh_l, mut fresh_r) = (fresh[0].iter().copied(), fresh[1].iter().copied());
    let (mut next_l, mut next_r) = (fresh_l.next().unwrap_or(Event::MAX), fresh_r.next().unwrap_or(Event::MAX));
    let (mut nl, mut nr) = (0, 0);
    for &e in events {
        while next_l < e {
            out_l[nl] = next_l;
            nl += 1;
            next_l = fresh_l.next().unwrap_or(Event::MAX);
        }
        while next_r < e {
            out_r[nr] = next_r;
            nr += 1;
            next_r = fresh_r.next().unwrap_or(Event::MAX);
        }
        let side = sides[ev_tri(e) as usize];
        out_l[nl] = e;
        nl += (side == LEFT) as usize;
        out_r[nr] = e;
        nr += (side == RIGHT) as usize;
    }
    for (next, fresh, out, n) in [(next_l, fresh_l, out_l, &mut nl), (next_r, fresh_r, out_r, &mut nr)] {
        if next != Event::MAX {
            out[*n] = next;
            *n += 1;
            for e in fresh {
                out[*n] = e;
                *n += 1;
            }
        }
    }
    (nl, nr)
}

#[cfg(test)]
mod tests {
    use glam::Vec3;

    use super::super::MARGIN;
    use super::super::events::{root_input, unordered};
    use super::super::scratch::Large;
    use super::*;

    #[test]
    fn triangles_within_the_margin_of_the_plane_go_to_both_sides() {
        // Slivers ending at distances of 0.5 and 1.5 margins left of a forced plane x = 0,
        // and starting 0.5 and 1.5 margins right of it; the cell is [-1, 1]^3, so m = 2^-15.
        let m = 2.0 * MARGIN;
        let sliver = |x0: f32, x1: f32| [Vec3::new(x0, -1.0, -1.0), Vec3::new(x1, 1.0, -1.0), Vec3::new(x0, 1.0, 1.0)];
        let tris = [
            sliver(-1.0, -0.5 * m),
            sliver(-1.0, -1.5 * m),
            sliver(0.5 * m, 1.0),
            sliver(1.5 * m, 1.0),
            sliver(-1.0, 1.0),
        ];
        let valid: Vec<u32> = (0..5).collect();
        let input = root_input(&tris, &valid, false);
        let ctx = Ctx {
            tris: &tris,
            traversal_cost: 1.0,
            intersection_cost: 1.5,
            empty_bonus: 0.8,
            max_depth: 10,
            max_leaf_size: 0,
            margin: m as f64,
            parallel: false,
            large: Large::default(),
            counters: Default::default(),
        };
        let node = |c: Child| match c {
            Child::Node(n) => n,
            Child::Leaf(_) => panic!("max_leaf_size 0 splits any node with triangles"),
        };
        let (left, right) = split_node(&ctx, input, &Split { axis: 0, pos: 0.0, cost: 0.0, counts: [4, 4] }, 1);
        let (left, right) = (node(left), node(right));
        let ids = |n: &NodeInput| {
            let mut ids: Vec<u32> = n.axis(0).iter().filter(|&&e| ev_kind(e) != END).map(|&e| ev_tri(e)).collect();
            ids.sort_unstable();
            ids
        };
        assert_eq!(ids(&left), [0, 1, 2, 4]);
        assert_eq!(ids(&right), [0, 2, 3, 4]);
        assert_eq!((left.count, right.count), (4, 4));
        // The near ones reach into the other child only within the margin.
        let max_x = |n: &NodeInput, tri: u32| {
            n.axis(0)
                .iter()
                .filter(|&&e| ev_tri(e) == tri && ev_kind(e) != START)
                .map(|&e| unordered(ev_key(e)))
                .fold(f32::MIN, f32::max)
        };
        assert!(max_x(&right, 0) <= -0.5 * m && max_x(&right, 0) >= -0.5 * m * 1.001);
    }
}
