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
