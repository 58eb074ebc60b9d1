//! A kd-tree over 3D points for nearest-neighbour and radius queries (light-tree building
//! in lightcuts, photon gathering).

use std::collections::BinaryHeap;

use glam::Vec3;

/// Ranges of at most this many points are scanned rather than split.
const LEAF_SIZE: usize = 8;

/// Ranges of at least this many points build their two halves in parallel.
const PARALLEL_MIN: usize = 8192;

#[derive(Clone, Copy, Debug, PartialEq)]
struct Item {
    p: Vec3,
    id: u32,
}

/// A balanced kd-tree over points, stored implicitly in one array: each range of more than a
/// few points is split at its median along its widest axis (`select_nth_unstable`, so the
/// build is O(N log N)), the median point sits in the middle of the range and the two halves
/// on either side; halves are built in parallel with rayon.
///
/// Distances are squared Euclidean distances computed as `(p - q).length_squared()` in
/// `f32`. Points with a NaN or infinite coordinate are skipped (see
/// [`PointKdTree::skipped`]); queries return indices into the slice given to
/// [`PointKdTree::build`]. Ties in distance go to the lower index, so every result is
/// exactly what a brute-force scan with the same rule returns.
///
/// ```
/// use glam::Vec3;
/// use lumbre_kdtree::PointKdTree;
///
/// let pts = [Vec3::ZERO, Vec3::X, Vec3::new(5.0, 0.0, 0.0), Vec3::X];
/// let tree = PointKdTree::build(&pts);
/// assert_eq!(tree.nearest(Vec3::new(0.9, 0.0, 0.0)).map(|(i, _)| i), Some(1));
/// assert_eq!(tree.k_nearest(Vec3::ZERO, 3).iter().map(|&(i, _)| i).collect::<Vec<_>>(), [0, 1, 3]);
/// assert_eq!(tree.within_radius(Vec3::X, 1.0), [0, 1, 3]);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct PointKdTree {
    items: Vec<Item>,
    /// Split axis of the range whose median sits at each position (unused elsewhere).
    axes: Vec<u8>,
    skipped: usize,
}

impl PointKdTree {
    /// Builds the tree over the finite points of `points`.
    ///
    /// Panics if there are more than `u32::MAX` points.
    ///
    /// ```
    /// use glam::Vec3;
    /// let tree = lumbre_kdtree::PointKdTree::build(&[Vec3::ONE, Vec3::NAN]);
    /// assert_eq!((tree.len(), tree.skipped()), (1, 1));
    /// ```
    pub fn build(points: &[Vec3]) -> PointKdTree {
        assert!(points.len() <= u32::MAX as usize, "a point kd-tree holds at most 2^32 - 1 points");
        let mut items: Vec<Item> =
            points.iter().enumerate().filter(|(_, p)| p.is_finite()).map(|(i, &p)| Item { p, id: i as u32 }).collect();
        let skipped = points.len() - items.len();
        let mut axes = vec![0u8; items.len()];
        build_range(&mut items, &mut axes);
        PointKdTree { items, axes, skipped }
    }

    /// Number of points in the tree.
    ///
    /// ```
    /// assert_eq!(lumbre_kdtree::PointKdTree::build(&[glam::Vec3::ZERO; 3]).len(), 3);
    /// ```
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether the tree holds no point.
    ///
    /// ```
    /// assert!(lumbre_kdtree::PointKdTree::build(&[]).is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// How many input points were skipped for a NaN or infinite coordinate.
    ///
    /// ```
    /// use glam::Vec3;
    /// let tree = lumbre_kdtree::PointKdTree::build(&[Vec3::new(f32::INFINITY, 0.0, 0.0), Vec3::ZERO]);
    /// assert_eq!(tree.skipped(), 1);
    /// ```
    pub fn skipped(&self) -> usize {
        self.skipped
    }

    /// The nearest point to `q`: `(index, squared distance)`, the lowest index among points
    /// at the same distance. `None` if the tree is empty or `q` is not finite.
    ///
    /// ```
    /// use glam::Vec3;
    /// let tree = lumbre_kdtree::PointKdTree::build(&[Vec3::X, Vec3::Y, -Vec3::X]);
    /// assert_eq!(tree.nearest(Vec3::ZERO), Some((0, 1.0))); // all at distance 1: lowest index
    /// assert_eq!(tree.nearest(Vec3::new(0.0, 3.0, 0.0)), Some((1, 4.0)));
    /// ```
    pub fn nearest(&self, q: Vec3) -> Option<(u32, f32)> {
        if self.items.is_empty() || !q.is_finite() {
            return None;
        }
        let mut best = (f32::INFINITY, u32::MAX);
        self.nearest_in(0, self.items.len(), q, &mut best);
        Some((best.1, best.0))
    }

