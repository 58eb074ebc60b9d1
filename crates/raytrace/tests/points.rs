//! Point clouds: the text format, PLY, and image slice stacks.

mod common;

use std::path::PathBuf;

use common::TempDir;
use glam::Vec3;
use lumbre_raytrace::{Image, PointCloud, load_slice_dir, load_slices, shepp_logan_phantom, write_slices};
use proptest::prelude::*;

fn sample_cloud() -> PointCloud {
    let mut c = PointCloud::default();
    c.push([0.0, 0.0, 0.0], [1.0, 0.0, 0.0], 0.0, 0.0);
    c.push([1.5, -2.25, 1e-7], [0.2, 0.4, 0.6], 0.3, 0.33);
    c.push([-1e6, 3.0e5, 0.1], [0.0, 1.0, 0.5], 1.0, 0.5);
    c
}

fn assert_ply_matches(back: &PointCloud, cloud: &PointCloud) {
    assert_eq!(back.positions, cloud.positions);
    assert_eq!(back.reflection, cloud.reflection);
    assert_eq!(back.refraction, cloud.refraction);
    for (b, c) in back.colors.iter().zip(&cloud.colors) {
        for k in 0..3 {
            assert!((b[k] - c[k]).abs() <= 0.5 / 255.0 + 1e-6, "{b:?} vs {c:?}");
        }
    }
}

// ---------------------------------------------------------------- text format

#[test]
fn text_round_trip_is_exact() {
    let dir = TempDir::new("text");
    let cloud = sample_cloud();
    let path = dir.path().join("cloud.txt");
    cloud.save_text(&path).unwrap();
    let (back, report) = PointCloud::load_text(&path).unwrap();
    assert_eq!(back, cloud);
    assert_eq!((report.points, report.dropped_non_finite), (3, 0));
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
}

#[test]
fn text_colours_0_255_are_detected() {
    let dir = TempDir::new("text-255");
    let path = dir.write("c.txt", "0 0 0 255 0 0 0 0\n\t1 1 1   51 102 1  0.5 1.2 \r\n# comment\n\n");
    let (cloud, report) = PointCloud::load_text(&path).unwrap();
    assert_eq!(cloud.colors, vec![[1.0, 0.0, 0.0], [0.2, 0.4, 1.0 / 255.0]]);
    assert_eq!(cloud.reflection, vec![0.0, 0.5]);
    // Coefficients outside [0, 1] are clamped, with a warning naming the first line.
    assert_eq!(cloud.refraction, vec![0.0, 1.0]);
    assert!(report.warnings.iter().any(|w| w.contains("0..255")));
    assert!(
        report
            .warnings
            .iter()
            .any(|w| w.contains("reflection or refraction outside [0, 1], clamped (the first at line 2)")),
        "{:?}",
        report.warnings
    );
    // 0..1 colours stay as they are; out-of-range ones are clamped with a warning.
    let path = dir.write("d.txt", "0 0 0 1 0.5 0 0 0\n0 0 0 -0.5 0 0 0 0\n");
    let (cloud, report) = PointCloud::load_text(&path).unwrap();
    assert_eq!(cloud.colors, vec![[1.0, 0.5, 0.0], [0.0, 0.0, 0.0]]);
    assert!(report.warnings.iter().any(|w| w.contains("clamped")));
}

#[test]
fn text_errors_name_the_line() {
    let dir = TempDir::new("text-errors");
    let path = dir.write("a.txt", "# header\n0 0 0 1 1 1 0 0\n\n0 0 0 1 1 0 0\n");
    let err = PointCloud::load_text(&path).unwrap_err();
    assert_eq!((err.line, err.path.clone()), (Some(4), path));
    assert!(err.reason.contains("expected 8 values") && err.reason.contains("found 7"), "{err}");

    let path = dir.write("b.txt", "0 0 0 1 1 1 0 0\n0 0 1.2.3 1 1 1 0 0\n");
    let err = PointCloud::load_text(&path).unwrap_err();
    assert_eq!(err.line, Some(2));
    assert_eq!(err.reason, "malformed number \"1.2.3\" for z");
    assert!(err.to_string().ends_with("b.txt:2: malformed number \"1.2.3\" for z"));

    let path = dir.write("c.txt", "0 0 0 1 1 1 0 0 9\n");
    assert_eq!(PointCloud::load_text(&path).unwrap_err().line, Some(1));
    let missing = dir.path().join("missing.txt");
    assert_eq!(PointCloud::load_text(&missing).unwrap_err().path, missing);
}

