//! Deterministic inputs shared by the tests.
#![allow(dead_code)]

use glam::Vec3;
use lumbre_density::{Disk, Problem, Segment};

/// A small xorshift generator: tests are reproducible without a dependency.
pub struct Rng(u32);

impl Rng {
    pub fn new(seed: u32) -> Rng {
        Rng(seed.wrapping_mul(2_654_435_761) | 1)
    }

    /// Uniform in [0, 1).
    pub fn f(&mut self) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 17;
        self.0 ^= self.0 << 5;
        (self.0 >> 8) as f32 / (1u32 << 24) as f32
    }

    pub fn v(&mut self) -> Vec3 {
        Vec3::new(self.f(), self.f(), self.f())
    }

    /// Uniform on the unit sphere.
    pub fn dir(&mut self) -> Vec3 {
        let z = 2.0 * self.f() - 1.0;
        let phi = std::f32::consts::TAU * self.f();
        let s = (1.0 - z * z).max(0.0).sqrt();
        Vec3::new(s * phi.cos(), s * phi.sin(), z)
    }
}

/// Segments with both ends uniform in the unit cube, disks uniform in it with normals uniform
/// on the sphere and radius `r`.
pub fn uniform(segments: usize, disks: usize, r: f32, seed: u32) -> Problem {
    let mut g = Rng::new(seed);
    let segments = (0..segments)
        .map(|i| Segment { start: g.v(), end: g.v(), power: [g.f(), g.f(), 0.5], bounce: i as u32 % 3 })
        .collect();
    let disks = (0..disks).map(|_| Disk { centre: g.v(), normal: g.dir(), radius: r }).collect();
    Problem { segments, disks }
}
