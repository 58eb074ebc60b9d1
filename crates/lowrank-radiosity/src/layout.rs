//! Y in the solve's layout, in f32 or f16 (the CPU twin of `radiosity/layout.wgsl` and of
//! `radiosity/solve_half.wgsl`).
//!
//! The solve reads Y in row blocks of R elements. A block is an array of 16-byte words:
//! word `(ch * QW + w) * R + el` holds the columns of word w of element `e0 + el`'s channel
//! ch. In f32, a word is 4 columns (`4w .. 4w + 4`, QW = ks / 4); in f16 it is 8 columns
//! times `scale`, component i holding column `8w + i` in its low half and `8w + 4 + i` in
//! its high half (QW = ks / 8). `ks` is k rounded up to a multiple of 8, the extra columns
//! zero. Consecutive threads of the solve (consecutive elements) thus read consecutive
//! words, and no thread needs a reduction with another.

/// How the GPU stores Y for the solve.
///
/// ```
/// use lumbre_radiosity::Storage;
/// assert_eq!(Storage::F16.bytes_per_value(), 2);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Storage {
    /// 32-bit floats.
    #[default]
    F32,
    /// 16-bit floats, scaled by a power of two so the largest |Y| lies in `[2^13, 2^14]`
    /// (far from f16's overflow at 65504, with 2^-14 as the smallest normal).
    F16,
}

impl Storage {
    /// Bytes per stored value.
    pub fn bytes_per_value(self) -> usize {
        match self {
            Storage::F32 => 4,
            Storage::F16 => 2,
        }
    }

    /// Columns per 16-byte word.
    pub fn per_word(self) -> usize {
        16 / self.bytes_per_value()
    }
}

/// `k` rounded up to a multiple of 8: the stored length of a row of one channel.
pub fn padded_k(k: usize) -> usize {
    k.div_ceil(8) * 8
}

/// The largest |v| in `data` (0 for none), on every core: Y can hold billions of values.
pub(crate) fn max_abs(data: &[f32]) -> f32 {
    use rayon::prelude::*;
    data.par_iter().fold(|| 0.0f32, |m, v| m.max(v.abs())).reduce(|| 0.0, f32::max)
}

/// The power of two that maps the largest |Y| into `[2^13, 2^14]` (1 for an all-zero Y).
///
/// ```
/// assert_eq!(lumbre_radiosity::twin::f16_scale(0.01), 1048576.0); // 0.01 * 2^20 = 10486
/// ```
pub fn f16_scale(max_abs: f32) -> f32 {
    if max_abs.is_nan() || max_abs <= 0.0 || !max_abs.is_finite() {
        return 1.0;
    }
    let e = max_abs.log2().ceil() as i32;
    2.0f32.powi((14 - e).clamp(-126, 127))
}

/// f32 to f16 bits, rounding to nearest even (as `radiosity/solve_half.wgsl`'s `f16_bits`).
///
/// ```
/// use lumbre_radiosity::twin::{f16_bits, f16_value};
/// assert_eq!(f16_bits(1.0), 0x3c00);
/// assert_eq!(f16_bits(-2.5), 0xc100);
/// assert_eq!(f16_bits(65520.0), 0x7c00); // rounds to infinity
/// assert_eq!(f16_value(f16_bits(0.1)), 0.0999755859375);
/// ```
pub fn f16_bits(v: f32) -> u32 {
    let b = v.to_bits();
    let sign = (b >> 16) & 0x8000;
    let a = b & 0x7fff_ffff;
    if a >= 0x4780_0000 {
        return sign | if a > 0x7f80_0000 { 0x7e00 } else { 0x7c00 };
    }
    if a >= 0x3880_0000 {
        let m = a - 0x3800_0000;
        return sign | ((m + 0x0fff + ((m >> 13) & 1)) >> 13);
    }
    if a < 0x3300_0000 {
        return sign;
    }
    let e = a >> 23;
    let mant = (a & 0x7f_ffff) | 0x80_0000;
    let shift = 126 - e;
    let mut r = mant >> shift;
    let rem = mant & ((1 << shift) - 1);
    let half = 1 << (shift - 1);
    if rem > half || (rem == half && r & 1 == 1) {
        r += 1;
    }
    sign | r
}

