//! Deterministic inputs shared by the tests.
#![allow(dead_code)]

use glam::Vec3;
use lumbre_density::{Disk, Problem, Segment};

use lumbre_gpu::testing::Rng;

/// Points and directions from the tests' generator.
pub trait RngVec {
    /// Uniform in the unit cube.
    fn v(&mut self) -> Vec3;
    /// Uniform on the unit sphere.
    fn dir(&mut self) -> Vec3;
}

impl RngVec for Rng {
    fn v(&mut self) -> Vec3 {
        Vec3::new(self.f32(), self.f32(), self.f32())
    }

    fn dir(&mut self) -> Vec3 {
        let z = 2.0 * self.f32() - 1.0;
        let phi = std::f32::consts::TAU * self.f32();
        let s = (1.0 - z * z).max(0.0).sqrt();
        Vec3::new(s * phi.cos(), s * phi.sin(), z)
    }
}

/// Segments with both ends uniform in the unit cube, disks uniform in it with normals uniform
/// on the sphere and radius `r`.
pub fn uniform(segments: usize, disks: usize, r: f32, seed: u32) -> Problem {
    let mut g = Rng::new(seed);
    let segments = (0..segments)
        .map(|i| Segment { start: g.v(), end: g.v(), power: [g.f32(), g.f32(), 0.5], bounce: i as u32 % 3 })
        .collect();
    let disks = (0..disks).map(|_| Disk { centre: g.v(), normal: g.dir(), radius: r }).collect();
    Problem { segments, disks }
}
