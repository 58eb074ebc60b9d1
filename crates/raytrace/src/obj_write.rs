//! Writing a scene as OBJ + MTL, the formats [`Scene::load_obj`] reads.

use std::collections::HashSet;
use std::fmt::Write as _;
use std::path::Path;

use crate::error::LoadError;
use crate::material::{Material, MaterialKind};
use crate::scene::{Light, Scene};
use crate::write::write_file;

/// The MTL `illum` model that [`Scene::load_obj`] maps back to `kind` (see [`Material`]).
fn illum(kind: MaterialKind) -> u8 {
    match kind {
        MaterialKind::Diffuse | MaterialKind::Emitter => 1,
        MaterialKind::Phong => 2,
        MaterialKind::Mirror => 3,
        MaterialKind::Glass => 4,
    }
}

/// Material names as `newmtl` and `usemtl` need them: no spaces or `#`, not empty, unique.
fn mtl_names(materials: &[Material]) -> Vec<String> {
    let mut taken = HashSet::new();
    materials
        .iter()
        .map(|m| {
            let clean: String = m.name.chars().map(|c| if c.is_whitespace() || c == '#' { '_' } else { c }).collect();
            let base = if clean.is_empty() { "material".to_owned() } else { clean };
            let name = std::iter::once(base.clone())
                .chain((2..).map(|k| format!("{base}-{k}")))
                .find(|n| !taken.contains(n))
                .unwrap_or(base);
            taken.insert(name.clone());
            name
        })
        .collect()
}

impl Scene {
    /// The scene as the text of an OBJ file that names the material library `mtl_file`, and
    /// the text of that library: the inverse of [`Scene::load_obj`].
    ///
    /// Numbers are written in the shortest form that reads back to the same f32, so a scene
    /// loaded from the written files has the same triangles (corners, shading normals,
    /// materials, in order) and lights. Materials keep their values and kind as long as they
    /// are ones an MTL file can describe (see [`Material`]: `Kd` and `Ks` in `[0, 1]`, and an
    /// emitter has some `Ke` > 0); names get spaces and `#` replaced by `_` and are made
    /// unique. OBJ has no point lights: each is written as a comment.
    ///
    /// ```
    /// use glam::Vec3;
    /// use lumbre_raytrace::{Material, Scene, SceneBuilder};
    /// let mut builder = SceneBuilder::new();
    /// builder.add_box(Vec3::ZERO, Vec3::new(1.0, 0.3, 0.1), Material::default(), false);
    /// let scene = builder.build();
    /// let (obj, mtl) = scene.to_obj("box.mtl");
    /// assert!(obj.starts_with("# ") && obj.contains("mtllib box.mtl\n"));
    /// assert!(mtl.contains("newmtl default\n"));
    /// let (back, _) = Scene::load_obj_bytes("box.obj".as_ref(), obj.as_bytes(), &[("box.mtl", mtl.as_bytes())]).unwrap();
    /// assert_eq!(back.triangle_positions(), scene.triangle_positions());
    /// assert_eq!(back.materials, scene.materials);
    /// ```
    pub fn to_obj(&self, mtl_file: &str) -> (String, String) {
        let names = mtl_names(&self.materials);
        let mut obj = String::new();
        let _ = writeln!(
            obj,
            "# Lumbre scene: {} triangles, {} positions, {} normals, {} materials",
            self.triangles.len(),
            self.positions.len(),
            self.normals.len(),
            self.materials.len()
        );
        for light in &self.lights {
            if let Light::Point { position, intensity } = light {
                let _ = writeln!(obj, "# point light (not part of OBJ): position {position}, intensity {intensity}");
            }
        }
        let _ = writeln!(obj, "mtllib {mtl_file}");
        for p in &self.positions {
            let _ = writeln!(obj, "v {} {} {}", p.x, p.y, p.z);
        }
        for n in &self.normals {
            let _ = writeln!(obj, "vn {} {} {}", n.x, n.y, n.z);
        }
        let mut current = None;
        for t in &self.triangles {
            if current != Some(t.material) {
                current = Some(t.material);
                let name = names.get(t.material as usize).map_or("default", String::as_str);
                let _ = writeln!(obj, "usemtl {name}");
            }
            let [a, b, c] = t.v.map(|i| i as u64 + 1);
            if t.has_normals() {
                let [na, nb, nc] = t.n.map(|i| i as u64 + 1);
                let _ = writeln!(obj, "f {a}//{na} {b}//{nb} {c}//{nc}");
            } else {
                let _ = writeln!(obj, "f {a} {b} {c}");
            }
        }
        let mut mtl = String::from("# Lumbre materials\n");
        for (m, name) in self.materials.iter().zip(&names) {
            let _ = writeln!(mtl, "\nnewmtl {name}");
            let _ = writeln!(mtl, "Kd {} {} {}", m.kd.x, m.kd.y, m.kd.z);
            let _ = writeln!(mtl, "Ks {} {} {}", m.ks.x, m.ks.y, m.ks.z);
            let _ = writeln!(mtl, "Ke {} {} {}", m.ke.x, m.ke.y, m.ke.z);
            let _ = writeln!(mtl, "Ns {}", m.ns);
            let _ = writeln!(mtl, "Ni {}", m.ni);
            let _ = writeln!(mtl, "d {}", m.opacity);
            let _ = writeln!(mtl, "illum {}", illum(m.kind));
        }
        (obj, mtl)
    }

