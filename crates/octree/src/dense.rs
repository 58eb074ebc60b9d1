//! The volumetric thesis's build: one counter per possible node of every level, in the
//! key -> array index order (`index = sum(8^i, i < level) + value`), incremented with
//! atomics by every point for each of its ancestors. Memory grows with 8^depth, which is
//! why the sparse build replaced it; kept to compare against.

use std::sync::atomic::{AtomicU32, Ordering};

use lumbre_morton::{NodeKey32, level_offset};
use rayon::prelude::*;

use crate::build::{OctreeError, finite_points, leaf_code, quantizer};
use crate::node::Root;

/// Deepest level the dense counters are built for (8^8 = 16.7M leaf counters, 76 MB).
pub const MAX_DENSE_DEPTH: u32 = 8;

/// Counts of points per node, for every possible node of levels `0..=depth`, indexed by
/// [`NodeKey32::index`]. Non-finite points are skipped; points outside `root` are an error.
///
/// ```
/// use lumbre_octree::{Root, dense_counts};
/// let root = Root { min: [0.0; 3], size: 1.0 };
/// let counts = dense_counts(&[[0.1, 0.1, 0.1], [0.9, 0.9, 0.9]], root, 1).unwrap();
/// assert_eq!(counts.len(), 9);
/// assert_eq!((counts[0], counts[1], counts[8]), (2, 1, 1));
/// ```
pub fn dense_counts(points: &[[f32; 3]], root: Root, depth: u32) -> Result<Vec<u32>, OctreeError> {
    if depth > MAX_DENSE_DEPTH {
        return Err(OctreeError::Depth(depth));
    }
    let (keep, _) = finite_points(points);
    if let Some(&i) = keep.iter().find(|&&i| !root.contains(points[i as usize])) {
        return Err(OctreeError::Outside { index: i as usize, point: points[i as usize] });
    }
    let q = quantizer(root, depth);
    let counters: Vec<AtomicU32> = (0..level_offset(depth + 1)).map(|_| AtomicU32::new(0)).collect();
    keep.par_iter().for_each(|&i| {
        let leaf = NodeKey32((1 << (3 * depth)) | leaf_code(&q, points[i as usize]) as u32);
        for l in 0..=depth {
            if let Some(a) = leaf.ancestor(l) {
                counters[a.index() as usize].fetch_add(1, Ordering::Relaxed);
            }
        }
    });
    Ok(counters.into_iter().map(AtomicU32::into_inner).collect())
}

/// Bytes the dense counters of all levels up to `depth` take (4 per possible node), the
/// figure behind the thesis's "18 MB at depth 7, 146 MB at depth 8".
///
/// ```
/// assert_eq!(lumbre_octree::dense_bytes(1), 4 * 9);
/// ```
pub fn dense_bytes(depth: u32) -> u64 {
    4 * level_offset(depth + 1)
}

/// The thesis's dense counters on the GPU: leaf codes from the Morton kernel, then one
/// atomic increment per point and level. Equals [`dense_counts`].
///
/// ```no_run
/// use lumbre_gpu::{Compute, Gpu};
/// use lumbre_octree::{Attrs, DenseCounts, Points, Root};
/// let cloud = Points { positions: vec![[0.0; 3], [1.0; 3]], attrs: vec![Attrs::default(); 2] };
/// let counts = DenseCounts { depth: 3, root: Root { min: [0.0; 3], size: 1.0 } }.gpu(&Gpu::new()?, &cloud)?;
/// assert_eq!(counts[0], 2);
/// # Ok::<(), lumbre_gpu::Error>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub struct DenseCounts {
    /// Depth (at most [`MAX_DENSE_DEPTH`]).
    pub depth: u32,
    /// The root cube.
    pub root: Root,
}

impl DenseCounts {
    /// The CPU path: [`dense_counts`].
    ///
    /// ```
    /// use lumbre_octree::{Attrs, DenseCounts, Points, Root};
    /// let cloud = Points { positions: vec![[0.0; 3], [1.0; 3]], attrs: vec![Attrs::default(); 2] };
    /// let counts = DenseCounts { depth: 3, root: Root { min: [0.0; 3], size: 1.0 } }.cpu(&cloud)?;
    /// assert_eq!(counts[0], 2);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn cpu(&self, cloud: &crate::build::Points) -> lumbre_gpu::Result<Vec<u32>> {
        dense_counts(&cloud.positions, self.root, self.depth).map_err(crate::build::err)
    }
}
