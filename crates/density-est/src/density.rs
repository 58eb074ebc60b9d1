//! The density estimate of a [`Problem`]: which method finds the crossings, and the CPU
//! run of that method (the GPU run and the `Compute` impl are in `gpu/density.rs`).

use lumbre_gpu::{Error, Progress, Report, Result};

use crate::bvh;
use crate::estimate::Estimate;
use crate::fixed::Acc;
use crate::octree::{self, OctreeOptions};
use crate::problem::{Prepared, Problem};

/// How the pairs of segments and disks are found.
///
/// ```
/// assert_eq!(lumbre_density::Method::default(), lumbre_density::Method::Bvh);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Method {
    /// Every disk against every segment.
    BruteForce,
    /// The paper's octree over segments and disks ([`OctreeOptions`]).
    Octree,
    /// A bounding volume hierarchy over the disks, traversed by every segment (the
    /// default: the fastest here).
    #[default]
    Bvh,
}

/// The density estimate through [`Compute`](lumbre_gpu::Compute): input [`Problem`],
/// output [`Estimate`].
///
/// ```
/// use lumbre_density::{Density, Problem};
/// use lumbre_gpu::{Backend, Compute};
/// let est = Density::default().run(&Backend::Cpu, &Problem::default())?;
/// assert!(est.count.is_empty());
/// # Ok::<(), lumbre_gpu::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Density {
    /// The index (or none).
    pub method: Method,
    /// The octree's shape, for [`Method::Octree`].
    pub octree: OctreeOptions,
}

impl Density {
    /// Every method, for tests and benchmarks that run them all.
    ///
    /// ```
    /// assert!(lumbre_density::Density::METHODS.contains(&lumbre_density::Method::Bvh));
    /// ```
    pub const METHODS: [Method; 3] = [Method::BruteForce, Method::Octree, Method::Bvh];

    /// The CPU path: the estimate of `input`.
    ///
    /// ```
    /// use lumbre_density::{Density, Problem};
    /// assert!(Density::default().cpu(&Problem::default())?.count.is_empty());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn cpu(&self, input: &Problem) -> Result<Estimate> {
        self.run_cpu(input, &()).map(|(out, _)| out)
    }

    /// [`cpu`](Density::cpu) with progress: stages `prepare` (validation, plane tolerances,
    /// boxes) and the method's own; stats `segments`, `disks`, `pairs found`, `pairs tested`
    /// and the index's.
    pub fn run_cpu(&self, input: &Problem, progress: &dyn Progress) -> Result<(Estimate, Report)> {
        let mut report = Report::default();
        let (accs, prep) = self.accumulate(input, None, progress, &mut report)?;
        let out = Estimate::from_accs(&accs, &prep.disks, prep.scale_exp);
        report.stat("segments", input.segments.len() as f64);
        report.stat("disks", input.disks.len() as f64);
        report.stat("pairs found", out.pairs() as f64);
        Ok((out, report))
    }

    /// The CPU path's per-disk sums and what it derived from `input`, in units of
    /// `2^-scale_exp` (`None`: the exponent of the input itself, [`Problem::prepare`]'s);
    /// the method's stages and statistics go to `report`.
    pub(crate) fn accumulate(
        &self,
        input: &Problem,
        scale_exp: Option<i32>,
        progress: &dyn Progress,
        report: &mut Report,
    ) -> Result<(Vec<Acc>, Prepared)> {
        let mut prep = report.time("prepare", || input.prepare())?;
        if let Some(k) = scale_exp {
            prep.scale_exp = k;
        }
        let accs = match self.method {
            Method::BruteForce => {
                report.stat("pairs tested", input.segments.len() as f64 * input.disks.len() as f64);
                report.time("brute force", || crate::brute::brute_force(&input.segments, &prep))
            }
            Method::Octree => octree::octree(&input.segments, &prep, &self.octree, report)?,
            Method::Bvh => {
                if prep.disks.len() > bvh::node::MAX_DISKS {
                    return Err(Error::Input(format!(
                        "{} disks: the BVH takes at most {}",
                        prep.disks.len(),
                        bvh::node::MAX_DISKS
                    )));
                }
                let tree = report.time("bvh build", || bvh::build::build(&prep));
                report.stat("bvh nodes", tree.nodes.len() as f64);
                let (accs, visited, tested) =
                    report.time("bvh traverse", || bvh::traverse::traverse(&tree, &input.segments, &prep, progress));
                report.stat("bvh node visits (four-wide)", visited as f64);
                report.stat("pairs tested", tested as f64);
                accs
            }
        };
        Ok((accs, prep))
    }
}
