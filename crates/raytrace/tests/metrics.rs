//! Image metrics: colour conversions and CIE94 against published values, exact figures on
//! images with known differences, the Cornell box regions against the scene, a wrong render
//! caught in its region, and every error path.

mod common;

use glam::{DVec3, Vec3};
use lumbre_raytrace::metrics::{
    CompareError, DiffMap, Lab, NON_FINITE_COLOUR, REL_EPS, Region, compare, delta_e94, delta_e94_chroma_hue,
    false_colour, linear_srgb_to_xyz, luminance, ramp, relative_error,
};
use lumbre_raytrace::{
    Camera, Image, Prepared, RenderOptions, Scene, WhittedRender, add_default_light, srgb_to_linear,
};
use proptest::prelude::*;

fn lab(l: f64, a: f64, b: f64) -> Lab {
    Lab { l, a, b }
}

fn close(got: f64, want: f64, tol: f64, what: &str) {
    assert!((got - want).abs() <= tol, "{what}: got {got}, want {want} (tolerance {tol})");
}

/// White point of CIE xy chromaticity `(x, y)` with `Y = 1`.
fn white_of_xy(x: f64, y: f64) -> [f64; 3] {
    [x / y, 1.0, (1.0 - x - y) / y]
}

#[test]
fn xyz_to_lab_matches_colour_science() {
    // colour-science's documentation examples of `colour.XYZ_to_Lab`, printed to 7 decimals
    // (so 1e-6 covers their rounding): with the default D65 (xy 0.3127, 0.3290) in v0.4.x,
    // and with D50 (xy 0.3457, 0.3585), the default of v0.3.11.
    let got = Lab::from_xyz([0.20654008, 0.12197225, 0.05136952], white_of_xy(0.3127, 0.3290));
    close(got.l, 41.5278752, 1e-6, "L (D65)");
    close(got.a, 52.6385830, 1e-6, "a (D65)");
    close(got.b, 26.9231792, 1e-6, "b (D65)");
    let got = Lab::from_xyz([0.07049534, 0.10080000, 0.09558313], white_of_xy(0.3457, 0.3585));
    close(got.l, 37.9856291, 1e-6, "L (D50)");
    close(got.a, -23.6290768, 1e-6, "a (D50)");
    close(got.b, -4.4174661, 1e-6, "b (D50)");
}

#[test]
fn srgb_to_xyz_matches_colour_science() {
    // colour-science's examples of `colour.sRGB_to_XYZ` (IEC 61966-2-1 matrix, inputs
    // sRGB-encoded): v0.4.x gives 0.2065429, 0.1219794, 0.0513714; v0.3.11 gives 0.0704953,
    // 0.1008, 0.0955831. The decoding runs in f32 here, so 1e-6 rather than 1e-7.
    let cases: [([f64; 3], [f64; 3]); 2] = [
        ([0.70573936, 0.19248266, 0.22354169], [0.2065429, 0.1219794, 0.0513714]),
        ([0.17498172, 0.38818743, 0.32159978], [0.0704953, 0.1008, 0.0955831]),
    ];
    for (encoded, want) in cases {
        let linear = Vec3::from(encoded.map(|v| srgb_to_linear(v as f32)));
        let got = linear_srgb_to_xyz(linear);
        for k in 0..3 {
            close(got[k], want[k], 1e-6, &format!("XYZ[{k}] of sRGB {encoded:?}"));
        }
        // Y is the luminance the relative error uses.
        assert_eq!(luminance(linear), got[1]);
    }
}

