//! What the octree's test programs share: a seeded point cloud.

use lumbre_octree::{Attrs, Points};

/// `n` points from a xorshift seeded by `seed`: x and z spread over `spread`, z denser
/// near 0; colours and coefficients cycling with the index.
pub fn cloud(n: usize, seed: u32, spread: f32) -> Points {
    let mut rng = lumbre_gpu::testing::Rng::new(seed);
    let mut r = move || rng.f32();
    let positions: Vec<[f32; 3]> = (0..n).map(|_| [r() * spread, r(), r() * r() * spread]).collect();
    let attrs = (0..n)
        .map(|i| Attrs {
            rgb: [(i * 31) as u8, (i * 7) as u8, 200],
            reflection: (i % 5) as u8 * 50,
            refraction: (i % 2) as u8,
        })
        .collect();
    Points { positions, attrs }
}
