//! What crosses between host and device when `lumbre lightcuts` runs on the GPU, counted
//! by the runtime and driven as the command drives the library (a render placed once and
//! run through `run_placed`'s steps): the scene goes up, the VPLs' count (one word, to size
//! the tree and the shading) is the only read before the image, and the image, the cuts and
//! their statistics come back at the end. The greedy light tree is built on the CPU: its
//! VPLs come back and the tree goes up, the one flow that fails the check.

use lumbre_gpu::testing::{between_stages, own_gpu};
use lumbre_gpu::{Compute, Gpu, Traffic, Transfers};
use lumbre_lightcuts::ism::IsmOptions;
use lumbre_lightcuts::{CutOptions, GreedyTree, Method, MortonTree, Render, TreeBuilder, View, Visibility, VplOptions};
use lumbre_raytrace::{Prepared, Scene};

fn cornell() -> Prepared {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/scenes/CornellBox-Diffuse.obj");
    let (scene, _) = Scene::load_obj(path.as_ref()).unwrap();
    Prepared::new(scene, &Default::default())
}

const W: u32 = 16;
const H: u32 = 12;
/// A vec4 per pixel: an image, or the cuts.
const PER_PIXEL: u64 = 16 * W as u64 * H as u64;

fn render(method: Method, tree: TreeBuilder, visibility: Visibility) -> Render {
    Render {
        view: View::cornell(W, H),
        vpls: VplOptions { paths: 300, direct: 100, bounces: 1, ..VplOptions::default() },
        tree,
        method,
        visibility,
        ..Render::default()
    }
}

/// What moved while `render` ran on the GPU: the scene's upload, the stages (recording,
/// the VPLs' submission and the last one), and the result (image, cuts, statistics).
fn run(gpu: &Gpu, render: &Render, p: &Prepared) -> (Transfers, Transfers, Transfers) {
    let t0 = gpu.transfers();
    let scene = render.upload(gpu, p).unwrap();
    let t1 = gpu.transfers();
    let mut rec = gpu.recorder();
    let out = render.record(&mut rec, &scene).unwrap();
    rec.submit().unwrap();
    let t2 = gpu.transfers();
    let lit = render.download(gpu, &out).unwrap();
    let report = render.gpu_stats(gpu, &out).unwrap();
    let t3 = gpu.transfers();
    assert!(lit.vpls > 200 && lit.image.pixels.iter().any(|p| p.x > 0.0));
    assert!(report.get("vpls").is_some());
    (t1 - t0, t2 - t1, t3 - t2)
}

#[test]
fn lightcuts_read_back_only_the_vpl_count_before_the_image() {
    let Some(gpu) = own_gpu(lumbre_gpu::wgpu::Features::empty()) else { return };
    let p = cornell();
    let cuts = Method::Lightcuts(CutOptions::default());
    let morton = TreeBuilder::Morton(MortonTree::default());
    for visibility in [Visibility::Ism(IsmOptions::default()), Visibility::Rays] {
        let (scene, stages, result) = run(&gpu, &render(cuts, morton, visibility), &p);
        assert!(scene.uploads.bytes > 1000 && scene.downloads.calls == 0, "{scene}");
        // Between the scene and the image: the VPLs' count, one word.
        between_stages(&stages, 1, 4).unwrap_or_else(|e| panic!("{}: {e}", visibility.name()));
        assert_eq!(stages.downloads, Traffic { calls: 1, bytes: 4 });
        // The result: the cuts, the image, and the cuts again for their statistics.
        assert_eq!(result.downloads, Traffic { calls: 3, bytes: 3 * PER_PIXEL }, "{}", visibility.name());
        assert_eq!(result.uploads.calls, 0);
    }
}

#[test]
fn instant_radiosity_reads_back_only_the_vpl_count_before_the_image() {
    let Some(gpu) = own_gpu(lumbre_gpu::wgpu::Features::empty()) else { return };
    let p = cornell();
    let morton = TreeBuilder::Morton(MortonTree::default());
    let (_, stages, result) = run(&gpu, &render(Method::Instant, morton, Visibility::Ism(IsmOptions::default())), &p);
    between_stages(&stages, 1, 4).unwrap_or_else(|e| panic!("instant radiosity: {e}"));
    // The image and the visibility queries per 8x8 tile (read for the result and for the
    // statistics).
    let tiles = (W.div_ceil(8) * H.div_ceil(8)) as u64;
    assert_eq!(result.downloads, Traffic { calls: 3, bytes: PER_PIXEL + 2 * 4 * tiles }, "{result}");
}

#[test]
fn the_greedy_tree_built_on_the_cpu_fails_the_check() {
    let Some(gpu) = own_gpu(lumbre_gpu::wgpu::Features::empty()) else { return };
    let p = cornell();
    let greedy = TreeBuilder::Greedy(GreedyTree::default());
    let (_, stages, _) = run(&gpu, &render(Method::Lightcuts(CutOptions::default()), greedy, Visibility::Rays), &p);
    let err = between_stages(&stages, 1, 4).unwrap_err();
    assert!(err.contains("read back between stages") && err.contains("sent up between stages"), "{err}");
}