#[test]
fn lab_of_srgb_white_grey_and_red() {
    let white = Lab::from_linear_srgb(Vec3::ONE);
    assert_eq!(white, lab(100.0, 0.0, 0.0));
    // 18% grey: L* = 116 * 0.18^(1/3) - 16 = 49.4961 (by hand), and greys have no chroma.
    let grey = Lab::from_linear_srgb(Vec3::splat(0.18));
    close(grey.l, 116.0 * 0.18f64.cbrt() - 16.0, 1e-5, "L of 18% grey");
    assert_eq!((grey.a, grey.b), (0.0, 0.0));
    // Below (6/29)^3 the linear segment: Y = 0.001 gives L* = 24389/27 * 0.001 = 0.9033.
    close(Lab::from_linear_srgb(Vec3::splat(0.001)).l, 24389.0 / 27.0 * 0.001, 1e-6, "L of a dark grey");
    // sRGB red is L*a*b* (53.2408, 80.0925, 67.2032) in Bruce Lindbloom's calculator and most
    // converters, which use his 7-digit matrix and white (0.95047, 1, 1.08883); with the
    // IEC 4-digit matrix and its own white, 53.2329, 80.1053, 67.2228 (computed in Python).
    let red = Lab::from_linear_srgb(Vec3::X);
    close(red.l, 53.2408, 0.03, "L of red");
    close(red.a, 80.0925, 0.03, "a of red");
    close(red.b, 67.2032, 0.03, "b of red");
}

#[test]
fn delta_e94_matches_colour_science() {
    // colour-science's documentation examples of `colour.difference.delta_E_CIE1994`
    // (graphic arts, Lab_1 the reference): 83.7792255... (v0.4.4) and 1.6711191... (latest).
    let got = delta_e94(lab(100.0, 21.57210357, 272.22819350), lab(100.0, 426.67945353, 72.39590835));
    close(got, 83.7792255, 1e-6, "ΔE94");
    let got = delta_e94(lab(48.99183622, -0.10561667, 400.65619925), lab(50.65907324, -0.11671910, 402.82235718));
    close(got, 1.6711191, 1e-6, "ΔE94");
}

/// Lab pairs of Sharma, Wu and Dalal's CIEDE2000 test data (Color Res. Appl. 30(1), 2005,
/// table 1: pairs 1, 2, 7, 9, 17-20, 25-34), with ΔE94 and its chroma/hue part computed
/// independently in Python from the CIE94 formula (Lab1 the reference, graphic arts), and
/// ΔE94 with the roles swapped.
/// `(Lab1, Lab2, ΔE94, its chroma/hue part, ΔE94 with Lab2 as the reference)`.
type Pair = ([f64; 3], [f64; 3], f64, f64, f64);

const SHARMA: [Pair; 18] = [
    ([50.0, 2.6772, -79.7751], [50.0, 0.0, -82.7485], 1.3950388679, 1.3950388679, 1.3652852214),
    ([50.0, 3.1571, -77.2803], [50.0, 0.0, -82.7485], 1.9341005516, 1.9341005516, 1.8526922193),
    ([50.0, 0.0, 0.0], [50.0, -1.0, 2.0], 2.2360679775, 2.2360679775, 2.0316383154),
    ([50.0, 2.49, -0.001], [50.0, -2.49, 0.0009], 4.8006944117, 4.8006944117, 4.8006944144),
    ([50.0, 2.5, 0.0], [73.0, 25.0, -18.0], 34.6891631980, 25.9680196276, 26.1397516445),
    ([50.0, 2.5, 0.0], [61.0, -5.0, 29.0], 29.4413732778, 27.3092376401, 18.3868854754),
    ([50.0, 2.5, 0.0], [56.0, -27.0, -3.0], 27.9140878071, 27.2616268425, 17.2014077446),
    ([50.0, 2.5, 0.0], [58.0, 24.0, 15.0], 24.9376608232, 23.6196301269, 14.2614681482),
    ([60.2574, -34.0099, 36.2677], [60.4626, -34.1751, 39.4387], 1.3909947095, 1.3757758690, 1.3576187101),
    ([63.0109, -31.0961, -5.8663], [62.8187, -29.7946, -4.0864], 1.2480892887, 1.2332015377, 1.2725516934),
    ([61.2901, 3.7196, -5.3901], [61.4292, 2.2480, -4.9620], 1.2979578687, 1.2904827852, 1.3313331170),
    ([35.0831, -44.1164, 3.7933], [35.0232, -40.0716, 1.5901], 1.8204508828, 1.8194651430, 1.9215771020),
    ([22.7233, 20.0904, -46.6940], [23.0331, 14.9730, -42.5619], 2.5561330876, 2.5372899561, 2.7251485785),
    ([36.4612, 47.8580, 18.3852], [36.2715, 50.5065, 21.2231], 1.4249130279, 1.4122291057, 1.3711982002),
    ([90.8027, -2.0831, 1.4410], [91.1528, -1.6435, 0.0447], 1.4194526107, 1.3756001250, 1.4477692580),
    ([90.9257, -0.5406, -0.9208], [88.6381, -0.8985, -0.7239], 2.3225685033, 0.4015105136, 2.3224734804),
    ([6.7747, -0.2908, -2.4247], [5.8714, -0.0985, -2.2286], 0.9385330841, 0.2547419478, 0.9389618896),
    ([2.0776, 0.0795, -1.1350], [0.9033, -0.0636, -0.5514], 1.3065446380, 0.5727812855, 1.3127624969),
];

