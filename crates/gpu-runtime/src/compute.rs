//! The shared trait: one algorithm, a CPU path and a GPU path, one output type.

use crate::{Gpu, Recorder, Result, Timings};

/// Where an algorithm runs. The GPU variant carries the context (and so the adapter).
///
/// ```
/// let backend = lumbre_gpu::Backend::Cpu;
/// assert_eq!(backend.name(), "cpu");
/// ```
#[derive(Clone, Debug, Default)]
pub enum Backend {
    /// The parallel Rust reference path.
    #[default]
    Cpu,
    /// WGSL compute through wgpu on this context.
    Gpu(Gpu),
}

impl Backend {
    /// `"cpu"` or `"gpu"`.
    pub fn name(&self) -> &'static str {
        match self {
            Backend::Cpu => "cpu",
            Backend::Gpu(_) => "gpu",
        }
    }
}

/// An algorithm with a CPU path and a GPU path that compute the same function.
///
/// The GPU path is split in three so stages can be chained on the device without a host
/// round trip: [`upload`](Compute::upload) puts the input on the GPU,
/// [`record`](Compute::record) appends the algorithm's passes to a [`Recorder`] and returns
/// device-resident output, and [`download`](Compute::download) reads it back. A pipeline
/// (octree build, then traversal; scan inside compaction inside sort) calls the stages'
/// `record` one after another on one recorder and submits once.
///
/// `cpu` is the oracle; the conformance helper [`conformance`](crate::conformance) runs both
/// paths and compares them.
///
/// ```no_run
/// use lumbre_gpu::{Backend, Compute, CopyKernel, Gpu};
/// let data = vec![[7u32; 4]; 100];
/// let on_cpu = CopyKernel.run(&Backend::Cpu, &data)?;
/// let on_gpu = CopyKernel.run(&Backend::Gpu(Gpu::new()?), &data)?;
/// assert_eq!(on_cpu, on_gpu);
/// # Ok::<(), lumbre_gpu::Error>(())
/// ```
pub trait Compute {
    /// What the algorithm reads (on the host).
    type Input: ?Sized;
    /// What it produces (on the host); the same type from both paths.
    type Output;
    /// The input once it lives on the GPU (buffers, usually).
    type GpuInput;
    /// The output while it still lives on the GPU.
    type GpuOutput;

    /// A short name for reports and errors.
    fn name(&self) -> &'static str;

    /// The CPU path: the reference, and a real fallback.
    fn cpu(&self, input: &Self::Input) -> Result<Self::Output>;

    /// Puts `input` on the GPU.
    fn upload(&self, gpu: &Gpu, input: &Self::Input) -> Result<Self::GpuInput>;

    /// Records the GPU passes that turn `input` into the device-resident output.
    fn record(&self, rec: &mut Recorder, input: &Self::GpuInput) -> Result<Self::GpuOutput>;

    /// Reads the device-resident output back.
    fn download(&self, gpu: &Gpu, output: &Self::GpuOutput) -> Result<Self::Output>;

    /// The whole GPU path, with its timings.
    fn gpu_timed(&self, gpu: &Gpu, input: &Self::Input) -> Result<(Self::Output, Timings)> {
        let on_gpu = self.upload(gpu, input)?;
        let mut rec = gpu.recorder();
        let out = self.record(&mut rec, &on_gpu)?;
        let timings = rec.submit()?;
        Ok((self.download(gpu, &out)?, timings))
    }

    /// The whole GPU path.
    fn gpu(&self, gpu: &Gpu, input: &Self::Input) -> Result<Self::Output> {
        self.gpu_timed(gpu, input).map(|(out, _)| out)
    }

    /// Runs on the chosen backend.
    fn run(&self, backend: &Backend, input: &Self::Input) -> Result<Self::Output> {
        match backend {
            Backend::Cpu => self.cpu(input),
            Backend::Gpu(gpu) => self.gpu(gpu, input),
        }
    }
}
