//! Buffers reused from node to node: each thread's scratch (sides, triangle lists, fresh
//! events, spare event buffers) and the build's pool of large event buffers.

use std::cell::RefCell;
use std::sync::Mutex;

use super::events::Event;

/// Per-thread buffers reused from node to node (a node uses them only while it is being
/// split, never across the recursion; see [`with_scratch`] for splits that nest).
#[derive(Default)]
pub(super) struct Scratch {
    /// Left/right/both flags indexed by triangle. A node sets the flags of all its triangles
    /// before reading any, so stale values never leak in.
    pub(super) sides: Vec<u8>,
    /// Triangles going to both children: the first so many of its entries (it is written
    /// branch-free, every settled triangle at the next free place, so it is longer).
    pub(super) both: Vec<u32>,
    /// Triangles going to the left child only and to the right child only, written the same
    /// way: with `both`, what a child that becomes a leaf holds.
    pub(super) only: [Vec<u32>; 2],
    /// Fresh events of those triangles clipped to the left and the right child, per axis.
    pub(super) fresh: [[Vec<Event>; 3]; 2],
    /// Event buffers of nodes already split, for their children: a buffer taken from here
    /// needs neither an allocation nor zeroing.
    pub(super) spare: Spare,
}

/// Spare event buffers (see [`Scratch::spare`]).
#[derive(Default)]
pub(super) struct Spare(Vec<Vec<Event>>);

impl Spare {
    /// A buffer of at least `len` events (contents arbitrary); a large one from `large`.
    pub(super) fn take(&mut self, len: usize, large: &Large) -> Vec<Event> {
        let mut v = match len {
            0 => Vec::new(),
            _ if len > SPARE_MAX_EVENTS => large.take(len),
            // Best fit: taking any spare had short ones grown, and zeroed, over and over.
            _ => best_fit(&mut self.0, len),
        };
        if v.len() < len {
            v.resize(len, 0);
        }
        v
    }

    /// Keeps `v` for a later [`take`](Spare::take); a few buffers are enough, as nodes are
    /// split depth first. Large buffers go to `large`, which the build frees when it ends
    /// (a thread keeps its spares after the build).
    pub(super) fn give_back(&mut self, v: Vec<Event>, large: &Large) {
        if v.capacity() > SPARE_MAX_EVENTS {
            large.give_back(v);
        } else if !v.is_empty() && self.0.len() < SPARE_BUFFERS {
            self.0.push(v);
        }
    }
}

/// How many spare event buffers a thread keeps, and how large one may be (512 KiB).
const SPARE_BUFFERS: usize = 8;
const SPARE_MAX_EVENTS: usize = 1 << 16;

/// Event buffers too large for a thread's spares, shared by one build: the nodes near the
/// root reuse them rather than have the system map and zero fresh pages for every node. Few
/// nodes need them, so a lock is cheap.
#[derive(Default)]
pub(super) struct Large(Mutex<Vec<Vec<Event>>>);

/// How many large buffers a build keeps for reuse.
const LARGE_BUFFERS: usize = 16;

impl Large {
    /// A kept buffer for `len` events (see [`best_fit`]).
    fn take(&self, len: usize) -> Vec<Event> {
        best_fit(&mut self.0.lock().unwrap_or_else(|e| e.into_inner()), len)
    }

    fn give_back(&self, v: Vec<Event>) {
        let mut kept = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if kept.len() < LARGE_BUFFERS {
            kept.push(v);
        }
    }
}

/// Removes from `kept` the shortest buffer of at least `len` events, else the longest (to be
/// grown); an empty one if `kept` is empty.
fn best_fit(kept: &mut Vec<Vec<Event>>, len: usize) -> Vec<Event> {
    let fits = kept.iter().enumerate().filter(|(_, v)| v.len() >= len).min_by_key(|(_, v)| v.len());
    let pick = fits.or_else(|| kept.iter().enumerate().max_by_key(|(_, v)| v.len())).map(|(i, _)| i);
    pick.map(|i| kept.swap_remove(i)).unwrap_or_default()
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// Runs `f` with this thread's scratch buffers, borrowed in place (moving them out and back
/// copied a few hundred bytes per split). A thread waiting in a `rayon::join` (the parallel
/// merge of a large split) runs other jobs meanwhile, so a split may start inside another on
/// the same thread: it then gets fresh buffers of its own, not a borrow error.
pub(super) fn with_scratch<R>(f: impl FnOnce(&mut Scratch) -> R) -> R {
    SCRATCH.with(|cell| match cell.try_borrow_mut() {
        Ok(mut scratch) => f(&mut scratch),
        Err(_) => f(&mut Scratch::default()),
    })
}

#[cfg(test)]
mod tests {
    use super::super::PARALLEL_SWEEP_MIN;
    use super::*;
    use crate::build::BuildOptions;
    use crate::node::KdTree;

    #[test]
    fn a_split_inside_another_on_the_same_thread_gets_its_own_scratch() {
        with_scratch(|outer| {
            outer.both.push(7);
            with_scratch(|inner| {
                assert!(inner.both.is_empty());
                inner.both.push(8);
            });
            assert_eq!(outer.both, [7]);
        });
        // The outer buffers are the ones kept.
        with_scratch(|again| assert_eq!(again.both, [7]));
    }

    #[test]
    fn many_threads_stealing_during_a_split_build_the_same_tree() {
        // With many threads stealing, a thread waiting inside a split (for its parallel
        // merge) may run another node's split meanwhile (with few cores that rarely happens,
        // so the test above pins it down).
        let tris = crate::scenes::generated_scene(2 * PARALLEL_SWEEP_MIN + 8_000);
        let serial = KdTree::build(&tris, &BuildOptions { parallel: false, ..Default::default() });
        let pool = rayon::ThreadPoolBuilder::new().num_threads(16).build().unwrap();
        for _ in 0..4 {
            let tree = pool.install(|| KdTree::build(&tris, &BuildOptions::default()));
            assert!(tree == serial);
        }
    }
}
