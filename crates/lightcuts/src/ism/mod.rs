//! Imperfect shadow maps (Ritschel et al. 2008) with pull-push hole filling, as in the
//! source work's sections 3 and 4.3: a small paraboloid depth map per VPL, splatted from a
//! shared pool of scene points instead of rasterised triangles, its holes filled by
//! pull-push, and looked up with a few taps for a fraction of visibility.
//!
//! The stages, each with a CPU path and a GPU twin (a [`Compute`](lumbre_gpu::Compute) each,
//! for conformance tests stage by stage):
//!
//! 1. [`SamplePoints`]: the pool, points spread over the triangles by area in a random order
//!    ([`ScenePoints`]); the same triangles and barycentric draws on both paths.
//! 2. [`Splat`]: each VPL projects the window of `points_per_vpl` pool points from its own
//!    start (the source work's suggested speed-up over discarding points per VPL) and keeps
//!    the nearest distance per texel ([`IsmAtlas`]).
//! 3. [`PullPush`]: holes filled from coarser levels (bilinear push).
//! 4. Lookups: [`IsmAtlas::visibility`] on the CPU, the WGSL module `lightcuts/ism_lookup`
//!    on the GPU ([`IsmLookup`] runs it for conformance).
//!
//! [`Ism`] runs stages 1-3 ([`Ism::build_cpu`], [`Ism::record_build`] from VPLs already on
//! the GPU).
//!
//! Each stage has one name in three places: its CPU half in `ism/<stage>.rs`, its GPU half
//! and its [`Compute`](lumbre_gpu::Compute) impl in `gpu/ism/<stage>.rs`, its WGSL in
//! `lightcuts/ism_<stage>.wgsl` (`points`, `splat`, `pull_push`, `lookup`; the whole build
//! is `build`, the WGSL modules `random` and `paraboloid` have CPU twins of their names).
//!
//! # CPU against GPU
//!
//! Both paths run the same operations in the same order, and the splat keeps integer
//! minima (order-independent), so on a device that evaluates f32 operations one by one as
//! IEEE 754 does (lavapipe, where the tests run) every stage agrees bit for bit. SPIR-V
//! lets a driver fuse multiply-adds and reassociate float operations (NVIDIA's do, and
//! Vulkan's division and square root may be off by an ulp or two): there positions and
//! depths move by a few ulps, and a point within rounding of a texel border can land in
//! the neighbouring texel. The pool's triangles and draws are integer arithmetic and agree
//! on every device; [`IsmAtlas::differing_texels`] measures the rest.
//!
//! ```
//! use glam::Vec3;
//! use lumbre_lightcuts::{Vpl, ism::{Ism, IsmOptions, ScenePoints}};
//! // A floor, and a small quad above it.
//! let quad = |y: f32, r: f32| {
//!     let c = [Vec3::new(-r, y, -r), Vec3::new(r, y, -r), Vec3::new(r, y, r), Vec3::new(-r, y, r)];
//!     [[c[0], c[1], c[2]], [c[0], c[2], c[3]]]
//! };
//! let tris: Vec<[Vec3; 3]> = quad(0.0, 1.0).into_iter().chain(quad(0.5, 0.25)).collect();
//! let opts = IsmOptions { size: 32, points: 20_000, points_per_vpl: 20_000, ..IsmOptions::paper() };
//! let pool = ScenePoints::sample(&tris, opts.points, opts.seed)?;
//! let vpl = Vpl { position: Vec3::new(0.0, 1.5, 0.0), normal: -Vec3::Y, intensity: Vec3::ONE };
//! let atlas = Ism::build_cpu(&pool, &[vpl], &opts)?;
//! assert_eq!(atlas.visibility(0, &vpl, Vec3::new(0.0, 0.0, 0.0)), 0.0); // under the quad
//! assert_eq!(atlas.visibility(0, &vpl, Vec3::new(0.9, 0.0, 0.9)), 1.0); // in the open
//! # Ok::<(), lumbre_gpu::Error>(())
//! ```

pub(crate) mod atlas;
pub(crate) mod build;
pub(crate) mod lookup;
pub(crate) mod options;
pub(crate) mod paraboloid;
pub(crate) mod points;
pub(crate) mod pull_push;
pub(crate) mod random;
pub(crate) mod splat;

#[cfg(feature = "gpu")]
pub use crate::gpu::ism::{
    GpuIsmAtlas, GpuIsmInput, GpuIsmQueries, GpuIsmScene, GpuPoolInput, GpuScenePoints, upload_vpls,
};
pub use atlas::{IsmAtlas, Lookup, MAX_DIFFERING, SAME_DEPTH_REL};
pub use build::{Ism, IsmScene};
pub use lookup::{IsmLookup, IsmQueries};
pub use options::{IsmOptions, MAX_POINTS, SIZES, TAPS};
pub use points::{SamplePoints, ScenePoints};
pub use pull_push::PullPush;
pub use splat::{IsmInput, Splat};
