//! Lightcuts with imperfect shadow maps: virtual point lights (VPLs) from the scene's
//! emitters, light trees, per-pixel lightcuts and instant radiosity, with visibility by
//! exact shadow rays or by imperfect shadow maps, on the CPU and the GPU.
//!
//! ```
//! use glam::Vec3;
//! use lumbre_lightcuts::Vpl;
//! let vpl = Vpl { position: Vec3::ZERO, normal: Vec3::Y, intensity: Vec3::ONE };
//! // A VPL emits `intensity * cos` around its normal, nothing behind it.
//! assert_eq!(vpl.intensity_towards(Vec3::Y), Vec3::ONE);
//! assert_eq!(vpl.intensity_towards(-Vec3::Y), Vec3::ZERO);
//! ```

pub mod bench;
mod bounds;
mod cut;
mod gbuffer;
mod gpu;
mod greedy;
mod instant;
pub mod ism;
mod metric;
mod morton_tree;
mod render;
mod shading;
mod tree;
mod vpl;
mod vpls;

pub use bounds::{Cone, box_dist2, cos_upper, light_cos_upper, receiver_cos_upper};
pub use cut::{CUT_INEXACT, CUT_MAX_REACHED, CutOptions, CutPixel, Lightcuts};
pub use gbuffer::{GBuffer, GPixel, SHADED, View, gbuffer_cpu};
pub use gpu::{
    GBufferPass, GpuCuts, GpuGBuffer, GpuLightScene, GpuLightTree, GpuLights, GpuLit, GpuVplList, GpuVplScene,
    HEAP_SIZES, VplPass,
};
pub use greedy::GreedyTree;
pub use instant::InstantRadiosity;
pub use metric::{ClusterMetric, chromaticity, color_difference, max_color_difference};
pub use morton_tree::{MAX_DIRECTION_BITS, MortonTree};
pub use render::{GpuRenderScene, GpuRendering, Method, Render, Rendering, TreeBuilder, cut_heatmap};
pub use shading::{
    DEFAULT_CLAMP, GpuShading, INV_PI, Lit, SHADOW_END, Shading, ShadingRef, Visibility, geometry, min_distance2,
};
pub use tree::{LEAF, LightNode, LightTree, rep_uniform};
pub use vpl::{Vpl, validate_vpls};
pub use vpls::{VplOptions, vpl_uniform, vpls_cpu};