    /// Writes the scene as the OBJ file `path` and its material library next to it (`path`
    /// with the extension `.mtl`), as [`Scene::to_obj`] makes them. Each file is written
    /// whole or not at all ([`write_file`]); the MTL first, so that an OBJ on disk never
    /// names a library that was not written. Errors name the file.
    ///
    /// ```
    /// use glam::Vec3;
    /// use lumbre_raytrace::Scene;
    /// let dir = std::env::temp_dir().join(format!("lumbre-write-obj-doc-{}", std::process::id()));
    /// std::fs::create_dir_all(&dir).unwrap();
    /// let scene = Scene::from_triangles(&[[Vec3::ZERO, Vec3::X, Vec3::Y]]);
    /// scene.write_obj(&dir.join("tri.obj")).unwrap();
    /// let (back, report) = Scene::load_obj(&dir.join("tri.obj")).unwrap();
    /// assert_eq!((&back, report.warnings.len()), (&scene, 0));
    /// assert!(scene.write_obj(&dir.join("missing-folder/tri.obj")).is_err());
    /// # std::fs::remove_dir_all(&dir).unwrap();
    /// ```
    pub fn write_obj(&self, path: &Path) -> Result<(), LoadError> {
        let mtl_path = path.with_extension("mtl");
        let mtl_file = mtl_path.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
        if mtl_file.is_empty() || mtl_file.chars().any(char::is_whitespace) {
            return Err(LoadError::new(path, "the file name must be non-empty and have no spaces (mtllib names it)"));
        }
        let (obj, mtl) = self.to_obj(&mtl_file);
        write_file(&mtl_path, mtl.as_bytes())?;
        write_file(path, obj.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use glam::{Affine3A, Vec3};

    use super::*;
    use crate::compose::SceneBuilder;

    fn load(name: &str) -> Scene {
        let path = format!("{}/../../testdata/scenes/{name}", env!("CARGO_MANIFEST_DIR"));
        Scene::load_obj(path.as_ref()).unwrap().0
    }

    fn round_trip(scene: &Scene) -> Scene {
        let (obj, mtl) = scene.to_obj("s.mtl");
        let (back, report) =
            Scene::load_obj_bytes("s.obj".as_ref(), obj.as_bytes(), &[("s.mtl", mtl.as_bytes())]).unwrap();
        assert_eq!(report.dropped(), 0);
        assert!(report.warnings.is_empty(), "{:?}", report.warnings);
        back
    }

    /// Corners and materials of every triangle, in order.
    fn corners(s: &Scene) -> Vec<([Vec3; 3], &Material)> {
        s.triangles.iter().map(|t| (t.v.map(|i| s.positions[i as usize]), &s.materials[t.material as usize])).collect()
    }

    /// Asserts the triangles have the same shading normals (loading normalises them again,
    /// which may move a last bit).
    fn same_normals(a: &Scene, b: &Scene) {
        assert_eq!(a.triangles.len(), b.triangles.len());
        for (ta, tb) in a.triangles.iter().zip(&b.triangles) {
            assert_eq!(ta.has_normals(), tb.has_normals());
            if ta.has_normals() {
                for k in 0..3 {
                    let (na, nb) = (a.normals[ta.n[k] as usize], b.normals[tb.n[k] as usize]);
                    assert!((na - nb).abs().max_element() <= 2.0 * f32::EPSILON, "{na} vs {nb}");
                }
            }
        }
    }

    #[test]
    fn loaded_scenes_round_trip() {
        for name in ["CornellBox-Diffuse.obj", "CornellBox-Original.obj", "suzanne.obj", "teapot.obj"] {
            let scene = load(name);
            let back = round_trip(&scene);
            assert_eq!(corners(&back), corners(&scene), "{name}");
            same_normals(&back, &scene);
            assert_eq!(back.lights, scene.lights, "{name}");
            assert_eq!(back.bounds, scene.bounds, "{name}");
        }
    }

    #[test]
    fn composed_scene_round_trips_with_every_kind() {
        let mesh = load("suzanne.obj");
        let kinds = [
            Material { name: "matte white".into(), kd: Vec3::splat(0.7), ..Default::default() },
            Material {
                name: "shiny".into(),
                kd: Vec3::new(0.2, 0.3, 0.1),
                ks: Vec3::splat(0.4),
                ns: 40.0,
                kind: MaterialKind::Phong,
                ..Default::default()
            },
            Material {
                name: "mirror".into(),
                kd: Vec3::ZERO,
                ks: Vec3::splat(0.9),
                kind: MaterialKind::Mirror,
                ..Default::default()
            },
            Material { name: "glass".into(), ni: 1.33, opacity: 0.0, kind: MaterialKind::Glass, ..Default::default() },
            Material {
                name: "lamp#1".into(),
                ke: Vec3::new(12.5, 0.1, 3.0),
                kind: MaterialKind::Emitter,
                ..Default::default()
            },
        ];
        let mut builder = SceneBuilder::new();
        for (i, m) in kinds.iter().enumerate() {
            let t = Affine3A::from_rotation_y(i as f32) * Affine3A::from_translation(Vec3::X * (3.0 * i as f32 + 0.1));
            builder.add_mesh(&mesh, t, Some(m.clone()));
        }
        builder.add_box(Vec3::splat(-20.0), Vec3::splat(20.0), kinds[0].clone(), true);
        let scene = builder.build();
        let back = round_trip(&scene);
        // Names change (no spaces or '#'); everything else comes back as it was.
        let names: Vec<&str> = back.materials.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["matte_white", "shiny", "mirror", "glass", "lamp_1"]);
        let mut renamed = scene.clone();
        for (m, n) in renamed.materials.iter_mut().zip(&names) {
            m.name = n.to_string();
        }
        assert_eq!(corners(&back), corners(&renamed));
        same_normals(&back, &scene);
        assert_eq!(back.lights, scene.lights);
        assert_eq!(back.materials.iter().map(|m| m.kind).collect::<Vec<_>>(), kinds.map(|m| m.kind));
    }

    #[test]
    fn names_are_made_unique_and_point_lights_are_comments() {
        let mut scene = Scene::from_triangles(&[[Vec3::ZERO, Vec3::X, Vec3::Y], [Vec3::Z, Vec3::X, Vec3::Y]]);
        scene.materials = vec![Material::default(), Material { kd: Vec3::splat(0.1), ..Default::default() }];
        scene.triangles[1].material = 1;
        scene.add_point_light(Vec3::ONE, Vec3::splat(2.0));
        let (obj, mtl) = scene.to_obj("x.mtl");
        assert!(mtl.contains("newmtl default\n") && mtl.contains("newmtl default-2\n"), "{mtl}");
        assert!(obj.contains("# point light"), "{obj}");
        let back = round_trip(&scene);
        assert_eq!(back.materials[1].kd, Vec3::splat(0.1));
        assert_eq!(back.triangles[1].material, 1);
    }

    #[test]
    fn write_errors_name_the_file() {
        let scene = Scene::from_triangles(&[[Vec3::ZERO, Vec3::X, Vec3::Y]]);
        let dir = std::env::temp_dir().join(format!("lumbre-obj-write-{}", std::process::id()));
        let e = scene.write_obj(&dir.join("no/such/a.obj")).unwrap_err();
        assert!(e.to_string().contains("a.mtl"), "{e}");
        let e = scene.write_obj(&dir.join("a b.obj")).unwrap_err();
        assert!(e.to_string().contains("a b.obj"), "{e}");
    }
}
