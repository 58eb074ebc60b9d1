//! Floats as order-preserving words (twin of `density/ordered.wgsl`): for any two f32 that
//! are not NaN, `a < b` exactly when `encode(a) < encode(b)`, so a box grows by integer min
//! and max (atomics on the GPU) and comes out the same whatever the order of the updates.

use glam::Vec3;
use lumbre_kdtree::Aabb;

/// f32 -> u32 preserving order.
pub(crate) fn encode(f: f32) -> u32 {
    let b = f.to_bits();
    if b & 0x8000_0000 == 0 { b | 0x8000_0000 } else { !b }
}

/// The inverse of [`encode`].
pub(crate) fn decode(u: u32) -> f32 {
    f32::from_bits(if u & 0x8000_0000 != 0 { u & 0x7fff_ffff } else { !u })
}

/// A box as six words: min xyz, then max xyz.
pub(crate) fn encode_box(b: &Aabb) -> [u32; 6] {
    [encode(b.min.x), encode(b.min.y), encode(b.min.z), encode(b.max.x), encode(b.max.y), encode(b.max.z)]
}

/// The box of six words (min xyz, then max xyz).
pub(crate) fn decode_box(w: &[u32]) -> Aabb {
    let v = |k: usize| Vec3::new(decode(w[k]), decode(w[k + 1]), decode(w[k + 2]));
    Aabb::new(v(0), v(3))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decoding_inverts_the_order_preserving_words() {
        for f in [0.0f32, -0.0, 1.5, -1.5, f32::INFINITY, f32::NEG_INFINITY, f32::MIN_POSITIVE, -3e38] {
            assert_eq!(decode(encode(f)).to_bits(), f.to_bits());
        }
        // The shader's empty words decode to the empty box.
        assert_eq!(decode(0xff80_0000), f32::INFINITY);
        assert_eq!(decode(0x007f_ffff), f32::NEG_INFINITY);
        assert!(encode(-1.0) < encode(-0.5) && encode(-0.5) < encode(0.0) && encode(0.0) < encode(2.0));
        let b = Aabb::new(Vec3::new(-1.0, 0.0, 2.5), Vec3::new(3.0, 4.0, 5.0));
        assert_eq!(decode_box(&encode_box(&b)), b);
    }
}