/// The value of f16 bits (exact, subnormals included).
pub fn f16_value(h: u32) -> f32 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let e = (h >> 10) & 0x1f;
    let m = (h & 0x3ff) as f32;
    sign * match e {
        0 => m * 2.0f32.powi(-24),
        31 => {
            if m == 0.0 {
                f32::INFINITY
            } else {
                f32::NAN
            }
        }
        _ => (1.0 + m / 1024.0) * 2.0f32.powi(e as i32 - 15),
    }
}

/// One block of rows (`rows` rows of `channels` channels of k values, row-major, starting
/// at `y[0]`: Y has 3 channels, F one) in the solve's layout; `scale` multiplies f16 values.
///
/// ```
/// use lumbre_radiosity::Storage;
/// use lumbre_radiosity::twin::layout_cpu;
/// // Two rows of one channel of 3 values: word w of row el is at w * rows + el.
/// let words = layout_cpu(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], 2, 3, 1, Storage::F32, 1.0);
/// assert_eq!(words.len(), 4); // 8 padded columns, 4 per word, 2 rows
/// assert_eq!(words[1], [4.0f32.to_bits(), 5.0f32.to_bits(), 6.0f32.to_bits(), 0]);
/// ```
pub fn layout_cpu(y: &[f32], rows: usize, k: usize, channels: usize, storage: Storage, scale: f32) -> Vec<[u32; 4]> {
    use rayon::prelude::*;
    let per = storage.per_word();
    let qw = padded_k(k) / per;
    let value = |el: usize, ch: usize, q: usize| if q < k { y[el * channels * k + ch * k + q] } else { 0.0 };
    let word = |t: usize| {
        let (el, w, ch) = (t % rows, (t / rows) % qw, t / (rows * qw));
        std::array::from_fn(|i| match storage {
            Storage::F32 => value(el, ch, 4 * w + i).to_bits(),
            Storage::F16 => {
                let q = 8 * w;
                f16_bits(value(el, ch, q + i) * scale) | (f16_bits(value(el, ch, q + 4 + i) * scale) << 16)
            }
        })
    };
    // Words of one row are `rows` apart: each task fills a few of them row by row, so the
    // row's cache line of Y is read once for all of them.
    const SLABS: usize = 4;
    let mut out = vec![[0u32; 4]; channels * qw * rows];
    out.par_chunks_mut(SLABS * rows.max(1)).enumerate().for_each(|(c, chunk)| {
        let slabs = chunk.len() / rows.max(1);
        for el in 0..rows {
            for j in 0..slabs {
                chunk[j * rows + el] = word((c * SLABS + j) * rows + el);
            }
        }
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f16_round_trips_and_rounds_to_nearest_even() {
        for h in 0..0x7c00u32 {
            for s in [0, 0x8000] {
                assert_eq!(f16_bits(f16_value(h | s)), h | s, "{h:#x}");
            }
        }
        // Halfway between 1 and 1 + 2^-10: ties go to the even mantissa.
        assert_eq!(f16_bits(1.0 + 2f32.powi(-11)), 0x3c00);
        assert_eq!(f16_bits(1.0 + 3.0 * 2f32.powi(-11)), 0x3c02);
        // Just above the tie rounds up.
        assert_eq!(f16_bits(1.0 + 2f32.powi(-11) + 2f32.powi(-20)), 0x3c01);
        assert_eq!(f16_bits(2f32.powi(-25)), 0);
        assert_eq!(f16_bits(1.5 * 2f32.powi(-25)), 1);
        assert!(f16_value(f16_bits(f32::NAN)).is_nan());
    }
}
