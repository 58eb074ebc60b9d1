//! Interleaving: `(x, y, z)` -> `... z1 y1 x1 z0 y0 x0` (x in bit 0, as in the volumetric
//! thesis: `(10, 3, 15)` encodes to `101 100 111 110`).

/// Bits per axis of a 30-bit code in a `u32`.
pub const BITS_32: u32 = 10;
/// Bits per axis of a 63-bit code in a `u64`.
pub const BITS_64: u32 = 21;

/// Spreads the low 10 bits of `v` so bit `i` lands at bit `3i`.
///
/// ```
/// assert_eq!(lumbre_morton::spread_u32(0b11), 0b1001);
/// ```
#[inline]
pub const fn spread_u32(v: u32) -> u32 {
    let mut x = v & 0x3ff;
    x = (x | (x << 16)) & 0x0300_00ff;
    x = (x | (x << 8)) & 0x0300_f00f;
    x = (x | (x << 4)) & 0x030c_30c3;
    x = (x | (x << 2)) & 0x0924_9249;
    x
}

/// Inverse of [`spread_u32`]: gathers bits `0, 3, 6, ...` into the low 10 bits.
///
/// ```
/// assert_eq!(lumbre_morton::compact_u32(0b1001), 0b11);
/// ```
#[inline]
pub const fn compact_u32(v: u32) -> u32 {
    let mut x = v & 0x0924_9249;
    x = (x | (x >> 2)) & 0x030c_30c3;
    x = (x | (x >> 4)) & 0x0300_f00f;
    x = (x | (x >> 8)) & 0x0300_00ff;
    x = (x | (x >> 16)) & 0x3ff;
    x
}

/// Spreads the low 21 bits of `v` so bit `i` lands at bit `3i`.
///
/// ```
/// assert_eq!(lumbre_morton::spread_u64(1 << 20), 1 << 60);
/// ```
#[inline]
pub const fn spread_u64(v: u64) -> u64 {
    let mut x = v & 0x1f_ffff;
    x = (x | (x << 32)) & 0x001f_0000_0000_ffff;
    x = (x | (x << 16)) & 0x001f_0000_ff00_00ff;
    x = (x | (x << 8)) & 0x100f_00f0_0f00_f00f;
    x = (x | (x << 4)) & 0x10c3_0c30_c30c_30c3;
    x = (x | (x << 2)) & 0x1249_2492_4924_9249;
    x
}

/// Inverse of [`spread_u64`].
///
/// ```
/// assert_eq!(lumbre_morton::compact_u64(1 << 60), 1 << 20);
/// ```
#[inline]
pub const fn compact_u64(v: u64) -> u64 {
    let mut x = v & 0x1249_2492_4924_9249;
    x = (x | (x >> 2)) & 0x10c3_0c30_c30c_30c3;
    x = (x | (x >> 4)) & 0x100f_00f0_0f00_f00f;
    x = (x | (x >> 8)) & 0x001f_0000_ff00_00ff;
    x = (x | (x >> 16)) & 0x001f_0000_0000_ffff;
    x = (x | (x >> 32)) & 0x1f_ffff;
    x
}

/// Interleaves three 10-bit coordinates into a 30-bit code (higher bits are ignored).
///
/// ```
/// assert_eq!(lumbre_morton::encode_u32([10, 3, 15]), 0b101_100_111_110);
/// ```
#[inline]
pub const fn encode_u32(c: [u32; 3]) -> u32 {
    spread_u32(c[0]) | (spread_u32(c[1]) << 1) | (spread_u32(c[2]) << 2)
}

/// Splits a 30-bit code into its three coordinates.
///
/// ```
/// assert_eq!(lumbre_morton::decode_u32(0b101_100_111_110), [10, 3, 15]);
/// ```
#[inline]
pub const fn decode_u32(code: u32) -> [u32; 3] {
    [compact_u32(code), compact_u32(code >> 1), compact_u32(code >> 2)]
}

/// Interleaves three 21-bit coordinates into a 63-bit code (higher bits are ignored).
///
/// ```
/// assert_eq!(lumbre_morton::encode_u64([10, 3, 15]), 0b101_100_111_110);
/// ```
#[inline]
pub const fn encode_u64(c: [u32; 3]) -> u64 {
    spread_u64(c[0] as u64) | (spread_u64(c[1] as u64) << 1) | (spread_u64(c[2] as u64) << 2)
}

/// Splits a 63-bit code into its three coordinates.
///
/// ```
/// let c = [(1 << 21) - 1, 12345, 0];
/// assert_eq!(lumbre_morton::decode_u64(lumbre_morton::encode_u64(c)), c);
/// ```
#[inline]
pub const fn decode_u64(code: u64) -> [u32; 3] {
    [compact_u64(code) as u32, compact_u64(code >> 1) as u32, compact_u64(code >> 2) as u32]
}
