//! The GPU path of every stage, each in the file named like its CPU half, with its
//! `Compute` impl where the stage is one.

pub(crate) mod brute;
pub(crate) mod bvh;
pub(crate) mod camera;
pub(crate) mod density;
pub(crate) mod disks;
pub(crate) mod estimate;
pub(crate) mod nearest;
pub(crate) mod octree;
pub(crate) mod photons;
pub(crate) mod problem;
pub(crate) mod progressive;

use lumbre_gpu::{Recorder, Report, Result};

/// Submits what `rec` holds and gives it a fresh recorder; the passes' times go to `report`
/// (by label; `name` when there are no timestamps).
pub(crate) fn flush(rec: &mut Recorder, name: &str, report: &mut Report) -> Result<()> {
    let gpu = rec.gpu().clone();
    let done = std::mem::replace(rec, gpu.recorder());
    report.merge(Report::from_timings(name, &done.submit()?));
    Ok(())
}
