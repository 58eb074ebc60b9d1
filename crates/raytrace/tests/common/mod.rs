//! Helpers shared by the integration tests.

#![allow(dead_code, unused_imports)]

use std::path::{Path, PathBuf};

pub use lumbre_gpu::testing::TempDir;

/// The original Cornell box with a glass short box (index 1.5), a mirror tall box of
/// reflectance `ks` with a little diffuse `kd`, and a point light of `intensity` at
/// `position` beside the area light: every branch of the integrators.
pub fn mirrors_and_glass(position: glam::Vec3, intensity: f32, ks: f32, kd: f32) -> lumbre_raytrace::Scene {
    use lumbre_raytrace::MaterialKind;
    let (mut scene, _) = lumbre_raytrace::Scene::load_obj(&testdata("scenes/CornellBox-Original.obj")).unwrap();
    scene.add_point_light(position, glam::Vec3::splat(intensity));
    for m in scene.materials.iter_mut() {
        if m.name == "shortBox" {
            m.kind = MaterialKind::Glass;
            m.ni = 1.5;
        } else if m.name == "tallBox" {
            m.kind = MaterialKind::Mirror;
            m.ks = glam::Vec3::splat(ks);
            m.kd = glam::Vec3::splat(kd);
        }
    }
    scene
}

/// `testdata/<rel>` of the workspace.
pub fn testdata(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata").join(rel)
}

/// Cuts samples `0..total` at `cuts`, takes each part's sums from `sums(a, b)` and merges
/// them in an order rotated by `order`: what the sums of `0..total` must equal bit for bit.
pub fn merged_split(
    mut cuts: Vec<u32>,
    order: u64,
    total: u32,
    sums: impl Fn(u32, u32) -> lumbre_raytrace::SampleSums,
) -> lumbre_raytrace::SampleSums {
    cuts.extend([0, total]);
    cuts.sort();
    cuts.dedup();
    let mut parts: Vec<_> = cuts.windows(2).map(|w| sums(w[0], w[1])).collect();
    let n = parts.len();
    parts.rotate_left((order % n as u64) as usize);
    let first = &parts[0];
    let mut merged = lumbre_raytrace::SampleSums::new(first.width, first.height, 0, first.scale_log2);
    for part in &parts {
        merged.merge(part).unwrap();
    }
    merged
}
