//! Helpers shared by the integration tests.

#![allow(dead_code, unused_imports)]

use std::path::{Path, PathBuf};

pub use lumbre_gpu::testing::TempDir;

/// `testdata/<rel>` of the workspace.
pub fn testdata(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata").join(rel)
}

/// Cuts samples `0..total` at `cuts`, takes each part's sums from `sums(a, b)` and merges
/// them in an order rotated by `order`: what the sums of `0..total` must equal bit for bit.
pub fn merged_split(
    mut cuts: Vec<u32>,
    order: u64,
    total: u32,
    sums: impl Fn(u32, u32) -> lumbre_raytrace::SampleSums,
) -> lumbre_raytrace::SampleSums {
    cuts.extend([0, total]);
    cuts.sort();
    cuts.dedup();
    let mut parts: Vec<_> = cuts.windows(2).map(|w| sums(w[0], w[1])).collect();
    let n = parts.len();
    parts.rotate_left((order % n as u64) as usize);
    let first = &parts[0];
    let mut merged = lumbre_raytrace::SampleSums::new(first.width, first.height, 0, first.scale_log2);
    for part in &parts {
        merged.merge(part).unwrap();
    }
    merged
}
