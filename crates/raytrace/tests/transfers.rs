//! What crosses between host and device when `lumbre render` (Whitted and path) and
//! `lumbre volume` run on the GPU, counted by the runtime and driven as the commands drive
//! the library: the scene or the points go up once, and each batch or frame reads back
//! only its image and its few counters (the wavefront path tracer also two counters every 32
//! rounds). Building the octree on the GPU, reading it back and
//! sending it up again for the render (what the check exists to catch) fails the check.

use lumbre_gpu::testing::{between_stages, own_gpu};
use lumbre_gpu::{Compute, Placed, Traffic, Transfers};
use lumbre_octree::GpuBuild;
use lumbre_raytrace::{
    Camera, PathOptions, PathRender, Prepared, RenderOptions, Scene, VolumeOptions, VolumeRender, cloud_points,
    cloud_root, phantom_cloud,
};

fn scene(name: &str) -> Prepared {
    let path = format!("{}/../../testdata/scenes/{name}", env!("CARGO_MANIFEST_DIR"));
    let (scene, _) = Scene::load(path.as_ref()).unwrap();
    Prepared::new(scene, &Default::default())
}

const W: u32 = 24;
const H: u32 = 18;
/// One image read back: a vec4 of f32 per pixel.
const IMAGE: u64 = 16 * W as u64 * H as u64;
/// The path tracer's and the Whitted renderer's fixed-point sums read back: three 64-bit sums
/// per pixel.
const SUMS: u64 = 24 * W as u64 * H as u64;

/// The batches of samples a progressive render runs: `(first sample, samples)`.
const BATCHES: [(u32, u32); 3] = [(0, 1), (1, 2), (3, 4)];

/// Checks one batch's transfers: uploads of kernel parameters only, and as reads, the
/// counters `counters` bytes long twice (before the image, to refuse an image cut short,
/// and for the statistics) and the image (`image` bytes).
fn check_batch(what: &str, moved: Transfers, image: u64, counters: u64) {
    let output = Traffic { calls: 3, bytes: image + 2 * counters };
    assert_eq!(moved.downloads, output, "{what}: {moved}");
    let before_output = Transfers { downloads: Traffic::default(), ..moved };
    between_stages(&before_output, 0, 0).unwrap_or_else(|e| panic!("{what}: {e}"));
}

#[test]
fn whitted_batches_read_back_only_their_sums_and_ray_counters() {
    let Some(gpu) = own_gpu(lumbre_gpu::wgpu::Features::empty()) else { return };
    let p = scene("CornellBox-Original.obj");
    let camera = Camera::parse("0,1,3.9,0,1,0,0,1,0,40").unwrap();
    let mut render = lumbre_raytrace::WhittedRender {
        camera,
        options: RenderOptions { width: W, height: H, spp: 7, ..Default::default() },
    };
    let t0 = gpu.transfers();
    let placed: Placed<'_, lumbre_raytrace::WhittedRender> = Placed::Gpu(gpu.clone(), render.upload(&gpu, &p).unwrap());
    let scene_up = gpu.transfers() - t0;
    assert!(scene_up.uploads.bytes > 1000 && scene_up.downloads.calls == 0, "{scene_up}");
    for (first, count) in BATCHES {
        render.options.batch = Some((first, count));
        let t = gpu.transfers();
        let (image, report) = render.run_placed(&placed, &()).unwrap();
        assert!(report.get("rays").unwrap() > 0.0 && image.pixels.iter().any(|p| p.x > 0.0));
        // Four words of counters: rays (low, high), invocations cut short, the sums' unit.
        check_batch(&format!("whitted batch {first}+{count}"), gpu.transfers() - t, SUMS, 16);
    }
}

/// Runs the path tracer's progressive batches on `schedule` as `lumbre render` does, checking
/// that the scene went up once, and hands each batch's transfers to `check`.
fn path_batches(schedule: lumbre_raytrace::PathSchedule, check: impl Fn(&str, Transfers)) {
    let Some(gpu) = own_gpu(lumbre_gpu::wgpu::Features::empty()) else { return };
    let p = scene("CornellBox-Diffuse.obj");
    let camera = Camera::parse("0,1,3.9,0,1,0,0,1,0,40").unwrap();
    let options = PathOptions { width: W, height: H, spp: 1, schedule, ..Default::default() };
    let mut render = PathRender { camera, options };
    let t0 = gpu.transfers();
    let placed: Placed<'_, PathRender> = Placed::Gpu(gpu.clone(), render.upload(&gpu, &p).unwrap());
    let scene_up = gpu.transfers() - t0;
    assert!(scene_up.uploads.bytes > 1000 && scene_up.downloads.calls == 0, "{scene_up}");
    for (first, count) in BATCHES {
        render.options.first_sample = first;
        render.options.spp = count;
        let t = gpu.transfers();
        let (image, report) = render.run_placed(&placed, &()).unwrap();
        assert!(report.get("paths").unwrap() > 0.0 && image.pixels.iter().any(|p| p.x > 0.0));
        check(&format!("path batch {first}+{count}, {schedule:?}"), gpu.transfers() - t);
    }
}

