//! Radii from the nearest photon hits: the k-th nearest flight end, clamped (the GPU twin
//! is checked against this in `resident.rs`).

use glam::Vec3;
use lumbre_density::{Segment, nearest_radii};

#[test]
fn nearest_radius_holds_k_hits_clamped() {
    let seg = |p: Vec3| Segment { start: p + Vec3::Y, end: p, power: [1.0; 3], bounce: 0 };
    let ends: Vec<Segment> = (1..=10).map(|i| seg(Vec3::X * i as f32 * 0.1)).collect();
    let disk = lumbre_density::Disk { centre: Vec3::ZERO, normal: Vec3::Y, radius: 1.0 };
    let mut disks = vec![disk; 3];
    disks[1].centre = Vec3::X * 0.55;
    nearest_radii(&mut disks[..2], &ends, 3, 0.0, 10.0).unwrap();
    assert!((disks[0].radius - 0.3).abs() < 1e-6);
    assert!((disks[1].radius - 0.15).abs() < 1e-6); // hits at 0.5, 0.6, then 0.4 and 0.7
    nearest_radii(&mut disks[2..], &ends, 3, 0.5, 10.0).unwrap();
    assert_eq!(disks[2].radius, 0.5); // clamped up
    nearest_radii(&mut disks[2..], &ends, 11, 0.0, 2.0).unwrap();
    assert_eq!(disks[2].radius, 2.0); // fewer than k hits: the maximum
    assert!(nearest_radii(&mut disks, &ends, 0, 0.0, 1.0).is_err());
    assert!(nearest_radii(&mut disks, &ends, 1, 2.0, 1.0).is_err());
}
