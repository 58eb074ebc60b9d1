//! A bounding volume hierarchy over triangles: a binary tree whose nodes hold both
//! children's boxes (Aila and Laine 2009), built by binned SAH on the CPU and laid out in
//! 64-byte nodes that a GPU reads as four `vec4`s. It answers the same queries as
//! [`KdTree`](crate::KdTree) (closest hit, any hit) with the same triangle tests, for the
//! incoherent rays of path tracing, where a kd-tree's many small cells cost more steps.

mod build;
mod traverse;
mod wide;

use bytemuck::{Pod, Zeroable};

use crate::aabb::Aabb;

pub use build::BvhOptions;

/// One node: the boxes of its two children and, per child, a reference: a node index
/// (`count == 0`) or a leaf, `count` triangles from `prim_indices[first]`. A child whose box
/// is [`Aabb::EMPTY`] is absent (only the root of a tree of one leaf or none has one).
///
/// ```
/// use lumbre_kdtree::BvhNode;
/// assert_eq!(size_of::<BvhNode>(), 64);
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
pub struct BvhNode {
    /// Child a's lowest corner.
    pub a_min: [f32; 3],
    /// Child a: node index, or first leaf triangle.
    pub a_ref: u32,
    /// Child a's highest corner.
    pub a_max: [f32; 3],
    /// Child b: node index, or first leaf triangle.
    pub b_ref: u32,
    /// Child b's lowest corner.
    pub b_min: [f32; 3],
    /// Child a's triangle count; 0 for a node.
    pub a_count: u32,
    /// Child b's highest corner.
    pub b_max: [f32; 3],
    /// Child b's triangle count; 0 for a node.
    pub b_count: u32,
}

impl BvhNode {
    /// Child `i`'s box, reference and count.
    pub fn child(&self, i: usize) -> (Aabb, u32, u32) {
        let b = |lo: [f32; 3], hi: [f32; 3]| Aabb::new(lo.into(), hi.into());
        if i == 0 {
            (b(self.a_min, self.a_max), self.a_ref, self.a_count)
        } else {
            (b(self.b_min, self.b_max), self.b_ref, self.b_count)
        }
    }
}

/// A BVH over triangles: nodes in depth-first order (the root first, a node's first child
/// right after it), leaf triangle indices into the slice it was built from, and the box of
/// every valid triangle. Invalid triangles ([`is_valid_triangle`](crate::is_valid_triangle))
/// are left out, as the kd-tree leaves them out.
///
/// ```
/// use glam::Vec3;
/// use lumbre_kdtree::{brute_force_closest, scenes, Bvh, BvhOptions, QueryOptions, Ray};
///
/// let tris = scenes::generated_scene(10_000);
/// let bvh = Bvh::build(&tris, &BvhOptions::default());
/// let ray = Ray::new(Vec3::new(0.1, 0.2, -5.0), Vec3::Z);
/// let opts = QueryOptions::default();
/// let hit = bvh.closest_hit(&tris, &ray, 0.0, f32::INFINITY, &opts).unwrap();
/// assert_eq!(Some(hit), brute_force_closest(&tris, &ray, 0.0, f32::INFINITY, opts.test));
/// assert!(bvh.any_hit(&tris, &ray, 0.0, hit.t * 1.001, &opts));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Bvh {
    /// The nodes; node 0 is the root (there is always one).
    pub nodes: Vec<BvhNode>,
    /// Leaf triangle indices, each leaf's run adjacent; a long thin triangle may be listed
    /// in several leaves (see [`Bvh::build`]).
    pub prim_indices: Vec<u32>,
    /// The box of the valid triangles.
    pub bounds: Aabb,
    /// The deepest node's depth (the root's is 0), which bounds the traversal's stack.
    pub depth: u32,
    /// The same tree eight children a node, which the CPU's queries walk.
    pub(crate) wide: Vec<wide::WideNode>,
    /// The leaves' triangles in blocks of four, for the CPU's watertight test.
    pub(crate) blocks: Vec<wide::TriBlock>,
    /// The most entries the CPU walk's stack holds on this tree.
    pub(crate) stack_need: usize,
}

/// Deepest node a build makes: below it a node keeps its triangles as one leaf. The CPU's
/// and the GPU's traversal stacks hold this many entries.
pub const BVH_MAX_DEPTH: u32 = 64;
