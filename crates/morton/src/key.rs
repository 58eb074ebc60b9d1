//! Level-prefixed octree node keys: a marker bit followed by one 3-bit triplet per level,
//! root first. The volumetric thesis writes the marker as the two bits `01` above the
//! triplets of a 32-bit key; numerically that is the same single 1 bit used here.
//!
//! The array index of a node (the thesis's equation B.1) is
//! `sum(8^i for i < level) + value(triplets)`, so levels are stored one after another:
//! the root at 0, level 1 at 1..=8, level 2 at 9..=72, and so on.

/// Number of nodes on all levels shallower than `level`: `(8^level - 1) / 7`.
///
/// ```
/// assert_eq!(lumbre_morton::level_offset(0), 0);
/// assert_eq!(lumbre_morton::level_offset(3), 1 + 8 + 64);
/// ```
pub const fn level_offset(level: u32) -> u64 {
    // u128: level 22 (one past the deepest u64 level) still fits the result in a u64.
    (((1u128 << (3 * level)) - 1) / 7) as u64
}

macro_rules! node_key {
    ($(#[$doc:meta])* $name:ident, $bits:ty, $max:expr, $encode:path, $decode:path) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, bytemuck::Pod, bytemuck::Zeroable)]
        #[repr(transparent)]
        pub struct $name(pub $bits);

        impl $name {
            /// Deepest level this key type can address.
            pub const MAX_LEVEL: u32 = $max;
            /// The root node (level 0): the marker bit alone.
            pub const ROOT: Self = Self(1);

            /// The node at `level` whose triplets are `value` (its position within the level,
            /// `0 .. 8^level`). `None` if the level is too deep or the value too large.
            pub const fn new(level: u32, value: $bits) -> Option<Self> {
                if level > Self::MAX_LEVEL || (value >> (3 * level)) != 0 {
                    return None;
                }
                Some(Self(((1 as $bits) << (3 * level)) | value))
            }

            /// The node at `level` that contains grid cell `cell` (coordinates with `level`
            /// bits per axis).
            pub const fn from_cell(level: u32, cell: [u32; 3]) -> Option<Self> {
                Self::new(level, $encode(cell))
            }

            /// Whether this is a well-formed key (a marker bit at a level boundary).
            pub const fn is_valid(self) -> bool {
                self.0 != 0 && (<$bits>::BITS - 1 - self.0.leading_zeros()) % 3 == 0
                    && (<$bits>::BITS - 1 - self.0.leading_zeros()) / 3 <= Self::MAX_LEVEL
            }

            /// Depth of the node (root = 0).
            pub const fn level(self) -> u32 {
                (<$bits>::BITS - 1 - self.0.leading_zeros()) / 3
            }

            /// The triplets without the marker: the node's position within its level.
            pub const fn value(self) -> $bits {
                self.0 ^ ((1 as $bits) << (3 * self.level()))
            }

            /// The parent, or `None` for the root.
            pub const fn parent(self) -> Option<Self> {
                if self.0 <= 1 { None } else { Some(Self(self.0 >> 3)) }
            }

            /// Child `octant` (0..8; bit 0 is +x, bit 1 +y, bit 2 +z), or `None` past the last level.
            pub const fn child(self, octant: u32) -> Option<Self> {
                if self.level() >= Self::MAX_LEVEL || octant >= 8 {
                    return None;
                }
                Some(Self((self.0 << 3) | octant as $bits))
            }

            /// Which child of its parent this node is (0..8); 0 for the root.
            pub const fn octant(self) -> u32 {
                if self.0 <= 1 { 0 } else { (self.0 & 7) as u32 }
            }

            /// The ancestor at `level` (itself if `level` is its own), `None` if deeper.
            pub const fn ancestor(self, level: u32) -> Option<Self> {
                let own = self.level();
                if level > own { None } else { Some(Self(self.0 >> (3 * (own - level)))) }
            }

            /// Whether `other` is this node or lies inside it (a point key is a key at the
            /// deepest level, so this also answers "is this point in this node").
            pub const fn contains(self, other: Self) -> bool {
                match other.ancestor(self.level()) {
                    Some(a) => a.0 == self.0,
                    None => false,
                }
            }

            /// The node's integer cell at its own level (`level` bits per axis).
            pub const fn cell(self) -> [u32; 3] {
                $decode(self.value())
            }

            /// The node's box inside the root box `[min, min + size]` (cubic root).
            ///
            /// Computed level by level from the root, adding the child's side on each axis
            /// where the path goes up: a traversal that derives each child's box from its
            /// parent's the same way gets bit-identical boxes without decoding keys.
            pub fn bounds(self, min: [f32; 3], size: f32) -> ([f32; 3], [f32; 3]) {
                let level = self.level();
                let mut lo = min;
                let mut side = size;
                for l in 1..=level {
                    side = size / (1u64 << l) as f32;
                    let octant = (self.0 >> (3 * (level - l))) & 7;
                    for (a, v) in lo.iter_mut().enumerate() {
                        if (octant >> a) & 1 == 1 {
                            *v += side;
                        }
                    }
                }
                (lo, std::array::from_fn(|a| lo[a] + side))
            }

            /// Position in the level-by-level node array: `sum(8^i, i < level) + value`.
            pub const fn index(self) -> u64 {
                level_offset(self.level()) + self.value() as u64
            }

            /// Inverse of [`index`](Self::index), exact at every level boundary.
            pub const fn from_index(index: u64) -> Option<Self> {
                let mut level = 0;
                while level <= Self::MAX_LEVEL {
                    let end = level_offset(level + 1);
                    if index < end {
                        let value = (index - level_offset(level)) as $bits;
                        return Self::new(level, value);
                    }
                    level += 1;
                }
                None
            }
        }
    };
}

node_key!(
    /// A node key in a `u32`: depth up to 10.
    ///
    /// ```
    /// use lumbre_morton::NodeKey32;
    /// let k = NodeKey32::new(2, 0b001_000).unwrap();
    /// assert_eq!(k.index(), 17); // the thesis's worked example
    /// assert_eq!(k.parent(), NodeKey32::new(1, 0b001));
    /// assert_eq!(NodeKey32::from_index(200).map(|k| (k.level(), k.value())), Some((3, 127)));
    /// ```
    NodeKey32, u32, 10, crate::code::encode_u32, crate::code::decode_u32
);

node_key!(
    /// A node key in a `u64`: depth up to 21.
    ///
    /// ```
    /// use lumbre_morton::NodeKey64;
    /// let leaf = NodeKey64::from_cell(21, [5, 6, 7]).unwrap();
    /// assert_eq!(leaf.level(), 21);
    /// assert!(NodeKey64::ROOT.contains(leaf));
    /// ```
    NodeKey64, u64, 21, crate::code::encode_u64, crate::code::decode_u64
);
