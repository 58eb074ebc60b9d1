//! BVH ray queries on the GPU (`kdtree/traverse_query.wgsl`, variant `bvh`, built on
//! `kdtree/bvh.wgsl`, which walks the binary nodes that `bvh/traverse.rs` walks eight-wide),
//! the twin of [`Bvh::closest_hits`] and [`Bvh::any_hits`], and its [`Compute`] impl.

use glam::Vec3;
use lumbre_gpu::{Buffer, Compute, Error, Gpu, Progress, Recorder, Report, Result, wgpu};

use super::traverse::{Params, download_hits, ray_buffer, vertex_buffer};
use crate::aabb::Aabb;
use crate::bvh::{Bvh, BvhNode};
use crate::traverse::{Hits, QueryOptions};
use crate::triangle::{Ray, TriangleTest};

/// A BVH and its triangles on the GPU, in the layout `kdtree/bvh.wgsl` declares (bindings
/// 1, 2, 3 of any kernel that imports it, as [`GpuKdTree`](crate::GpuKdTree)'s).
#[derive(Clone, Debug)]
pub struct GpuBvh {
    /// The nodes, four `vec4<f32>` each.
    pub nodes: Buffer<BvhNode>,
    /// The leaves' triangles in leaf order (`Bvh::prim_indices`), three `vec4<f32>` each, the
    /// first's `w` the triangle's index as bits.
    pub leaf_tris: Buffer<[f32; 4]>,
    /// Three `vec4<f32>` vertices per triangle, in the caller's order.
    pub tris: Buffer<[f32; 4]>,
    /// The box of the valid triangles.
    pub bounds: Aabb,
}

impl GpuBvh {
    /// Uploads `bvh` and the triangles it was built from.
    ///
    /// ```no_run
    /// use lumbre_kdtree::{scenes, Bvh, BvhOptions, GpuBvh};
    /// let tris = scenes::generated_scene(1000);
    /// let bvh = Bvh::build(&tris, &BvhOptions::default());
    /// let on_gpu = GpuBvh::upload(&lumbre_gpu::Gpu::new()?, &bvh, &tris)?;
    /// # let _ = on_gpu;
    /// # Ok::<(), lumbre_gpu::Error>(())
    /// ```
    pub fn upload(gpu: &Gpu, bvh: &Bvh, tris: &[[Vec3; 3]]) -> Result<Self> {
        let leaf_tris: Vec<[f32; 4]> = bvh
            .prim_indices
            .iter()
            .flat_map(|&i| {
                let [a, b, c] = tris[i as usize];
                [[a.x, a.y, a.z, f32::from_bits(i)], [b.x, b.y, b.z, 0.0], [c.x, c.y, c.z, 0.0]]
            })
            .collect();
        Ok(GpuBvh {
            nodes: gpu.upload(&bvh.nodes)?,
            leaf_tris: if leaf_tris.is_empty() { gpu.zeroed(3)? } else { gpu.upload(&leaf_tris)? },
            tris: vertex_buffer(gpu, tris)?,
            bounds: bvh.bounds,
        })
    }

    /// The three bindings, in order (1: nodes, 2: the leaves' triangles, 3: triangles).
    pub fn bindings(&self) -> [wgpu::BindingResource<'_>; 3] {
        [self.nodes.binding(), self.leaf_tris.binding(), self.tris.binding()]
    }
}

/// A batch of rays against one BVH: what [`BvhQuery`] takes.
#[derive(Clone, Debug)]
pub struct BvhBatch {
    /// The triangles.
    pub tris: Vec<[Vec3; 3]>,
    /// The BVH built from them.
    pub bvh: Bvh,
    /// The rays.
    pub rays: Vec<Ray>,
    /// Hits need `t_min < t < t_max`.
    pub t_min: f32,
    /// See `t_min`.
    pub t_max: f32,
}

/// Closest-hit or any-hit queries of many rays against a BVH, CPU ([`Bvh::closest_hits`]) or
/// GPU; results as [`RayQuery`](crate::RayQuery)'s.
///
/// ```no_run
/// use lumbre_gpu::{conformance, Gpu, Tolerance};
/// use lumbre_kdtree::{scenes, Bvh, BvhBatch, BvhOptions, BvhQuery};
/// let tris = scenes::generated_scene(1000);
/// let bvh = Bvh::build(&tris, &BvhOptions::default());
/// let (c, r) = ((bvh.bounds.min + bvh.bounds.max) * 0.5, bvh.bounds.size().length());
/// let rays = scenes::camera_rays(c + glam::Vec3::Z * r * 2.0, c, 0.8, 64, 64);
/// let batch = BvhBatch { tris, bvh, rays, t_min: 0.0, t_max: f32::INFINITY };
/// conformance(&BvhQuery::default(), &Gpu::new()?, &batch, Tolerance::relative(1e-4))?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct BvhQuery {
    /// The triangle test (the traversal is the BVH's own).
    pub test: TriangleTest,
    /// Any-hit (occlusion) instead of closest hit.
    pub any_hit: bool,
}

