//! Scenes and lights shared by the tests.
#![allow(dead_code)]

use glam::Vec3;
use lumbre_lightcuts::{GBufferPass, LightTree, Shading, View, Vpl};
use lumbre_raytrace::{Prepared, Scene};

/// The diffuse Cornell box, prepared.
pub fn cornell() -> Prepared {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/scenes/CornellBox-Diffuse.obj");
    let (scene, _) = Scene::load_obj(path.as_ref()).unwrap();
    Prepared::new(scene, &Default::default())
}

/// A xorshift stream of uniform numbers in `[0, 1)`.
pub fn stream(seed: u32) -> impl FnMut() -> f32 {
    let mut rng = lumbre_gpu::testing::Rng::new(seed);
    move || rng.f32()
}

/// `n` lights on the scene's triangles (picked by area), facing the scene's centre, with
/// the surface's colour: a stand-in for VPLs.
pub fn surface_lights(p: &Prepared, n: usize, seed: u32) -> Vec<Vpl> {
    let mut r = stream(seed);
    let areas: Vec<f32> = p.tris.iter().map(|[a, b, c]| 0.5 * (*b - *a).cross(*c - *a).length()).collect();
    let total: f32 = areas.iter().sum();
    let centre = (p.scene.bounds.0 + p.scene.bounds.1) * 0.5;
    (0..n)
        .map(|_| {
            let mut u = r() * total;
            let mut k = 0;
            while k + 1 < areas.len() && u >= areas[k] {
                u -= areas[k];
                k += 1;
            }
            let [a, b, c] = p.tris[k];
            let (s, t) = (r().sqrt(), r());
            let position = a * (1.0 - s) + b * (s * (1.0 - t)) + c * (s * t);
            let mut normal = (b - a).cross(c - a).normalize();
            if normal.dot(centre - position) < 0.0 {
                normal = -normal;
            }
            let kd = p.scene.materials[p.scene.triangles[k].material as usize].kd;
            Vpl { position: position + normal * p.eps, normal, intensity: kd * (0.2 + r()) * 2.0 / n as f32 }
        })
        .collect()
}

/// The shading input of the Cornell box from the reference view.
pub fn cornell_shading(tree: LightTree, width: u32, height: u32) -> Shading {
    let prepared = cornell();
    let gbuffer = GBufferPass { view: View::cornell(width, height), query: Default::default() }.cpu(&prepared).unwrap();
    Shading { prepared, tree, gbuffer }
}

/// Channel-sum relative error of `a` against the reference `b` (0 where both are 0).
pub fn relative_error(a: Vec3, b: Vec3) -> f32 {
    let (s, r) = (a.x + a.y + a.z, b.x + b.y + b.z);
    if r == 0.0 { if s == 0.0 { 0.0 } else { f32::INFINITY } } else { (s - r).abs() / r }
}

/// How closely the GPU must agree with the CPU on `gpu`: exactly on lavapipe (f32 operations
/// one by one, as IEEE 754 rounds them, as the kernels are written for); on other devices,
/// which may fuse multiply-adds and divide or take square roots to an ulp or two, within
/// 1e-4 relative (1e-5 absolute, in units of the test scenes' size of about 2), but for 1%
/// of the pixels, whose rays may graze an edge and see another triangle.
pub fn device_tolerance(gpu: &lumbre_gpu::Gpu) -> lumbre_gpu::Tolerance {
    if exact_device(gpu) {
        lumbre_gpu::Tolerance::EXACT
    } else {
        lumbre_gpu::Tolerance::within(1e-5, 1e-4).beyond(0.01)
    }
}

/// Whether `gpu` rounds f32 operations one by one as the CPU does (lavapipe), where CPU and
/// GPU agree bit for bit.
pub fn exact_device(gpu: &lumbre_gpu::Gpu) -> bool {
    lumbre_gpu::testing::capabilities(gpu).exact_f32
}
