//! Input and output for Lumbre's ray tracers: scenes, materials, lights, the camera, images
//! and point clouds.
//!
//! - [`Scene::load`]: a scene file by its extension (`.obj`, `.gltf`, `.glb`).
//!   [`Scene::load_obj`]: OBJ + MTL through `tobj`, behind a line scanner that reports the
//!   file and line of malformed input; out-of-range faces, non-finite and degenerate triangles
//!   are dropped and counted in a [`LoadReport`]. Materials map to five [`MaterialKind`]s;
//!   emissive triangles become [`Light::Area`] lights. [`Scene::triangle_positions`] is the
//!   kd-tree builder's input.
//! - [`Scene::load_recentred`]: a scene moved near the origin, where the f32 renderers keep
//!   their precision, with the shift (f64) to move a camera by ([`Camera::parse_moved`]);
//!   OBJ positions are parsed in f64 and moved before they are rounded to f32.
//! - [`Scene::load_gltf`]: glTF 2.0 (`.gltf` with external or embedded buffers, `.glb`)
//!   through the `gltf` crate, with the same validation: the default scene's triangle
//!   primitives under their node transforms, base colour and emission as diffuse and emitter
//!   materials (base colour textures baked into per-triangle colours, since the renderers
//!   have no textures), and perspective cameras in [`Scene::cameras`]
//!   ([`Scene::default_camera`] picks the first, else frames the bounds).
//! - [`Camera`]: pinhole camera (`frame`, `orbit`, `parse` for the CLI), whose ray formula
//!   the GPU's ([`twin::GpuCamera`]) shares; [`sampling`] holds the stratified pixel samples
//!   built on an integer hash that WGSL reproduces bit for bit, and the warps of the Monte
//!   Carlo integrators.
//! - [`Prepared`]: a scene with its kd-tree, the input of the triangle renderers:
//!   [`WhittedRender`] (the Whitted integrator, [`RenderOptions`]) and [`PathRender`], the
//!   reference path tracer (next-event estimation with multiple importance sampling,
//!   Russian roulette, the same integer-hash random numbers on the CPU and in
//!   `raytrace/path.wgsl`, [`PathOptions`]), in the units of the scene's `Ke`.
//! - [`VolumeRender`]: point clouds drawn as voxels of the sparse octree ([`VolumeOptions`],
//!   [`render_volume_cpu`]).
//! - [`Emitters`]: the emissive triangles as a distribution (pick by power, uniform points,
//!   cosine directions) for the Monte Carlo integrators, with its WGSL twin
//!   `shared/emitters.wgsl` fed by [`twin::GpuEmitters`].
//! - [`Image`]: linear RGB, PNG (8-bit sRGB) and EXR (f32) files.
//! - [`metrics`]: how far a rendering is from a reference (RMSE, relative error overall and
//!   per region, CIE94 ΔE, false-colour images), and [`diff_stats`] for golden-image tests.
//! - [`PointCloud`]: the volumetric engine's text format, PLY (ascii and binary little-endian),
//!   and image slice stacks ([`load_slices`]), with the 3D Shepp–Logan phantom
//!   ([`shepp_logan_phantom`]) as medical-style test data.
//!
//! Every loader returns a [`LoadError`] (file, line, reason) on bad input, never panics.
//! What the WGSL shaders share with the CPU paths (struct layouts, constants, the CPU
//! functions a kernel repeats) is in [`twin`], for kernels of other crates.
//!
//! ```
//! use glam::Vec3;
//! use lumbre_raytrace::{Camera, Image, Scene};
//!
//! let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/scenes/CornellBox-Original.obj");
//! let (scene, report) = Scene::load_obj(path.as_ref()).unwrap();
//! assert_eq!(report.dropped(), 0);
//! let camera = Camera::frame(scene.bounds, 4.0 / 3.0);
//! let (origin, dir) = camera.ray(32.0, 24.0, 64, 48); // the image centre
//! assert!((origin + dir * (camera.target - origin).length() - camera.target).length() < 1e-4);
//! let image = Image::new(64, 48); // ... the integrator fills it in ...
//! assert_eq!(image.pixels.len(), 64 * 48);
//! # let _ = Vec3::ZERO;
//! ```

#![cfg_attr(docsrs, feature(doc_cfg))]

mod camera;
mod compose;
mod emitters;
mod error;
mod gltf;
#[cfg(feature = "gpu")]
mod gpu;
mod image;
mod material;
pub mod metrics;
mod obj;
mod obj_write;
mod path;
mod points;
mod read;
mod recentre;
pub mod sampling;
mod scene;
mod sums;
pub mod twin;
mod volume;
mod whitted;
mod write;

pub use crate::image::{Image, linear_to_srgb, srgb_to_linear};
pub use camera::Camera;
pub use compose::{BOX_FACES, SceneBuilder, stand_on};
pub use emitters::{Emitter, EmitterSample, Emitters};
pub use error::LoadError;
#[cfg(feature = "gpu")]
pub use gpu::{GpuImage, GpuPathImage, GpuPathScene, GpuScene, GpuVolumeImage};
pub use material::{Material, MaterialKind};
pub use metrics::{DiffStats, SizeMismatch, diff_stats};
pub use path::{PathCounts, PathOptions, PathRender, PathSchedule};
pub use points::{PointCloud, PointReport, load_slice_dir, load_slices, shepp_logan_phantom, write_slices};
pub use read::{MAX_INPUT_BYTES, check_input, read_input};
pub use scene::{Light, LoadReport, Prepared, SCENE_SIZE_RANGE, Scene, Triangle};
pub use sums::SampleSums;
pub use volume::{
    MAX_CLOUD_OFFSET, MAX_PHANTOM_N, VolumeMode, VolumeOptions, VolumeRender, cloud_points, cloud_root, phantom_cloud,
    render_volume_cpu,
};
pub use whitted::{MAX_PIXELS, MAX_SPP, MAX_TRACE_DEPTH, RenderOptions, RenderStats, WhittedRender, add_default_light};
pub use write::{write_file, write_with};
