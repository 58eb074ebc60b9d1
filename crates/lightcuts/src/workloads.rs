//! Inputs to try the stages on: lights spread over a scene's surfaces, for imperfect shadow
//! maps, light trees and cuts without tracing light paths first.

use glam::Vec3;
use lumbre_gpu::Result;

use crate::ism::ScenePoints;
use crate::vpls::Vpl;

/// `n` VPLs on the surfaces of `triangles`: area-uniform points of a pool (as
/// [`ScenePoints::sample`] draws them, under a seed of their own), each facing along its
/// triangle's geometric normal, white. Errors as [`ScenePoints::sample`]'s: no triangles, a
/// NaN or infinite corner, no area, `n` of 0.
///
/// ```
/// use glam::Vec3;
/// let vpls = lumbre_lightcuts::workloads::vpls_on(&[[Vec3::ZERO, Vec3::X, Vec3::Z]], 10, 0).unwrap();
/// assert_eq!(vpls.len(), 10);
/// assert!(vpls.iter().all(|v| v.normal == -Vec3::Y));
/// ```
pub fn vpls_on(triangles: &[[Vec3; 3]], n: u32, seed: u32) -> Result<Vec<Vpl>> {
    let pool = ScenePoints::sample(triangles, n, seed ^ 0x5eed)?;
    Ok(pool
        .positions
        .iter()
        .zip(&pool.triangles)
        .map(|(&position, &t)| {
            let [a, b, c] = triangles[t as usize];
            Vpl { position, normal: (b - a).cross(c - a).normalize(), intensity: Vec3::ONE }
        })
        .collect())
}
