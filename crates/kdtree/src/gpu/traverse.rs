//! Kd-tree ray queries on the GPU (`kdtree/traverse_query.wgsl`, built on
//! `kdtree/traverse.wgsl`, a line-by-line port of `traverse.rs`), the twin of
//! [`KdTree::closest_hits`] and [`KdTree::any_hits`], and its [`Compute`] impl.

use glam::Vec3;
use lumbre_gpu::{Agree, Buffer, Compute, Error, Gpu, Progress, Recorder, Report, Result, Tolerance, wgpu};

use crate::aabb::Aabb;
use crate::node::KdTree;
use crate::traverse::{Hits, QueryBatch, QueryOptions, RayQuery, Traversal};
use crate::triangle::{Hit, Ray, TriangleTest};

/// A kd-tree and its triangles on the GPU, in the layout `kdtree/traverse.wgsl` declares
/// (bindings 1, 2, 3 of any kernel that imports it).
#[derive(Clone, Debug)]
pub struct GpuKdTree {
    /// [`crate::KdNode`]s as `vec2<u32>`.
    pub nodes: Buffer<[u32; 2]>,
    /// Leaf triangle indices.
    pub prims: Buffer<u32>,
    /// Three `vec4<f32>` vertices per triangle, in the caller's order.
    pub tris: Buffer<[f32; 4]>,
    /// The tree's box.
    pub bounds: Aabb,
}

impl GpuKdTree {
    /// Uploads `tree` and the triangles it was built from.
    ///
    /// ```no_run
    /// use lumbre_kdtree::{scenes, BuildOptions, GpuKdTree, KdTree};
    /// let tris = scenes::generated_scene(1000);
    /// let tree = KdTree::build(&tris, &BuildOptions::default());
    /// let on_gpu = GpuKdTree::upload(&lumbre_gpu::Gpu::new()?, &tree, &tris)?;
    /// # let _ = on_gpu;
    /// # Ok::<(), lumbre_gpu::Error>(())
    /// ```
    pub fn upload(gpu: &Gpu, tree: &KdTree, tris: &[[Vec3; 3]]) -> Result<Self> {
        let nodes: Vec<[u32; 2]> = tree.nodes.iter().map(|n| [n.a, n.b]).collect();
        Ok(GpuKdTree {
            nodes: gpu.upload(&nodes)?,
            prims: gpu.upload(&tree.prim_indices)?,
            tris: vertex_buffer(gpu, tris)?,
            bounds: tree.bounds,
        })
    }

    /// The three bindings, in order (1: nodes, 2: prims, 3: triangles).
    pub fn bindings(&self) -> [wgpu::BindingResource<'_>; 3] {
        [self.nodes.binding(), self.prims.binding(), self.tris.binding()]
    }

    /// Flags of `kdtree/traverse_query.wgsl` for these options.
    pub fn flags(opts: &QueryOptions, any_hit: bool) -> u32 {
        (opts.traversal == Traversal::Restart) as u32
            | (((opts.test == TriangleTest::Watertight) as u32) << 1)
            | ((any_hit as u32) << 2)
    }
}

/// Three `vec4<f32>` vertices a triangle (binding 3 of `kdtree/ray.wgsl`).
pub(super) fn vertex_buffer(gpu: &Gpu, tris: &[[Vec3; 3]]) -> Result<Buffer<[f32; 4]>> {
    let verts: Vec<[f32; 4]> = tris.iter().flat_map(|t| t.map(|v| [v.x, v.y, v.z, 0.0])).collect();
    if verts.is_empty() { gpu.zeroed(3) } else { gpu.upload(&verts) }
}

/// Two `vec4<f32>` a ray: origin and `t_min`, direction and `t_max`.
pub(super) fn ray_buffer(gpu: &Gpu, rays: &[Ray], t_min: f32, t_max: f32) -> Result<Buffer<[f32; 4]>> {
    let rays: Vec<[f32; 4]> = rays
        .iter()
        .flat_map(|r| [[r.origin.x, r.origin.y, r.origin.z, t_min], [r.dir.x, r.dir.y, r.dir.z, t_max]])
        .collect();
    gpu.upload(&rays)
}

