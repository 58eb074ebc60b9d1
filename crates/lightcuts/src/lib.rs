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

pub mod ism;
mod vpl;

pub use vpl::Vpl;