#[test]
fn path_batches_read_back_only_their_image_and_ray_counters() {
    // Six words of counters: extension and shadow rays (low, high), batches cut short, spare.
    path_batches(lumbre_raytrace::PathSchedule::Megakernel, |what, moved| check_batch(what, moved, SUMS, 24));
}

#[test]
fn wavefront_batches_read_back_only_two_counters_every_32_rounds() {
    path_batches(lumbre_raytrace::PathSchedule::wavefront(), |what, moved| {
        // The megakernel's output (the sums, the counters twice), and between stages the two
        // counters (8 bytes) once per 32 rounds: a round a vertex, paths of at most 65.
        let looks = moved.downloads.calls - 3;
        assert!((1..=3).contains(&looks), "{what}: {looks} looks: {moved}");
        assert_eq!(moved.downloads.bytes, SUMS + 2 * 24 + 8 * looks, "{what}: {moved}");
        let before_output = Transfers { downloads: Traffic::default(), ..moved };
        between_stages(&before_output, 0, 0).unwrap_or_else(|e| panic!("{what}: {e}"));
    });
}

/// Points of the phantom, the tree's depth, and the camera of an orbit's frame `i` of 3.
fn volume_setup() -> (lumbre_octree::Points, u32, lumbre_octree::Root, (glam::Vec3, glam::Vec3)) {
    let points = cloud_points(&phantom_cloud(32));
    let depth = 5;
    let (root, bounds) = cloud_root(&points.positions, depth).unwrap();
    (points, depth, root, bounds)
}

#[test]
fn a_volume_orbit_builds_once_and_reads_back_only_the_tree_sizes_and_its_frames() {
    let Some(gpu) = own_gpu(lumbre_gpu::wgpu::Features::empty()) else { return };
    let (points, depth, root, bounds) = volume_setup();
    // As `lumbre volume --backend gpu --orbit 3` does: build on the GPU, read the level
    // sizes for the summary, render every frame from the tree where it is.
    let build = GpuBuild { depth, root: Some(root) };
    let t0 = gpu.transfers();
    let cloud = build.upload(&gpu, &points).unwrap();
    let t1 = gpu.transfers();
    let mut rec = gpu.recorder();
    let tree = build.record(&mut rec, &cloud).unwrap();
    rec.submit().unwrap();
    let t2 = gpu.transfers();
    let sizes = gpu.download(&tree.levels).unwrap();
    let t3 = gpu.transfers();
    assert!((t1 - t0).uploads.bytes >= 12 * points.positions.len() as u64, "the points went up: {}", t1 - t0);
    between_stages(&(t2 - t1), 0, 0).unwrap_or_else(|e| panic!("octree build: {e}"));
    assert_eq!((t3 - t2).downloads, Traffic { calls: 1, bytes: 4 * (depth as u64 + 2) }, "the level sizes");
    assert!(sizes[sizes.len() - 1] > 0);
    let placed: Placed<'_, VolumeRender> = Placed::Gpu(gpu.clone(), tree);
    for i in 0..3 {
        let camera = Camera::orbit(bounds, 1.0, i, 3);
        let render = VolumeRender {
            camera,
            options: VolumeOptions { width: W, height: H, ..Default::default() },
            tree_depth: depth,
        };
        let t = gpu.transfers();
        let (image, _) = render.run_placed(&placed, &()).unwrap();
        let moved = gpu.transfers() - t;
        assert!(image.pixels.iter().any(|p| *p != image.pixels[0]), "frame {i} shows the phantom");
        assert_eq!(moved.downloads, Traffic { calls: 1, bytes: IMAGE }, "frame {i}: {moved}");
        // Uploads: the frame's parameters and its lights (two vec4s per light).
        let before_output = Transfers { downloads: Traffic::default(), ..moved };
        between_stages(&before_output, 0, 0).unwrap_or_else(|e| panic!("frame {i}: {e}"));
    }
}

#[test]
fn reading_the_tree_back_to_render_it_fails_the_check() {
    let Some(gpu) = own_gpu(lumbre_gpu::wgpu::Features::empty()) else { return };
    let (points, depth, root, bounds) = volume_setup();
    let build = GpuBuild { depth, root: Some(root) };
    let cloud = build.upload(&gpu, &points).unwrap();
    let t = gpu.transfers();
    let mut rec = gpu.recorder();
    let tree = build.record(&mut rec, &cloud).unwrap();
    rec.submit().unwrap();
    // The round trip: the packed tree comes back and goes up again for the render.
    let packed = build.download(&gpu, &tree).unwrap();
    let again = packed.upload(&gpu).unwrap();
    let render = VolumeRender {
        camera: Camera::orbit(bounds, 1.0, 0, 3),
        options: VolumeOptions { width: W, height: H, ..Default::default() },
        tree_depth: depth,
    };
    let mut rec = gpu.recorder();
    let image = render.record(&mut rec, &again).unwrap();
    rec.submit().unwrap();
    let err = between_stages(&(gpu.transfers() - t), 1, 4 * (depth as u64 + 2)).unwrap_err();
    assert!(err.contains("read back between stages") && err.contains("sent up between stages"), "{err}");
    assert!(render.download(&gpu, &image).is_ok());
}
