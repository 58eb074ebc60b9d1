//! OBJ/MTL loading: the bundled scenes, and every kind of bad input.

mod common;

use common::{TempDir, testdata};
use glam::Vec3;
use lumbre_raytrace::twin::NO_NORMAL;
use lumbre_raytrace::{Light, MaterialKind, Scene};

fn material<'a>(scene: &'a Scene, name: &str) -> &'a lumbre_raytrace::Material {
    scene.materials.iter().find(|m| m.name == name).unwrap_or_else(|| panic!("no material {name}"))
}

/// Checks the invariants `Scene` documents.
fn check_invariants(scene: &Scene) {
    assert!(!scene.materials.is_empty());
    let (lo, hi) = scene.bounds;
    let mut used = vec![false; scene.positions.len()];
    for t in &scene.triangles {
        for &v in &t.v {
            let p = scene.positions[v as usize];
            assert!(p.is_finite() && p.cmpge(lo).all() && p.cmple(hi).all());
            used[v as usize] = true;
        }
        if t.has_normals() {
            for &n in &t.n {
                assert!((scene.normals[n as usize].length() - 1.0).abs() < 1e-5);
            }
        } else {
            assert_eq!(t.n, [NO_NORMAL; 3]);
        }
        assert!((t.material as usize) < scene.materials.len());
    }
    assert!(used.iter().all(|&u| u), "unreferenced positions");
    for (i, tri) in scene.triangle_positions().iter().enumerate() {
        assert_eq!(Some(*tri), scene.triangle(i as u32));
        let n = scene.face_normal(i as u32).unwrap();
        assert!((n.length() - 1.0).abs() < 1e-5);
    }
}

#[test]
fn cornell_box_original() {
    let (scene, report) = Scene::load_obj(&testdata("scenes/CornellBox-Original.obj")).unwrap();
    check_invariants(&scene);
    // 18 quads (5 walls, 6 + 6 box faces, the light) triangulate to 36 triangles.
    assert_eq!(report.triangles, 36);
    assert_eq!(scene.triangles.len(), 36);
    assert_eq!(report.dropped(), 0);
    assert!(report.warnings.is_empty(), "{report}");
    assert!(scene.normals.is_empty());
    assert_eq!(report.materials, 8);
    assert_eq!(scene.materials.len(), 8, "no default material needed");
    assert_eq!(scene.bounds, (Vec3::new(-1.02, 0.0, -1.04), Vec3::new(1.0, 1.99, 0.99)));

    assert_eq!(material(&scene, "floor").kind, MaterialKind::Diffuse);
    assert_eq!(material(&scene, "leftWall").kind, MaterialKind::Diffuse);
    assert_eq!(material(&scene, "leftWall").kd, Vec3::new(0.63, 0.065, 0.05));
    assert_eq!(material(&scene, "leftWall").ni, 1.5);
    let short = material(&scene, "shortBox");
    assert_eq!((short.kind, short.ks, short.ns), (MaterialKind::Phong, Vec3::new(0.725, 0.71, 0.68), 200.0));
    assert_eq!(material(&scene, "tallBox").kind, MaterialKind::Phong);
    let light = material(&scene, "light");
    assert_eq!((light.kind, light.ke), (MaterialKind::Emitter, Vec3::new(17.0, 12.0, 4.0)));

    // The light quad at y = 1.98 is two area lights.
    let emissive = scene.emissive_triangles();
    assert_eq!(emissive.len(), 2);
    assert_eq!(scene.lights.len(), 2);
    let mut total_area = 0.0;
    for (light, &t) in scene.lights.iter().zip(&emissive) {
        let Light::Area { triangle, emission, area } = *light else { panic!("expected an area light") };
        assert_eq!(triangle, t);
        assert_eq!(emission, Vec3::new(17.0, 12.0, 4.0));
        for p in scene.triangle(triangle).unwrap() {
            assert_eq!(p.y, 1.98);
        }
        total_area += area;
        for (u, v) in [(0.0, 0.0), (0.999, 0.999), (0.25, 0.75)] {
            let (p, n, pdf) = light.sample(&scene, u, v);
            assert!((p.y - 1.98).abs() < 1e-6 && p.x >= -0.24 - 1e-6 && p.x <= 0.23 + 1e-6);
            assert!((n.abs() - Vec3::Y).length() < 1e-6);
            assert!((pdf * area - 1.0).abs() < 1e-5);
        }
    }
    assert!((total_area - 0.47 * 0.38).abs() < 1e-5, "{total_area}");
    assert_eq!(scene.gpu_materials().len(), 8);
}

