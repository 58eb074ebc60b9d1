//! The whole build of imperfect shadow maps: the point pool, splatting and pull-push, from
//! a scene's triangles and its VPLs, on the CPU (the GPU half is `gpu/ism/build.rs`).

use glam::Vec3;
use lumbre_gpu::{Progress, Report, Result};

use crate::ism::atlas::{IsmAtlas, grid};
use crate::ism::options::IsmOptions;
use crate::ism::points::ScenePoints;
use crate::ism::pull_push::pull_push_cpu;
use crate::ism::splat::{IsmInput, Splat};
use crate::vpls::Vpl;

/// Scene triangles and VPLs: the input of the whole build ([`Ism`] as a
/// [`Compute`](lumbre_gpu::Compute)).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct IsmScene {
    /// The scene's triangles (the pool is sampled over them).
    pub triangles: Vec<[Vec3; 3]>,
    /// The VPLs, one map each.
    pub vpls: Vec<Vpl>,
}

/// Imperfect shadow maps: the point pool, splatting and pull-push.
///
/// As a [`Compute`](lumbre_gpu::Compute) it runs all three stages from triangles and VPLs
/// ([`IsmScene`]), and reports the stages `ism points`, `ism splat` and `ism pull-push` (GPU:
/// per pass), with the atlas's size and, on the CPU, the holes left after each stage.
///
/// ```no_run
/// use glam::Vec3;
/// use lumbre_gpu::{Compute, Gpu};
/// use lumbre_lightcuts::{Vpl, ism::{Ism, IsmOptions, IsmScene}};
/// let scene = IsmScene {
///     triangles: vec![[Vec3::ZERO, Vec3::X, Vec3::Z]],
///     vpls: vec![Vpl { position: Vec3::new(0.2, 1.0, 0.2), normal: -Vec3::Y, intensity: Vec3::ONE }],
/// };
/// let ism = Ism { options: IsmOptions { points: 4096, points_per_vpl: 1024, ..Default::default() } };
/// let (on_cpu, report) = ism.cpu_reported(&scene, &())?;
/// let on_gpu = ism.gpu(&Gpu::new()?, &scene)?;
/// assert!(on_cpu.differing_texels(&on_gpu, 1e-5) < 41); // 1% of the texels: knife edges
/// println!("{report}");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Ism {
    /// How to build (and later look up).
    pub options: IsmOptions,
}

impl Ism {
    /// Builds the atlas on the CPU: splats `points` for every VPL, then pull-push.
    pub fn build_cpu(points: &ScenePoints, vpls: &[Vpl], opts: &IsmOptions) -> Result<IsmAtlas> {
        Ism::build_reported(points, vpls, opts, &mut Report::default())
    }

    /// [`Ism::build_cpu`], timing its stages and counting the holes after each in `report`.
    fn build_reported(points: &ScenePoints, vpls: &[Vpl], opts: &IsmOptions, report: &mut Report) -> Result<IsmAtlas> {
        let input = IsmInput { points: points.clone(), vpls: vpls.to_vec() };
        let mut atlas = report.time("ism splat", || Splat { options: *opts }.cpu(&input))?;
        report.stat("holes after splat", atlas.holes() as f64);
        report.time("ism pull-push", || pull_push_cpu(&mut atlas.depth, opts.size, opts.pull_push_levels));
        report.stat("holes after pull-push", atlas.holes() as f64);
        Ok(atlas)
    }

    /// The atlas's shape in `report`: maps, width and height of the 2D atlas, bytes.
    pub(crate) fn atlas_stats(&self, vpls: u32, report: &mut Report) {
        let (w, h) = grid(vpls);
        report.stat("maps", vpls as f64);
        report.stat("atlas width", (w * self.options.size) as f64);
        report.stat("atlas height", (h * self.options.size) as f64);
        report.stat("atlas bytes", vpls as f64 * self.options.texels() as f64 * 4.0);
    }

    /// The CPU path: the atlas of `scene`, all three stages.
    ///
    /// ```
    /// use glam::Vec3;
    /// use lumbre_lightcuts::{Vpl, ism::{Ism, IsmOptions, IsmScene}};
    /// let scene = IsmScene {
    ///     triangles: vec![[Vec3::ZERO, Vec3::X, Vec3::Z]],
    ///     vpls: vec![Vpl { position: Vec3::new(0.2, 1.0, 0.2), normal: -Vec3::Y, intensity: Vec3::ONE }],
    /// };
    /// let ism = Ism { options: IsmOptions { points: 4096, points_per_vpl: 1024, ..Default::default() } };
    /// assert_eq!(ism.cpu(&scene)?.vpls, 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn cpu(&self, scene: &IsmScene) -> Result<IsmAtlas> {
        self.run_cpu(scene, &()).map(|(atlas, _)| atlas)
    }

    /// [`cpu`](Ism::cpu) with progress (three steps), the stages timed and the holes after
    /// each and the atlas's shape reported.
    pub fn run_cpu(&self, scene: &IsmScene, progress: &dyn Progress) -> Result<(IsmAtlas, Report)> {
        let opts = &self.options;
        opts.validate()?;
        let mut report = Report::default();
        progress.update("ism", 0, 3);
        let points = report.time("ism points", || ScenePoints::sample(&scene.triangles, opts.points, opts.seed))?;
        progress.update("ism", 1, 3);
        let atlas = Ism::build_reported(&points, &scene.vpls, opts, &mut report)?;
        progress.update("ism", 3, 3);
        self.atlas_stats(atlas.vpls, &mut report);
        Ok((atlas, report))
    }
}
