//! How the lightcuts kernels walk the scene on the GPU (`lumbre_raytrace::GpuScene`, bound
//! as its scene block or its kd-tree).

use lumbre_kdtree::{QueryOptions, Traversal, TriangleTest};

/// Bits 0 and 1 of the kernels' `flags`: restart traversal, watertight test.
pub(crate) fn query_flags(q: &QueryOptions) -> u32 {
    (q.traversal == Traversal::Restart) as u32 | (((q.test == TriangleTest::Watertight) as u32) << 1)
}