#[test]
fn delta_e94_on_sharma_pairs() {
    for (i, &(a, b, full, chroma_hue, swapped)) in SHARMA.iter().enumerate() {
        let (a, b) = (lab(a[0], a[1], a[2]), lab(b[0], b[1], b[2]));
        close(delta_e94(a, b), full, 1e-9, &format!("pair {i}: ΔE94"));
        close(delta_e94_chroma_hue(a, b), chroma_hue, 1e-9, &format!("pair {i}: chroma/hue part"));
        close(delta_e94(b, a), swapped, 1e-9, &format!("pair {i}: ΔE94 swapped"));
    }
}

fn arb_lab() -> impl Strategy<Value = Lab> {
    (0.0..100.0f64, -128.0..128.0f64, -128.0..128.0f64).prop_map(|(l, a, b)| lab(l, a, b))
}

proptest! {
    #[test]
    fn delta_e94_decomposes(a in arb_lab(), b in arb_lab()) {
        let full = delta_e94(a, b);
        let ch = delta_e94_chroma_hue(a, b);
        prop_assert!(full >= 0.0 && ch >= 0.0 && ch <= full);
        // ΔE94^2 = ΔL^2 + (chroma/hue part)^2, since S_L = 1.
        prop_assert!((full * full - ((a.l - b.l).powi(2) + ch * ch)).abs() <= 1e-9 * (1.0 + full * full));
        // Never more than the CIE76 distance: S_C and S_H are at least 1.
        let cie76 = ((a.l - b.l).powi(2) + (a.a - b.a).powi(2) + (a.b - b.b).powi(2)).sqrt();
        prop_assert!(full <= cie76 + 1e-9);
        prop_assert_eq!(delta_e94(a, a), 0.0);
    }

    #[test]
    fn greys_have_no_chroma_and_lightness_grows_with_luminance(y in 0.0..4.0f32, dy in 1e-4..1.0f32) {
        let (g, brighter) = (Lab::from_linear_srgb(Vec3::splat(y)), Lab::from_linear_srgb(Vec3::splat(y + dy)));
        prop_assert!(g.a.abs() < 1e-9 && g.b.abs() < 1e-9);
        prop_assert!(brighter.l > g.l);
    }
}

/// A `width` x `height` image of one colour.
fn flat(width: u32, height: u32, c: Vec3) -> Image {
    Image::from_pixels(width, height, vec![c; (width * height) as usize]).unwrap()
}

/// A small image with a little of everything: gradients, HDR values, a dark corner.
fn card(width: u32, height: u32) -> Image {
    let mut img = Image::new(width, height);
    for y in 0..height {
        for x in 0..width {
            let (u, v) = (x as f32 / width as f32, y as f32 / height as f32);
            img.set(x, y, Vec3::new(u * 3.0, v * v, 0.5 * (u + v)));
        }
    }
    img
}

