//! The contract between the CPU paths and their WGSL twins: the layouts of the structs the
//! shaders read, the constants both sides hard-code, and the CPU functions a kernel repeats
//! step by step. A kernel of another crate that reads the camera, the materials or the
//! emitters, or that must draw the same numbers as a renderer, takes its pieces from here; a
//! user who loads scenes and renders them does not need them.
//!
//! The integer hash, the stratified pixel samples and the sample warps, twins of
//! `shared/sampling.wgsl`, are in [`sampling`](crate::sampling).
//!
//! ```
//! use lumbre_raytrace::Camera;
//! use lumbre_raytrace::twin::{DIM_CAMERA, GpuCamera, path_uniform};
//! let camera: GpuCamera = Camera::frame((glam::Vec3::ZERO, glam::Vec3::ONE), 1.0).to_gpu(64, 64);
//! assert_eq!(std::mem::size_of_val(&camera), 80);
//! // The jitter of pixel 0's first camera ray, as `raytrace/path.wgsl` draws it.
//! assert!((0.0..1.0).contains(&path_uniform(0, 0, 0, DIM_CAMERA)));
//! ```

pub use crate::camera::GpuCamera;
pub use crate::emitters::NOT_AN_EMITTER;
#[cfg(feature = "gpu")]
pub use crate::gpu::{GpuEmitter, GpuEmitters, SAMPLES_PER_DISPATCH};
pub use crate::material::GpuMaterial;
pub use crate::path::{
    DIM_CAMERA, DIM_DIRECTION, DIM_LIGHT_PICK, DIM_LIGHT_POINT, DIM_LOBE, DIM_ROULETTE, ROULETTE_SURVIVAL, path_uniform,
};
pub use crate::scene::{NO_NORMAL, ray_offset};
pub use crate::volume::{VOXEL_SPECULAR, depth_range, voxel_eps, voxel_radiance};
pub use crate::whitted::schlick;
