//! The one error type of the runtime and of every algorithm's compute path.

use std::fmt;

/// Everything that can go wrong when running an algorithm on the CPU or the GPU.
///
/// ```
/// use lumbre_gpu::Error;
/// let e = Error::LimitExceeded { what: "scan input".into(), limit: "max_storage_buffer_binding_size", requested: 1 << 30, max: 1 << 27 };
/// assert!(e.to_string().contains("max_storage_buffer_binding_size"));
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Error {
    /// No adapter could be found at all.
    NoAdapter {
        /// What to do about it.
        hint: String,
    },
    /// `LUMBRE_ADAPTER` (or the option) matched none of the adapters present.
    AdapterNotFound {
        /// The substring that was asked for.
        filter: String,
        /// Names of the adapters that exist, in index order.
        available: Vec<String>,
    },
    /// `LUMBRE_ADAPTER` (or the option) asked for an adapter index past the last adapter.
    AdapterIndexOutOfRange {
        /// The index that was asked for.
        index: usize,
        /// Names of the adapters that exist, in index order.
        available: Vec<String>,
    },
    /// `LUMBRE_ADAPTER` (or the option) is neither an adapter index nor a name: empty, or
    /// `#` followed by something other than a whole number.
    InvalidAdapterChoice {
        /// The value given.
        value: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The adapter refused to create a device.
    RequestDevice(String),
    /// An application's device (given to [`Gpu::from_wgpu`](crate::Gpu::from_wgpu)) lacks
    /// features or limits Lumbre needs.
    UnsuitableDevice {
        /// The adapter's name.
        adapter: String,
        /// Each missing feature and each limit too low, with the value needed and the
        /// device's.
        missing: Vec<String>,
    },
    /// A shader or operation needs a feature the device does not have.
    MissingFeature {
        /// What needed it.
        what: String,
        /// The feature's name.
        feature: String,
    },
    /// A buffer or dispatch is larger than a device limit; detected before any GPU work.
    LimitExceeded {
        /// What was being created.
        what: String,
        /// The wgpu limit's name.
        limit: &'static str,
        /// The requested amount.
        requested: u64,
        /// The device's maximum.
        max: u64,
    },
    /// wgpu reported a validation error (a bug in Lumbre or in the input it was given).
    Validation(String),
    /// The device ran out of memory.
    OutOfMemory(String),
    /// The device was lost (driver reset, removal).
    DeviceLost(String),
    /// Waiting for the GPU took longer than the context's timeout.
    Timeout(std::time::Duration),
    /// Input an algorithm cannot work with, with the reason.
    Input(String),
}

/// Short for `Result<T, lumbre_gpu::Error>`.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::NoAdapter { hint } => write!(f, "no GPU adapter found; {hint}"),
            Error::AdapterNotFound { filter, available } => {
                write!(f, "no adapter name contains {filter:?}; adapters present: {}", numbered(available))
            }
            Error::AdapterIndexOutOfRange { index, available } => {
                write!(f, "no adapter #{index}; adapters present: {}", numbered(available))
            }
            Error::InvalidAdapterChoice { value, reason } => {
                write!(f, "adapter choice {value:?} is not an index (`1` or `#1`) or a name: {reason}")
            }
            Error::RequestDevice(m) => write!(f, "the adapter refused to create a device: {m}"),
            Error::UnsuitableDevice { adapter, missing } => {
                write!(f, "the device of {adapter} cannot run Lumbre: {}", missing.join("; "))
            }
            Error::MissingFeature { what, feature } => {
                write!(f, "{what} needs the GPU feature {feature}, which this device lacks")
            }
            Error::LimitExceeded { what, limit, requested, max } => {
                write!(f, "{what}: {requested} bytes exceeds the device's {limit} of {max} bytes")
            }
            Error::Validation(m) => write!(f, "GPU validation error: {m}"),
            Error::OutOfMemory(m) => write!(f, "GPU out of memory: {m}"),
            Error::DeviceLost(m) => write!(f, "GPU device lost: {m}"),
            Error::Timeout(d) => write!(f, "GPU work did not finish within {d:?}"),
            Error::Input(m) => write!(f, "invalid input: {m}"),
        }
    }
}

/// Adapter names with their indices, `#0 name, #1 name`, or `none`.
fn numbered(names: &[String]) -> String {
    if names.is_empty() {
        return "none".to_string();
    }
    names.iter().enumerate().map(|(i, n)| format!("#{i} {n}")).collect::<Vec<_>>().join(", ")
}

impl std::error::Error for Error {}

#[cfg(feature = "wgpu")]
impl From<wgpu::Error> for Error {
    fn from(e: wgpu::Error) -> Self {
        match e {
            wgpu::Error::OutOfMemory { source } => Error::OutOfMemory(source.to_string()),
            wgpu::Error::Validation { description, .. } => Error::Validation(description),
            wgpu::Error::Internal { description, .. } => Error::Validation(description),
        }
    }
}
