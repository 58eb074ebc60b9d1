//! The reference solve on the GPU: `radiosity/jacobi.wgsl`, one sweep per pass over F's
//! row blocks, the radiosity ping-ponging between two buffers.

use lumbre_gpu::{Buffer, Compute, Gpu, Progress, Recorder, Report, Result};

use crate::jacobi::{FullSystem, Jacobi};
use crate::matrix::{BlockMatrix, block_rows};

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    n: u32,
    rows: u32,
    e0: u32,
    _pad: u32,
}
const _: () = assert!(size_of::<Params>() == lumbre_shaders::radiosity::JACOBI_PARAMS_SIZE);

/// A full system on the GPU.
#[derive(Clone, Debug)]
pub struct GpuFullSystem {
    /// F in row blocks.
    pub f: BlockMatrix,
    /// n x 3 reflectances.
    pub rho: Buffer<f32>,
    /// n x 3 emission.
    pub emission: Buffer<f32>,
    /// Sweeps to run.
    pub sweeps: u32,
}

impl Compute for Jacobi {
    type Input = FullSystem;
    type Output = Vec<[f32; 3]>;
    type GpuInput = GpuFullSystem;
    type GpuOutput = Buffer<f32>;

    fn name(&self) -> &'static str {
        "jacobi"
    }

    fn cpu_reported(&self, s: &FullSystem, progress: &dyn Progress) -> Result<(Vec<[f32; 3]>, Report)> {
        self.run_cpu(s, progress)
    }

    fn upload(&self, gpu: &Gpu, s: &FullSystem) -> Result<GpuFullSystem> {
        s.check()?;
        let rows = block_rows(gpu, 4 * s.f.cols.max(1) as u64, 1, self.block_rows)?;
        let flat = |v: &[[f32; 3]]| v.iter().flatten().copied().collect::<Vec<f32>>();
        Ok(GpuFullSystem {
            f: BlockMatrix::upload(gpu, &s.f, rows)?,
            rho: gpu.upload(&flat(&s.rho))?,
            emission: gpu.upload(&flat(&s.emission))?,
            sweeps: s.sweeps(self.tolerance)?,
        })
    }

    fn record(&self, rec: &mut Recorder, s: &GpuFullSystem) -> Result<Buffer<f32>> {
        let gpu = rec.gpu().clone();
        let n = s.f.rows;
        let kernel = gpu.kernel(&lumbre_shaders::radiosity::JACOBI, "sweep")?;
        let a = gpu.zeroed::<f32>(3 * n)?;
        let b = gpu.zeroed::<f32>(3 * n)?;
        rec.copy(&s.emission, &a)?;
        let params: Vec<wgpu_buffer::Uniform> = (0..s.f.blocks.len())
            .map(|blk| {
                let (e0, rows) = s.f.block_range(blk);
                gpu.uniform(&Params { n: n as u32, rows: rows as u32, e0: e0 as u32, _pad: 0 })
            })
            .collect::<Result<_>>()?;
        for i in 0..s.sweeps {
            let (src, dst) = if i.is_multiple_of(2) { (&a, &b) } else { (&b, &a) };
            for (blk, p) in params.iter().enumerate() {
                let (_, rows) = s.f.block_range(blk);
                let res = [
                    p.as_entire_binding(),
                    s.f.blocks[blk].binding(),
                    s.rho.binding(),
                    s.emission.binding(),
                    src.binding(),
                    dst.binding(),
                ];
                rec.dispatch("jacobi", &kernel, &res, rows as u64)?;
            }
        }
        Ok(if s.sweeps.is_multiple_of(2) { a } else { b })
    }

    fn download(&self, gpu: &Gpu, out: &Buffer<f32>) -> Result<Vec<[f32; 3]>> {
        Ok(gpu.download(out)?.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect())
    }
}

mod wgpu_buffer {
    /// A uniform buffer.
    pub type Uniform = lumbre_gpu::wgpu::Buffer;
}