#[test]
fn identical_images_give_zeros() {
    let img = card(32, 24);
    let regions = Region::cornell(32, 24);
    let m = compare(&img, &img, &regions).unwrap();
    assert_eq!((m.pixels, m.non_finite), (32 * 24, 0));
    assert_eq!((m.rmse, m.rmse_rgb), (0.0, [0.0; 3]));
    assert_eq!((m.rel_mean, m.rel_p50, m.rel_p90, m.rel_p99), (0.0, 0.0, 0.0, 0.0));
    assert_eq!((m.de94_mean, m.de94_p95), (0.0, 0.0));
    assert_eq!(m.regions.len(), 7);
    assert!(m.regions.iter().all(|r| r.mean == Some(0.0) && r.pixels > 0), "{:?}", m.regions);
    let diff = false_colour(&img, &img, DiffMap::Relative).unwrap();
    assert!(diff.pixels.iter().all(|&p| p == Vec3::ZERO));
}

#[test]
fn known_differences_give_exact_values() {
    // 100 pixels on a grey reference of luminance 0.49 (so Y_ref + eps = 0.5); pixel k is
    // brighter by k * 0.005 in red only, so its relative error is 0.2126 * k * 0.005 / 0.5.
    let reference = flat(10, 10, Vec3::splat(0.49));
    let mut test = reference.clone();
    for k in 0..100u32 {
        test.set(k % 10, k / 10, Vec3::new(0.49 + k as f32 * 0.005, 0.49, 0.49));
    }
    let m = compare(&test, &reference, &[Region::new("first row", 0, 0, 10, 1)]).unwrap();
    // Red differences are k * 0.005 (to f32 precision): RMSE_R = 0.005 sqrt(sum k^2 / 100),
    // sum k^2 = 328350; G and B are 0; all channels together: RMSE_R / sqrt(3).
    let rmse_r = 0.005 * (328350.0f64 / 100.0).sqrt();
    close(m.rmse_rgb[0], rmse_r, 1e-6, "RMSE R");
    assert_eq!((m.rmse_rgb[1], m.rmse_rgb[2]), (0.0, 0.0));
    close(m.rmse, rmse_r / 3f64.sqrt(), 1e-6, "RMSE");
    // Relative error of pixel k: 0.2126 * k / 100; mean over k = 0.2126 * 0.495.
    let rel = |k: f64| 0.2126 * k / 100.0;
    close(m.rel_mean, rel(49.5), 1e-6, "mean relative error");
    // Nearest rank over 100 values: p50 at index round(49.5) = 50, p90 at round(89.1) = 89,
    // p99 at round(98.01) = 98.
    close(m.rel_p50, rel(50.0), 1e-6, "p50");
    close(m.rel_p90, rel(89.0), 1e-6, "p90");
    close(m.rel_p99, rel(98.0), 1e-6, "p99");
    // The first row holds k = 0..9: mean 4.5.
    assert_eq!(m.regions[0].pixels, 10);
    close(m.regions[0].mean.unwrap(), rel(4.5), 1e-6, "first row");

    // Greys of L* = 50 and 60 (Y = (66/116)^3 and (76/116)^3): ΔE94 is the lightness
    // difference alone, 10, on every pixel. Relative error: (Y60 - Y50) / (Y50 + eps).
    let (y50, y60) = ((66.0f64 / 116.0).powi(3), (76.0f64 / 116.0).powi(3));
    let reference = flat(4, 3, Vec3::splat(y50 as f32));
    let test = flat(4, 3, Vec3::splat(y60 as f32));
    let m = compare(&test, &reference, &[]).unwrap();
    close(m.de94_mean, 10.0, 1e-4, "ΔE94 mean");
    close(m.de94_p95, 10.0, 1e-4, "ΔE94 p95");
    close(m.rel_mean, (y60 - y50) / (y50 + REL_EPS), 1e-6, "relative error of greys");
    close(m.rmse, y60 - y50, 1e-6, "RMSE of greys");
}