#[test]
fn text_non_finite_points_are_dropped_and_counted() {
    let dir = TempDir::new("text-nan");
    let path = dir.write(
        "a.txt",
        "0 0 0 1 1 1 0 0\nnan 0 0 1 1 1 0 0\n0 inf 0 1 1 1 0 0\n0 0 -inf 1 1 1 0 0\n1 1 1 NaN 1 1 0 0\n2 2 2 1 1 1 0 0\n",
    );
    let (cloud, report) = PointCloud::load_text(&path).unwrap();
    assert_eq!(cloud.positions, vec![[0.0; 3], [2.0; 3]]);
    assert_eq!((report.points, report.dropped_non_finite), (2, 4));
}

#[test]
fn text_empty_file_is_an_empty_cloud() {
    let dir = TempDir::new("text-empty");
    for (name, text) in [("empty.txt", ""), ("comments.txt", "# nothing\n\n   \n")] {
        let (cloud, report) = PointCloud::load_text(&dir.write(name, text)).unwrap();
        assert!(cloud.is_empty());
        assert_eq!(report.points, 0);
        assert!(report.warnings.iter().any(|w| w == "no points"));
    }
}

// ---------------------------------------------------------------- PLY

#[test]
fn ply_round_trips() {
    let dir = TempDir::new("ply");
    let cloud = sample_cloud();
    for (name, binary) in [("a.ply", false), ("b.ply", true)] {
        let path = dir.path().join(name);
        if binary {
            cloud.save_ply_binary(&path).unwrap();
        } else {
            cloud.save_ply_ascii(&path).unwrap();
        }
        let (back, report) = PointCloud::load_ply(&path).unwrap();
        assert_ply_matches(&back, &cloud);
        assert_eq!((report.points, report.dropped_non_finite), (3, 0));
        assert!(report.warnings.is_empty(), "{:?}", report.warnings);
        assert_eq!(PointCloud::load_ply(&path).unwrap().0, back);
    }
    // 23 bytes per point after the header.
    let bin = std::fs::read(dir.path().join("b.ply")).unwrap();
    let header_end = bin.windows(11).position(|w| w == b"end_header\n").unwrap() + 11;
    assert_eq!(bin.len() - header_end, 3 * 23);
}

/// An ascii PLY in the style of scanners' output: extra vertex properties (normals, alpha,
/// a list), double coordinates, and face elements before and after the vertices.
const ASCII_EXTRA: &str = "ply
format ascii 1.0
comment made by hand
obj_info test
element material 1
property uchar id
property float shininess
element vertex 3
property double x
property double y
property double z
property float nx
property float ny
property float nz
property uchar red
property uchar green
property uchar blue
property uchar alpha
property list uchar int tags
element face 2
property list uchar int vertex_indices
property uchar flags
end_header
7 0.5
0.5 1.25 -3 0 0 1 255 128 0 255 2 10 11
1e-3 2 3 0 1 0 0 0 255 10 0
-1 -2 -3 1 0 0 51 51 51 0 3 1 2 3
3 0 1 2 0
4 0 1 2 0 9
";

#[test]
fn ply_ascii_with_extra_properties_and_faces() {
    let dir = TempDir::new("ply-extra");
    let (cloud, report) = PointCloud::load_ply(&dir.write("extra.ply", ASCII_EXTRA)).unwrap();
    assert_eq!(cloud.positions, vec![[0.5, 1.25, -3.0], [1e-3, 2.0, 3.0], [-1.0, -2.0, -3.0]]);
    assert_eq!(cloud.colors[0], [1.0, 128.0 / 255.0, 0.0]);
    assert_eq!(cloud.colors[2], [0.2, 0.2, 0.2]);
    assert_eq!(cloud.reflection, vec![0.0; 3]);
    assert_eq!(report.points, 3);
}

