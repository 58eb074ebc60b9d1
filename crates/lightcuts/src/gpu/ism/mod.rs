//! The GPU halves of the imperfect shadow maps' stages, named like their CPU halves in
//! `ism/` (`lightcuts/ism_<stage>.wgsl` each).

pub(crate) mod atlas;
pub(crate) mod build;
pub(crate) mod lookup;
pub(crate) mod points;
pub(crate) mod pull_push;
pub(crate) mod splat;

pub use atlas::GpuIsmAtlas;
pub use build::GpuIsmScene;
pub use lookup::GpuIsmQueries;
pub use points::{GpuPoolInput, GpuScenePoints};
pub use splat::{GpuIsmInput, upload_vpls};