#[test]
fn relative_error_definition() {
    // A black reference pixel gives |Y_t| / eps, not infinity.
    close(relative_error(Vec3::splat(0.001), Vec3::ZERO), 0.001 / REL_EPS, 1e-6, "black reference");
    // A negative reference luminance counts as 0 in the denominator.
    close(relative_error(Vec3::ZERO, Vec3::splat(-0.5)), 0.5 / REL_EPS, 1e-6, "negative reference");
    // Luminance weights: a pure-green error weighs 0.7152.
    close(relative_error(Vec3::new(0.49, 0.59, 0.49), Vec3::splat(0.49)), 0.7152 * 0.1 / 0.5, 1e-6, "green");
}

#[test]
fn non_finite_pixels_are_left_out_and_counted() {
    let reference = flat(4, 4, Vec3::splat(0.49));
    let mut test = reference.clone();
    test.set(0, 0, Vec3::new(f32::NAN, 0.0, 0.0));
    test.set(1, 0, Vec3::splat(f32::INFINITY));
    test.set(2, 0, Vec3::splat(1.49));
    let mut reference = reference;
    reference.set(3, 3, Vec3::new(0.0, f32::NEG_INFINITY, 0.0));
    let m = compare(&test, &reference, &[Region::new("top", 0, 0, 2, 1), Region::new("row", 0, 0, 4, 1)]).unwrap();
    assert_eq!((m.pixels, m.non_finite), (13, 3));
    // One pixel of 13 has relative error 1 / 0.5 = 2.
    close(m.rel_mean, 2.0 / 13.0, 1e-6, "mean");
    assert!(m.rmse.is_finite() && m.de94_mean.is_finite());
    assert_eq!((m.regions[0].pixels, m.regions[0].mean), (0, None));
    assert_eq!(m.regions[1].pixels, 2);
    close(m.regions[1].mean.unwrap(), 1.0, 1e-6, "row");
    assert!(m.to_string().contains("none finite"), "{m}");
    let diff = false_colour(&test, &reference, DiffMap::Relative).unwrap();
    assert_eq!(
        (diff.get(0, 0), diff.get(1, 0), diff.get(3, 3)),
        (NON_FINITE_COLOUR, NON_FINITE_COLOUR, NON_FINITE_COLOUR)
    );
    assert_eq!(diff.get(2, 0), ramp(1.0));
    assert_eq!(diff.get(3, 0), ramp(0.0));
    // Nothing finite at all is an error, not zeros.
    let nan = flat(2, 2, Vec3::splat(f32::NAN));
    assert_eq!(compare(&nan, &flat(2, 2, Vec3::ONE), &[]), Err(CompareError::NothingToCompare { non_finite: 4 }));
    let err = compare(&Image::new(0, 0), &Image::new(0, 0), &[]).unwrap_err();
    assert!(err.to_string().contains("no pixels"), "{err}");
}

#[test]
fn results_do_not_depend_on_the_thread_count() {
    let (a, b) = (card(67, 45), flat(67, 45, Vec3::new(0.3, 0.2, 0.1)));
    let regions = Region::cornell(67, 45);
    let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    let serial = pool.install(|| compare(&a, &b, &regions)).unwrap();
    assert_eq!(serial, compare(&a, &b, &regions).unwrap());
}

#[test]
fn errors_name_what_is_wrong() {
    let a = flat(8, 6, Vec3::ONE);
    let err = compare(&a, &flat(8, 7, Vec3::ONE), &[]).unwrap_err();
    assert!(matches!(err, CompareError::Size(_)));
    assert_eq!(err.to_string(), "cannot compare a 8x6 image with a 8x7 one");
    // A hand-built image whose pixel count does not match its size is a mismatch, not a panic.
    let broken = Image { width: 8, height: 6, pixels: vec![Vec3::ONE; 47] };
    assert!(matches!(compare(&broken, &a, &[]), Err(CompareError::Size(_))));
    assert!(false_colour(&a, &broken, DiffMap::DeltaE94).is_err());

    let err = compare(&a, &a, &[Region::new("ok", 0, 0, 8, 6), Region::new("wide", 4, 0, 5, 2)]).unwrap_err();
    assert_eq!(err.to_string(), "region \"wide\" (columns 4..9, rows 0..2) reaches outside the 8x6 image");
    let err = compare(&a, &a, &[Region::new("far", u32::MAX, 0, 1, 1)]).unwrap_err();
    assert!(matches!(err, CompareError::RegionOutside { .. }), "{err}");
    let err = compare(&a, &a, &[Region::new("thin", 0, 0, 0, 3)]).unwrap_err();
    assert_eq!(err, CompareError::EmptyRegion(Region::new("thin", 0, 0, 0, 3)));
    assert!(err.to_string().contains("\"thin\" is empty"));
}

