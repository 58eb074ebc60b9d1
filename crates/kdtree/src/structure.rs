//! The structure a scene's rays walk: a kd-tree or a BVH, behind one query API.

use glam::Vec3;

use crate::aabb::Aabb;
use crate::build::BuildOptions;
use crate::bvh::{Bvh, BvhOptions};
use crate::node::KdTree;
use crate::traverse::QueryOptions;
use crate::triangle::{Hit, Ray};

/// Which structure to build, with its options. The default is the BVH: on a GPU its
/// diffuse-bounce rays and path-traced frames run 1.2-2x the kd-tree's on every scene of
/// the scene set (benches/RESULTS.md, "Incoherent rays"); the kd-tree stays selectable.
///
/// ```
/// use lumbre_kdtree::StructureOptions;
/// assert!(matches!(StructureOptions::default(), StructureOptions::Bvh(_)));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum StructureOptions {
    /// An SAH kd-tree ([`KdTree::build`]).
    KdTree(BuildOptions),
    /// A binned-SAH BVH ([`Bvh::build`]).
    Bvh(BvhOptions),
}

impl Default for StructureOptions {
    fn default() -> Self {
        StructureOptions::Bvh(BvhOptions::default())
    }
}

/// A kd-tree or a BVH over triangles, answering the same queries.
///
/// ```
/// use glam::Vec3;
/// use lumbre_kdtree::{scenes, BuildOptions, QueryOptions, Ray, Structure, StructureOptions};
/// let tris = scenes::generated_scene(1000);
/// let ray = Ray::new(Vec3::new(0.1, 0.2, -5.0), Vec3::Z);
/// let kd = Structure::build(&tris, &StructureOptions::KdTree(BuildOptions::default()));
/// let bvh = Structure::build(&tris, &StructureOptions::default());
/// let q = QueryOptions::default();
/// assert_eq!(kd.closest_hit(&tris, &ray, 0.0, f32::INFINITY, &q), bvh.closest_hit(&tris, &ray, 0.0, f32::INFINITY, &q));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub enum Structure {
    /// A kd-tree.
    KdTree(KdTree),
    /// A BVH.
    Bvh(Bvh),
}

impl Structure {
    /// Builds the structure `opts` names over `tris`.
    pub fn build(tris: &[[Vec3; 3]], opts: &StructureOptions) -> Structure {
        match opts {
            StructureOptions::KdTree(o) => Structure::KdTree(KdTree::build(tris, o)),
            StructureOptions::Bvh(o) => Structure::Bvh(Bvh::build(tris, o)),
        }
    }

    /// The box of the triangles it holds.
    pub fn bounds(&self) -> Aabb {
        match self {
            Structure::KdTree(t) => t.bounds,
            Structure::Bvh(b) => b.bounds,
        }
    }

    /// [`KdTree::closest_hit`] or [`Bvh::closest_hit`].
    pub fn closest_hit(
        &self,
        tris: &[[Vec3; 3]],
        ray: &Ray,
        t_min: f32,
        t_max: f32,
        opts: &QueryOptions,
    ) -> Option<Hit> {
        match self {
            Structure::KdTree(t) => t.closest_hit(tris, ray, t_min, t_max, opts),
            Structure::Bvh(b) => b.closest_hit(tris, ray, t_min, t_max, opts),
        }
    }

    /// [`KdTree::any_hit`] or [`Bvh::any_hit`].
    pub fn any_hit(&self, tris: &[[Vec3; 3]], ray: &Ray, t_min: f32, t_max: f32, opts: &QueryOptions) -> bool {
        match self {
            Structure::KdTree(t) => t.any_hit(tris, ray, t_min, t_max, opts),
            Structure::Bvh(b) => b.any_hit(tris, ray, t_min, t_max, opts),
        }
    }
}