/// The hits of `kdtree/traverse_query.wgsl`; for any-hit queries only `is_some()` matters.
pub(super) fn download_hits(gpu: &Gpu, hits: &Buffer<[u32; 4]>, any_hit: bool) -> Result<Hits> {
    let raw = gpu.download(hits)?;
    Ok(Hits(
        raw.iter()
            .map(|h| {
                (h[1] != u32::MAX).then(|| {
                    if any_hit {
                        Hit { t: 0.0, tri: 0, u: 0.0, v: 0.0 }
                    } else {
                        Hit { t: f32::from_bits(h[0]), tri: h[1], u: f32::from_bits(h[2]), v: f32::from_bits(h[3]) }
                    }
                })
            })
            .collect(),
    ))
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
pub(super) struct Params {
    pub bmin: [f32; 3],
    pub n: u32,
    pub bmax: [f32; 3],
    pub flags: u32,
}
const _: () = assert!(
    size_of::<Params>() == lumbre_shaders::kdtree::TRAVERSE_QUERY_DEFAULT_PARAMS_SIZE
        && size_of::<Params>() == lumbre_shaders::kdtree::TRAVERSE_QUERY_TINY_PARAMS_SIZE
        && size_of::<Params>() == lumbre_shaders::kdtree::TRAVERSE_QUERY_BVH_PARAMS_SIZE
);

impl RayQuery {
    /// Records the queries of `rays` (two vec4 per ray: origin and `t_min`, direction and
    /// `t_max`) against an uploaded tree into `hits` (one `vec4<u32>` per ray: `t` bits,
    /// triangle or `u32::MAX`, `u` bits, `v` bits).
    pub fn record_into(
        &self,
        rec: &mut Recorder,
        tree: &GpuKdTree,
        rays: &Buffer<[f32; 4]>,
        hits: &Buffer<[u32; 4]>,
    ) -> Result<()> {
        let gpu = rec.gpu().clone();
        let n = rays.len() / 2;
        if hits.len() != n {
            return Err(Error::Input(format!("{n} rays but room for {} hits", hits.len())));
        }
        let params = gpu.uniform(&Params {
            bmin: tree.bounds.min.to_array(),
            n: n as u32,
            bmax: tree.bounds.max.to_array(),
            flags: GpuKdTree::flags(&self.opts, self.any_hit),
        })?;
        let shader = if self.tiny_stack {
            lumbre_shaders::kdtree::TRAVERSE_QUERY_TINY
        } else {
            lumbre_shaders::kdtree::TRAVERSE_QUERY_DEFAULT
        };
        let kernel = gpu.kernel(&shader, "query")?;
        let [a, b, c] = tree.bindings();
        let res = [params.as_entire_binding(), a, b, c, rays.binding(), hits.binding()];
        rec.dispatch("kd query", &kernel, &res, (n as u64).div_ceil(64))
    }
}

/// Ray buffers: the tree, the rays (origin | t_min, dir | t_max).
#[derive(Clone, Debug)]
pub struct GpuQueryBatch {
    /// The tree.
    pub tree: GpuKdTree,
    /// Two vec4 per ray.
    pub rays: Buffer<[f32; 4]>,
}

impl Compute for RayQuery {
    type Input = QueryBatch;
    type Output = Hits;
    type GpuInput = GpuQueryBatch;
    type GpuOutput = Buffer<[u32; 4]>;

    fn name(&self) -> &'static str {
        if self.any_hit { "kd-tree any hit" } else { "kd-tree closest hit" }
    }

    fn cpu_reported(&self, b: &QueryBatch, _: &dyn Progress) -> Result<(Hits, Report)> {
        Report::timed(self.name(), || self.cpu(b))
    }

    fn upload(&self, gpu: &Gpu, b: &QueryBatch) -> Result<GpuQueryBatch> {
        let rays = ray_buffer(gpu, &b.rays, b.t_min, b.t_max)?;
        Ok(GpuQueryBatch { tree: GpuKdTree::upload(gpu, &b.tree, &b.tris)?, rays })
    }

    fn record(&self, rec: &mut Recorder, b: &GpuQueryBatch) -> Result<Buffer<[u32; 4]>> {
        let hits = rec.gpu().zeroed(b.rays.len() / 2)?;
        self.record_into(rec, &b.tree, &b.rays, &hits)?;
        Ok(hits)
    }

    fn download(&self, gpu: &Gpu, hits: &Buffer<[u32; 4]>) -> Result<Hits> {
        download_hits(gpu, hits, self.any_hit)
    }
}

impl Agree for Hits {
    /// Hits agree when both miss, or both hit with `t` within `tol` (relative) of each
    /// other; the triangle may differ only on such a tie. The GPU's dot products may fuse
    /// multiply-adds where the CPU rounds twice, so a ray that grazes an edge can go either
    /// way in `f32`: up to one ray in a thousand (at least one) may hit on one side and miss
    /// on the other; anything more is a disagreement.
    fn disagreement(&self, gpu: &Self, tol: Tolerance) -> Option<String> {
        if self.0.len() != gpu.0.len() {
            return Some(format!("{} vs {} results", self.0.len(), gpu.0.len()));
        }
        let mut flips = Vec::new();
        for (i, (a, b)) in self.0.iter().zip(&gpu.0).enumerate() {
            match (a, b) {
                (None, None) => {}
                (Some(a), Some(b)) => {
                    if !tol.accepts(a.t as f64, b.t as f64) {
                        return Some(format!(
                            "ray {i}: cpu t {} (tri {}) vs gpu t {} (tri {})",
                            a.t, a.tri, b.t, b.tri
                        ));
                    }
                }
                _ => flips.push(i),
            }
        }
        let allowed = (self.0.len() / 1000).max(1);
        (flips.len() > allowed).then(|| {
            format!(
                "{} rays hit on one side and miss on the other (allowed {allowed}), e.g. {:?}",
                flips.len(),
                &flips[..flips.len().min(5)]
            )
        })
    }
}