#[test]
fn cornell_box_diffuse() {
    let (scene, report) = Scene::load_obj(&testdata("scenes/CornellBox-Diffuse.obj")).unwrap();
    check_invariants(&scene);
    assert_eq!(report.triangles, 36);
    for m in &scene.materials {
        let expected = if m.name == "light" { MaterialKind::Emitter } else { MaterialKind::Diffuse };
        assert_eq!(m.kind, expected, "{}", m.name);
    }
    assert_eq!(scene.emissive_triangles().len(), 2);
}

#[test]
fn suzanne_has_normals() {
    let (scene, report) = Scene::load_obj(&testdata("scenes/suzanne.obj")).unwrap();
    check_invariants(&scene);
    assert_eq!(report.triangles + report.dropped(), 968);
    assert_eq!(scene.triangles.len(), 968, "{report}");
    assert!(!scene.normals.is_empty());
    assert!(scene.triangles.iter().all(|t| t.has_normals()));
    assert_eq!(scene.materials.len(), 1);
    assert_eq!(scene.materials[0].name, "default");
    assert!(scene.lights.is_empty());
}

#[test]
fn teapot_loads() {
    let (scene, report) = Scene::load_obj(&testdata("scenes/teapot.obj")).unwrap();
    check_invariants(&scene);
    assert_eq!(report.triangles + report.dropped(), 6320);
    assert_eq!(scene.triangles.len(), 6320, "{report}");
    assert!(scene.normals.is_empty());
    assert!(scene.triangles.iter().all(|t| !t.has_normals()));
}

#[test]
fn malformed_number_names_the_line() {
    let dir = TempDir::new("obj-malformed");
    let path = dir.write("scene.obj", "# test\nv 0 0 0\nv 1 0 0\n\nv 1.2.3 1 0\nf 1 2 3\n");
    let err = Scene::load_obj(&path).unwrap_err();
    assert_eq!(err.line, Some(5));
    assert_eq!(err.path, path);
    assert_eq!(err.reason, "malformed number \"1.2.3\" in vertex");
    assert!(err.to_string().ends_with("scene.obj:5: malformed number \"1.2.3\" in vertex"), "{err}");

    let path = dir.write("face.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 x\n");
    let err = Scene::load_obj(&path).unwrap_err();
    assert_eq!(err.line, Some(4));
    assert!(err.reason.contains("\"x\""), "{err}");

    let path = dir.write("normal.obj", "v 0 0 0\nvn 0 0 nope\n");
    assert_eq!(Scene::load_obj(&path).unwrap_err().line, Some(2));
    let path = dir.write("texcoord.obj", "v 0 0 0\r\nvt 0 0\r\nvt 0,5 0\r\n");
    assert_eq!(Scene::load_obj(&path).unwrap_err().line, Some(3));
}

#[test]
fn out_of_range_faces_are_dropped_and_counted() {
    let dir = TempDir::new("obj-range");
    let path = dir.write(
        "scene.obj",
        "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1 1 0\nf 1 2 3\nf 1 2 9\nf 2 4 3 7\nf -1 -2 -3\nf -1 -2 -9\nf 1//5 2//5 3//5\n",
    );
    let (scene, report) = Scene::load_obj(&path).unwrap();
    check_invariants(&scene);
    assert_eq!(report.triangles, 2);
    assert_eq!(report.dropped_out_of_range, 1 + 2 + 1 + 1);
    assert_eq!((report.dropped_non_finite, report.dropped_degenerate), (0, 0));
    // `f -1 -2 -3` is v4 v3 v2.
    assert_eq!(scene.triangle(1).unwrap(), [Vec3::new(1.0, 1.0, 0.0), Vec3::Y, Vec3::X]);
}