#[test]
fn region_lists_parse_and_reject_malformed_text() {
    let r = Region::parse_list(" left wall=1,2,3,4 ;floor = 5, 6, 7, 8").unwrap();
    assert_eq!(r, vec![Region::new("left wall", 1, 2, 3, 4), Region::new("floor", 5, 6, 7, 8)]);
    assert_eq!(Region::parse_list(&format!("{};{}", r[0], r[1])).unwrap(), r);
    for (text, names) in [
        ("wall", "\"wall\": expected name=x,y,width,height"),
        ("=1,2,3,4", "name before '=' is empty"),
        ("a=1,2,3", "expected 4 numbers"),
        ("a=1,2,3,4,5", "found 5"),
        ("a=1,-2,3,4", "\"-2\" is not a whole number"),
        ("a=1,2,x,4", "\"x\" is not a whole number"),
        ("a=1,2,0,4", "at least 1"),
        ("a=1,2,3,4;a=0,0,1,1", "given twice"),
        (" ; ", "no region given"),
    ] {
        let err = Region::parse_list(text).unwrap_err();
        assert!(err.contains(names), "{text:?}: {err}");
    }
}

#[test]
fn cornell_preset_scales_with_the_image() {
    let r = Region::cornell(640, 480);
    let names: Vec<&str> = r.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["left wall", "right wall", "back wall", "ceiling", "floor", "tall box", "short box"]);
    // At twice the resolution each rectangle holds the doubled one (both are the largest
    // whole-pixel rectangles inside the same fractions) and exceeds it by under 2 pixels a side.
    for (small, big) in r.iter().zip(Region::cornell(1280, 960)) {
        let (x0, y0) = (2 * small.x, 2 * small.y);
        let (x1, y1) = (x0 + 2 * small.width, y0 + 2 * small.height);
        assert!(big.x <= x0 && big.y <= y0 && big.x + big.width >= x1 && big.y + big.height >= y1, "{small} {big}");
        assert!(x0 - big.x < 2 && y0 - big.y < 2 && big.x + big.width - x1 < 2 && big.y + big.height - y1 < 2);
    }
    // Tiny images still get one pixel per region, inside the image.
    for region in Region::cornell(4, 3) {
        assert!(
            region.width >= 1 && region.height >= 1 && region.x + region.width <= 4 && region.y + region.height <= 3
        );
    }
}

/// The camera of the reference view.
fn reference_camera() -> Camera {
    Camera::parse("0,1,3.9, 0,1,0, 0,1,0, 40").unwrap()
}

/// The scene material a preset region must lie on.
fn material_of(region: &str) -> &'static str {
    match region {
        "left wall" => "leftWall",
        "right wall" => "rightWall",
        "back wall" => "backWall",
        "ceiling" => "ceiling",
        "floor" => "floor",
        "tall box" => "tallBox",
        "short box" => "shortBox",
        other => panic!("unknown region {other}"),
    }
}

/// The closest triangle hit by a ray, by testing every triangle (Möller–Trumbore in f64).
fn brute_force_hit(tris: &[[Vec3; 3]], origin: Vec3, dir: Vec3) -> Option<usize> {
    let (o, d) = (origin.as_dvec3(), dir.as_dvec3());
    let mut best: Option<(f64, usize)> = None;
    for (i, t) in tris.iter().enumerate() {
        let [p0, p1, p2] = t.map(|p| p.as_dvec3());
        let (e1, e2) = (p1 - p0, p2 - p0);
        let p = d.cross(e2);
        let det = e1.dot(p);
        if det.abs() < 1e-12 {
            continue;
        }
        let s = o - p0;
        let u = s.dot(p) / det;
        let q = s.cross(e1);
        let v = d.dot(q) / det;
        let dist = e2.dot(q) / det;
        if u >= 0.0 && v >= 0.0 && u + v <= 1.0 && dist > 1e-9 && best.is_none_or(|(b, _)| dist < b) {
            best = Some((dist, i));
        }
    }
    best.map(|(_, i)| i)
}

