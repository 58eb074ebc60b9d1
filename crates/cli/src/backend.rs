//! `--backend`, mapped once to `lumbre_gpu::Backend`, and the order in which a command that
//! takes it runs: its flags checked (a refusal opens no GPU), the backend made, the command
//! run on it.

use clap::{Args, ValueEnum};
use lumbre_gpu::{Backend, Gpu, GpuOptions};

use crate::error::Result;

/// `--backend`: where an algorithm runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum BackendChoice {
    Cpu,
    Gpu,
}

/// The `--backend` flag of every command that has one. It is `cpu` unless given; the
/// benchmarks and the demo, which run both paths, make it `gpu` with [`gpu_by_default`].
#[derive(Args, Clone, Debug)]
pub struct BackendArgs {
    /// Where the algorithm runs.
    #[arg(long, value_enum, default_value_t = BackendChoice::Cpu)]
    pub backend: BackendChoice,
}

impl BackendArgs {
    /// The one mapping from `--backend` to the runtime's backend: an error if `gpu` finds no
    /// adapter (`opts` chooses it).
    pub fn resolve(&self, opts: &GpuOptions) -> Result<Backend> {
        Ok(match self.backend {
            BackendChoice::Gpu => Backend::Gpu(Gpu::with_options(opts)?),
            BackendChoice::Cpu => Backend::Cpu,
        })
    }
}

/// A command that runs on the backend its `--backend` names.
pub trait OnBackend: Sized {
    /// The command's `--backend`.
    fn backend_args(&self) -> &BackendArgs;

    /// Every check of the command's flags that needs no backend, so that a refusal opens no
    /// GPU.
    fn check(&self) -> Result<()> {
        Ok(())
    }

    /// Runs the command on `backend`, first checking what depends on it (a GPU's largest
    /// buffer, defaults that differ between the CPU and a GPU).
    fn run(self, backend: &Backend) -> Result<()>;
}

/// Runs `command`: its flags checked, its `--backend` mapped (`opts` choosing the adapter),
/// then the command on that backend.
pub fn run(command: impl OnBackend, opts: &GpuOptions) -> Result<()> {
    command.check()?;
    let backend = command.backend_args().resolve(opts)?;
    command.run(&backend)
}

/// `--backend` with `gpu` as its default and no help line of its own, for a command's
/// `#[command(mut_arg("backend", gpu_by_default))]`.
pub fn gpu_by_default(arg: clap::Arg) -> clap::Arg {
    arg.default_value("gpu").help(None::<&str>)
}
