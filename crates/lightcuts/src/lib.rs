//! Lightcuts with imperfect shadow maps: virtual point lights (VPLs) from the scene's
//! emitters, light trees, per-pixel lightcuts and instant radiosity, with visibility by
//! exact shadow rays or by imperfect shadow maps, on the CPU and the GPU (the source work:
//! Arbesser and Mühlbacher, "Lightcuts in CUDA mit Imperfect Shadow Maps", after Walter et
//! al. 2005).
//!
//! The stages, each a [`Compute`](lumbre_gpu::Compute) with a CPU twin that the GPU path
//! matches operation for operation:
//!
//! 1. [`VplPass`]: VPLs on the emitters (direct light) and at the diffuse bounces of light
//!    paths leaving them, by default until Russian roulette ends the path (every bounce of
//!    light, as the path tracer sees it; [`VplOptions`]).
//! 2. Light trees ([`LightTree`]): the paper's greedy agglomerative build ([`GreedyTree`],
//!    CPU, with Walter's or the paper's [`ClusterMetric`]), or the GPU's build by Morton
//!    order and Karras's radix tree ([`MortonTree`]).
//! 3. [`GBufferPass`]: what each pixel's primary ray hits.
//! 4. Shading: [`Lightcuts`] (a cut per pixel, refined by Walter's error bounds until each
//!    cluster's bound is under a fraction of the estimate) or [`InstantRadiosity`] (every
//!    VPL for every pixel), with [`Visibility`] by shadow rays or imperfect shadow maps
//!    ([`ism`]).
//!
//! [`Render`] runs them all, on the whole image or on a band of its [`Rows`] (bands
//! rendered apart, on several GPUs or nodes, [assemble](Rendering::assemble) into the whole
//! render bit for bit); [`workloads`] makes lights to try the stages on; [`twin`] holds the
//! CPU twins of the kernels' constants and functions.
//!
//! ```
//! use lumbre_gpu::Compute;
//! use lumbre_lightcuts::{Render, View, VplOptions};
//! use lumbre_raytrace::{Prepared, Scene};
//! let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/scenes/CornellBox-Diffuse.obj");
//! let (scene, _) = Scene::load_obj(path.as_ref()).unwrap();
//! let prepared = Prepared::new(scene, &Default::default());
//! let vpls = VplOptions { direct: 50, paths: 50, ..Default::default() };
//! let render = Render { view: View::cornell(16, 16), vpls, ..Default::default() };
//! let (out, report) = render.cpu_reported(&prepared, &())?;
//! assert!(out.vpls > 100 && out.image.pixels.iter().any(|p| p.x > 0.0));
//! assert!(report.get("average cut").unwrap() <= out.vpls as f64);
//! # Ok::<(), lumbre_gpu::Error>(())
//! ```
//!
//! # CPU and GPU
//!
//! The kernels repeat their CPU twins' f32 operations in order, in forms that Mesa's
//! optimiser leaves alone, so on lavapipe (where the tests run) every stage agrees bit for
//! bit: VPLs, trees, G-buffers, cuts and images. A driver that fuses multiply-adds (NVIDIA)
//! changes the last bits, and a cut can then differ where a bound ties with the threshold.
//! Lavapipe ends a loop nest after 65535 iterations per invocation: instant radiosity runs
//! its VPLs in dispatches of 128, and a pixel's cut loop must stay under that there (cuts of
//! a few hundred clusters).

#![cfg_attr(docsrs, feature(doc_cfg))]

mod bounds;
mod cuts;
mod gbuffer;
#[cfg(feature = "gpu")]
mod gpu;
mod greedy;
mod instant;
pub mod ism;
mod metric;
mod morton_tree;
mod render;
mod rows;
mod shading;
mod tree;
pub mod twin;
mod vpls;
pub mod workloads;

pub use bounds::Cone;
pub use cuts::{CUT_INEXACT, CUT_MAX_REACHED, CutOptions, CutPixel, Lightcuts};
pub use gbuffer::{GBuffer, GBufferPass, GPixel, View, gbuffer_cpu};
#[cfg(feature = "gpu")]
pub use gpu::{
    GpuGBuffer, GpuLightTree, GpuLights, GpuLit, GpuRenderScene, GpuRendering, GpuShading, GpuVpl, GpuVplList,
    GpuVplScene, HEAP_SIZES,
};
pub use greedy::GreedyTree;
pub use instant::InstantRadiosity;
pub use metric::ClusterMetric;
pub use morton_tree::{MAX_DIRECTION_BITS, MortonTree};
pub use render::{Method, Render, Rendering, TreeBuilder, VIEW_SCALES, cut_heatmap};
pub use rows::Rows;
pub use shading::{DEFAULT_CLAMP, Lit, Shading, ShadingRef, Visibility};
pub use tree::{LightNode, LightTree};
pub use vpls::{
    DEFAULT_DIRECT, DEFAULT_PATHS, DIRECT_SHARE, ISM_VPLS, MAX_BOUNCES, PILOT_PATHS, RAYS_VPLS, RR_DEPTH, Vpl,
    VplOptions, VplPass, validate_vpls, vpls_cpu,
};