/// Little-endian bytes of a binary PLY like `ASCII_EXTRA`.
fn binary_extra() -> Vec<u8> {
    let mut b =
        b"ply\r\nformat binary_little_endian 1.0\r\nelement face 2\r\nproperty list uchar int vertex_indices\r\n\
element vertex 3\r\nproperty float x\r\nproperty float y\r\nproperty float z\r\nproperty short quality\r\n\
property list int ushort ids\r\nproperty float red\r\nproperty float green\r\nproperty float blue\r\n\
element edge 1\r\nproperty int a\r\nproperty int b\r\nend_header\r\n"
            .to_vec();
    // Two faces: a triangle and a quad.
    b.push(3);
    for i in [0i32, 1, 2] {
        b.extend(i.to_le_bytes());
    }
    b.push(4);
    for i in [0i32, 1, 2, 0] {
        b.extend(i.to_le_bytes());
    }
    for (k, p) in [[1.0f32, 2.0, 3.0], [-4.0, 5.5, 6.0], [7.0, 8.0, f32::NAN]].iter().enumerate() {
        for x in p {
            b.extend(x.to_le_bytes());
        }
        b.extend((-7i16).to_le_bytes());
        b.extend((k as i32).to_le_bytes()); // list of k ushorts
        for _ in 0..k {
            b.extend(9u16.to_le_bytes());
        }
        for c in [0.25f32, 0.5, 2.0] {
            b.extend(c.to_le_bytes());
        }
    }
    b.extend(1i32.to_le_bytes());
    b.extend(2i32.to_le_bytes());
    b
}

#[test]
fn ply_binary_with_extra_properties_and_faces() {
    let dir = TempDir::new("ply-binary-extra");
    let (cloud, report) = PointCloud::load_ply(&dir.write("extra.ply", binary_extra())).unwrap();
    assert_eq!(cloud.positions, vec![[1.0, 2.0, 3.0], [-4.0, 5.5, 6.0]]);
    assert_eq!(cloud.colors, vec![[0.25, 0.5, 1.0]; 2], "float colours, clamped");
    assert_eq!((report.points, report.dropped_non_finite), (2, 1));
    assert_eq!(report.warnings, ["2 point(s) had colours outside [0, 1], clamped (the first at vertex 0)"]);
}

#[test]
fn ply_errors() {
    let dir = TempDir::new("ply-errors");
    let good_ascii = "ply\nformat ascii 1.0\nelement vertex 2\nproperty float x\nproperty float y\nproperty float z\nend_header\n1 2 3\n4 5 6\n";
    assert_eq!(PointCloud::load_ply(&dir.write("good.ply", good_ascii)).unwrap().0.len(), 2);

    let check = |name: &str, bytes: &[u8], needle: &str, line: Option<usize>| {
        let path = dir.write(name, bytes);
        let err = PointCloud::load_ply(&path).unwrap_err();
        assert!(err.reason.contains(needle), "{name}: {err}");
        assert_eq!(err.line, line, "{name}: {err}");
        assert_eq!(err.path, path);
    };
    check("magic.ply", b"plx\nformat ascii 1.0\n", "magic", Some(1));
    check("obj.ply", b"v 0 0 0\n", "magic", Some(1));
    check("binary-garbage.ply", b"\x89PNG\r\n\x1a\n", "magic", Some(1));
    check("empty.ply", b"", "empty file", None);
    check("big.ply", good_ascii.replace("ascii", "binary_big_endian").as_bytes(), "big_endian", Some(2));
    check("fmt.ply", good_ascii.replace("ascii", "utf8").as_bytes(), "unknown PLY format", Some(2));
    check("no-end.ply", b"ply\nformat ascii 1.0\nelement vertex 1\n", "end_header", None);
    check("no-y.ply", good_ascii.replace("property float y\n", "").as_bytes(), "\"y\"", None);
    check(
        "no-vertex.ply",
        b"ply\nformat ascii 1.0\nelement face 0\nproperty list uchar int v\nend_header\n",
        "no vertex",
        None,
    );
    check("count.ply", good_ascii.replace("vertex 2", "vertex two").as_bytes(), "element count", Some(3));
    check("keyword.ply", good_ascii.replace("end_header", "stuff\nend_header").as_bytes(), "stuff", Some(7));
    check(
        "number.ply",
        good_ascii.replace("4 5 6", "4 5.5.5 6").as_bytes(),
        "malformed number \"5.5.5\" for y",
        Some(9),
    );
    check("few.ply", good_ascii.replace("4 5 6", "4 5").as_bytes(), "too few", Some(9));
    check("many.ply", good_ascii.replace("4 5 6", "4 5 6 7").as_bytes(), "too many", Some(9));
    check("short-ascii.ply", good_ascii.replace("4 5 6\n", "").as_bytes(), "truncated", None);

    // Truncated binary: cut inside the second vertex, and inside the faces.
    let dir2 = TempDir::new("ply-trunc");
    let mut cloud = PointCloud::default();
    cloud.push([1.0, 2.0, 3.0], [1.0; 3], 0.0, 0.0);
    cloud.push([4.0, 5.0, 6.0], [1.0; 3], 0.0, 0.0);
    let path = dir2.path().join("full.ply");
    cloud.save_ply_binary(&path).unwrap();
    let full = std::fs::read(&path).unwrap();
    check("cut.ply", &full[..full.len() - 5], "truncated", None);
    let err = PointCloud::load_ply(&dir.write("cut2.ply", &full[..full.len() - 5])).unwrap_err();
    assert!(err.reason.contains("vertex element 1 of 2"), "{err}");
    let extra = binary_extra();
    let body = extra.windows(12).position(|w| w == b"end_header\r\n").unwrap() + 12;
    // Inside the faces' lists, inside the first vertex, inside a vertex's list, inside the edge.
    for cut in [body + 1, body + 10, body + 30, body + 52, extra.len() - 3, extra.len() - 8] {
        check(&format!("cut-{cut}.ply"), &extra[..cut], "truncated", None);
    }
}