    /// The `k` nearest points to `q` as `(index, squared distance)`, sorted by distance and
    /// then index; all points if `k` exceeds [`len`](PointKdTree::len). Empty if `q` is not
    /// finite.
    ///
    /// ```
    /// use glam::Vec3;
    /// let tree = lumbre_kdtree::PointKdTree::build(&[Vec3::X * 3.0, Vec3::X, Vec3::X * 2.0]);
    /// assert_eq!(tree.k_nearest(Vec3::ZERO, 2), [(1, 1.0), (2, 4.0)]);
    /// assert_eq!(tree.k_nearest(Vec3::ZERO, 10).len(), 3);
    /// ```
    pub fn k_nearest(&self, q: Vec3, k: usize) -> Vec<(u32, f32)> {
        if k == 0 || self.items.is_empty() || !q.is_finite() {
            return Vec::new();
        }
        let mut heap = BinaryHeap::with_capacity(k.min(self.items.len()) + 1);
        self.k_nearest_in(0, self.items.len(), q, k, &mut heap);
        let mut out: Vec<(u32, f32)> =
            heap.into_iter().map(|key| (key as u32, f32::from_bits((key >> 32) as u32))).collect();
        out.sort_unstable_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
        out
    }

    /// Indices of all points within distance `r` of `q` (squared distance `<= r * r`,
    /// inclusive), in increasing order. Empty if `r` is negative or NaN or `q` is not finite.
    ///
    /// ```
    /// use glam::Vec3;
    /// let tree = lumbre_kdtree::PointKdTree::build(&[Vec3::X * 2.0, Vec3::ZERO, Vec3::X]);
    /// assert_eq!(tree.within_radius(Vec3::ZERO, 1.0), [1, 2]); // the point at distance 1 counts
    /// assert!(tree.within_radius(Vec3::ZERO, -1.0).is_empty());
    /// ```
    pub fn within_radius(&self, q: Vec3, r: f32) -> Vec<u32> {
        let mut out = Vec::new();
        if r.is_nan() || r < 0.0 || !q.is_finite() {
            return out;
        }
        self.within_in(0, self.items.len(), q, r * r, &mut out);
        out.sort_unstable();
        out
    }

    /// The median of range `lo..hi` (only for ranges longer than a leaf).
    #[inline]
    fn median(&self, lo: usize, hi: usize) -> (usize, usize, f32) {
        let m = lo + (hi - lo) / 2;
        let axis = self.axes[m] as usize;
        (m, axis, self.items[m].p[axis])
    }

    fn nearest_in(&self, lo: usize, hi: usize, q: Vec3, best: &mut (f32, u32)) {
        let mut consider = |item: &Item| {
            let d2 = (item.p - q).length_squared();
            if d2 < best.0 || (d2 == best.0 && item.id < best.1) {
                *best = (d2, item.id);
            }
        };
        if hi - lo <= LEAF_SIZE {
            self.items[lo..hi].iter().for_each(consider);
            return;
        }
        let (m, axis, split) = self.median(lo, hi);
        consider(&self.items[m]);
        let diff = q[axis] - split;
        let (near, far) = if diff <= 0.0 { ((lo, m), (m + 1, hi)) } else { ((m + 1, hi), (lo, m)) };
        self.nearest_in(near.0, near.1, q, best);
        // `diff^2` never exceeds the rounded squared distance of a point beyond the plane
        // (rounding is monotonic), so the pruning is exact; `<=` keeps ties for the index rule.
        if diff * diff <= best.0 {
            self.nearest_in(far.0, far.1, q, best);
        }
    }

    fn k_nearest_in(&self, lo: usize, hi: usize, q: Vec3, k: usize, heap: &mut BinaryHeap<u64>) {
        // Keys order by (squared distance, index): non-negative f32 bits order like the values.
        let mut consider = |item: &Item| {
            let key = ((item.p - q).length_squared().to_bits() as u64) << 32 | item.id as u64;
            if heap.len() < k {
                heap.push(key);
            } else if key < *heap.peek().unwrap() {
                heap.pop();
                heap.push(key);
            }
        };
        if hi - lo <= LEAF_SIZE {
            self.items[lo..hi].iter().for_each(consider);
            return;
        }
        let (m, axis, split) = self.median(lo, hi);
        consider(&self.items[m]);
        let diff = q[axis] - split;
        let (near, far) = if diff <= 0.0 { ((lo, m), (m + 1, hi)) } else { ((m + 1, hi), (lo, m)) };
        self.k_nearest_in(near.0, near.1, q, k, heap);
        let worst = f32::from_bits((heap.peek().unwrap() >> 32) as u32);
        if heap.len() < k || diff * diff <= worst {
            self.k_nearest_in(far.0, far.1, q, k, heap);
        }
    }

