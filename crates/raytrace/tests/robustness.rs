//! Loaders never panic: generated garbage gives `Ok` or a `LoadError`, never a crash, and a
//! loaded scene always satisfies the documented invariants.

mod common;

use common::TempDir;
use lumbre_raytrace::{PointCloud, Scene};
use proptest::prelude::*;

/// OBJ-like lines from a vocabulary that hits every statement and many edge cases; malformed
/// lines are rare, so that many generated files load.
fn obj_line() -> impl Strategy<Value = String> {
    let num = prop_oneof![
        20 => (-3.0f32..3.0).prop_map(|x| x.to_string()),
        2 => Just("0".to_owned()),
        1 => Just("nan".to_owned()),
        1 => Just("-inf".to_owned()),
        1 => Just("1e39".to_owned()),
    ];
    let nums = |n: usize| prop::collection::vec(num.clone(), n).prop_map(|v| v.join(" "));
    let idx = prop_oneof![
        6 => (-6i64..8).prop_map(|i| i.to_string()),
        3 => (-6i64..8, -3i64..4).prop_map(|(a, b)| format!("{a}//{b}")),
        2 => (-6i64..8, -3i64..4, -3i64..4).prop_map(|(a, b, c)| format!("{a}/{b}/{c}")),
        1 => (-6i64..8, -3i64..4).prop_map(|(a, b)| format!("{a}/{b}")),
        1 => Just("99999999999999999999".to_owned()),
    ];
    prop_oneof![
        30 => nums(3).prop_map(|v| format!("v {v}")),
        2 => (nums(3), 0.5f32..2.0).prop_map(|(v, w)| format!("v {v} {w}")),
        2 => nums(6).prop_map(|v| format!("v {v}")),
        5 => nums(3).prop_map(|v| format!("vn {v}")),
        3 => nums(2).prop_map(|v| format!("vt {v}")),
        30 => prop::collection::vec(idx.clone(), 3..7).prop_map(|v| format!("f {}", v.join(" "))),
        2 => prop::collection::vec(idx, 2..4).prop_map(|v| format!("l {}", v.join(" "))),
        8 => prop_oneof![Just("g"), Just("o a b"), Just("usemtl red"), Just("usemtl blue"), Just("mtllib m.mtl"), Just("mtllib missing.mtl"), Just("s 1"), Just("# c"), Just("")]
            .prop_map(str::to_owned),
        1 => prop_oneof![Just("v x 0 0"), Just("f /"), Just("vn 0 0"), Just("usemtl"), Just("f 1 2"), Just("v 1 1 1 0")]
            .prop_map(str::to_owned),
    ]
}

fn mtl_line() -> impl Strategy<Value = String> {
    let good = prop_oneof![
        Just("newmtl red"),
        Just("newmtl blue"),
        Just("Kd 1"),
        Just("Kd 1 0 0"),
        Just("Ke 1 1 1"),
        Just("Ks spectral a.rfl"),
        Just("d -halo 0.5"),
        Just("Tr 0.3"),
        Just("illum 3"),
        Just("map_Kd"),
    ];
    let bad = prop_oneof![Just("newmtl"), Just("Kd 1 0"), Just("Ns"), Just("illum 300"), Just("Ni nan")];
    prop_oneof![20 => good, 1 => bad].prop_map(str::to_owned)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn obj_loader_never_panics(lines in prop::collection::vec(obj_line(), 0..30), mtl in prop::collection::vec(mtl_line(), 0..6), prefix in any::<bool>()) {
        let dir = TempDir::new("fuzz-obj");
        dir.write("m.mtl", mtl.join("\n"));
        // Half the files start with vertices and normals, so that many faces are in range.
        let prefix = if prefix { "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1 1 0\nv 0 0 1\nv 1 0 1\nvn 0 0 1\nvn 0 1 0\nvn 1 0 0\n" } else { "" };
        let path = dir.write("s.obj", format!("{prefix}{}", lines.join("\n")));
        if let Ok((scene, report)) = Scene::load_obj(&path) {
            prop_assert!(!scene.triangles.is_empty());
            prop_assert_eq!(report.triangles, scene.triangles.len());
            for t in &scene.triangles {
                prop_assert!(t.v.iter().all(|&v| (v as usize) < scene.positions.len()));
                prop_assert!(!t.has_normals() || t.n.iter().all(|&n| (n as usize) < scene.normals.len()));
                prop_assert!((t.material as usize) < scene.materials.len());
            }
            prop_assert!(scene.positions.iter().all(|p| p.is_finite()));
            prop_assert!(scene.normals.iter().all(|n| (n.length() - 1.0).abs() < 1e-5));
        }
    }

    #[test]
    fn obj_loader_survives_random_bytes(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let dir = TempDir::new("fuzz-obj-bytes");
        let _ = Scene::load_obj(&dir.write("s.obj", &bytes));
    }

    #[test]
    fn ply_loader_never_panics(
        binary in any::<bool>(),
        count in 0usize..6,
        extra in prop_oneof![Just(""), Just("property list uchar int idx\n"), Just("property uchar red\nproperty uchar green\n"), Just("property list float int bad\n")],
        face in any::<bool>(),
        body in prop::collection::vec(any::<u8>(), 0..200),
    ) {
        let dir = TempDir::new("fuzz-ply");
        let format = if binary { "binary_little_endian" } else { "ascii" };
        let faces = if face { "element face 3\nproperty list uchar int vertex_indices\n" } else { "" };
        let mut bytes = format!(
            "ply\nformat {format} 1.0\nelement vertex {count}\nproperty float x\nproperty float y\nproperty double z\n{extra}{faces}end_header\n"
        )
        .into_bytes();
        bytes.extend(&body);
        let _ = PointCloud::load_ply(&dir.write("p.ply", &bytes));
    }

    #[test]
    fn text_loader_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        let dir = TempDir::new("fuzz-text");
        let _ = PointCloud::load_text(&dir.write("p.txt", &bytes));
    }
}

