//! Stage 2, splatting: each VPL projects its window of the point pool with its paraboloid
//! map and keeps the nearest distance per texel. The CPU twin of
//! `lightcuts/ism_splat.wgsl` (`gpu/ism/splat.rs`, which keeps the minimum of the distances' f32 bits with
//! atomics: for non-negative floats the bits order like the values, so both paths keep the
//! same minimum whatever the order).

use glam::Vec3;
use lumbre_gpu::Result;
use rayon::prelude::*;

use crate::ism::atlas::IsmAtlas;
use crate::ism::options::{IsmOptions, check_pool, check_vpls};
use crate::ism::paraboloid::{frame, project};
use crate::ism::points::ScenePoints;
use crate::ism::random::start;
use crate::vpls::Vpl;

/// A point pool and VPLs: the input of [`Splat`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct IsmInput {
    /// The scene's point pool.
    pub points: ScenePoints,
    /// The VPLs, one map each.
    pub vpls: Vec<Vpl>,
}

/// Stage 2: splats the pool into one depth map per VPL (no hole filling).
///
/// ```
/// use glam::Vec3;
/// use lumbre_gpu::{Backend, Compute};
/// use lumbre_lightcuts::{Vpl, ism::{IsmInput, IsmOptions, ScenePoints, Splat}};
/// let floor = [[Vec3::new(-1.0, 0.0, -1.0), Vec3::new(1.0, 0.0, -1.0), Vec3::new(0.0, 0.0, 1.0)]];
/// let opts = IsmOptions { size: 32, points: 1000, points_per_vpl: 1000, ..Default::default() };
/// let points = ScenePoints::sample(&floor, opts.points, 0)?;
/// let vpls = vec![Vpl { position: Vec3::Y, normal: -Vec3::Y, intensity: Vec3::ONE }];
/// let atlas = Splat { options: opts }.run(&Backend::Cpu, &IsmInput { points, vpls })?;
/// assert!(atlas.holes() > 0 && atlas.holes() < 32 * 32);
/// # Ok::<(), lumbre_gpu::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Splat {
    /// Map size, points per VPL, seed (the others do not matter here).
    pub options: IsmOptions,
}

impl Splat {
    /// The CPU path: the atlas, after checking the options, the pool and the VPLs.
    ///
    /// ```
    /// use glam::Vec3;
    /// use lumbre_lightcuts::{Vpl, ism::{IsmInput, IsmOptions, ScenePoints, Splat}};
    /// let floor = [[Vec3::new(-1.0, 0.0, -1.0), Vec3::new(1.0, 0.0, -1.0), Vec3::new(0.0, 0.0, 1.0)]];
    /// let opts = IsmOptions { size: 32, points: 1000, points_per_vpl: 1000, ..Default::default() };
    /// let points = ScenePoints::sample(&floor, opts.points, 0)?;
    /// let vpls = vec![Vpl { position: Vec3::Y, normal: -Vec3::Y, intensity: Vec3::ONE }];
    /// assert!(Splat { options: opts }.cpu(&IsmInput { points, vpls })?.holes() > 0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn cpu(&self, input: &IsmInput) -> Result<IsmAtlas> {
        let opts = &self.options;
        opts.validate()?;
        check_pool(input.points.len(), opts)?;
        check_vpls(&input.vpls)?;
        let mut atlas = IsmAtlas::empty(opts.size, input.vpls.len() as u32);
        atlas.lookup = opts.lookup(input.points.diagonal());
        splat_cpu(&input.points.positions, &input.vpls, opts.size, opts.points_per_vpl, opts.seed, &mut atlas.depth);
        Ok(atlas)
    }
}

/// Splats `points` (the pool, in order) for every VPL into `maps` (`vpls.len()` maps of
/// `size²` texels, overwritten): VPL `v` takes the `per_vpl` points from its start in the
/// pool on, wrapping around.
pub(crate) fn splat_cpu(points: &[Vec3], vpls: &[Vpl], size: u32, per_vpl: u32, seed: u32, maps: &mut [f32]) {
    let texels = (size * size) as usize;
    let n = points.len() as u32;
    maps.par_chunks_mut(texels).zip(vpls.par_iter()).enumerate().for_each(|(v, (map, vpl))| {
        map.fill(f32::INFINITY);
        let f = frame(vpl.normal);
        let first = start(seed, v as u32, n);
        for k in 0..per_vpl {
            let mut idx = first + k;
            if idx >= n {
                idx -= n;
            }
            if let Some(t) = project(vpl.position, &f, points[idx as usize], size) {
                let cell = &mut map[(t.y * size + t.x) as usize];
                if t.dist < *cell {
                    *cell = t.dist;
                }
            }
        }
    });
}