    fn within_in(&self, lo: usize, hi: usize, q: Vec3, r2: f32, out: &mut Vec<u32>) {
        let mut consider = |item: &Item| {
            if (item.p - q).length_squared() <= r2 {
                out.push(item.id);
            }
        };
        if hi - lo <= LEAF_SIZE {
            self.items[lo..hi].iter().for_each(consider);
            return;
        }
        let (m, axis, split) = self.median(lo, hi);
        consider(&self.items[m]);
        let diff = q[axis] - split;
        let (near, far) = if diff <= 0.0 { ((lo, m), (m + 1, hi)) } else { ((m + 1, hi), (lo, m)) };
        self.within_in(near.0, near.1, q, r2, out);
        if diff * diff <= r2 {
            self.within_in(far.0, far.1, q, r2, out);
        }
    }
}

/// Splits `items` at the median of its widest axis and recurses into both halves.
fn build_range(items: &mut [Item], axes: &mut [u8]) {
    let len = items.len();
    if len <= LEAF_SIZE {
        return;
    }
    let (lo, hi) = items.iter().fold((Vec3::INFINITY, Vec3::NEG_INFINITY), |(lo, hi), it| (lo.min(it.p), hi.max(it.p)));
    let size = hi - lo;
    let axis = if size.x >= size.y && size.x >= size.z {
        0
    } else if size.y >= size.z {
        1
    } else {
        2
    };
    let m = len / 2;
    items.select_nth_unstable_by(m, |a, b| a.p[axis].total_cmp(&b.p[axis]).then(a.id.cmp(&b.id)));
    axes[m] = axis as u8;
    let (left, rest) = items.split_at_mut(m);
    let (left_axes, rest_axes) = axes.split_at_mut(m);
    let (right, right_axes) = (&mut rest[1..], &mut rest_axes[1..]);
    if len >= PARALLEL_MIN {
        rayon::join(|| build_range(left, left_axes), || build_range(right, right_axes));
    } else {
        build_range(left, left_axes);
        build_range(right, right_axes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn halves_respect_the_median_split() {
        let pts: Vec<Vec3> =
            (0..1000).map(|i| Vec3::new((i * 37 % 101) as f32, (i % 7) as f32, (i / 3) as f32)).collect();
        let tree = PointKdTree::build(&pts);
        fn check(t: &PointKdTree, lo: usize, hi: usize) {
            if hi - lo <= LEAF_SIZE {
                return;
            }
            let (m, axis, split) = t.median(lo, hi);
            assert!(t.items[lo..m].iter().all(|it| it.p[axis] <= split));
            assert!(t.items[m + 1..hi].iter().all(|it| it.p[axis] >= split));
            check(t, lo, m);
            check(t, m + 1, hi);
        }
        check(&tree, 0, tree.len());
        let mut ids: Vec<u32> = tree.items.iter().map(|it| it.id).collect();
        ids.sort_unstable();
        assert_eq!(ids, (0..1000).collect::<Vec<u32>>());
    }

    #[test]
    fn queries_on_empty_trees_and_bad_arguments() {
        let empty = PointKdTree::build(&[Vec3::NAN]);
        assert!(empty.is_empty());
        assert_eq!(empty.nearest(Vec3::ZERO), None);
        assert!(empty.k_nearest(Vec3::ZERO, 3).is_empty());
        assert!(empty.within_radius(Vec3::ZERO, 1.0).is_empty());
        let one = PointKdTree::build(&[Vec3::ONE]);
        assert_eq!(one.nearest(Vec3::NAN), None);
        assert!(one.k_nearest(Vec3::ONE, 0).is_empty());
        assert!(one.within_radius(Vec3::ONE, f32::NAN).is_empty());
        assert_eq!(one.within_radius(Vec3::ONE, 0.0), [0]);
        assert_eq!(one.within_radius(Vec3::ZERO, f32::INFINITY), [0]);
    }
}
