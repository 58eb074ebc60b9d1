//! The rays of the incoherent measurement: one primary ray through each pixel's centre, and
//! from each primary hit one diffuse bounce in a cosine-distributed direction about the
//! shading normal, leaving the surface as the path tracer's rays do.

use glam::Vec3;
use lumbre_kdtree::{Hit, Ray};
use lumbre_raytrace::sampling::{cosine_hemisphere, hash_f32, hash_u32, to_world};
use lumbre_raytrace::{Camera, Prepared};
use rayon::prelude::*;

/// One primary ray through the centre of each pixel of a `width` x `height` image, row by
/// row (the renderers' camera formula, [`Camera::to_gpu`]).
pub fn primary_rays(camera: &Camera, width: u32, height: u32) -> Vec<Ray> {
    let cam = camera.to_gpu(width, height);
    (0..width as usize * height as usize)
        .into_par_iter()
        .map(|i| {
            let (x, y) = ((i % width as usize) as f32, (i / width as usize) as f32);
            let (origin, dir) = cam.ray(x + 0.5, y + 0.5);
            Ray::new(origin, dir)
        })
        .collect()
}

/// The two uniform numbers in `[0, 1)` of ray `index` for generator `seed`: an integer hash
/// of both (the renderers' [`hash_u32`]), so every run with one seed draws the same
/// directions whatever the thread count.
pub fn uniforms(seed: u32, index: u32) -> (f32, f32) {
    let key = hash_u32(hash_u32(seed) ^ index);
    (hash_f32(key), hash_f32(hash_u32(key ^ 0x9e37_79b9)))
}

/// A direction about the unit normal `n` with density `cos / pi` (the path tracer's diffuse
/// lobe, [`cosine_hemisphere`]) from the uniforms `(u1, u2)`.
pub fn cosine_direction(n: Vec3, u1: f32, u2: f32) -> Vec3 {
    to_world(cosine_hemisphere(u1, u2), n)
}

/// The diffuse bounce of `ray` at `hit` with uniforms `(u1, u2)`, as the path tracer makes
/// it: the geometric normal turned to the ray's side, the shading normal turned to that side
/// too, a cosine-distributed direction about the shading normal, the origin lifted off the
/// surface by the scene's ray offset ([`Prepared::eps`]). `None` where the path tracer ends
/// the path instead: a direction below the geometric surface (a shading normal leaning
/// away), or a degenerate triangle.
pub fn bounce(p: &Prepared, ray: &Ray, hit: &Hit, (u1, u2): (f32, f32)) -> Option<Ray> {
    let mut ng = p.scene.face_normal(hit.tri).filter(|n| *n != Vec3::ZERO)?;
    let mut n = p.shade_normal(hit.tri, hit.u, hit.v, ng);
    if ng.dot(ray.dir) >= 0.0 {
        ng = -ng;
    }
    if n.dot(ng) < 0.0 {
        n = -n;
    }
    let dir = cosine_direction(n, u1, u2);
    if n.dot(dir) <= 0.0 || dir.dot(ng) <= 0.0 {
        return None;
    }
    let point = ray.origin + ray.dir * hit.t;
    Some(Ray::new(point + ng * p.eps, dir))
}

/// The bounce of every primary ray that hit (in pixel order, misses and ended paths left
/// out), ray `i` drawing [`uniforms`]`(seed, i)`.
pub fn bounce_rays(p: &Prepared, primary: &[Ray], hits: &[Option<Hit>], seed: u32) -> Vec<Ray> {
    primary
        .par_iter()
        .zip(hits)
        .enumerate()
        .filter_map(|(i, (ray, hit))| bounce(p, ray, hit.as_ref()?, uniforms(seed, i as u32)))
        .collect()
}

/// `count` indices spread evenly over `0..n` (all of them when `count >= n`).
pub fn spread(n: usize, count: usize) -> Vec<usize> {
    let count = count.min(n);
    (0..count).map(|k| (k as u128 * n as u128 / count as u128) as usize).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use lumbre_raytrace::Scene;

    #[test]
    fn cosine_directions_are_unit_on_the_normals_side_with_mean_cos_two_thirds() {
        let normals = [Vec3::Y, -Vec3::Z, Vec3::new(0.3, -0.8, 0.52).normalize(), Vec3::new(-1.0, 0.0, 1e-7)];
        for n in normals {
            let count = 100_000u32;
            let mut sum = 0.0f64;
            for i in 0..count {
                let (u1, u2) = uniforms(7, i);
                assert!((0.0..1.0).contains(&u1) && (0.0..1.0).contains(&u2));
                let d = cosine_direction(n, u1, u2);
                assert!((d.length() - 1.0).abs() < 1e-5, "{n}: |{d}| = {}", d.length());
                let cos = n.dot(d);
                assert!(cos >= -1e-6, "{n}: {d} below the surface");
                sum += cos as f64;
            }
            // E[cos] = 2/3 under density cos / pi; the standard deviation of one cos is
            // sqrt(1/2 - 4/9) = 0.236, of the mean of 1e5 0.00075: 0.005 is 6.7 of them.
            let mean = sum / count as f64;
            assert!((mean - 2.0 / 3.0).abs() < 5e-3, "{n}: mean cos {mean}");
        }
        // The generator's numbers are uniform on [0, 1).
        let uniform_mean: f64 = (0..10_000).map(|i| uniforms(7, i).0 as f64).sum::<f64>() / 1e4;
        assert!((uniform_mean - 0.5).abs() < 0.02, "{uniform_mean}");
    }

    #[test]
    fn bounces_leave_the_side_the_ray_came_from() {
        // One triangle in the plane z = 0, seen from above and from below.
        let scene = Scene::from_triangles(&[[Vec3::new(-1.0, -1.0, 0.0), Vec3::new(3.0, -1.0, 0.0), Vec3::Y * 3.0]]);
        let p = Prepared::new(scene, &Default::default());
        for side in [1.0f32, -1.0] {
            let ray = Ray::new(Vec3::new(0.1, 0.2, 2.0 * side), Vec3::new(0.0, 0.0, -side));
            let hit = p.closest_hit(&ray, f32::INFINITY, &Default::default()).unwrap();
            for i in 0..100 {
                let b = bounce(&p, &ray, &hit, uniforms(3, i)).unwrap();
                assert!(b.dir.z * side > 0.0, "side {side}: {b:?}");
                assert_eq!(b.origin.z, p.eps * side);
                assert!((b.origin.truncate() - Vec3::new(0.1, 0.2, 0.0).truncate()).length() < 1e-6);
            }
        }
    }

    #[test]
    fn spread_covers_the_range() {
        assert_eq!(spread(10, 5), vec![0, 2, 4, 6, 8]);
        assert_eq!(spread(3, 10), vec![0, 1, 2]);
        assert!(spread(0, 4).is_empty());
    }
}