// ------------------------------------------------------------ mutations of valid files

/// One change to a valid file: a byte flipped, the file cut short, or a token put in at a
/// position (a huge number, NaN, infinity, a huge count, a negative count, a UTF-8 byte
/// order mark, a stray newline).
#[derive(Clone, Debug)]
enum Mutation {
    Flip { at: usize, bits: u8 },
    Truncate { at: usize },
    Insert { at: usize, token: &'static str },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let token = prop::sample::select(vec![
        " 1e39",
        " -1e39",
        " nan",
        " inf",
        " -inf",
        " 99999999999999999999",
        " 1099511627776",
        " -1",
        " 0",
        "\u{feff}",
        "\n",
        "\r\n",
        " 3.4028235e38",
        " 1e-45",
    ]);
    prop_oneof![
        (any::<usize>(), 1u8..=255).prop_map(|(at, bits)| Mutation::Flip { at, bits }),
        any::<usize>().prop_map(|at| Mutation::Truncate { at }),
        (any::<usize>(), token).prop_map(|(at, token)| Mutation::Insert { at, token }),
    ]
}

/// `bytes` with the mutations applied in order (positions taken modulo the length).
fn mutate(mut bytes: Vec<u8>, mutations: &[Mutation]) -> Vec<u8> {
    for m in mutations {
        let len = bytes.len().max(1);
        match m {
            Mutation::Flip { at, bits } => {
                if !bytes.is_empty() {
                    bytes[at % len] ^= bits;
                }
            }
            Mutation::Truncate { at } => bytes.truncate(at % len),
            Mutation::Insert { at, token } => {
                let at = at % (bytes.len() + 1);
                bytes.splice(at..at, token.bytes());
            }
        }
    }
    bytes
}

/// A small valid cloud in every format the point loaders read.
fn valid_clouds() -> [(&'static str, Vec<u8>); 3] {
    let dir = TempDir::new("valid-clouds");
    let mut cloud = PointCloud::default();
    for i in 0..5 {
        let f = i as f32;
        cloud.push([f, -f * 0.5, 2.0], [0.1 * f, 0.5, 1.0], 0.2, 0.0);
    }
    let read = |name: &str, save: &dyn Fn(&std::path::Path)| {
        let path = dir.path().join(name);
        save(&path);
        std::fs::read(&path).unwrap()
    };
    [
        ("c.txt", read("c.txt", &|p| cloud.save_text(p).unwrap())),
        ("a.ply", read("a.ply", &|p| cloud.save_ply_ascii(p).unwrap())),
        ("b.ply", read("b.ply", &|p| cloud.save_ply_binary(p).unwrap())),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn mutated_obj_and_mtl_files_load_or_fail_cleanly(
        obj_mutations in prop::collection::vec(mutation(), 1..4),
        mtl_mutations in prop::collection::vec(mutation(), 0..3),
    ) {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/scenes");
        let obj = std::fs::read(root.join("CornellBox-Original.obj")).unwrap();
        let mtl = std::fs::read(root.join("CornellBox-Original.mtl")).unwrap();
        let dir = TempDir::new("mutated-obj");
        dir.write("CornellBox-Original.mtl", mutate(mtl, &mtl_mutations));
        let path = dir.write("CornellBox-Original.obj", mutate(obj, &obj_mutations));
        if let Ok((scene, _)) = Scene::load_obj(&path) {
            prop_assert!(!scene.triangles.is_empty());
            prop_assert!(scene.positions.iter().all(|p| p.is_finite()));
            prop_assert!(scene.check_size().is_ok());
        }
    }

    #[test]
    fn mutated_point_files_load_or_fail_cleanly(which in 0usize..3, mutations in prop::collection::vec(mutation(), 1..4)) {
        let (name, bytes) = valid_clouds()[which].clone();
        let dir = TempDir::new("mutated-points");
        let path = dir.write(name, mutate(bytes, &mutations));
        let loaded = if name.ends_with(".ply") { PointCloud::load_ply(&path) } else { PointCloud::load_text(&path) };
        if let Ok((cloud, report)) = loaded {
            prop_assert_eq!(report.points, cloud.len());
            prop_assert!(cloud.positions.iter().flatten().all(|x| x.is_finite()));
            let unit = |x: &f32| (0.0..=1.0).contains(x);
            prop_assert!(cloud.colors.iter().flatten().all(unit));
            prop_assert!(cloud.reflection.iter().chain(&cloud.refraction).all(unit));
        }
    }
}

/// A header claiming 2^40 vertices (or 2^64 - 1) over a few bytes is refused at once,
/// without allocating for the claim.
#[test]
fn ply_headers_claiming_huge_counts_are_refused_without_allocating() {
    let dir = TempDir::new("ply-huge-count");
    for count in ["1099511627776", "18446744073709551615"] {
        for format in ["ascii", "binary_little_endian"] {
            let header = format!(
                "ply\nformat {format} 1.0\nelement vertex {count}\nproperty float x\nproperty float y\nproperty float z\nend_header\n"
            );
            let mut bytes = header.into_bytes();
            bytes.extend(if format == "ascii" { b"0 0 0\n".to_vec() } else { vec![0u8; 12] });
            let path = dir.write("huge.ply", &bytes);
            let started = std::time::Instant::now();
            let err = PointCloud::load_ply(&path).unwrap_err().to_string();
            assert!(err.contains("huge.ply"), "{format} {count}: {err}");
            assert!(started.elapsed().as_secs_f64() < 1.0, "{format} {count}: read past the file's end");
        }
    }
}
