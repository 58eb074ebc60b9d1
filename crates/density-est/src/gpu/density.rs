//! [`Density`] on the GPU: the problem uploaded once, then the chosen method's stages
//! (`gpu/brute.rs`, `gpu/octree.rs`, `gpu/bvh.rs`), and its `Compute` impl.

use lumbre_gpu::{Compute, Gpu, Progress, Recorder, Report, Result};

use crate::density::{Density, Method};
use crate::estimate::Estimate;
use crate::gpu::estimate::{self, GpuEstimate};
use crate::gpu::problem::{self, GpuProblem};
use crate::gpu::{brute, bvh, octree};
use crate::problem::Problem;

/// Records the chosen method.
pub(crate) fn record(alg: &Density, rec: &mut Recorder, input: &GpuProblem) -> Result<GpuEstimate> {
    let mut out = match alg.method {
        Method::BruteForce => brute::record(rec, input),
        Method::Octree => octree::record(rec, input, &alg.octree),
        Method::Bvh => bvh::record(rec, input),
    }?;
    let mut report = input.report.clone();
    report.merge(std::mem::take(&mut out.report));
    out.report = report;
    Ok(out)
}

impl Compute for Density {
    type Input = Problem;
    type Output = Estimate;
    type GpuInput = GpuProblem;
    type GpuOutput = GpuEstimate;

    fn name(&self) -> &'static str {
        "density"
    }

    /// Stages `prepare` (validation, plane tolerances, boxes) and the method's own; stats
    /// `segments`, `disks`, `pairs found`, `pairs tested` and the index's.
    fn cpu_reported(&self, input: &Problem, progress: &dyn Progress) -> Result<(Estimate, Report)> {
        self.run_cpu(input, progress)
    }

    fn upload(&self, gpu: &Gpu, input: &Problem) -> Result<GpuProblem> {
        problem::upload(gpu, input)
    }

    fn record(&self, rec: &mut Recorder, input: &GpuProblem) -> Result<GpuEstimate> {
        record(self, rec, input)
    }

    fn download(&self, gpu: &Gpu, output: &GpuEstimate) -> Result<Estimate> {
        estimate::download(gpu, output)
    }

    fn gpu_stats(&self, gpu: &Gpu, output: &GpuEstimate) -> Result<Report> {
        estimate::stats(gpu, output)
    }
}
