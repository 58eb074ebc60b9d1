//! Events: where a triangle's extent, clipped to a node's cell, starts and ends on an axis
//! (or one planar event where it is flat), encoded so that sorting the `u64`s sorts them;
//! and the root's sorted lists.

use glam::Vec3;
use rayon::prelude::*;

use super::NodeInput;
use crate::aabb::Aabb;
use crate::node::MAX_FIELD;

/// An event: `[ordered position bits: 32 | kind: 2 | triangle: 30]`. Sorting the `u64`s
/// sorts by position, then kind, then triangle, which makes every sort deterministic; a
/// triangle's start always sorts before its end, as the classification needs.
pub(super) type Event = u64;

pub(super) const END: u64 = 0;
pub(super) const PLANAR: u64 = 1;
pub(super) const START: u64 = 2;

/// Maps `f32` bits to `u32` so that unsigned order is numeric order (`-0.0` must have been
/// made `+0.0` first).
#[inline]
pub(super) fn ordered(pos: f32) -> u32 {
    let bits = pos.to_bits();
    if bits & 0x8000_0000 != 0 { !bits } else { bits | 0x8000_0000 }
}

#[inline]
pub(super) fn unordered(key: u32) -> f32 {
    f32::from_bits(if key & 0x8000_0000 != 0 { key & 0x7fff_ffff } else { !key })
}

#[inline]
pub(super) fn event(pos: f32, kind: u64, tri: u32) -> Event {
    // `+ 0.0` turns -0.0 into +0.0 so that equal positions have equal keys.
    ((ordered(pos + 0.0) as u64) << 32) | (kind << 30) | tri as u64
}

#[inline]
pub(super) fn ev_key(e: Event) -> u32 {
    (e >> 32) as u32
}

#[inline]
pub(super) fn ev_kind(e: Event) -> u64 {
    (e >> 30) & 3
}

#[inline]
pub(super) fn ev_tri(e: Event) -> u32 {
    (e & MAX_FIELD as u64) as u32
}

/// Appends the events of triangle `id`, whose box clipped to the node's cell is `b`, to the
/// three lists: a start and an end per axis, or one planar event where the box is flat.
#[inline]
pub(super) fn push_events(lists: &mut [Vec<Event>; 3], b: &Aabb, id: u32) {
    for (k, list) in lists.iter_mut().enumerate() {
        let [first, second] = axis_events(b.min[k], b.max[k], id);
        list.push(first);
        if second != Event::MAX {
            list.push(second);
        }
    }
}

/// The events of triangle `id` on one axis, where its box spans `[lo, hi]`: a start and an
/// end, or where the box is flat a planar event and `Event::MAX`, which is no event (no
/// event reaches it: positions are finite).
#[inline]
pub(super) fn axis_events(lo: f32, hi: f32, id: u32) -> [Event; 2] {
    if lo == hi { [event(lo, PLANAR, id), Event::MAX] } else { [event(lo, START, id), event(hi, END, id)] }
}

/// The root's cell (the box of the valid triangles) and its events, sorted once. Each axis
/// has a stretch of two events per triangle, written in place by chunks of triangles in
/// parallel; a triangle flat on the axis writes one PLANAR event and a hole (`Event::MAX`),
/// which sorts past the list's end.
pub(super) fn root_input(triangles: &[[Vec3; 3]], valid: &[u32], parallel: bool) -> NodeInput {
    let box_of = |i: &u32| Aabb::from_points(triangles[*i as usize]);
    let union = |a: Aabb, b: Aabb| a.union(&b);
    let bounds = if parallel {
        valid.par_iter().map(box_of).reduce(|| Aabb::EMPTY, union)
    } else {
        valid.iter().map(box_of).fold(Aabb::EMPTY, union)
    };
    const CHUNK: usize = 1 << 14;
    let n = valid.len();
    // Writes the events of chunk `chunk` on `axis` into `out`; returns its holes.
    let fill = |axis: usize, chunk: usize, out: &mut [Event]| {
        let mut holes = 0;
        for (pair, &i) in out.chunks_exact_mut(2).zip(&valid[chunk * CHUNK..]) {
            let c = triangles[i as usize].map(|v| v[axis]);
            let (lo, hi) = (c[0].min(c[1]).min(c[2]), c[0].max(c[1]).max(c[2]));
            pair.copy_from_slice(&axis_events(lo, hi, i));
            holes += (lo == hi) as usize;
        }
        holes
    };
    let mut events = vec![0; 6 * n];
    // Fills and sorts the list of one axis; returns its holes.
    let axis_list = |(axis, list): (usize, &mut [Event])| {
        let chunk = |(c, out): (usize, &mut [Event])| fill(axis, c, out);
        if parallel {
            let holes = list.par_chunks_mut(2 * CHUNK).enumerate().map(chunk).sum();
            list.par_sort_unstable();
            holes
        } else {
            let holes = list.chunks_mut(2 * CHUNK).enumerate().map(chunk).sum();
            list.sort_unstable();
            holes
        }
    };
    let holes: Vec<usize> = if parallel {
        events.par_chunks_mut(2 * n).enumerate().map(axis_list).collect()
    } else {
        events.chunks_mut(2 * n).enumerate().map(axis_list).collect()
    };
    let lists = [0, 1, 2].map(|axis| (axis * 2 * n, (axis + 1) * 2 * n - holes[axis]));
    NodeInput { bounds, count: n, events, lists, budget: f64::INFINITY }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_keys_sort_by_position_then_kind() {
        let positions = [-3.5f32, -1e-30, -0.0, 0.0, 1e-40, 2.0, f32::MAX];
        for w in positions.windows(2) {
            assert!(ordered(w[0] + 0.0) <= ordered(w[1] + 0.0), "{} {}", w[0], w[1]);
            assert_eq!(unordered(ordered(w[1])), w[1]);
        }
        assert_eq!(event(-0.0, END, 5), event(0.0, END, 5));
        assert!(event(1.0, END, 9) < event(1.0, PLANAR, 0));
        assert!(event(1.0, PLANAR, 9) < event(1.0, START, 0));
        assert!(event(1.0, START, 9) < event(1.5, END, 0));
        let e = event(-2.25, START, MAX_FIELD);
        assert_eq!((unordered(ev_key(e)), ev_kind(e), ev_tri(e)), (-2.25, START, MAX_FIELD));
    }
}
