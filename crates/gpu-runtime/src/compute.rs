//! The shared trait: one algorithm, a CPU path and a GPU path, one output type.

use std::borrow::Borrow;

use crate::{Gpu, Progress, Recorder, Report, Result, Timings};

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
/// An implementation supplies the CPU path ([`cpu_reported`](Compute::cpu_reported)) and the
/// GPU path in three parts, so that stages chain on the device without a host round trip:
/// [`upload`](Compute::upload) puts the input on the GPU, [`record`](Compute::record)
/// appends the algorithm's passes to a [`Recorder`] and returns device-resident output, and
/// [`download`](Compute::download) reads it back. A pipeline (octree build, then render;
/// scan inside compaction inside sort) records the stages one after another on one recorder
/// and submits once. Everything else is provided: [`run`](Compute::run) on a [`Backend`],
/// with a report ([`run_reported`](Compute::run_reported)), or on an input placed once
/// ([`run_placed`](Compute::run_placed)).
///
/// Each algorithm also has a plain inherent `cpu(&self, input)` for callers that want the
/// CPU path alone; the trait is how a backend is chosen. The CPU path is the oracle: the
/// conformance helper [`conformance`](crate::conformance) runs both paths and compares them.
///
/// ```no_run
/// use lumbre_gpu::{Backend, Compute, CopyKernel, Gpu};
/// let data = vec![[7u32; 4]; 100];
/// let on_cpu = CopyKernel.run(&Backend::Cpu, &data)?;
/// let on_gpu = CopyKernel.run(&Backend::Gpu(Gpu::new()?), &data)?;
/// assert_eq!(on_cpu, on_gpu);
/// let (_, report) = CopyKernel.run_reported(&Backend::Cpu, &data, &())?;
/// assert_eq!(report.stages[0].0, "copy");
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

    /// The CPU path: the output and a [`Report`] of its stages and statistics; long runs
    /// call `progress`. An algorithm without stages of its own reports one stage named after
    /// it ([`Report::timed`]).
    fn cpu_reported(&self, input: &Self::Input, progress: &dyn Progress) -> Result<(Self::Output, Report)>;

    /// Puts `input` on the GPU.
    fn upload(&self, gpu: &Gpu, input: &Self::Input) -> Result<Self::GpuInput>;

    /// Records the GPU passes that turn `input` into the device-resident output.
    fn record(&self, rec: &mut Recorder, input: &Self::GpuInput) -> Result<Self::GpuOutput>;

    /// Reads the device-resident output back.
    fn download(&self, gpu: &Gpu, output: &Self::GpuOutput) -> Result<Self::Output>;

    /// The whole GPU path, with its timings. Algorithms whose input may exceed what one
    /// submission can process (compaction piece by piece) override it.
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
            Backend::Cpu => self.cpu_reported(input, &()).map(|(out, _)| out),
            Backend::Gpu(gpu) => self.gpu(gpu, input),
        }
    }

    /// Statistics of a finished GPU run, read from its device-resident output (counters).
    /// The default has none.
    fn gpu_stats(&self, gpu: &Gpu, output: &Self::GpuOutput) -> Result<Report> {
        let _ = (gpu, output);
        Ok(Report::default())
    }

    /// The GPU path on an input uploaded earlier (one upload, many runs: an orbit, a
    /// progressive render): records, submits and downloads. The report holds the passes'
    /// times (by label) and [`gpu_stats`](Compute::gpu_stats).
    fn gpu_reported(&self, gpu: &Gpu, input: &Self::GpuInput) -> Result<(Self::Output, Report)> {
        let mut rec = gpu.recorder();
        let out = self.record(&mut rec, input)?;
        let timings = rec.submit()?;
        let mut report = Report::from_timings(self.name(), &timings);
        let output = report.time("download", || self.download(gpu, &out))?;
        report.merge(self.gpu_stats(gpu, &out)?);
        Ok((output, report))
    }

    /// Runs on an input placed on its backend by [`Backend::place`], with progress (CPU
    /// path) and a report of stages and statistics.
    fn run_placed(&self, placed: &Placed<'_, Self>, progress: &dyn Progress) -> Result<(Self::Output, Report)> {
        match placed {
            Placed::Cpu(input) => self.cpu_reported(input, progress),
            Placed::Gpu(gpu, input) => self.gpu_reported(gpu, input),
        }
    }

    /// Runs on the chosen backend with progress and a report; on the GPU the upload is a
    /// stage of its own.
    fn run_reported(
        &self,
        backend: &Backend,
        input: &Self::Input,
        progress: &dyn Progress,
    ) -> Result<(Self::Output, Report)> {
        match backend {
            Backend::Cpu => self.cpu_reported(input, progress),
            Backend::Gpu(gpu) => {
                let mut report = Report::default();
                let on_gpu = report.time("upload", || self.upload(gpu, input))?;
                let (out, r) = self.gpu_reported(gpu, &on_gpu)?;
                report.merge(r);
                Ok((out, report))
            }
        }
    }
}