/// The first point of `region` (every pixel centre, and every pixel corner when `corners`)
/// whose camera ray does not hit the scene material `want`, as a message; `None` when all do.
fn off_surface(scene: &Scene, region: &Region, want: &str, (w, h): (u32, u32), corners: bool) -> Option<String> {
    let tris = scene.triangle_positions();
    let camera = reference_camera();
    let corner_points = (0..=region.height).flat_map(|j| (0..=region.width).map(move |i| (i as f32, j as f32)));
    let centres = (0..region.height).flat_map(|j| (0..region.width).map(move |i| (i as f32 + 0.5, j as f32 + 0.5)));
    for (dx, dy) in corner_points.filter(|_| corners).chain(centres) {
        let (px, py) = (region.x as f32 + dx, region.y as f32 + dy);
        let (origin, dir) = camera.ray(px, py, w, h);
        let hit =
            brute_force_hit(&tris, origin, dir).map(|i| &scene.materials[scene.triangles[i].material as usize].name);
        if hit.map(String::as_str) != Some(want) {
            return Some(format!("{w}x{h}: region {region} at pixel position ({px}, {py}) hits {hit:?}, not {want}"));
        }
    }
    None
}

#[test]
fn cornell_regions_lie_inside_their_surfaces() {
    let (scene, _) = Scene::load_obj(&common::testdata("scenes/CornellBox-Diffuse.obj")).unwrap();
    // The usual 4:3 sizes, a square, a wide screen, and images so small that the thinnest
    // rectangles fall back to the pixel at their centre (checked at pixel centres only).
    for (w, h) in [(640, 480), (320, 240), (64, 48), (500, 500), (854, 480), (1024, 768), (32, 24), (16, 12)] {
        for region in Region::cornell(w, h) {
            // Every pixel centre and, from 48 rows, every pixel corner of the rectangle: the
            // whole rectangle is on the surface, not just its pixel centres.
            if let Some(miss) = off_surface(&scene, &region, material_of(&region.name), (w, h), h >= 48) {
                panic!("{miss}");
            }
        }
    }
    // The check catches a rectangle that strays: the left wall's moved right by half its
    // width reaches the back wall.
    let mut strayed = Region::cornell(640, 480)[0].clone();
    strayed.x += strayed.width / 2;
    let miss =
        off_surface(&scene, &strayed, "leftWall", (640, 480), true).expect("the moved rectangle leaves the wall");
    assert!(miss.contains("backWall"), "{miss}");
}

/// The diffuse Cornell box from the reference camera, rendered by the Whitted ray tracer on
/// the CPU, with the left wall's diffuse colour replaced by `left_wall` when given.
fn render_cornell(width: u32, height: u32, left_wall: Option<Vec3>) -> Image {
    let (mut scene, _) = Scene::load_obj(&common::testdata("scenes/CornellBox-Diffuse.obj")).unwrap();
    if let Some(kd) = left_wall {
        let m = scene.materials.iter_mut().find(|m| m.name == "leftWall").expect("the box has a left wall");
        m.kd = kd;
    }
    let camera = reference_camera();
    add_default_light(&mut scene, &camera);
    let options = RenderOptions { width, height, spp: 1, ..Default::default() };
    WhittedRender { camera, options }.cpu(&Prepared::new(scene, &Default::default())).unwrap()
}

