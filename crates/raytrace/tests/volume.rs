//! Volume rendering of the phantom: golden images for the three modes (CPU), the GPU
//! against the CPU, and the GPU build feeding the GPU render in one submission.
//! Thresholds as in golden.rs: CPU vs golden RMSE <= 0.002, GPU vs CPU RMSE <= 0.006 (on
//! 8-bit sRGB in 0..1); colour and depth modes are exact in practice, Phong's `pow` and
//! lighting may round differently.

use std::path::PathBuf;

use lumbre_gpu::testing::test_gpu;
use lumbre_gpu::{Compute, Tolerance, conformance};
use lumbre_octree::{Attrs, GpuBuild, Octree};
use lumbre_raytrace::{
    Camera, Image, VolumeMode, VolumeOptions, VolumeRender, cloud_points, diff_stats, phantom_cloud,
};

const CPU_TOL: f32 = 0.002;
const GPU_TOL: f64 = 0.006;
const DEPTH: u32 = 5;

fn golden_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/golden").join(format!("{name}.png"))
}

fn camera() -> Camera {
    let mut c = Camera::frame((glam::Vec3::splat(-1.0), glam::Vec3::ONE), 1.0);
    c.eye = glam::Vec3::new(1.6, 1.1, 2.6);
    c
}

fn render(mode: VolumeMode) -> VolumeRender {
    VolumeRender {
        camera: camera(),
        options: VolumeOptions { width: 64, height: 64, mode, ..Default::default() },
        tree_depth: DEPTH,
    }
}

fn tree() -> Octree {
    let points = cloud_points(&phantom_cloud(32));
    Octree::build(&points.positions, &points.attrs, DEPTH).unwrap().0
}

#[test]
fn three_modes_match_golden_images_and_the_gpu() {
    let tree = tree();
    for (mode, name) in [
        (VolumeMode::Colour, "phantom-colour"),
        (VolumeMode::Depth, "phantom-depth"),
        (VolumeMode::Phong, "phantom-phong"),
    ] {
        let r = render(mode);
        let cpu = r.cpu(&tree).unwrap();
        let path = golden_path(name);
        if std::env::var("LUMBRE_BLESS").is_ok_and(|v| v == "1") {
            cpu.save_png(&path).unwrap();
        }
        let want = Image::load_png(&path).unwrap_or_else(|e| panic!("{e} (run `cargo xtask golden --bless`)"));
        let d = diff_stats(&want, &cpu).unwrap();
        assert!(d.rmse <= CPU_TOL, "{name}: CPU render differs from the golden image: RMSE {}", d.rmse);
        let Some(gpu) = test_gpu(lumbre_gpu::wgpu::Features::empty()) else { continue };
        conformance(&r, &gpu, &tree.pack(), Tolerance::absolute(GPU_TOL)).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

#[test]
fn coarser_render_levels_agree() {
    let Some(gpu) = test_gpu(lumbre_gpu::wgpu::Features::empty()) else { return };
    let tree = tree();
    for level in [0, 2, 4] {
        let mut r = render(VolumeMode::Depth);
        r.options.level = level;
        conformance(&r, &gpu, &tree.pack(), Tolerance::absolute(GPU_TOL))
            .unwrap_or_else(|e| panic!("level {level}: {e}"));
    }
}

/// A unit root (two corner points) holding a solid 8x8x8 block of leaf voxels at `depth`,
/// and a camera close enough to see them: rays descend the whole depth and hit.
fn deep_block(depth: u32) -> (Octree, Camera) {
    let s = 1.0 / (1u32 << depth) as f32;
    let c = 0.3f32;
    let mut positions = vec![[0.0; 3], [1.0; 3]];
    for i in 0..512 {
        let cell = [i % 8, (i / 8) % 8, i / 64];
        positions.push(cell.map(|k| c + (k as f32 + 0.5) * s));
    }
    let attrs =
        (0..positions.len()).map(|i| Attrs::from_unit([(i % 7) as f32 / 7.0, 0.5, 1.0], 0.0, 0.0)).collect::<Vec<_>>();
    let tree = Octree::build(&positions, &attrs, depth).unwrap().0;
    let centre = glam::Vec3::splat(c + 4.0 * s);
    let camera = Camera { eye: centre + glam::Vec3::new(9.0, 6.0, 14.0) * s, target: centre, ..camera() };
    (tree, camera)
}

#[test]
fn trees_deeper_than_ten_levels_render_alike() {
    let Some(gpu) = test_gpu(lumbre_gpu::wgpu::Features::empty()) else { return };
    for (depth, level) in [(14, 14), (21, 21), (21, 20)] {
        let (tree, camera) = deep_block(depth);
        let mut r = render(VolumeMode::Colour);
        (r.tree_depth, r.options.level, r.camera) = (depth, level, camera);
        // Most of the image is the block, not the background.
        let cpu = r.cpu(&tree).unwrap();
        let background = cpu.get(0, 0);
        let hits = (0..64).flat_map(|y| (0..64).map(move |x| (x, y))).filter(|&(x, y)| cpu.get(x, y) != background);
        assert!(hits.count() > 1000, "depth {depth} level {level}: the block fills the view");
        conformance(&r, &gpu, &tree.pack(), Tolerance::absolute(GPU_TOL))
            .unwrap_or_else(|e| panic!("depth {depth} level {level}: {e}"));
    }
}

#[test]
fn a_tree_without_points_renders_the_background() {
    let Some(gpu) = test_gpu(lumbre_gpu::wgpu::Features::empty()) else { return };
    let root = lumbre_octree::Root { min: [-1.0; 3], size: 2.0 };
    // Depth 0 matters: there the root is a payload, which the GPU must not mistake for a voxel.
    for depth in [0, 3] {
        let tree = Octree::build_in(&[[f32::NAN; 3]], &[Attrs::default()], depth, root).unwrap().0;
        let mut r = render(VolumeMode::Colour);
        (r.tree_depth, r.options.level) = (depth, depth);
        let image =
            conformance(&r, &gpu, &tree.pack(), Tolerance::EXACT).unwrap_or_else(|e| panic!("depth {depth}: {e}"));
        let background = r.options.background;
        assert!((0..64).all(|y| (0..64).all(|x| image.get(x, y) == background)), "depth {depth}");
    }
}

#[test]
fn gpu_build_then_gpu_render_in_one_submission() {
    let Some(gpu) = test_gpu(lumbre_gpu::wgpu::Features::empty()) else { return };
    let points = cloud_points(&phantom_cloud(32));
    let build = GpuBuild::new(DEPTH);
    let r = render(VolumeMode::Colour);
    let mut rec = gpu.recorder();
    let on_gpu = build.record(&mut rec, &build.upload(&gpu, &points).unwrap()).unwrap();
    let image = r.record(&mut rec, &on_gpu).unwrap();
    rec.submit().unwrap();
    let from_gpu = r.download(&gpu, &image).unwrap();
    let from_cpu = r.cpu(&tree()).unwrap();
    let d = diff_stats(&from_cpu, &from_gpu).unwrap();
    assert!(d.rmse as f64 <= GPU_TOL, "RMSE {}", d.rmse);
}

#[test]
fn a_wrong_volume_image_fails() {
    let tree = tree();
    let right = render(VolumeMode::Colour).cpu(&tree).unwrap();
    let mut other = render(VolumeMode::Colour);
    other.options.level = 3; // coarser voxels: the same head, visibly blockier
    let wrong = other.cpu(&tree).unwrap();
    assert!(diff_stats(&right, &wrong).unwrap().rmse as f64 > GPU_TOL);
}
