//! Morton encoding on the GPU (`morton/encode.wgsl`), the twin of `encode.rs`, and its
//! [`Compute`] impl.

use lumbre_gpu::{Agree, Buffer, Compute, Error, Fit, Gpu, Progress, Recorder, Report, Result, Tolerance};

use crate::encode::{Keys, MortonEncode};

/// Points on the GPU.
#[derive(Clone, Debug)]
pub struct GpuPoints {
    /// `3n` floats, x y z per point.
    pub xyz: Buffer<f32>,
}

/// Codes on the GPU: one u32 per point, or two (low, high) for 63-bit codes; plus the count
/// of points that lay outside the box.
#[derive(Clone, Debug)]
pub struct GpuKeys {
    /// The codes.
    pub words: Buffer<u32>,
    /// Whether each code is two words.
    pub wide: bool,
    /// Points outside the box (clamped), one atomic counter.
    pub outside: Buffer<u32>,
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    min: [f32; 3],
    n: u32,
    max: [f32; 3],
    bits: u32,
    scale: [f32; 3],
    _pad: u32,
}
const _: () = assert!(size_of::<Params>() == lumbre_shaders::morton::ENCODE_PARAMS_SIZE);

impl MortonEncode {
    /// Records the encoding of `points` already on the GPU.
    pub fn record_keys(&self, rec: &mut Recorder, points: &GpuPoints) -> Result<GpuKeys> {
        let gpu = rec.gpu().clone();
        let n = points.xyz.len() / 3;
        let wide = self.wide();
        let per_key = if wide { 2 } else { 1 };
        let words = gpu.zeroed_fit::<u32>(per_key * n, Fit::Pieces)?;
        let outside = gpu.zeroed::<u32>(1)?;
        let q = &self.quantizer;
        let entry = if wide { "encode64" } else { "encode32" };
        let kernel = gpu.kernel(&lumbre_shaders::morton::ENCODE, entry)?;
        // Clouds longer than one storage binding go in pieces of whole workgroups.
        let piece = gpu.piece_len(12, 256);
        let mut start = 0;
        while start < n {
            let len = piece.min(n - start);
            let params =
                gpu.uniform(&Params { min: q.min, n: len as u32, max: q.max, bits: q.bits, scale: q.scale, _pad: 0 })?;
            let bind = [
                params.as_entire_binding(),
                points.xyz.binding_range(3 * start..3 * (start + len)),
                words.binding_range(per_key * start..per_key * (start + len)),
                outside.binding(),
            ];
            // Four points per thread, 256 threads per workgroup.
            rec.dispatch("morton encode", &kernel, &bind, (len as u64).div_ceil(1024))?;
            start += len;
        }
        Ok(GpuKeys { words, wide, outside })
    }
}

impl Compute for MortonEncode {
    type Input = [[f32; 3]];
    type Output = Keys;
    type GpuInput = GpuPoints;
    type GpuOutput = GpuKeys;

    fn name(&self) -> &'static str {
        "morton encode"
    }

    fn cpu_reported(&self, points: &[[f32; 3]], _: &dyn Progress) -> Result<(Keys, Report)> {
        Report::timed(self.name(), || self.cpu(points))
    }

    fn upload(&self, gpu: &Gpu, points: &[[f32; 3]]) -> Result<GpuPoints> {
        u32::try_from(points.len()).map_err(|_| Error::Input("more than 2^32 points".into()))?;
        Ok(GpuPoints { xyz: gpu.upload_fit(bytemuck::cast_slice(points), Fit::Pieces)? })
    }

    fn record(&self, rec: &mut Recorder, points: &GpuPoints) -> Result<GpuKeys> {
        self.record_keys(rec, points)
    }

    fn download(&self, gpu: &Gpu, keys: &GpuKeys) -> Result<Keys> {
        let outside = gpu.download(&keys.outside)?[0];
        if outside > 0 && !self.clamp {
            return Err(Error::Input(format!("{outside} point(s) lie outside the quantisation box")));
        }
        let words = gpu.download(&keys.words)?;
        Ok(if keys.wide {
            Keys::U64(words.chunks_exact(2).map(|w| w[0] as u64 | (w[1] as u64) << 32).collect())
        } else {
            Keys::U32(words)
        })
    }
}

impl Agree for Keys {
    fn disagreement(&self, gpu: &Self, tol: Tolerance) -> Option<String> {
        match (self, gpu) {
            (Keys::U32(a), Keys::U32(b)) => a.disagreement(b, tol),
            (Keys::U64(a), Keys::U64(b)) => a.disagreement(b, tol),
            _ => Some("key widths differ".into()),
        }
    }
}
