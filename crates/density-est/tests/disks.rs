//! Query disks from a camera and the nearest-photon radius rule.

use glam::Vec3;
use lumbre_density::{NO_DISK, Segment, camera_disks, nearest_radii};
use lumbre_raytrace::{Camera, Prepared, Scene};

fn cornell() -> Prepared {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/scenes/CornellBox-Diffuse.obj");
    let (scene, _) = Scene::load_obj(path.as_ref()).unwrap();
    Prepared::new(scene, &Default::default())
}

#[test]
fn camera_disks_map_pixels_to_hits() {
    let p = cornell();
    // Looking from outside the open front: the border pixels see nothing.
    let camera = Camera::parse("0,1,6,0,1,0,0,1,0,40").unwrap();
    let d = camera_disks(&p, &camera, 40, 30, 0.02).unwrap();
    assert_eq!(d.pixel_disk.len(), 40 * 30);
    let misses = d.pixel_disk.iter().filter(|&&k| k == NO_DISK).count();
    assert!(misses > 0 && misses < 40 * 30, "{misses} misses");
    assert_eq!(d.disks.len() + misses, 40 * 30);
    // Pixel order is kept, and every disk lies on the scene facing the camera.
    let mapped: Vec<u32> = d.pixel_disk.iter().copied().filter(|&k| k != NO_DISK).collect();
    assert_eq!(mapped, (0..d.disks.len() as u32).collect::<Vec<_>>());
    let (lo, hi) = p.scene.bounds;
    for disk in &d.disks {
        assert!(disk.centre.cmpge(lo - 1e-4).all() && disk.centre.cmple(hi + 1e-4).all());
        assert!(disk.normal.dot(camera.eye - disk.centre) > 0.0);
        assert!((disk.normal.length() - 1.0).abs() < 1e-5);
    }
    // The centre pixel sees the back wall (z about -1.04), facing +z.
    let centre = d.pixel_disk[15 * 40 + 20] as usize;
    assert!(d.disks[centre].normal.z > 0.99 && d.disks[centre].centre.z < -1.0);
    assert!(camera_disks(&p, &camera, 4, 4, 0.0).is_err());
}

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
