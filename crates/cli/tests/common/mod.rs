//! What the CLI's test programs share: a temporary folder.

pub use lumbre_gpu::testing::TempDir;
