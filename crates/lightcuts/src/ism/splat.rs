//! Stage 2, splatting: each VPL projects its window of the point pool with its paraboloid
//! map and keeps the nearest distance per texel. The CPU twin of
//! `lightcuts/ism_splat.wgsl` (which keeps the minimum of the distances' f32 bits with
//! atomics: for non-negative floats the bits order like the values, so both paths keep the
//! same minimum whatever the order).

use glam::Vec3;
use rayon::prelude::*;

use super::paraboloid::{frame, project};
use super::points::start;
use crate::Vpl;

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
