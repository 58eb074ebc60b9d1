//! The thesis's dense counters on the GPU: `octree/dense.wgsl`, one atomic increment per
//! point and level, the twin of `dense.rs`.

use lumbre_gpu::{Buffer, Compute, Error, Gpu, Progress, Recorder, Report, Result};
use lumbre_morton::{GpuPoints, MortonEncode, level_offset};

use crate::build::{OctreeError, Points, finite_points, quantizer};
use crate::dense::{DenseCounts, MAX_DENSE_DEPTH};

/// The uniform of `octree/dense.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    n: u32,
    depth: u32,
}
const _: () = assert!(size_of::<Params>() == lumbre_shaders::octree::DENSE_PARAMS_SIZE);

impl Compute for DenseCounts {
    type Input = Points;
    type Output = Vec<u32>;
    type GpuInput = Buffer<f32>;
    type GpuOutput = Buffer<u32>;

    fn name(&self) -> &'static str {
        "dense octree counters"
    }

    fn cpu_reported(&self, cloud: &Points, _: &dyn Progress) -> Result<(Vec<u32>, Report)> {
        Report::timed(self.name(), || self.cpu(cloud))
    }

    fn upload(&self, gpu: &Gpu, cloud: &Points) -> Result<Buffer<f32>> {
        if self.depth > MAX_DENSE_DEPTH {
            return Err(Error::Input(OctreeError::Depth(self.depth).to_string()));
        }
        let (keep, _) = finite_points(&cloud.positions);
        if let Some(&i) = keep.iter().find(|&&i| !self.root.contains(cloud.positions[i as usize])) {
            let e = OctreeError::Outside { index: i as usize, point: cloud.positions[i as usize] };
            return Err(Error::Input(e.to_string()));
        }
        let xyz: Vec<[f32; 3]> = keep.iter().map(|&i| cloud.positions[i as usize]).collect();
        gpu.upload(bytemuck::cast_slice(&xyz))
    }

    fn record(&self, rec: &mut Recorder, xyz: &Buffer<f32>) -> Result<Buffer<u32>> {
        let gpu = rec.gpu().clone();
        let n = xyz.len() / 3;
        let codes = match quantizer(self.root, self.depth) {
            Some(q) => {
                let enc = MortonEncode { quantizer: q, clamp: true };
                enc.record_keys(rec, &GpuPoints { xyz: xyz.clone() })?.words
            }
            None => gpu.zeroed::<u32>(n)?,
        };
        let counters = gpu.zeroed::<u32>(level_offset(self.depth + 1) as usize)?;
        let params = gpu.uniform(&Params { n: n as u32, depth: self.depth })?;
        let kernel = gpu.kernel(&lumbre_shaders::octree::DENSE, "count")?;
        let res = [params.as_entire_binding(), codes.binding(), counters.binding()];
        rec.dispatch("dense counters", &kernel, &res, (n as u64).div_ceil(256))?;
        Ok(counters)
    }

    fn download(&self, gpu: &Gpu, counters: &Buffer<u32>) -> Result<Vec<u32>> {
        gpu.download(counters)
    }
}
