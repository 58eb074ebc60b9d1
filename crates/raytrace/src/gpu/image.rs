//! Images on the GPU: whether one fits a storage binding, and how a GPU image is compared with
//! the CPU's in conformance tests.

use lumbre_gpu::{Agree, Error, Fit, Gpu, Result, Tolerance};

use crate::image::Image;
use crate::metrics::diff_stats;

/// An error unless a `width` x `height` image of `[f32; 4]` pixels fits one storage binding
/// of `gpu`, in words of pixels rather than bytes.
pub(crate) fn check_gpu_image(gpu: &Gpu, width: u32, height: u32) -> Result<()> {
    let pixels = u64::from(width) * u64::from(height);
    let bytes = pixels * size_of::<[f32; 4]>() as u64;
    if gpu.check_size("image", bytes, Fit::Binding).is_err() {
        let l = gpu.limits();
        let max = l.max_storage_buffer_binding_size.min(l.max_buffer_size) / size_of::<[f32; 4]>() as u64;
        return Err(Error::Input(format!(
            "a {width}x{height} image has {pixels} pixels; this GPU holds at most {max} in one image \
             (16 bytes each in its largest storage buffer): render a smaller image or on the CPU"
        )));
    }
    Ok(())
}

impl Agree for Image {
    /// Images agree when the RMSE of their 8-bit sRGB values (in 0..1) is at most `tol.abs`.
    fn disagreement(&self, gpu: &Self, tol: Tolerance) -> Option<String> {
        match diff_stats(self, gpu) {
            Err(e) => Some(e.to_string()),
            Ok(d) if d.rmse as f64 > tol.abs => {
                Some(format!("image RMSE {} above {} (max pixel error {})", d.rmse, tol.abs, d.max_abs))
            }
            Ok(_) => None,
        }
    }
}