/// An algorithm's input placed on a backend once, to be run many times with
/// [`Compute::run_placed`]: borrowed on the CPU, uploaded on the GPU.
///
/// An algorithm's upload depends on its input only, so one placed input serves every value
/// of the algorithm's type (each camera of an orbit, each batch of samples).
///
/// ```no_run
/// use lumbre_gpu::{Backend, Compute, CopyKernel, Gpu};
/// let backend = Backend::Gpu(Gpu::new()?);
/// let data = vec![[3u32; 4]; 1000];
/// let placed = backend.place(&CopyKernel, &data)?;
/// for _ in 0..3 {
///     let (copied, report) = CopyKernel.run_placed(&placed, &())?;
///     assert_eq!(copied, data);
///     println!("{report}");
/// }
/// # Ok::<(), lumbre_gpu::Error>(())
/// ```
pub enum Placed<'a, C: Compute + ?Sized> {
    /// The CPU path's input, borrowed.
    Cpu(&'a C::Input),
    /// The input uploaded to this context.
    Gpu(Gpu, C::GpuInput),
}

/// An algorithm's output left where it was computed ([`Backend::run_kept`]): on the host
/// for the CPU, on the device for the GPU, so that it is the placed input of the next stage
/// ([`Kept::placed`]) without a round trip, whichever the backend.
///
/// ```no_run
/// use lumbre_gpu::{Backend, Compute, CopyKernel, Gpu};
/// let data = vec![[5u32; 4]; 256];
/// for backend in [Backend::Cpu, Backend::Gpu(Gpu::new()?)] {
///     let (copy, _) = backend.run_kept(&CopyKernel, &data, &())?; // on the GPU: not read back
///     let (again, report) = CopyKernel.run_placed(&copy.placed(), &())?; // a copy of the copy
///     assert_eq!(again, data);
///     println!("{}: {report}", backend.name());
/// }
/// # Ok::<(), lumbre_gpu::Error>(())
/// ```
pub enum Kept<C: Compute + ?Sized> {
    /// The CPU path's output.
    Cpu(C::Output),
    /// The GPU path's output on this context, not read back.
    Gpu(Gpu, C::GpuOutput),
}

impl<C: Compute + ?Sized> Kept<C> {
    /// This output placed as the input of `N`, a stage that reads what `C` writes (on the
    /// host as it is or borrowed as `N`'s input: a `Vec<T>` as a `[T]`).
    pub fn placed<N>(&self) -> Placed<'_, N>
    where
        N: Compute<GpuInput = C::GpuOutput> + ?Sized,
        C::Output: Borrow<N::Input>,
        C::GpuOutput: Clone,
    {
        match self {
            Kept::Cpu(out) => Placed::Cpu(out.borrow()),
            Kept::Gpu(gpu, out) => Placed::Gpu(gpu.clone(), out.clone()),
        }
    }
}

impl Backend {
    /// Places `input` for `alg` on this backend: borrows it for the CPU, uploads it for
    /// the GPU.
    pub fn place<'a, C: Compute + ?Sized>(&self, alg: &C, input: &'a C::Input) -> Result<Placed<'a, C>> {
        Ok(match self {
            Backend::Cpu => Placed::Cpu(input),
            Backend::Gpu(gpu) => Placed::Gpu(gpu.clone(), alg.upload(gpu, input)?),
        })
    }

    /// Runs `alg` on this backend and keeps its output there ([`Kept`]): on the GPU it is
    /// recorded and submitted but not read back. The report holds the run's stages (on the
    /// GPU the upload is one, and the passes' times) and statistics.
    pub fn run_kept<C: Compute + ?Sized>(
        &self,
        alg: &C,
        input: &C::Input,
        progress: &dyn Progress,
    ) -> Result<(Kept<C>, Report)> {
        match self {
            Backend::Cpu => alg.cpu_reported(input, progress).map(|(out, report)| (Kept::Cpu(out), report)),
            Backend::Gpu(gpu) => {
                let mut report = Report::default();
                let on_gpu = report.time("upload", || alg.upload(gpu, input))?;
                let mut rec = gpu.recorder();
                let out = alg.record(&mut rec, &on_gpu)?;
                report.merge(Report::from_timings(alg.name(), &rec.submit()?));
                report.merge(alg.gpu_stats(gpu, &out)?);
                Ok((Kept::Gpu(gpu.clone(), out), report))
            }
        }
    }

    /// The GPU context, if this is the GPU backend.
    pub fn gpu(&self) -> Option<&Gpu> {
        match self {
            Backend::Cpu => None,
            Backend::Gpu(gpu) => Some(gpu),
        }
    }

    /// `"cpu (N threads)"` or `"gpu (adapter name)"`, for reports.
    pub fn describe(&self) -> String {
        match self {
            Backend::Cpu => format!("cpu ({} threads)", std::thread::available_parallelism().map_or(1, |n| n.get())),
            Backend::Gpu(gpu) => format!("gpu ({})", gpu.adapter_name()),
        }
    }
}
