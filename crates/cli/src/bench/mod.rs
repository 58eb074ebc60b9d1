//! `lumbre bench`: the standard measurements, one table each; one file per benchmark.

pub mod density;
pub mod gi;
pub mod lightcuts;
pub mod octree;
pub mod primitives;
pub mod radiosity;
pub mod radiosity_tables;
pub mod raytrace;
pub mod roofline;

/// Warm-up runs and measured repeats for every figure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Effort {
    pub warmup: usize,
    pub repeats: usize,
}

/// The median of `times` (the upper one of an even count; zero for none).
pub fn median(mut times: Vec<std::time::Duration>) -> std::time::Duration {
    times.sort_unstable();
    times.get(times.len() / 2).copied().unwrap_or_default()
}
