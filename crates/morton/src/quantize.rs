//! Mapping f32 points inside a box to integer grid cells.

use std::fmt;

/// Why a point or a box cannot be quantised.
#[derive(Clone, Debug, PartialEq)]
pub enum QuantizeError {
    /// The point at `index` lies outside the box (or has a NaN coordinate).
    OutOfBounds {
        /// Position of the point in its input.
        index: usize,
        /// The point.
        point: [f32; 3],
    },
    /// The box has a NaN or infinite bound, or `min > max` on some axis.
    BadBox,
    /// Bits per axis must be 1..=21.
    BadBits(u32),
}

impl fmt::Display for QuantizeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            QuantizeError::OutOfBounds { index, point } => {
                write!(f, "point {index} at {point:?} lies outside the quantisation box")
            }
            QuantizeError::BadBox => write!(f, "the box must have finite bounds with min <= max"),
            QuantizeError::BadBits(b) => write!(f, "{b} bits per axis: must be 1..=21"),
        }
    }
}

impl std::error::Error for QuantizeError {}

/// Maps points in `[min, max]` to cells `0 .. 2^bits` per axis:
/// `cell = min(floor((p - min) * scale), 2^bits - 1)` with `scale = 2^bits / (max - min)`
/// computed once in f32, so the GPU kernel reproduces it bit for bit. Points on the max face
/// land in the last cell.
///
/// ```
/// use lumbre_morton::Quantizer;
/// let q = Quantizer::new([0.0; 3], [1.0; 3], 10).unwrap();
/// assert_eq!(q.cell([0.0, 0.5, 1.0], 0).unwrap(), [0, 512, 1023]);
/// assert!(q.cell([1.5, 0.0, 0.0], 7).is_err());
/// assert_eq!(q.cell_clamped([1.5, -3.0, f32::NAN]), [1023, 0, 0]);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Quantizer {
    /// Lower corner of the box.
    pub min: [f32; 3],
    /// Upper corner of the box.
    pub max: [f32; 3],
    /// `2^bits / (max - min)` per axis (0 for a flat axis: everything lands in cell 0).
    pub scale: [f32; 3],
    /// Bits per axis.
    pub bits: u32,
}

impl Quantizer {
    /// A quantiser for the box `[min, max]` with `bits` per axis (1..=21).
    pub fn new(min: [f32; 3], max: [f32; 3], bits: u32) -> Result<Self, QuantizeError> {
        if !(1..=21).contains(&bits) {
            return Err(QuantizeError::BadBits(bits));
        }
        let ok = (0..3).all(|a| min[a].is_finite() && max[a].is_finite() && min[a] <= max[a]);
        if !ok {
            return Err(QuantizeError::BadBox);
        }
        let cells = (1u32 << bits) as f32;
        let scale = std::array::from_fn(|a| {
            let extent = max[a] - min[a];
            if extent > 0.0 { cells / extent } else { 0.0 }
        });
        Ok(Quantizer { min, max, scale, bits })
    }

    /// A quantiser for the cube of side `max extent` at `min`: cubic cells, as an octree needs.
    ///
    /// ```
    /// let q = lumbre_morton::Quantizer::cube([0.0; 3], [4.0, 1.0, 2.0], 2).unwrap();
    /// assert_eq!(q.max, [4.0, 4.0, 4.0]);
    /// ```
    pub fn cube(min: [f32; 3], max: [f32; 3], bits: u32) -> Result<Self, QuantizeError> {
        let side = (0..3).map(|a| max[a] - min[a]).fold(0.0f32, f32::max);
        Self::new(min, [min[0] + side, min[1] + side, min[2] + side], bits)
    }

