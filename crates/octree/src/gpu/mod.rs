//! The GPU path of every stage, each in the file named like its CPU half, with its
//! `Compute` impl and its pipeline, recorded once on `lumbre_gpu::stages`.

pub(crate) mod build;
pub(crate) mod dense;
pub(crate) mod packed;
