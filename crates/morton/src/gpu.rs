//! Morton encoding of point buffers through the shared [`Compute`] trait.

use lumbre_gpu::{Buffer, Compute, Error, Fit, Gpu, Recorder, Result};
use rayon::prelude::*;

use crate::{QuantizeError, Quantizer, encode_u32, encode_u64};

/// Encodes points to Morton codes with a [`Quantizer`]: 30-bit codes in `u32`
/// ([`Keys::U32`], up to 10 bits per axis) or 63-bit codes in `u64` ([`Keys::U64`]).
///
/// With `clamp: false` a point outside the box (or with a NaN coordinate) is an error;
/// with `clamp: true` it is clamped into the grid.
///
/// ```
/// use lumbre_gpu::{Backend, Compute};
/// use lumbre_morton::{MortonEncode, Quantizer};
/// let enc = MortonEncode { quantizer: Quantizer::new([0.0; 3], [1.0; 3], 10).unwrap(), clamp: false };
/// let keys = enc.run(&Backend::Cpu, &[[0.0, 0.0, 0.0], [1.0, 1.0, 1.0]]).unwrap();
/// assert_eq!(keys, lumbre_morton::Keys::U32(vec![0, (1 << 30) - 1]));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MortonEncode {
    /// Box and resolution.
    pub quantizer: Quantizer,
    /// Clamp points outside the box instead of failing.
    pub clamp: bool,
}

/// Morton codes, 32- or 64-bit depending on the resolution.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Keys {
    /// 30-bit codes (bits per axis <= 10).
    U32(Vec<u32>),
    /// 63-bit codes.
    U64(Vec<u64>),
}

impl lumbre_gpu::Agree for Keys {
    fn disagreement(&self, gpu: &Self, tol: lumbre_gpu::Tolerance) -> Option<String> {
        match (self, gpu) {
            (Keys::U32(a), Keys::U32(b)) => a.disagreement(b, tol),
            (Keys::U64(a), Keys::U64(b)) => a.disagreement(b, tol),
            _ => Some("key widths differ".into()),
        }
    }
}

/// Points and codes on the GPU.
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
    fn wide(&self) -> bool {
        self.quantizer.bits > crate::BITS_32
    }

    /// CPU twin of `morton/encode.wgsl`: encodes `points` into `keys` in parallel chunks.
    fn encode_cpu<K: Send>(
        &self,
        points: &[[f32; 3]],
        keys: &mut [K],
        encode: impl Fn([u32; 3]) -> K + Sync,
    ) -> Result<()> {
        const CHUNK: usize = 1 << 14;
        let q = self.quantizer;
        keys.par_chunks_mut(CHUNK).zip(points.par_chunks(CHUNK)).enumerate().try_for_each(|(c, (out, pts))| {
            // Branch-free hot loop: clamp everything, and only look for the first point
            // outside the box (for the error) if some point in the chunk was outside.
            let mut outside = false;
            for (o, p) in out.iter_mut().zip(pts) {
                outside |= !q.contains(*p);
                *o = encode(q.cell_clamped(*p));
            }
            if outside && !self.clamp {
                let i = pts.iter().position(|p| !q.contains(*p)).unwrap_or(0);
                return Err(Error::Input(
                    QuantizeError::OutOfBounds { index: c * CHUNK + i, point: pts[i] }.to_string(),
                ));
            }
            Ok(())
        })
    }

    /// Encodes `points` on the CPU into `keys`, reusing its allocation (what [`Compute::cpu`]
    /// does into a new one): for repeated encodings of clouds of one size, where a fresh
    /// output would cost a page fault per 4 KiB written. `keys` becomes the width the
    /// quantizer's resolution needs. On an error its contents are unspecified.
    ///
    /// ```
    /// use lumbre_morton::{Keys, MortonEncode, Quantizer};
    /// let enc = MortonEncode { quantizer: Quantizer::new([0.0; 3], [1.0; 3], 10).unwrap(), clamp: false };
    /// let mut keys = Keys::U32(Vec::new());
    /// enc.encode_into(&[[1.0, 1.0, 1.0]], &mut keys).unwrap();
    /// assert_eq!(keys, Keys::U32(vec![(1 << 30) - 1]));
    /// assert!(enc.encode_into(&[[2.0, 0.0, 0.0]], &mut keys).is_err());
    /// ```
    pub fn encode_into(&self, points: &[[f32; 3]], keys: &mut Keys) -> Result<()> {
        match (self.wide(), keys) {
            (true, Keys::U64(k)) => {
                k.resize(points.len(), 0);
                self.encode_cpu(points, k, encode_u64)
            }
            (false, Keys::U32(k)) => {
                k.resize(points.len(), 0);
                self.encode_cpu(points, k, encode_u32)
            }
            (_, keys) => {
                *keys = self.no_keys();
                self.encode_into(points, keys)
            }
        }
    }

    /// No keys, of the width this resolution needs.
    fn no_keys(&self) -> Keys {
        if self.wide() { Keys::U64(Vec::new()) } else { Keys::U32(Vec::new()) }
    }

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

    fn cpu(&self, points: &[[f32; 3]]) -> Result<Keys> {
        let mut keys = self.no_keys();
        self.encode_into(points, &mut keys)?;
        Ok(keys)
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
