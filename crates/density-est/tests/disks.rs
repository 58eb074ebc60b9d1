//! Query disks from a camera.

use lumbre_density::{NO_DISK, camera_disks};
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