#[test]
fn ply_empty_vertex_element_is_an_empty_cloud() {
    let dir = TempDir::new("ply-empty");
    let path = dir.write(
        "e.ply",
        "ply\nformat ascii 1.0\nelement vertex 0\nproperty float x\nproperty float y\nproperty float z\nend_header\n",
    );
    let (cloud, report) = PointCloud::load_ply(&path).unwrap();
    assert!(cloud.is_empty());
    assert!(report.warnings.iter().any(|w| w == "no points"));
    PointCloud::default().save_ply_binary(&path).unwrap();
    assert!(PointCloud::load_ply(&path).unwrap().0.is_empty());
}

#[test]
fn savers_reject_ragged_clouds() {
    let dir = TempDir::new("ragged");
    let mut c = sample_cloud();
    c.colors.pop();
    assert!(c.save_text(&dir.path().join("a.txt")).is_err());
    assert!(c.save_ply_ascii(&dir.path().join("a.ply")).is_err());
    assert!(c.save_ply_binary(&dir.path().join("b.ply")).is_err());
}

// ---------------------------------------------------------------- slices

#[test]
fn phantom_slice_stack() {
    let n = 32;
    let dir = TempDir::new("phantom");
    let slices = shepp_logan_phantom(n);
    assert_eq!(slices.len(), n as usize);
    assert!(slices.iter().all(|s| (s.width, s.height) == (n, n)));
    let paths = write_slices(dir.path(), &slices).unwrap();
    assert_eq!(paths.len(), n as usize);
    assert!(paths[3].ends_with("slice_0003.png"));

    let spacing = [0.5, 0.25, 2.0];
    let background = 0.05;
    let (cloud, report) = load_slice_dir(dir.path(), spacing, background).unwrap();
    // Expected: voxels whose stored 8-bit value is above the background.
    let stored = |v: f32| ((v.clamp(0.0, 1.0) * 255.0 + 0.5) as u8) as f32 / 255.0;
    let mut expected = Vec::new();
    for (k, s) in slices.iter().enumerate() {
        for y in 0..n {
            for x in 0..n {
                let v = stored(s.get(x, y).x);
                if v > background {
                    expected.push(([x as f32 * 0.5, y as f32 * 0.25, k as f32 * 2.0], v));
                }
            }
        }
    }
    assert!(expected.len() > 1000 && expected.len() < (n * n * n) as usize / 2, "{}", expected.len());
    assert_eq!(cloud.len(), expected.len());
    assert_eq!(report.points, expected.len());
    for (i, (p, v)) in expected.iter().enumerate() {
        assert_eq!(cloud.positions[i], *p, "point {i}");
        assert_eq!(cloud.colors[i], [*v; 3]);
    }
    // Positions lie on the grid.
    for p in &cloud.positions {
        for (c, s) in p.iter().zip(spacing) {
            let g = c / s;
            assert!(g.fract() == 0.0 && (0.0..n as f32).contains(&g), "{p:?}");
        }
    }
    // The same through explicit paths; a higher background keeps only the skull.
    let (again, _) = load_slices(&paths, spacing, background).unwrap();
    assert_eq!(again, cloud);
    let (skull, _) = load_slices(&paths, spacing, 0.9).unwrap();
    assert!(!skull.is_empty() && skull.len() < cloud.len());
    assert!(skull.colors.iter().all(|c| c[0] > 0.9));
}