#[test]
fn non_finite_vertices_drop_their_triangles() {
    let dir = TempDir::new("obj-nan");
    let path = dir
        .write("scene.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nv nan 0 0\nv 0 inf 0\nf 1 2 3\nf 1 2 4\nf 4 5 1\nf 2 3 5 4\n");
    let (scene, report) = Scene::load_obj(&path).unwrap();
    check_invariants(&scene);
    assert_eq!(report.triangles, 1);
    assert_eq!(report.dropped_non_finite, 1 + 1 + 2);
    assert_eq!(scene.positions.len(), 3, "NaN vertices are not kept");
    assert_eq!(scene.bounds, (Vec3::ZERO, Vec3::new(1.0, 1.0, 0.0)));
}

#[test]
fn degenerate_triangles_are_dropped_and_counted() {
    let dir = TempDir::new("obj-degenerate");
    let path = dir.write("scene.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 2 0 0\nf 1 2 3\nf 1 2 4\nf 1 1 3\nf 3 3 3\n");
    let (scene, report) = Scene::load_obj(&path).unwrap();
    check_invariants(&scene);
    assert_eq!((report.triangles, report.dropped_degenerate), (1, 3));
    assert_eq!(report.dropped(), 3);
}

#[test]
fn empty_scenes_are_errors() {
    let dir = TempDir::new("obj-empty");
    for (name, text) in [
        ("empty.obj", ""),
        ("comments.obj", "# nothing here\n\n"),
        ("vertices.obj", "v 0 0 0\nv 1 0 0\n"),
        ("bad-faces.obj", "v 0 0 0\nv 1 0 0\nv 2 0 0\nf 1 2 3\nf 1 2 7\n"),
    ] {
        let path = dir.write(name, text);
        let err = Scene::load_obj(&path).unwrap_err();
        assert!(err.reason.starts_with("empty scene"), "{name}: {err}");
        assert_eq!(err.path, path);
    }
}

#[test]
fn missing_file_names_the_path() {
    let dir = TempDir::new("obj-missing");
    let path = dir.path().join("nope.obj");
    let err = Scene::load_obj(&path).unwrap_err();
    assert_eq!((err.path.as_path(), err.line), (path.as_path(), None));
    assert!(err.to_string().contains("nope.obj") && err.reason.contains("not found"), "{err}");
}

#[test]
fn missing_mtl_is_a_warning() {
    let dir = TempDir::new("obj-no-mtl");
    let path = dir.write("scene.obj", "mtllib missing.mtl\nusemtl red\nv 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n");
    let (scene, report) = Scene::load_obj(&path).unwrap();
    assert_eq!(scene.materials.len(), 1);
    assert_eq!(scene.materials[0].name, "default");
    assert_eq!(scene.triangles[0].material, 0);
    assert!(report.warnings.iter().any(|w| w.contains("missing.mtl") && w.contains("not found")), "{report}");
    assert!(report.warnings.iter().any(|w| w.contains("\"red\"")), "{report}");
}

#[test]
fn malformed_mtl_names_the_mtl_file_and_line() {
    let dir = TempDir::new("obj-bad-mtl");
    dir.write("m.mtl", "newmtl a\nKd 1 0 0\nNs ten\n");
    let path = dir.write("scene.obj", "mtllib m.mtl\nv 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n");
    let err = Scene::load_obj(&path).unwrap_err();
    assert_eq!(err.path, dir.path().join("m.mtl"));
    assert_eq!(err.line, Some(3));
    assert_eq!(err.reason, "malformed number \"ten\" in Ns");
}