    /// The tight box around `points` (NaN/inf points ignored); `None` if none is finite.
    ///
    /// ```
    /// let b = lumbre_morton::Quantizer::bounds(&[[0.0, 1.0, 2.0], [3.0, -1.0, f32::NAN]]);
    /// assert_eq!(b, Some(([0.0, 1.0, 2.0], [0.0, 1.0, 2.0])));
    /// ```
    pub fn bounds(points: &[[f32; 3]]) -> Option<([f32; 3], [f32; 3])> {
        let mut it = points.iter().filter(|p| p.iter().all(|c| c.is_finite()));
        let first = *it.next()?;
        Some(it.fold((first, first), |(lo, hi), p| {
            (std::array::from_fn(|a| lo[a].min(p[a])), std::array::from_fn(|a| hi[a].max(p[a])))
        }))
    }

    /// Number of cells per axis.
    pub fn cells(&self) -> u32 {
        1 << self.bits
    }

    /// Whether `p` lies in the box (false for NaN).
    pub fn contains(&self, p: [f32; 3]) -> bool {
        // `&`, not `&&`: no branches, so loops calling this vectorise.
        (0..3).fold(true, |ok, a| ok & (p[a] >= self.min[a]) & (p[a] <= self.max[a]))
    }

    /// The cell of `p`, clamped to the grid (NaN goes to cell 0).
    #[inline]
    pub fn cell_clamped(&self, p: [f32; 3]) -> [u32; 3] {
        let last = (self.cells() - 1) as f32;
        std::array::from_fn(|a| floor_clamped((p[a] - self.min[a]) * self.scale[a], last))
    }

    /// The cell of `p`; `index` names the point in the error if it lies outside the box.
    #[inline]
    pub fn cell(&self, p: [f32; 3], index: usize) -> Result<[u32; 3], QuantizeError> {
        if self.contains(p) { Ok(self.cell_clamped(p)) } else { Err(QuantizeError::OutOfBounds { index, point: p }) }
    }
}

/// `floor(q)` clamped to `[0, last]` (NaN gives 0) for `last < 2^23`, in float arithmetic
/// only: `as` conversions with their saturating semantics are scalar on x86-64, this loop
/// vectorises. Adding 2^23 rounds to the nearest integer, a
/// rounded-up value is stepped down, and the integer is read back from the mantissa bits.
#[inline(always)]
fn floor_clamped(q: f32, last: f32) -> u32 {
    const BIG: f32 = 8_388_608.0;
    let c = q.max(0.0).min(last);
    let r = (c + BIG) - BIG;
    let f = if r > c { r - 1.0 } else { r };
    (f + BIG).to_bits() & 0x7f_ffff
}

#[cfg(test)]
mod tests {
    use super::floor_clamped;
    use proptest::prelude::*;

    /// The plain definition: `as` truncates and saturates, NaN gives 0.
    fn reference(q: f32, last: u32) -> u32 {
        (q.max(0.0).floor() as u32).min(last)
    }

    #[test]
    fn float_floor_matches_at_edges() {
        for last in [0u32, 1, 1023, (1 << 21) - 1] {
            let l = last as f32;
            for q in [
                f32::NAN,
                f32::NEG_INFINITY,
                f32::INFINITY,
                -1.0,
                -0.0,
                0.0,
                0.5,
                1.0,
                l - 0.5,
                l,
                l + 0.5,
                l + 1.0,
                1e30,
            ] {
                assert_eq!(floor_clamped(q, l), reference(q, last), "q {q} last {last}");
            }
            for i in 0..=last.min(5000) {
                let x = i as f32;
                for q in [x, f32::from_bits(x.to_bits().saturating_sub(1)), f32::from_bits(x.to_bits() + 1), x + 0.5] {
                    assert_eq!(floor_clamped(q, l), reference(q, last), "q {q} last {last}");
                }
            }
        }
    }

    proptest! {
        #[test]
        fn float_floor_matches_everywhere(bits in any::<u32>(), last in 0u32..(1 << 21)) {
            let q = f32::from_bits(bits);
            prop_assert_eq!(floor_clamped(q, last as f32), reference(q, last));
        }
    }
}