#[test]
fn rgb_slices_and_errors() {
    let dir = TempDir::new("slices-rgb");
    let mut a = Image::new(3, 2);
    a.set(0, 0, Vec3::new(1.0, 0.0, 0.0)); // luminance 0.2126
    a.set(2, 1, Vec3::new(0.0, 0.0, 1.0)); // luminance 0.0722
    a.set(1, 0, Vec3::new(0.0, 1.0, 0.0)); // luminance 0.7152
    let mut b = Image::new(2, 2);
    b.set(1, 1, Vec3::splat(0.5));
    let paths = write_slices(dir.path(), &[a, b]).unwrap();
    let (cloud, report) = load_slices(&paths, [1.0, 1.0, 1.0], 0.1).unwrap();
    assert_eq!(cloud.positions, vec![[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 1.0, 1.0]]);
    assert_eq!(cloud.colors[0], [1.0, 0.0, 0.0]);
    assert_eq!(cloud.colors[2], [128.0 / 255.0; 3]);
    assert!(report.warnings.iter().any(|w| w.contains("2x2")), "{:?}", report.warnings);

    // Non-PNG files in the folder are ignored; bad files and folders are errors naming them.
    dir.write("notes.txt", "not a slice");
    assert_eq!(load_slice_dir(dir.path(), [1.0; 3], 0.1).unwrap().0, cloud);
    let bad = dir.write("slice_9999.png", "not a png");
    let err = load_slice_dir(dir.path(), [1.0; 3], 0.1).unwrap_err();
    assert_eq!(err.path, bad);
    let missing = PathBuf::from(dir.path()).join("nope");
    assert_eq!(load_slice_dir(&missing, [1.0; 3], 0.1).unwrap_err().path, missing);
    assert!(load_slices(&paths, [f32::NAN, 1.0, 1.0], 0.1).is_err());
    let (empty, report) = load_slices(&[], [1.0; 3], 0.1).unwrap();
    assert!(empty.is_empty() && report.warnings.iter().any(|w| w == "no points"));
}

// ---------------------------------------------------------------- properties

fn arb_cloud() -> impl Strategy<Value = PointCloud> {
    let finite = || prop_oneof![-1e30f32..1e30, -1.0f32..1.0, Just(0.0), Just(-0.0)];
    // Reflection and refraction are factors in [0, 1] (the loaders clamp the rest).
    let factor = || prop_oneof![0f32..=1.0, Just(0.0), Just(-0.0), Just(1.0)];
    let point = ([finite(), finite(), finite()], [0f32..=1.0, 0f32..=1.0, 0f32..=1.0], factor(), factor());
    prop::collection::vec(point, 0..64).prop_map(|pts| {
        let mut c = PointCloud::default();
        for (p, col, r, t) in pts {
            c.push(p, col, r, t);
        }
        c
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn text_round_trip(cloud in arb_cloud()) {
        let dir = TempDir::new("prop-text");
        let path = dir.path().join("c.txt");
        cloud.save_text(&path).unwrap();
        let (back, report) = PointCloud::load_text(&path).unwrap();
        prop_assert_eq!(report.points, cloud.len());
        // Bit-exact, including the sign of zero.
        let bits = |c: &PointCloud| {
            (c.positions.iter().flatten().chain(c.colors.iter().flatten()).chain(&c.reflection).chain(&c.refraction))
                .map(|x| x.to_bits())
                .collect::<Vec<u32>>()
        };
        prop_assert_eq!(bits(&back), bits(&cloud));
    }

    #[test]
    fn ply_round_trip(cloud in arb_cloud(), binary in any::<bool>()) {
        let dir = TempDir::new("prop-ply");
        let path = dir.path().join("c.ply");
        if binary { cloud.save_ply_binary(&path).unwrap() } else { cloud.save_ply_ascii(&path).unwrap() }
        let (back, report) = PointCloud::load_ply(&path).unwrap();
        prop_assert_eq!(report.points, cloud.len());
        assert_ply_matches(&back, &cloud);
    }
}