impl BvhQuery {
    /// The CPU path.
    ///
    /// ```
    /// use lumbre_kdtree::{scenes, Bvh, BvhBatch, BvhOptions, BvhQuery};
    /// let tris = scenes::generated_scene(100);
    /// let bvh = Bvh::build(&tris, &BvhOptions::default());
    /// let rays = scenes::camera_rays(glam::Vec3::Z * 10.0, glam::Vec3::ZERO, 0.8, 8, 8);
    /// let hits = BvhQuery::default().cpu(&BvhBatch { tris, bvh, rays, t_min: 0.0, t_max: f32::INFINITY });
    /// assert_eq!(hits.0.len(), 64);
    /// ```
    pub fn cpu(&self, b: &BvhBatch) -> Hits {
        let opts = QueryOptions { test: self.test, ..Default::default() };
        Hits(if self.any_hit {
            let any = b.bvh.any_hits(&b.tris, &b.rays, b.t_min, b.t_max, &opts);
            any.into_iter().map(|h| h.then_some(crate::Hit { t: 0.0, tri: 0, u: 0.0, v: 0.0 })).collect()
        } else {
            b.bvh.closest_hits(&b.tris, &b.rays, b.t_min, b.t_max, &opts)
        })
    }

    /// Records the queries of `rays` (two vec4 per ray: origin and `t_min`, direction and
    /// `t_max`) against an uploaded BVH into `hits`, as [`RayQuery::record_into`](crate::RayQuery::record_into).
    pub fn record_into(
        &self,
        rec: &mut Recorder,
        bvh: &GpuBvh,
        rays: &Buffer<[f32; 4]>,
        hits: &Buffer<[u32; 4]>,
    ) -> Result<()> {
        let gpu = rec.gpu().clone();
        let n = rays.len() / 2;
        if hits.len() != n {
            return Err(Error::Input(format!("{n} rays but room for {} hits", hits.len())));
        }
        let flags = (((self.test == TriangleTest::Watertight) as u32) << 1) | ((self.any_hit as u32) << 2);
        let params = gpu.uniform(&Params { bmin: [0.0; 3], n: n as u32, bmax: [0.0; 3], flags })?;
        let kernel = gpu.kernel(&lumbre_shaders::kdtree::TRAVERSE_QUERY_BVH, "query")?;
        let [a, b, c] = bvh.bindings();
        let res = [params.as_entire_binding(), a, b, c, rays.binding(), hits.binding()];
        rec.dispatch("bvh query", &kernel, &res, (n as u64).div_ceil(64))
    }
}

impl Compute for BvhQuery {
    type Input = BvhBatch;
    type Output = Hits;
    type GpuInput = (GpuBvh, Buffer<[f32; 4]>);
    type GpuOutput = Buffer<[u32; 4]>;

    fn name(&self) -> &'static str {
        if self.any_hit { "bvh any hit" } else { "bvh closest hit" }
    }

    fn cpu_reported(&self, b: &BvhBatch, _: &dyn Progress) -> Result<(Hits, Report)> {
        Report::timed(self.name(), || Ok(self.cpu(b)))
    }

    fn upload(&self, gpu: &Gpu, b: &BvhBatch) -> Result<(GpuBvh, Buffer<[f32; 4]>)> {
        Ok((GpuBvh::upload(gpu, &b.bvh, &b.tris)?, ray_buffer(gpu, &b.rays, b.t_min, b.t_max)?))
    }

    fn record(&self, rec: &mut Recorder, (bvh, rays): &(GpuBvh, Buffer<[f32; 4]>)) -> Result<Buffer<[u32; 4]>> {
        let hits = rec.gpu().zeroed(rays.len() / 2)?;
        self.record_into(rec, bvh, rays, &hits)?;
        Ok(hits)
    }

    fn download(&self, gpu: &Gpu, hits: &Buffer<[u32; 4]>) -> Result<Hits> {
        download_hits(gpu, hits, self.any_hit)
    }
}
