//! Helpers shared by the integration tests.

#![allow(dead_code, unused_imports)]

use std::path::{Path, PathBuf};

pub use lumbre_gpu::testing::TempDir;

/// `testdata/<rel>` of the workspace.
pub fn testdata(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata").join(rel)
}
