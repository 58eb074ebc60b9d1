//! Images: PNG and EXR round trips, sRGB, comparison.

mod common;

use common::TempDir;
use glam::Vec3;
use lumbre_raytrace::{Image, diff_stats, linear_to_srgb};

/// A test card: gradients in each channel, some HDR and negative values.
fn card(width: u32, height: u32) -> Image {
    let mut img = Image::new(width, height);
    for y in 0..height {
        for x in 0..width {
            let u = x as f32 / (width - 1) as f32;
            let v = y as f32 / (height - 1) as f32;
            img.set(x, y, Vec3::new(u, v * v, (u - v) * 3.0));
        }
    }
    img
}

#[test]
fn png_round_trip_within_one_step() {
    let dir = TempDir::new("png");
    let img = card(37, 23);
    let path = dir.path().join("card.png");
    img.save_png(&path).unwrap();
    let back = Image::load_png(&path).unwrap();
    assert_eq!((back.width, back.height), (37, 23));
    // Exactly the same 8-bit sRGB values, so within 1/255 in sRGB (half a step, by rounding).
    assert_eq!(back.to_srgb8(), img.to_srgb8());
    let d = diff_stats(&img, &back).unwrap();
    assert!(d.max_abs <= 0.5 / 255.0 + 1e-6, "{d:?}");
    for (a, b) in img.pixels.iter().zip(&back.pixels) {
        for k in 0..3 {
            assert!((linear_to_srgb(a[k]) - linear_to_srgb(b[k])).abs() <= 1.0 / 255.0);
        }
    }
    // Orientation: the top-left pixel is the first one.
    assert_eq!(back.get(0, 0), Vec3::ZERO);
}

#[test]
fn exr_round_trip_is_exact() {
    let dir = TempDir::new("exr");
    let mut img = card(19, 11);
    img.set(3, 4, Vec3::new(1e6, -2.5, 1e-20));
    let path = dir.path().join("card.exr");
    img.save_exr(&path).unwrap();
    let back = Image::load_exr(&path).unwrap();
    assert_eq!(back, img);
}

#[test]
fn comparison() {
    let a = card(32, 32);
    assert_eq!(diff_stats(&a, &a).map(|d| d.rmse), Ok(0.0));
    let same = diff_stats(&a, &a).unwrap();
    assert_eq!((same.max_abs, same.mean_abs, same.fraction_over(0.0)), (0.0, 0.0, 0.0));
    assert!(same.psnr.is_infinite());

    // Black against white: every channel differs by 1.
    let black = Image::new(16, 16);
    let white = Image { pixels: vec![Vec3::ONE; 256], ..black.clone() };
    assert_eq!(diff_stats(&black, &white).map(|d| d.rmse), Ok(1.0));

    // A visibly different image: a bright square on the card.
    let mut b = a.clone();
    for y in 8..24 {
        for x in 8..24 {
            b.set(x, y, Vec3::new(1.0, 0.0, 1.0));
        }
    }
    let d = diff_stats(&a, &b).unwrap();
    assert!(d.rmse > 0.2, "{d:?}");
    assert!((d.fraction_over(0.1) - 0.25).abs() < 0.05, "{}", d.fraction_over(0.1));
    assert_eq!(d.fraction_over(1.0), 0.0);
    assert_eq!(d.percentile(0.0), 0.0);
    assert_eq!(d.percentile(1.0), d.max_abs);
    assert_eq!(d.pixels, 1024);
    assert_eq!(d.pixel_errors().len(), 1024);

    // A slightly noisy image: small rmse, nothing over a visible threshold.
    let noisy = Image { pixels: a.pixels.iter().map(|p| *p * 1.001).collect(), ..a.clone() };
    let d = diff_stats(&a, &noisy).unwrap();
    assert!(d.rmse < 1e-3 && d.fraction_over(0.01) == 0.0, "{d:?}");

    // NaN in one image is a full difference.
    let mut nan = a.clone();
    nan.set(0, 0, Vec3::new(f32::NAN, 0.0, 0.0));
    assert_eq!(diff_stats(&a, &nan).unwrap().max_abs, 1.0);
}

#[test]
fn size_mismatch_is_an_error() {
    let err = diff_stats(&Image::new(4, 4), &Image::new(4, 5)).unwrap_err();
    assert_eq!((err.a, err.b), ((4, 4), (4, 5)));
    assert!(err.to_string().contains("4x5"));
    assert!(diff_stats(&Image::new(2, 8), &Image::new(8, 2)).is_err());
    // A hand-built image with the wrong pixel count is a mismatch too, not a panic.
    let broken = Image { width: 4, height: 4, pixels: vec![] };
    assert!(diff_stats(&broken, &Image::new(4, 4)).is_err());
}

#[test]
fn file_errors_name_the_path() {
    let dir = TempDir::new("img-errors");
    let missing = dir.path().join("missing.png");
    let err = Image::load_png(&missing).unwrap_err();
    assert_eq!(err.path, missing);
    let text = dir.write("text.png", "this is not a png");
    let err = Image::load_png(&text).unwrap_err();
    assert_eq!(err.path, text);
    let png = dir.path().join("real.png");
    Image::new(2, 2).save_png(&png).unwrap();
    assert!(Image::load_exr(&png).unwrap_err().reason.contains("expected"));
    let truncated = dir.write("cut.png", &std::fs::read(&png).unwrap()[..30]);
    assert!(Image::load_png(&truncated).is_err());
    let bad = Image { width: 3, height: 3, pixels: vec![Vec3::ZERO; 2] };
    assert!(bad.save_png(&dir.path().join("bad.png")).is_err());
    assert!(bad.save_exr(&dir.path().join("bad.exr")).is_err());
    let err = Image::new(2, 2).save_png(&dir.path().join("no/such/dir/x.png")).unwrap_err();
    assert!(err.path.ends_with("x.png"));
}

#[test]
fn srgb8_rounding() {
    let img =
        Image::from_pixels(4, 1, vec![Vec3::ZERO, Vec3::splat(-1.0), Vec3::splat(2.0), Vec3::splat(0.18)]).unwrap();
    let px = img.to_srgb8();
    assert_eq!(&px[..3], &[[0, 0, 0], [0, 0, 0], [255, 255, 255]]);
    // 18 % grey is sRGB 0.4614 -> 118.
    assert_eq!(px[3], [118, 118, 118]);
}

#[test]
fn grey_png_loads_as_grey() {
    let dir = TempDir::new("grey-png");
    let slice = Image::from_pixels(2, 1, vec![Vec3::splat(0.2), Vec3::ONE]).unwrap();
    let paths = lumbre_raytrace::write_slices(dir.path(), &[slice]).unwrap();
    let back = Image::load_png(&paths[0]).unwrap();
    // Slices store 0.2 as 51 (linear quantization); load_png reads PNGs as sRGB.
    assert_eq!(back.get(0, 0), Vec3::splat(lumbre_raytrace::srgb_to_linear(51.0 / 255.0)));
    assert_eq!(back.get(1, 0), Vec3::ONE);
}
