//! Camera: primary rays, framing, parsing, the GPU formula.

use glam::Vec3;
use lumbre_raytrace::Camera;
use lumbre_raytrace::twin::GpuCamera;
use proptest::prelude::*;

fn corners((lo, hi): (Vec3, Vec3)) -> [Vec3; 8] {
    std::array::from_fn(|i| {
        Vec3::new(
            if i & 1 == 0 { lo.x } else { hi.x },
            if i & 2 == 0 { lo.y } else { hi.y },
            if i & 4 == 0 { lo.z } else { hi.z },
        )
    })
}

#[test]
fn centre_pixel_looks_at_the_target() {
    let cams = [
        Camera { eye: Vec3::new(0.0, 1.0, 3.9), target: Vec3::new(0.0, 1.0, 0.0), up: Vec3::Y, fov_y_deg: 39.3 },
        Camera { eye: Vec3::new(5.0, -2.0, 1.0), target: Vec3::new(-1.0, 0.5, 2.0), up: Vec3::Z, fov_y_deg: 70.0 },
        Camera { eye: Vec3::new(0.0, 10.0, 0.0), target: Vec3::ZERO, up: Vec3::X, fov_y_deg: 20.0 },
    ];
    for cam in cams {
        for (w, h) in [(64, 64), (640, 480), (31, 17)] {
            let (o, d) = cam.ray(w as f32 / 2.0, h as f32 / 2.0, w, h);
            let to_target = (cam.target - cam.eye).normalize();
            assert_eq!(o, cam.eye);
            assert!((d - to_target).length() < 1e-6, "{cam:?} {w}x{h}: {d} vs {to_target}");
            assert!((d.length() - 1.0).abs() < 1e-6);
        }
    }
}

#[test]
fn image_orientation() {
    let cam = Camera { eye: Vec3::new(0.0, 0.0, 5.0), target: Vec3::ZERO, up: Vec3::Y, fov_y_deg: 60.0 };
    let (_, top_left) = cam.ray(0.0, 0.0, 100, 50);
    let (_, bottom_right) = cam.ray(100.0, 50.0, 100, 50);
    assert!(top_left.x < 0.0 && top_left.y > 0.0 && top_left.z < 0.0);
    assert!(bottom_right.x > 0.0 && bottom_right.y < 0.0);
    // The vertical field of view spans the image height.
    let (_, top) = cam.ray(50.0, 0.0, 100, 50);
    let (_, bottom) = cam.ray(50.0, 50.0, 100, 50);
    assert!((top.angle_between(bottom).to_degrees() - 60.0).abs() < 1e-3);
    // Square pixels: the horizontal field matches the aspect.
    let (_, left) = cam.ray(0.0, 25.0, 100, 50);
    let half_x = (left.x / left.z).abs().atan();
    assert!((half_x.tan() - 2.0 * 30f32.to_radians().tan()).abs() < 1e-5);
}

#[test]
fn frame_sees_every_corner() {
    let boxes = [
        (Vec3::new(-1.02, 0.0, -1.04), Vec3::new(1.0, 1.99, 0.99)),
        (Vec3::splat(-100.0), Vec3::splat(100.0)),
        (Vec3::new(0.0, 0.0, 0.0), Vec3::new(10.0, 0.1, 0.1)),
        (Vec3::new(-3.0, 5.0, 7.0), Vec3::new(-2.9, 25.0, 7.1)),
        (Vec3::new(0.0, 0.0, -50.0), Vec3::new(1.0, 1.0, 0.0)),
    ];
    for b in boxes {
        for (w, h) in [(64, 64), (640, 360), (200, 800)] {
            let aspect = w as f32 / h as f32;
            let cams =
                std::iter::once(Camera::frame(b, aspect)).chain((0..20).map(|i| Camera::orbit(b, aspect, i, 20)));
            for cam in cams {
                assert!(cam.validate().is_ok());
                for c in corners(b) {
                    let (x, y) = cam.project(c, w, h).expect("corner in front of the camera");
                    assert!(
                        (0.0..=w as f32).contains(&x) && (0.0..=h as f32).contains(&y),
                        "{b:?} {w}x{h}: {c} at {x},{y}"
                    );
                    // The ray through the projected pixel passes through the corner, to a few
                    // ulps of the unit image-plane distance (the formula is relative to the eye).
                    let (o, d) = cam.ray(x, y, w, h);
                    let to_c = (c - o).normalize();
                    let tol = 1e-5;
                    assert!((d - to_c).length() < tol, "{d} vs {to_c}");
                }
            }
        }
    }
}

#[test]
fn frame_from_above_and_in_front() {
    let b = (Vec3::splat(-1.0), Vec3::splat(1.0));
    let cam = Camera::frame(b, 1.0);
    assert_eq!(cam.target, Vec3::ZERO);
    assert!(cam.eye.z > 0.0 && cam.eye.y > 0.0 && cam.eye.x.abs() < 1e-6);
    assert!(cam.eye.y < cam.eye.z, "slightly above, not from the top");
    // Degenerate inputs still give usable cameras.
    for bad in [(Vec3::ZERO, Vec3::ZERO), (Vec3::NAN, Vec3::ONE), (Vec3::ONE, Vec3::ZERO)] {
        for aspect in [1.0, 0.0, f32::NAN, -2.0] {
            assert!(Camera::frame(bad, aspect).validate().is_ok(), "{bad:?} {aspect}");
        }
    }
}

