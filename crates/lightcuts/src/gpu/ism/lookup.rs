//! Stage 4 on the GPU, lookups: `lightcuts/ism_lookup_queries.wgsl` runs the WGSL module
//! `lightcuts/ism_lookup.wgsl` (which the shading kernels import) over a batch of queries;
//! the twin of `ism/lookup.rs`.

use lumbre_gpu::{Buffer, Compute, Gpu, Progress, Recorder, Report, Result};

use crate::gpu::ism::atlas::GpuIsmAtlas;
use crate::ism::lookup::{IsmLookup, IsmQueries};

/// [`IsmQueries`] on the GPU.
#[derive(Clone, Debug)]
pub struct GpuIsmQueries {
    /// The atlas.
    pub atlas: GpuIsmAtlas,
    /// Three vec4s per query: VPL position (w: the VPL's index as u32 bits), VPL normal,
    /// receiver.
    pub queries: Buffer<[f32; 4]>,
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct QueriesParams {
    n: u32,
    _pad: [u32; 3],
}
const _: () = assert!(size_of::<QueriesParams>() == lumbre_shaders::lightcuts::ISM_LOOKUP_QUERIES_PARAMS_SIZE);

/// Records a batch of lookups (`lightcuts/ism_lookup_queries`): `queries` holds three vec4s per
/// query (VPL position with the VPL's index as u32 bits in w, VPL normal, receiver).
fn record_lookups(rec: &mut Recorder, atlas: &GpuIsmAtlas, queries: &Buffer<[f32; 4]>) -> Result<Buffer<f32>> {
    let gpu = rec.gpu().clone();
    let n = queries.len() / 3;
    let out = gpu.zeroed::<f32>(n)?;
    let params = gpu.uniform(&QueriesParams { n: n as u32, _pad: [0; 3] })?;
    let kernel = gpu.kernel(&lumbre_shaders::lightcuts::ISM_LOOKUP_QUERIES, "main")?;
    let [ism, depth] = atlas.lookup_bindings(&gpu)?;
    let bind = [params.as_entire_binding(), ism, depth, queries.binding(), out.binding()];
    rec.dispatch("ism visibility", &kernel, &bind, (n as u64).div_ceil(64))?;
    Ok(out)
}
impl Compute for IsmLookup {
    type Input = IsmQueries;
    type Output = Vec<f32>;
    type GpuInput = GpuIsmQueries;
    type GpuOutput = Buffer<f32>;

    fn name(&self) -> &'static str {
        "ism visibility"
    }

    fn cpu_reported(&self, q: &IsmQueries, _: &dyn Progress) -> Result<(Vec<f32>, Report)> {
        Report::timed(self.name(), || self.cpu(q))
    }

    fn upload(&self, gpu: &Gpu, q: &IsmQueries) -> Result<GpuIsmQueries> {
        IsmLookup::check(q)?;
        let mut data = Vec::with_capacity(3 * q.queries.len());
        for &(v, p) in &q.queries {
            let l = &q.vpls[v as usize];
            data.push([l.position.x, l.position.y, l.position.z, f32::from_bits(v)]);
            data.push([l.normal.x, l.normal.y, l.normal.z, 0.0]);
            data.push([p.x, p.y, p.z, 0.0]);
        }
        Ok(GpuIsmQueries { atlas: GpuIsmAtlas::upload(gpu, &q.atlas)?, queries: gpu.upload(&data)? })
    }

    fn record(&self, rec: &mut Recorder, q: &GpuIsmQueries) -> Result<Buffer<f32>> {
        record_lookups(rec, &q.atlas, &q.queries)
    }

    fn download(&self, gpu: &Gpu, out: &Buffer<f32>) -> Result<Vec<f32>> {
        gpu.download(out)
    }
}
