//! Power sums in fixed point: every segment's power is truncated to a multiple of 2^-k and
//! summed as 64-bit integers. Integer sums do not depend on their order, so every method,
//! thread schedule and path gives the same bits; the GPU adds 64-bit values as two u32
//! words with a carry. `k` keeps every segment's value below 2^31 (so on the GPU a sum is
//! one atomic on its low word, and one on its high word only when the low word wraps) and
//! any sum below 2^62.

/// The exponent `k` for the largest segment power `max` (over channels) and total power
/// `total` (largest channel): `max * 2^k <= 2^31` and `total * 2^k <= 2^62`, clamped to
/// `[-100, 100]` (so `2^k` is a normal f32); 0 when there is no power.
pub(crate) fn scale_exponent(max: f64, total: f64) -> i32 {
    if max <= 0.0 || !total.is_finite() {
        return 0;
    }
    let by_max = 31 - max.log2().ceil() as i32;
    let by_total = 62 - total.log2().ceil() as i32;
    by_max.min(by_total).clamp(-100, 100)
}

/// The exponent of a whole run, known before any flight is traced: its flights carry at
/// most `max_flight` power in any channel (the emitters' bound, the same for every part of
/// the run) and number at most `flights`. The bound is doubled, so that a flight a GPU
/// computes a few ulps above it (its division is not correctly rounded) still stays below
/// 2^31 units: [`scale_exponent`] of `2 max_flight` and of `2 max_flight flights`.
pub(crate) fn run_scale_exponent(max_flight: f64, flights: f64) -> i32 {
    let max = 2.0 * max_flight;
    scale_exponent(max, max * flights.max(1.0))
}

/// `2^k` as an exact f32, for `k` in `[-126, 127]`.
pub(crate) fn pow2(k: i32) -> f32 {
    f32::from_bits(((k + 127) as u32) << 23)
}

/// One power value in units of `2^-k` (`scale = 2^k`), truncated: `p * scale` is exact in
/// f32 (a power-of-two scaling), and the conversion drops the fraction.
pub(crate) fn quantize(p: f32, scale: f32) -> u64 {
    (p * scale) as u64
}

/// The three channels of a power, quantized.
pub(crate) fn quantize3(p: [f32; 3], scale: f32) -> [u64; 3] {
    p.map(|c| quantize(c, scale))
}

/// A fixed-point sum back in f32 (through f64: one rounding).
pub(crate) fn to_f32(sum: u64, k: i32) -> f32 {
    (sum as f64 * (-k as f64).exp2()) as f32
}

/// A disk's running result: crossings and the fixed-point power sums.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Acc {
    pub count: u32,
    pub power: [u64; 3],
}

impl Acc {
    /// Adds one crossing segment's quantized power.
    pub fn add(&mut self, q: [u64; 3]) {
        self.count += 1;
        for (s, v) in self.power.iter_mut().zip(q) {
            *s += v;
        }
    }

    /// Adds another partial result.
    pub fn merge(&mut self, o: &Acc) {
        self.count += o.count;
        for (s, v) in self.power.iter_mut().zip(o.power) {
            *s += v;
        }
    }

    #[cfg(test)]
    /// The accumulator as the GPU stores it: count, a spare word, then (low, high) per channel.
    pub fn words(&self) -> [u32; 8] {
        let [r, g, b] = self.power;
        [self.count, 0, r as u32, (r >> 32) as u32, g as u32, (g >> 32) as u32, b as u32, (b >> 32) as u32]
    }

    /// The inverse of [`Acc::words`].
    #[cfg(feature = "gpu")]
    pub fn from_words(w: &[u32]) -> Acc {
        let word = |i: usize| w[i] as u64 | (w[i + 1] as u64) << 32;
        Acc { count: w[0], power: [word(2), word(4), word(6)] }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantization_is_exact_scaling_then_truncation() {
        assert_eq!(scale_exponent(1.0, 1.0), 31);
        assert_eq!(scale_exponent(1.0, 2f64.powi(40)), 22);
        assert_eq!(scale_exponent(0.0, 0.0), 0);
        assert_eq!(run_scale_exponent(1.0, 16.0), 30);
        assert_eq!(run_scale_exponent(0.75, 2f64.powi(40)), 21);
        assert_eq!(run_scale_exponent(0.0, 100.0), 0);
        assert_eq!(pow2(-100), (-100f64).exp2() as f32);
        assert_eq!(pow2(100), 100f64.exp2() as f32);
        let s = pow2(31);
        assert_eq!(quantize(0.5, s), 1 << 30);
        assert_eq!(quantize(1.0, s), 1 << 31);
        assert_eq!(quantize(1.5e-9, s), 3);
        assert_eq!(to_f32(1 << 30, 31), 0.5);
        let a = Acc { count: 3, power: [u64::MAX - 5, 1 << 40, 7] };
        assert_eq!(Acc::from_words(&a.words()), a);
    }
}
