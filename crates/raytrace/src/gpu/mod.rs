//! The GPU paths, one module per stage named like its CPU module: the scene as the renderers
//! read it (`scene`), the integrators (`whitted`, `path`), the voxel renderer (`volume`) and
//! the emitter distribution (`emitters`); then what they share: images (`image`) and the
//! cutting of a render into dispatches (`batch`).

mod batch;
mod emitters;
mod image;
mod path;
mod scene;
mod volume;
mod whitted;

pub use batch::SAMPLES_PER_DISPATCH;
pub use emitters::{GpuEmitter, GpuEmitters};
pub use path::{GpuPathImage, GpuPathScene};
pub use scene::GpuScene;
pub use volume::GpuVolumeImage;
pub use whitted::GpuImage;
