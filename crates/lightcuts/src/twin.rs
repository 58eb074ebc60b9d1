//! The CPU twins of the WGSL kernels' constants and functions (`lightcuts/light.wgsl`,
//! `vpls.wgsl`, `gbuffer.wgsl`): what a test, or a port of a kernel, needs to repeat the
//! GPU's arithmetic bit for bit. Rendering needs none of it: the stages at the crate's root
//! use them on both paths.
//!
//! ```
//! use glam::Vec3;
//! use lumbre_lightcuts::twin::{INV_PI, box_dist2, rep_uniform};
//! assert_eq!(INV_PI, std::f32::consts::FRAC_1_PI);
//! assert_eq!(box_dist2(Vec3::new(0.0, 2.0, 0.0), Vec3::ZERO, Vec3::ONE), 1.0);
//! assert!((0.0..1.0).contains(&rep_uniform(0, 1)));
//! ```

pub use crate::bounds::{box_dist2, cos_upper, light_cos_upper, receiver_cos_upper};
pub use crate::gbuffer::SHADED;
pub use crate::shading::{INV_PI, SHADOW_END, geometry};
pub use crate::tree::{LEAF, rep_uniform};
pub use crate::vpls::{DIM_ROULETTE, vpl_uniform};
