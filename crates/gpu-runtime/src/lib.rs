//! The GPU runtime of [Lumbre](https://github.com/lumbre-rs/lumbre): a headless wgpu
//! context, typed buffers, cached compute kernels, timing, one error type, and the
//! [`Compute`] trait through which every Lumbre algorithm offers a CPU path and a GPU path
//! with one output type, checked against each other by [`conformance`]. [`stages`] runs a
//! pipeline written once either straight into a [`Recorder`] or stage by stage with chosen
//! stages on the CPU.
//!
//! The `wgpu` feature (on by default) brings the GPU: without it the crate keeps what the
//! algorithms' CPU paths share ([`Error`], [`Report`], [`Progress`], [`Tolerance`] and
//! [`Agree`], [`Transfers`], the twins' helpers in [`stages`], and [`testing`]'s `Rng` and
//! `TempDir`), and depends on neither wgpu nor naga.
//!
//! ```no_run
//! use lumbre_gpu::{conformance, CopyKernel, Gpu, Tolerance};
//!
//! let gpu = Gpu::new()?; // LUMBRE_ADAPTER=#1 (an index) or =llvmpipe (part of a name) picks one
//! let input = vec![[1u32, 2, 3, 4]; 1 << 20];
//! let copied = conformance(&CopyKernel, &gpu, &input, Tolerance::EXACT)?;
//! assert_eq!(copied, input);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(feature = "wgpu")]
mod buffer;
#[cfg(feature = "wgpu")]
mod compute;
mod conformance;
#[cfg(feature = "wgpu")]
mod context;
#[cfg(feature = "wgpu")]
mod copy;
mod error;
#[cfg(feature = "wgpu")]
mod kernel;
#[cfg(feature = "wgpu")]
mod pipeline_cache;
#[cfg(feature = "wgpu")]
mod recorder;
mod report;
pub mod stages;
pub mod testing;
mod timing;
mod transfers;

#[cfg(feature = "wgpu")]
pub use buffer::{Buffer, Fit, pieces};
#[cfg(feature = "wgpu")]
pub use compute::{Backend, Compute, Kept, Placed};
#[cfg(feature = "wgpu")]
pub use conformance::conformance;
pub use conformance::{Agree, Mismatch, Scalar, Tolerance, compare_slices};
#[cfg(feature = "wgpu")]
pub use context::{
    AdapterChoice, AdapterSummary, Gpu, GpuOptions, NO_ADAPTER_HINT, OPTIONAL_FEATURES, PIPELINE_CACHE_ENV,
    REQUIRED_FEATURES, REQUIRED_LIMITS, adapters, user_cache_dir,
};
#[cfg(feature = "wgpu")]
pub use copy::{
    COPY_WORKGROUP, CopyKernel, copy_cpu, copy_time, copy_time_between, copy_time_u32, copy_variant_times, iota_cpu,
    record_iota,
};
pub use error::{Error, Result};
#[cfg(feature = "wgpu")]
pub use kernel::{Kernel, grid};
#[cfg(feature = "wgpu")]
pub use pipeline_cache::PipelineCacheState;
#[cfg(feature = "wgpu")]
pub use recorder::Recorder;
pub use report::{Progress, Report};
#[cfg(feature = "wgpu")]
pub use timing::{BUSY_SPAN, KeepBusy, WARM_UP, busy_median_time};
pub use timing::{TimingSource, Timings, median_time};
pub use transfers::{Traffic, Transfers};

#[cfg(feature = "wgpu")]
pub use lumbre_shaders as shaders;
#[cfg(feature = "wgpu")]
pub use wgpu;