#[test]
fn materials_map_from_mtl() {
    let dir = TempDir::new("obj-materials");
    dir.write(
        "m.mtl",
        "newmtl glass\nKd 1 1 1\nillum 7\nNi 1.0\n\
         newmtl mirror\nKs 0.9\nillum 3\n\
         newmtl faded\nd 0.5\nNi 1.33\n\
         newmtl tr\nTr 0.2\n\
         newmtl shiny\nKd 0.1 0.2 0.3\nKs 0.5 0.5 0.5\nNs 64\nillum 2\n\
         newmtl lamp\nKe 1 1 1\nillum 3\n\
         newmtl plain\nmap_Kd texture.png\n",
    );
    let mut obj = String::from("mtllib m.mtl\nv 0 0 0\nv 1 0 0\nv 0 1 0\n");
    for name in ["glass", "mirror", "faded", "tr", "shiny", "lamp", "plain", "unknown"] {
        obj.push_str(&format!("usemtl {name}\nf 1 2 3\n"));
    }
    obj.push_str("g no_material_here\n");
    let path = dir.write("scene.obj", obj);
    let (scene, report) = Scene::load_obj(&path).unwrap();
    let kinds: Vec<MaterialKind> = scene.triangles.iter().map(|t| scene.materials[t.material as usize].kind).collect();
    use MaterialKind::*;
    assert_eq!(kinds, [Glass, Mirror, Glass, Glass, Phong, Emitter, Diffuse, Diffuse]);
    assert_eq!(material(&scene, "glass").ni, 1.5);
    assert_eq!(material(&scene, "faded").ni, 1.33);
    assert_eq!(material(&scene, "faded").opacity, 0.5);
    assert!((material(&scene, "tr").opacity - 0.8).abs() < 1e-6);
    assert_eq!(material(&scene, "mirror").ks, Vec3::splat(0.9));
    assert_eq!(material(&scene, "shiny").ns, 64.0);
    assert_eq!(material(&scene, "plain").kd, Vec3::splat(0.8));
    // The unknown material's triangle uses the default material, added at the end.
    assert_eq!(scene.materials.last().unwrap().name, "default");
    assert_eq!(scene.triangles[7].material as usize, scene.materials.len() - 1);
    assert!(report.warnings.iter().any(|w| w.contains("\"unknown\"")), "{report}");
    assert_eq!(scene.emissive_triangles(), vec![5]);
    assert!(matches!(scene.lights[..], [Light::Area { triangle: 5, .. }]));
}

#[test]
fn polygons_groups_and_partial_normals() {
    let dir = TempDir::new("obj-polygons");
    let path = dir.write(
        "scene.obj",
        "o thing\nv 0 0 0\nv 1 0 0\nv 1 1 0\nv 0.5 1.5 0\nv 0 1 0\nvn 0 0 2\nvt 0 0\n\
         g pentagon\nf 1/1/1 2/1/1 3/1/1 4/1/1 5/1/1\n\
         g mixed\nf 1//1 2 3//1\n\
         l 1 2 3\np 1\ns off\n\
         g forward\nf 1 2 6\nv 2 2 2\n",
    );
    let (scene, report) = Scene::load_obj(&path).unwrap();
    check_invariants(&scene);
    assert_eq!(report.triangles, 3 + 1 + 1);
    assert!(scene.triangles[..3].iter().all(|t| t.has_normals()));
    assert_eq!(scene.normals, vec![Vec3::Z], "normals are normalised and shared");
    assert!(!scene.triangles[3].has_normals(), "a face with a corner without normal has none");
    assert!(!scene.triangles[4].has_normals());
    assert_eq!(scene.triangle(4).unwrap()[2], Vec3::splat(2.0), "forward reference");
    assert!(report.warnings.iter().any(|w| w.contains("`l`")), "{report}");
}

#[test]
fn from_triangles_drops_and_counts() {
    let good = [Vec3::ZERO, Vec3::X, Vec3::Y];
    let tris =
        [good, [Vec3::NAN, Vec3::X, Vec3::Y], [Vec3::ZERO, Vec3::ZERO, Vec3::Y], [Vec3::Z, Vec3::X, Vec3::INFINITY]];
    let (scene, report) = Scene::from_triangles_report(&tris);
    check_invariants(&scene);
    assert_eq!(scene.triangle_positions(), vec![good]);
    assert_eq!((report.dropped_non_finite, report.dropped_degenerate, report.triangles), (2, 1, 1));
    let empty = Scene::from_triangles(&[]);
    assert!(empty.triangles.is_empty() && empty.bounds == (Vec3::ZERO, Vec3::ZERO));
    let mut scene = Scene::from_triangles(&[good]);
    scene.add_point_light(Vec3::ONE, Vec3::splat(5.0));
    assert_eq!(scene.lights[0], Light::Point { position: Vec3::ONE, intensity: Vec3::splat(5.0) });
    assert_eq!(scene.lights[0].sample(&scene, 0.5, 0.5), (Vec3::ONE, Vec3::ZERO, 1.0));
    assert!(scene.emissive_triangles().is_empty());
}
