//! Morton encoding of a point buffer (the CPU half of `morton/encode.wgsl`): each point's cell
//! in a [`Quantizer`]'s grid, interleaved into a 30-bit or a 63-bit code.

use lumbre_gpu::{Error, Result};
use rayon::prelude::*;

use crate::code::{BITS_32, encode_u32, encode_u64};
use crate::quantize::{QuantizeError, Quantizer};

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
///
/// ```
/// use lumbre_morton::{Keys, MortonEncode, Quantizer};
/// let enc = MortonEncode { quantizer: Quantizer::new([0.0; 3], [1.0; 3], 21).unwrap(), clamp: false };
/// let mut keys = Keys::U32(Vec::new());
/// enc.encode_into(&[[1.0, 1.0, 1.0]], &mut keys).unwrap();
/// assert_eq!(keys, Keys::U64(vec![(1 << 63) - 1]));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Keys {
    /// 30-bit codes (bits per axis <= 10).
    U32(Vec<u32>),
    /// 63-bit codes.
    U64(Vec<u64>),
}

impl MortonEncode {
    /// The CPU path: the codes of `points`.
    ///
    /// ```
    /// use lumbre_morton::{Keys, MortonEncode, Quantizer};
    /// let enc = MortonEncode { quantizer: Quantizer::new([0.0; 3], [1.0; 3], 10)?, clamp: false };
    /// assert_eq!(enc.cpu(&[[0.0; 3], [1.0; 3]])?, Keys::U32(vec![0, (1 << 30) - 1]));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn cpu(&self, points: &[[f32; 3]]) -> Result<Keys> {
        let mut keys = self.no_keys();
        self.encode_into(points, &mut keys)?;
        Ok(keys)
    }

    /// Whether the codes take 63 bits (more than 10 bits per axis).
    pub(crate) fn wide(&self) -> bool {
        self.quantizer.bits > BITS_32
    }

    /// Encodes `points` on the CPU into `keys`, reusing its allocation (what
    /// [`MortonEncode::cpu`] does into a new one): for repeated encodings
    /// of clouds of one size, where a fresh output would cost a page fault per 4 KiB written.
    /// `keys` becomes the width the quantizer's resolution needs. On an error its contents are
    /// unspecified.
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

    /// No keys, of the width this resolution needs.
    pub(crate) fn no_keys(&self) -> Keys {
        if self.wide() { Keys::U64(Vec::new()) } else { Keys::U32(Vec::new()) }
    }
}
