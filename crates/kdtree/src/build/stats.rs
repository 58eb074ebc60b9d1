//! Figures about one build, its work and its memory, counted while it runs.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};

/// Figures about one run of [`KdTree::build_with_stats`](crate::KdTree::build_with_stats):
/// the work and the memory of the build, which the tree's own figures
/// ([`KdStats`](crate::KdStats)) do not show. The same on any number of threads.
///
/// ```
/// use lumbre_kdtree::{scenes::generated_scene, BuildOptions, KdTree};
///
/// let tris = generated_scene(5000);
/// let (tree, b) = KdTree::build_with_stats(&tris, &BuildOptions::default());
/// assert_eq!(tree, KdTree::build(&tris, &BuildOptions::default()));
/// assert!(b.swept > 0 && b.events >= 6 * 5000 - 1000); // the root alone holds about 6 per triangle
/// assert!(b.peak_events < 3 * 6 * 5000, "well under three times the root's lists");
/// assert_eq!(b.depth_capped, 0, "the SAH stops well before the depth cap");
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BuildStats {
    /// Nodes swept for a split plane: the interior nodes, and the leaves for which the SAH
    /// found no split worth making.
    pub swept: usize,
    /// Events in the sorted lists of the swept nodes, summed: the build's work (sweeping a
    /// node, classifying its triangles and dividing its lists take time linear in their
    /// length).
    pub events: u64,
    /// The most events held at once by a depth-first build on one thread: the lists of the
    /// node being split and of its two children, and those of the above children waiting on
    /// the path from the root. A parallel build holds up to this many per thread at work.
    pub peak_events: usize,
    /// Triangles clipped into both children, summed over the splits: the triangle
    /// references the splits added (the tree holds one per valid triangle plus these).
    pub clipped: u64,
    /// Nodes that became leaves at the depth cap with more than
    /// [`max_leaf_size`](crate::BuildOptions::max_leaf_size) triangles.
    pub depth_capped: usize,
    /// Nodes whose cheapest split the reference budget ruled out (see
    /// [`reference_budget`](crate::BuildOptions::reference_budget)): they split where the
    /// budget allows, or became leaves.
    pub budget_limited: usize,
}

/// The counters behind [`BuildStats`], shared by the threads of one build.
#[derive(Default)]
pub(super) struct Counters {
    swept: AtomicUsize,
    events: AtomicU64,
    peak_events: AtomicUsize,
    clipped: AtomicU64,
    depth_capped: AtomicUsize,
    budget_limited: AtomicUsize,
}

impl Counters {
    /// A node with `events` events swept; `held` events held meanwhile (see
    /// [`BuildStats::peak_events`]).
    pub(super) fn swept(&self, events: usize, held: usize) {
        self.swept.fetch_add(1, Relaxed);
        self.events.fetch_add(events as u64, Relaxed);
        self.peak_events.fetch_max(held, Relaxed);
    }

    /// A split that clipped `both` triangles into both children.
    pub(super) fn clipped(&self, both: usize) {
        self.clipped.fetch_add(both as u64, Relaxed);
    }

    /// A node made a leaf by the depth cap.
    pub(super) fn depth_capped(&self) {
        self.depth_capped.fetch_add(1, Relaxed);
    }

    /// A node whose cheapest split the reference budget ruled out.
    pub(super) fn budget_limited(&self) {
        self.budget_limited.fetch_add(1, Relaxed);
    }

    pub(super) fn get(&self) -> BuildStats {
        BuildStats {
            swept: self.swept.load(Relaxed),
            events: self.events.load(Relaxed),
            peak_events: self.peak_events.load(Relaxed),
            clipped: self.clipped.load(Relaxed),
            depth_capped: self.depth_capped.load(Relaxed),
            budget_limited: self.budget_limited.load(Relaxed),
        }
    }
}
