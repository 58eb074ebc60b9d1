//! Kd-trees for [Lumbre](https://github.com/lumbre-rs/lumbre): an SAH kd-tree and a BVH over
//! triangles for ray casting, and a kd-tree over points for nearest-neighbour queries.
//!
//! The triangle tree is the CPU side of the kd-tree ray tracer of the CINVESTAV thesis: an
//! SAH tree built on the CPU, flattened into a static node array, walked by the stackless
//! KD-restart traversal and tested with Möller–Trumbore. This crate builds it properly
//! (Wald and Havran's O(N log N) sweep with perfect splits, empty-space bonus and automatic
//! termination), lays it out in 8-byte nodes and one index array that a GPU reads as is
//! ([`KdNode`], [`KdTree`]), and walks it on the CPU either way ([`Traversal`]) with either
//! triangle test ([`TriangleTest`]). The traversal code is written to be ported line by
//! line to WGSL; the brute-force functions are the reference every query is tested against.
//!
//! ```
//! use glam::Vec3;
//! use lumbre_kdtree::{brute_force_closest, scenes, BuildOptions, KdTree, QueryOptions, Ray};
//!
//! let tris = scenes::generated_scene(10_000); // any &[[Vec3; 3]]
//! let tree = KdTree::build(&tris, &BuildOptions::default());
//! let ray = Ray::new(Vec3::new(0.1, 0.2, -5.0), Vec3::Z);
//! let opts = QueryOptions::default();
//! let hit = tree.closest_hit(&tris, &ray, 0.0, f32::INFINITY, &opts).unwrap();
//! assert_eq!(Some(hit), brute_force_closest(&tris, &ray, 0.0, f32::INFINITY, opts.test));
//! assert!(tree.any_hit(&tris, &ray, 0.0, hit.t * 1.001, &opts)); // occluded before the hit + 0.1%
//!
//! // The arrays a GPU traversal binds.
//! let nodes: &[u8] = bytemuck::cast_slice(&tree.nodes);
//! let prims: &[u8] = bytemuck::cast_slice(&tree.prim_indices);
//! assert_eq!(nodes.len() + prims.len(), tree.stats().bytes);
//! ```
//!
//! # BVH
//!
//! For incoherent rays (path-traced bounces, photons, form factors, VPLs) the crate also
//! builds a bounding volume hierarchy ([`Bvh`]: binned SAH, both children's boxes in one
//! 64-byte node as in Aila and Laine 2009, walked with a stack of node indices) that answers
//! the same queries with the same triangle tests, on the CPU and in `kdtree/bvh.wgsl`.
//! [`Structure`] holds either; [`StructureOptions::default`] is the BVH, which the Lumbre
//! renderers walk unless told otherwise: on an H100 its diffuse bounces and path-traced
//! frames run 1.2-2x the kd-tree's on every scene of the scene set.
//!
//! ```
//! use glam::Vec3;
//! use lumbre_kdtree::{scenes, BuildOptions, QueryOptions, Ray, Structure, StructureOptions};
//!
//! let tris = scenes::generated_scene(10_000);
//! let bvh = Structure::build(&tris, &StructureOptions::default());
//! let kd = Structure::build(&tris, &StructureOptions::KdTree(BuildOptions::default()));
//! let ray = Ray::new(Vec3::new(0.1, 0.2, -5.0), Vec3::Z);
//! let q = QueryOptions::default();
//! assert_eq!(bvh.closest_hit(&tris, &ray, 0.0, f32::INFINITY, &q), kd.closest_hit(&tris, &ray, 0.0, f32::INFINITY, &q));
//! ```
//!
//! # Point kd-tree
//!
//! For nearest-neighbour queries (light trees in lightcuts, photon gathering):
//!
//! ```
//! use glam::Vec3;
//! use lumbre_kdtree::PointKdTree;
//!
//! let points: Vec<Vec3> = (0..100).map(|i| Vec3::new(i as f32, 0.0, 0.0)).collect();
//! let tree = PointKdTree::build(&points);
//! // Points 41 and 42 tie at squared distance 0.25 + 1: the lower index wins.
//! assert_eq!(tree.nearest(Vec3::new(41.5, 1.0, 0.0)), Some((41, 1.25)));
//! assert_eq!(tree.within_radius(Vec3::new(10.0, 0.0, 0.0), 1.5), [9, 10, 11]);
//! ```
//!
//! # Robustness
//!
//! Queries use the same `f32` triangle test as the brute-force functions, so they can only
//! differ where the tree does not test a triangle that brute force hits. The build lists
//! every triangle in every leaf it comes within a tiny margin of (2^-20 of the scene's
//! size) and keeps split planes twice that margin from the triangle boundaries that define
//! them, so rays through vertices and edges, along split planes or starting on them find
//! their triangle. What remains are hits too close to call in `f32`: a ray grazing a
//! triangle's plane, whose computed `t` is then off where the hit really lies (brute force
//! accepts the `t`, a tree may look elsewhere), or a ray that misses a vertex or an edge by
//! a few ulps after travelling more than about ten scene sizes. The crate's tests aim
//! thousands of rays at exactly such places and accept a difference only where an `f64`
//! recomputation shows the hit to be one of these; they find at most a few per family of
//! a few hundred grazing rays, and none elsewhere.

#![cfg_attr(docsrs, feature(doc_cfg))]

mod aabb;
mod build;
mod bvh;
#[cfg(feature = "gpu")]
mod gpu;
mod node;
mod points;
pub mod scenes;
mod structure;
mod traverse;
mod triangle;

pub use aabb::Aabb;
pub use build::{BuildOptions, BuildStats};
pub use bvh::{BVH_MAX_DEPTH, Bvh, BvhNode, BvhOptions};
#[cfg(feature = "gpu")]
pub use gpu::{BvhBatch, BvhQuery, GpuBvh, GpuKdTree, GpuQueryBatch, GpuStructure};
pub use node::{KdNode, KdStats, KdTree, MAX_DEPTH};
pub use points::PointKdTree;
pub use structure::{Structure, StructureOptions};
pub use traverse::{Hits, QueryBatch, QueryOptions, RayQuery, Traversal};
pub use triangle::{Hit, Ray, TriangleTest, brute_force_any, brute_force_closest, is_valid_triangle};
