//! The GPU runtime of [Lumbre](https://github.com/lumbre-rs/lumbre): a headless wgpu
//! context, typed buffers, cached compute kernels, timing, one error type, and the
//! [`Compute`] trait through which every Lumbre algorithm offers a CPU path and a GPU path
//! with one output type, checked against each other by [`conformance`]. [`stages`] runs a
//! pipeline written once either straight into a [`Recorder`] or stage by stage with chosen
//! stages on the CPU.
//!
//! ```no_run
//! use lumbre_gpu::{conformance, CopyKernel, Gpu, Tolerance};
//!
//! let gpu = Gpu::new()?; // LUMBRE_ADAPTER=<substring> picks an adapter by name
//! let input = vec![[1u32, 2, 3, 4]; 1 << 20];
//! let copied = conformance(&CopyKernel, &gpu, &input, Tolerance::EXACT)?;
//! assert_eq!(copied, input);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod buffer;
mod compute;
mod conformance;
mod context;
mod copy;
mod error;
mod kernel;
mod pipeline_cache;
mod recorder;
mod report;
pub mod stages;
pub mod testing;
mod timing;
mod transfers;

pub use buffer::{Buffer, Fit, pieces};
pub use compute::{Backend, Compute, Kept, Placed};
pub use conformance::{Agree, Mismatch, Scalar, Tolerance, compare_slices, conformance};
pub use context::{
    AdapterSummary, Gpu, GpuOptions, NO_ADAPTER_HINT, OPTIONAL_FEATURES, PIPELINE_CACHE_ENV, REQUIRED_FEATURES,
    REQUIRED_LIMITS, adapters, user_cache_dir,
};
pub use copy::{
    COPY_WORKGROUP, CopyKernel, copy_cpu, copy_time, copy_time_between, copy_time_u32, copy_variant_times, iota_cpu,
    record_iota,
};
pub use error::{Error, Result};
pub use kernel::{Kernel, grid};
pub use pipeline_cache::PipelineCacheState;
pub use recorder::Recorder;
pub use report::{Progress, Report};
pub use timing::{BUSY_SPAN, KeepBusy, TimingSource, Timings, WARM_UP, busy_median_time, median_time};
pub use transfers::{Traffic, Transfers};

pub use lumbre_shaders as shaders;
pub use wgpu;