#[test]
fn orbit_positions_are_distinct_and_equidistant() {
    let b = (Vec3::new(-1.0, 0.0, -1.0), Vec3::new(1.0, 2.0, 1.0));
    let cams: Vec<Camera> = (0..20).map(|i| Camera::orbit(b, 1.5, i, 20)).collect();
    let d0 = (cams[0].eye - cams[0].target).length();
    assert_eq!(cams[0], Camera::frame(b, 1.5));
    for (i, c) in cams.iter().enumerate() {
        assert!(((c.eye - c.target).length() - d0).abs() < 1e-4 * d0);
        assert!((c.eye.y - cams[0].eye.y).abs() < 1e-4);
        for other in &cams[..i] {
            assert!((c.eye - other.eye).length() > 0.1 * d0);
        }
    }
    assert_eq!(Camera::orbit(b, 1.5, 21, 20), cams[1]);
    assert_eq!(Camera::orbit(b, 1.5, 3, 0), cams[0]);
}

#[test]
fn parse_accepts_the_cli_form_and_rejects_the_rest() {
    let cam = Camera::parse("0,1,3.9,0,1,0,0,1,0,39.3").unwrap();
    assert_eq!(cam, Camera { eye: Vec3::new(0.0, 1.0, 3.9), target: Vec3::Y, up: Vec3::Y, fov_y_deg: 39.3 });
    assert_eq!(" 0 , 1 , 3.9 ,0,1,0,0,1,0, 39.3 ".parse::<Camera>(), Ok(cam));
    assert_eq!(Camera::parse(&cam.to_string()), Ok(cam));
    for (input, needle) in [
        ("", "found 1"),
        ("0,1,3.9,0,1,0,0,1,0", "found 9"),
        ("0,1,3.9,0,1,0,0,1,0,40,1", "found 11"),
        ("0,1,3.9,0,1,0,0,1,0,4x", "malformed number \"4x\""),
        ("0,1,3.9,0,1,0,0,1,0,", "malformed number \"\""),
        ("0,1,3.9,0,1,0,0,1,0,0", "fov"),
        ("0,1,3.9,0,1,0,0,1,0,180", "fov"),
        ("0,1,3.9,0,1,0,0,1,0,inf", "non-finite"),
        ("1,1,1,1,1,1,0,1,0,40", "same point"),
        ("0,5,0,0,0,0,0,1,0,40", "parallel"),
        ("0,0,5,0,0,0,0,0,0,40", "parallel"),
        ("0,1,1e30,0,1,0,0,1,0,40", "eye z 1e30 is beyond"),
        ("0,1,3.9,0,1,0,0,-2e16,0,40", "up y -2e16"),
    ] {
        let err = Camera::parse(input).unwrap_err();
        assert!(err.contains(needle), "{input:?}: {err}");
    }
}

/// The WGSL formula, written out from the struct's fields with plain f32 arithmetic.
fn gpu_formula(g: &GpuCamera, px: f32, py: f32) -> [f32; 3] {
    let d: [f32; 3] = std::array::from_fn(|k| {
        g.corner[k] + (px / g.size[0]) * g.horizontal[k] + (1.0 - py / g.size[1]) * g.vertical[k]
    });
    let len = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
    d.map(|x| x / len)
}

#[test]
fn gpu_formula_reproduces_ray() {
    let cams = [
        Camera::parse("0,1,3.9,0,1,0,0,1,0,39.3").unwrap(),
        Camera::parse("12,-4,7,1,2,3,0,0,1,75").unwrap(),
        Camera::frame((Vec3::splat(-50.0), Vec3::splat(50.0)), 0.5),
    ];
    for cam in cams {
        for (w, h) in [(64u32, 48u32), (1920, 1080), (7, 13)] {
            let g = cam.to_gpu(w, h);
            assert_eq!(g.eye, [cam.eye.x, cam.eye.y, cam.eye.z, 0.0]);
            assert_eq!(g.size, [w as f32, h as f32, 0.0, 0.0]);
            for j in 0..=16 {
                for i in 0..=16 {
                    let (px, py) = (i as f32 * w as f32 / 16.0, j as f32 * h as f32 / 16.0);
                    let (o, d) = cam.ray(px, py, w, h);
                    assert_eq!(o, cam.eye);
                    let expected = Vec3::from(gpu_formula(&g, px, py));
                    assert!((d - expected).abs().max_element() <= 1e-6, "{cam:?} ({px}, {py}): {d} vs {expected}");
                }
            }
        }
    }
    // The bytes the GPU gets: five vec4s.
    let g = cams[0].to_gpu(64, 48);
    let floats: &[f32] = bytemuck::cast_slice(std::slice::from_ref(&g));
    assert_eq!(floats.len(), 20);
    assert_eq!(&floats[16..18], &[64.0, 48.0]);
}

proptest! {
    #[test]
    fn rays_are_unit_and_finite(px in 0f32..640.0, py in 0f32..480.0, fov in 1f32..170.0, ex in -10f32..10.0) {
        let cam = Camera { eye: Vec3::new(ex, 1.0, 5.0), target: Vec3::ZERO, up: Vec3::Y, fov_y_deg: fov };
        let (_, d) = cam.ray(px, py, 640, 480);
        prop_assert!(d.is_finite() && (d.length() - 1.0).abs() < 1e-5);
    }
}