#[test]
fn a_wrong_wall_shows_in_its_region_and_not_in_the_others() {
    let (w, h) = (160, 120);
    let reference = render_cornell(w, h, None);
    // The left wall painted green (the right wall's colour): a plausible mistake.
    let wrong = render_cornell(w, h, Some(Vec3::new(0.14, 0.45, 0.091)));
    let regions = Region::cornell(w, h);
    let m = compare(&wrong, &reference, &regions).unwrap();
    println!("{m}");
    for r in &m.regions {
        let mean = r.mean.unwrap();
        if r.region.name == "left wall" {
            // Red (Y = 0.2126 * 0.63 + 0.7152 * 0.065 + 0.0722 * 0.05 = 0.184) against green
            // (Y = 0.358) under the same light: up to 94% where the wall is well lit, less in
            // its shadow, where eps dominates (about 52% on average here).
            assert!(mean > 0.3, "left wall: {mean}");
        } else {
            // The Whitted renderer has no indirect light, so the other surfaces are untouched.
            assert_eq!(mean, 0.0, "{}", r.region.name);
        }
    }
    assert!(m.de94_p95 > 10.0 && m.rel_p99 > 0.3, "{m}");
    // The same render compares clean, so the check above is about the wall.
    let again = compare(&render_cornell(w, h, None), &reference, &regions).unwrap();
    assert!(again.regions.iter().all(|r| r.mean == Some(0.0)));

    // The false-colour image lights up the left wall's region and nothing outside the wall.
    let diff = false_colour(&wrong, &reference, DiffMap::DeltaE94).unwrap();
    let left = &regions[0];
    for y in left.y..left.y + left.height {
        for x in left.x..left.x + left.width {
            assert_ne!(diff.get(x, y), Vec3::ZERO, "pixel ({x}, {y}) of the left wall");
        }
    }
    for r in &regions[1..] {
        for y in r.y..r.y + r.height {
            for x in r.x..r.x + r.width {
                assert_eq!(diff.get(x, y), Vec3::ZERO, "pixel ({x}, {y}) of the {}", r.name);
            }
        }
    }
}

#[test]
fn display_is_a_table_with_every_figure() {
    let reference = flat(4, 4, Vec3::splat(0.49));
    let test = flat(4, 4, Vec3::splat(0.54));
    let m = compare(&test, &reference, &[Region::new("whole image", 0, 0, 4, 4)]).unwrap();
    let text = m.to_string();
    for want in ["RMSE, linear RGB", "0.050000", "relative error, p99", "10.00%", "ΔE94, p95", "whole image", "16"] {
        assert!(text.contains(want), "missing {want:?} in\n{text}");
    }
}

#[test]
fn false_colour_scales() {
    let reference = flat(3, 1, Vec3::splat(0.49));
    let mut test = reference.clone();
    test.set(1, 0, Vec3::splat(0.74)); // relative error 0.5
    test.set(2, 0, Vec3::splat(5.0)); // far above 100%: clamped to the top of the ramp
    let diff = false_colour(&test, &reference, DiffMap::Relative).unwrap();
    assert_eq!((diff.width, diff.height), (3, 1));
    assert_eq!(diff.get(0, 0), ramp(0.0));
    let half = diff.get(1, 0).as_dvec3();
    assert!((half - ramp(0.5).as_dvec3()).length() < 1e-5, "{half}");
    assert_eq!(diff.get(2, 0), ramp(1.0));
    // Halfway between cyan (0.4) and green (0.6): sRGB (0, 1, 0.5).
    let mid = ramp(0.5).as_dvec3();
    assert!((mid - DVec3::new(0.0, 1.0, f64::from(srgb_to_linear(0.5)))).length() < 1e-6, "{mid}");
    // ΔE94 scale: greys of L* 50 and 60 (ΔE 10) sit at half of 0..20.
    let (y50, y60) = ((66.0f32 / 116.0).powi(3), (76.0f32 / 116.0).powi(3));
    let d = false_colour(&flat(1, 1, Vec3::splat(y60)), &flat(1, 1, Vec3::splat(y50)), DiffMap::DeltaE94).unwrap();
    assert!((d.get(0, 0).as_dvec3() - mid).length() < 1e-4, "{}", d.get(0, 0));
}
