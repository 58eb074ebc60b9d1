//! glTF 2.0 loading: geometry under node transforms, materials, baked textures, emitters,
//! cameras, every kind of bad input, and the Cornell box as glTF against its OBJ.
//!
//! The files are built here: JSON text with a base64 `data:` buffer, or a GLB with a binary
//! chunk. `LUMBRE_BLESS=1` rewrites `testdata/scenes/CornellBox-Diffuse.gltf` from the OBJ.

mod common;

use std::f32::consts::FRAC_1_SQRT_2;
use std::path::Path;

use common::{TempDir, testdata};
use glam::{Mat3, Quat, Vec3};
use lumbre_gpu::testing::Rng;
use lumbre_raytrace::{Camera, Light, LoadError, LoadReport, MaterialKind, PathOptions, PathRender, Prepared, Scene};

/// Standard base64 with padding.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for k in 0..4 {
            if k <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * k)) as usize & 63] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Numbers as JSON: f32's shortest round-trip form.
fn list(v: &[f32]) -> String {
    v.iter().map(|x| format!("{x}")).collect::<Vec<_>>().join(",")
}

/// A glTF file under construction: one binary buffer with its views and accessors (as JSON
/// text); the rest of the document is given as JSON members when the file is written.
#[derive(Default)]
struct Builder {
    bin: Vec<u8>,
    views: Vec<String>,
    accessors: Vec<String>,
}

impl Builder {
    fn view(&mut self, bytes: &[u8]) -> usize {
        while !self.bin.len().is_multiple_of(4) {
            self.bin.push(0);
        }
        self.views.push(format!(r#"{{"buffer":0,"byteOffset":{},"byteLength":{}}}"#, self.bin.len(), bytes.len()));
        self.bin.extend_from_slice(bytes);
        self.views.len() - 1
    }

    fn accessor(&mut self, json: String) -> usize {
        self.accessors.push(json);
        self.accessors.len() - 1
    }

    fn vec3(&mut self, v: &[Vec3]) -> usize {
        let bytes: Vec<u8> = v.iter().flat_map(|p| p.to_array()).flat_map(f32::to_le_bytes).collect();
        let view = self.view(&bytes);
        let lo = v.iter().fold(Vec3::INFINITY, |a, &b| a.min(b));
        let hi = v.iter().fold(Vec3::NEG_INFINITY, |a, &b| a.max(b));
        self.accessor(format!(
            r#"{{"bufferView":{view},"componentType":5126,"count":{},"type":"VEC3","min":[{}],"max":[{}]}}"#,
            v.len(),
            list(&lo.to_array()),
            list(&hi.to_array())
        ))
    }

    fn vec2(&mut self, v: &[[f32; 2]]) -> usize {
        let bytes: Vec<u8> = v.iter().flatten().flat_map(|f| f.to_le_bytes()).collect();
        let view = self.view(&bytes);
        self.accessor(format!(r#"{{"bufferView":{view},"componentType":5126,"count":{},"type":"VEC2"}}"#, v.len()))
    }

    fn indices(&mut self, ix: &[u16]) -> usize {
        let bytes: Vec<u8> = ix.iter().flat_map(|i| i.to_le_bytes()).collect();
        let view = self.view(&bytes);
        self.accessor(format!(r#"{{"bufferView":{view},"componentType":5123,"count":{},"type":"SCALAR"}}"#, ix.len()))
    }

    /// The document with `members` (JSON object members: scenes, nodes, meshes, ...) and the
    /// buffer given by `buffer` (its members before `byteLength`: a `"uri":...,` or nothing).
    fn document(&self, members: &str, buffer: &str) -> String {
        format!(
            "{{\"asset\":{{\"version\":\"2.0\"}},{members},\n\"bufferViews\":[{}],\n\"accessors\":[{}],\n\
             \"buffers\":[{{{buffer}\"byteLength\":{}}}]}}\n",
            self.views.join(",\n"),
            self.accessors.join(",\n"),
            self.bin.len()
        )
    }

    /// A `.gltf` text with the buffer embedded as a base64 data URI.
    fn embedded(&self, members: &str) -> String {
        let uri = format!("\"uri\":\"data:application/octet-stream;base64,{}\",", base64(&self.bin));
        self.document(members, &uri)
    }

    /// A `.glb` file: the JSON chunk and the buffer as the binary chunk.
    fn glb(&self, members: &str) -> Vec<u8> {
        let mut json = self.document(members, "").into_bytes();
        while !json.len().is_multiple_of(4) {
            json.push(b' ');
        }
        let mut bin = self.bin.clone();
        while !bin.len().is_multiple_of(4) {
            bin.push(0);
        }
        let total = 12 + 8 + json.len() + 8 + bin.len();
        let mut out = b"glTF".to_vec();
        for word in [2, total as u32, json.len() as u32, 0x4E4F_534A] {
            out.extend(word.to_le_bytes());
        }
        out.extend(&json);
        out.extend((bin.len() as u32).to_le_bytes());
        out.extend(0x004E_4942u32.to_le_bytes());
        out.extend(&bin);
        out
    }
}

/// Loads `text` written to a file `name` in a fresh folder.
fn load(name: &str, text: impl AsRef<[u8]>) -> Result<(Scene, LoadReport), LoadError> {
    let dir = TempDir::new("gltf");
    Scene::load(&dir.write(name, text))
}

fn close(a: Vec3, b: Vec3) -> bool {
    (a - b).abs().max_element() < 1e-5
}

/// One triangle and a node `translation`: the smallest scene.
fn one_triangle() -> Builder {
    let mut b = Builder::default();
    b.vec3(&[Vec3::ZERO, Vec3::X, Vec3::Y]);
    b
}

const ONE_MESH: &str = r#""scene":0,"scenes":[{"nodes":[0]}],"nodes":[{"mesh":0}],
    "meshes":[{"primitives":[{"attributes":{"POSITION":0}}]}]"#;

#[test]
fn hierarchy_composes_translation_rotation_scale_and_matrix() {
    let mut b = Builder::default();
    let p = b.vec3(&[Vec3::ZERO, Vec3::X, Vec3::Z]);
    let n = b.vec3(&[Vec3::new(FRAC_1_SQRT_2, FRAC_1_SQRT_2, 0.0); 3]);
    // Node 0: a matrix translating by (10, 0, 0); node 1: translation (1, 2, 3) and scale
    // (2, 1, 1); node 2: 90 degrees about +z (x -> y, y -> -x), holding the mesh.
    let s = FRAC_1_SQRT_2;
    let members = format!(
        r#""scene":0,"scenes":[{{"nodes":[0]}}],
        "nodes":[{{"children":[1],"matrix":[1,0,0,0, 0,1,0,0, 0,0,1,0, 10,0,0,1]}},
                 {{"children":[2],"translation":[1,2,3],"scale":[2,1,1]}},
                 {{"mesh":0,"rotation":[0,0,{s},{s}]}}],
        "meshes":[{{"primitives":[{{"attributes":{{"POSITION":{p},"NORMAL":{n}}}}}]}}]"#
    );
    let (scene, report) = load("tree.gltf", b.embedded(&members)).unwrap();
    assert_eq!((report.triangles, report.dropped()), (1, 0));
    // (0,0,0) -> (11,2,3); (1,0,0) -> rotated (0,1,0) -> (11,3,3); (0,0,1) -> (11,2,4).
    let [a, b2, c] = scene.triangle(0).unwrap();
    assert!(close(a, Vec3::new(11.0, 2.0, 3.0)) && close(b2, Vec3::new(11.0, 3.0, 3.0)), "{a} {b2}");
    assert!(close(c, Vec3::new(11.0, 2.0, 4.0)), "{c}");
    // Normals by the inverse transpose: (1,1,0)/√2 rotated is (-1,1,0)/√2, then scaled by
    // (1/2, 1, 1): (-0.5, 1, 0) normalised. (The matrix itself would give (-2, 1, 0).)
    let want = Vec3::new(-0.5, 1.0, 0.0).normalize();
    let t = scene.triangles[0];
    assert!(t.has_normals());
    for k in t.n {
        assert!(close(scene.normals[k as usize], want), "{}", scene.normals[k as usize]);
    }
    assert!(scene.cameras.is_empty());
}

#[test]
fn mirroring_transform_mirrors_front_faces() {
    let mut b = one_triangle();
    let n = b.vec3(&[Vec3::Z; 3]);
    let members = ONE_MESH.replace(r#""POSITION":0}"#, &format!(r#""POSITION":0,"NORMAL":{n}}}"#));
    let plain = load("a.gltf", b.embedded(&members)).unwrap().0;
    let mirrored = members.replace(r#"{"mesh":0}"#, r#"{"mesh":0,"scale":[1,1,-1]}"#);
    let flipped = load("b.gltf", b.embedded(&mirrored)).unwrap().0;
    // z -> -z leaves the corners of a triangle in the z = 0 plane where they were, but its
    // front side (and its shading normal) now faces -z: glTF reverses the winding of nodes
    // whose transform has a negative determinant.
    assert_eq!(plain.triangle_positions(), vec![[Vec3::ZERO, Vec3::X, Vec3::Y]]);
    assert_eq!((plain.face_normal(0), plain.normals[0]), (Some(Vec3::Z), Vec3::Z));
    assert_eq!(flipped.triangle_positions(), vec![[Vec3::ZERO, Vec3::Y, Vec3::X]]);
    assert_eq!((flipped.face_normal(0), flipped.normals[0]), (Some(Vec3::NEG_Z), Vec3::NEG_Z));
}

#[test]
fn indexed_strip_fan_and_glb() {
    let mut b = Builder::default();
    // A unit square of four vertices, as indexed triangles, a strip, a fan, non-indexed, and
    // a line primitive (skipped).
    let p = b.vec3(&[Vec3::ZERO, Vec3::X, Vec3::new(1.0, 1.0, 0.0), Vec3::Y]);
    let tris = b.indices(&[0, 1, 2, 0, 2, 3]);
    let strip = b.indices(&[0, 1, 3, 2]);
    let fan = b.indices(&[0, 1, 2, 3]);
    let lines = b.indices(&[0, 1, 1, 2]);
    let members = format!(
        r#""scene":0,"scenes":[{{"nodes":[0]}}],"nodes":[{{"mesh":0}}],
        "meshes":[{{"primitives":[
            {{"attributes":{{"POSITION":{p}}},"indices":{tris}}},
            {{"attributes":{{"POSITION":{p}}},"indices":{strip},"mode":5}},
            {{"attributes":{{"POSITION":{p}}},"indices":{fan},"mode":6}},
            {{"attributes":{{"POSITION":{p}}}}},
            {{"attributes":{{"POSITION":{p}}},"indices":{lines},"mode":1}}]}}]"#
    );
    let dir = TempDir::new("glb");
    let path = dir.write("square.glb", b.glb(&members));
    let (scene, report) = Scene::load(&path).unwrap();
    // 2 + 2 + 2 + 1 (four vertices without indices: one triangle, one left over).
    assert_eq!((report.triangles, report.skipped_primitives, report.dropped()), (7, 1, 0));
    assert!(report.warnings.iter().any(|w| w.contains("1 point or line primitive(s) skipped")), "{report}");
    assert!(report.warnings.iter().any(|w| w.contains("4 vertices (no indices), not a multiple of 3")), "{report}");
    // The primitives share one POSITION accessor: its vertices are kept once.
    assert_eq!(scene.positions.len(), 4);
    // Every triangle faces +z (strips alternate their winding so that they all do).
    for i in 0..7 {
        assert_eq!(scene.face_normal(i), Some(Vec3::Z), "triangle {i}");
    }
    let area: f32 = scene.triangle_positions().iter().map(|[a, b, c]| 0.5 * (*b - *a).cross(*c - *a).length()).sum();
    assert!((area - 3.5).abs() < 1e-6, "{area}");
    // The same file as .gltf text with the buffer embedded loads the same triangles.
    let (text, _) = load("square.gltf", b.embedded(&members)).unwrap();
    assert_eq!(text.triangle_positions(), scene.triangle_positions());
}

#[test]
fn sparse_and_zero_filled_accessors() {
    let mut b = one_triangle();
    let one = b.view(&[2]);
    let y2 = b.view(&[0.0f32, 2.0, 0.0].map(f32::to_le_bytes).concat());
    let ix = b.view(&[1u16, 2].map(u16::to_le_bytes).concat());
    let xy = b.view(&[1.0f32, 0.0, 0.0, 0.0, 1.0, 0.0].map(f32::to_le_bytes).concat());
    // Accessor 1: accessor 0 with vertex 2 replaced by (0, 2, 0). Accessor 2: zeros with
    // vertices 1 and 2 given sparsely, and no bounds. Accessor 3: zeros (normals).
    b.accessor(format!(
        r#"{{"bufferView":0,"componentType":5126,"count":3,"type":"VEC3","min":[0,0,0],"max":[1,2,0],
            "sparse":{{"count":1,"indices":{{"bufferView":{one},"componentType":5121}},"values":{{"bufferView":{y2}}}}}}}"#
    ));
    b.accessor(format!(
        r#"{{"componentType":5126,"count":3,"type":"VEC3",
            "sparse":{{"count":2,"indices":{{"bufferView":{ix},"componentType":5123}},"values":{{"bufferView":{xy}}}}}}}"#
    ));
    b.accessor(r#"{"componentType":5126,"count":3,"type":"VEC3"}"#.to_owned());
    let members = r#""scene":0,"scenes":[{"nodes":[0,1]}],"nodes":[{"mesh":0},{"mesh":1,"translation":[0,0,1]}],
        "meshes":[{"primitives":[{"attributes":{"POSITION":1}}]},{"primitives":[{"attributes":{"POSITION":2,"NORMAL":3}}]}]"#;
    let (scene, report) = load("sparse.gltf", b.embedded(members)).unwrap();
    assert_eq!(
        scene.triangle_positions(),
        vec![[Vec3::ZERO, Vec3::X, Vec3::Y * 2.0], [Vec3::Z, Vec3::new(1.0, 0.0, 1.0), Vec3::new(0.0, 1.0, 1.0)]]
    );
    // Zero normals are not kept: the geometric normal shades those triangles.
    assert!(!scene.triangles[1].has_normals());
    assert!(report.warnings.iter().any(|w| w.contains("zero or non-finite normals")), "{report}");
    // A sparse index past the accessor's elements is an error naming it.
    let bad = b.embedded(members).replace(r#""count":1,"indices""#, r#""count":2,"indices""#);
    fails("sparse.gltf", bad, "accessor 1 (POSITION of mesh 0 primitive 0 of node 0), sparse indices: 2 elements");
}

#[test]
fn base_colour_emission_and_lights() {
    let mut b = Builder::default();
    let wall = b.vec3(&[Vec3::ZERO, Vec3::X, Vec3::Y]);
    let lamp = b.vec3(&[
        Vec3::new(0.0, 0.0, 1.0),
        Vec3::new(1.0, 0.0, 1.0),
        Vec3::new(1.0, 1.0, 1.0),
        Vec3::new(0.0, 1.0, 1.0),
    ]);
    let quad = b.indices(&[0, 1, 2, 0, 2, 3]);
    let members = format!(
        r#""extensionsUsed":["KHR_materials_emissive_strength"],
        "scene":0,"scenes":[{{"nodes":[0]}}],"nodes":[{{"mesh":0}}],
        "meshes":[{{"primitives":[{{"attributes":{{"POSITION":{wall}}},"material":0}},
                                   {{"attributes":{{"POSITION":{lamp}}},"indices":{quad},"material":1}}]}}],
        "materials":[{{"name":"wall","pbrMetallicRoughness":{{"baseColorFactor":[0.2,0.4,0.6,1],"metallicFactor":0}}}},
                     {{"name":"lamp","emissiveFactor":[1,0.5,0.25],
                       "extensions":{{"KHR_materials_emissive_strength":{{"emissiveStrength":8}}}}}}]"#
    );
    let (scene, report) = load("lit.gltf", b.embedded(&members)).unwrap();
    assert_eq!((report.triangles, report.materials), (3, 2));
    let wall = &scene.materials[0];
    assert_eq!(
        (wall.name.as_str(), wall.kind, wall.kd, wall.ke),
        ("wall", MaterialKind::Diffuse, Vec3::new(0.2, 0.4, 0.6), Vec3::ZERO)
    );
    let lamp = &scene.materials[1];
    assert_eq!((lamp.kind, lamp.ke, lamp.kd), (MaterialKind::Emitter, Vec3::new(8.0, 4.0, 2.0), Vec3::ONE));
    // The lamp has no metallicFactor, so glTF's default (1, metal) applies: warned, not kept.
    assert!(report.warnings.iter().any(|w| w.contains("\"lamp\": metallicFactor 1 ignored")), "{report}");
    assert!(!report.warnings.iter().any(|w| w.contains("\"wall\"")), "{report}");
    assert_eq!(scene.emissive_triangles(), vec![1, 2]);
    let lights: Vec<(u32, Vec3, f32)> = scene
        .lights
        .iter()
        .map(|l| match *l {
            Light::Area { triangle, emission, area } => (triangle, emission, area),
            Light::Point { .. } => panic!("point light"),
        })
        .collect();
    assert_eq!(lights, vec![(1, Vec3::new(8.0, 4.0, 2.0), 0.5), (2, Vec3::new(8.0, 4.0, 2.0), 0.5)]);
}

/// A PNG of `width` x 1 texels.
fn png_row(texels: &[[u8; 3]]) -> Vec<u8> {
    let raw: Vec<u8> = texels.iter().flatten().copied().collect();
    let img = image::RgbImage::from_raw(texels.len() as u32, 1, raw).unwrap();
    let mut out = std::io::Cursor::new(Vec::new());
    img.write_to(&mut out, image::ImageFormat::Png).unwrap();
    out.into_inner()
}

#[test]
fn base_colour_texture_is_baked_per_triangle() {
    let mut b = Builder::default();
    // Three triangles side by side; their UVs lie in the texture's left half, its right half,
    // and the left half again one period to the right (u in [1.05, 1.45]).
    let tri = |x: f32| [Vec3::new(x, 0.0, 0.0), Vec3::new(x + 1.0, 0.0, 0.0), Vec3::new(x, 1.0, 0.0)];
    let p = b.vec3(&[tri(0.0), tri(2.0), tri(4.0)].concat());
    let uv = |u0: f32| [[u0, 0.1], [u0 + 0.4, 0.1], [u0, 0.9]];
    let t = b.vec2(&[uv(0.05), uv(0.55), uv(1.05)].concat());
    // Left texel sRGB (255, 128, 0), right texel (0, 64, 255).
    let png = png_row(&[[255, 128, 0], [0, 64, 255]]);
    let image = b.view(&png);
    let members = format!(
        r#""scene":0,"scenes":[{{"nodes":[0]}}],"nodes":[{{"mesh":0}}],
        "meshes":[{{"primitives":[{{"attributes":{{"POSITION":{p},"TEXCOORD_0":{t}}},"material":0}},
                                   {{"attributes":{{"POSITION":{p},"TEXCOORD_0":{t}}},"material":1}}]}}],
        "images":[{{"bufferView":{image},"mimeType":"image/png","name":"two"}}],
        "samplers":[{{"wrapS":33648}}],
        "textures":[{{"source":0}},{{"source":0,"sampler":0}}],
        "materials":[{{"name":"repeat","pbrMetallicRoughness":{{"baseColorFactor":[1,0.5,1,1],"metallicFactor":0,
                        "baseColorTexture":{{"index":0}}}}}},
                     {{"name":"mirror","pbrMetallicRoughness":{{"metallicFactor":0,"baseColorTexture":{{"index":1}}}}}}]"#
    );
    let (scene, report) = load("tex.gltf", b.embedded(&members)).unwrap();
    assert_eq!(report.triangles, 6);
    assert!(report.warnings.is_empty(), "{report}");
    // An extension the file uses (not requires) and this loader lacks is named in a warning.
    let used = format!(r#""extensionsUsed":["KHR_texture_transform"],{members}"#);
    let (_, report) = load("used.gltf", b.embedded(&used)).unwrap();
    assert_eq!(report.warnings, vec!["extension KHR_texture_transform ignored".to_owned()]);
    let srgb = |c: f32| lumbre_raytrace::srgb_to_linear(c / 255.0);
    let left = Vec3::new(1.0, srgb(128.0), 0.0);
    let right = Vec3::new(0.0, srgb(64.0), 1.0);
    let quantised = |c: Vec3| (c * 255.0).round() / 255.0;
    let kd: Vec<Vec3> = scene.triangles.iter().map(|t| scene.materials[t.material as usize].kd).collect();
    let factor = Vec3::new(1.0, 0.5, 1.0);
    // Material "repeat" (factor (1, 0.5, 1)): left, right, and left again (u wraps).
    for (got, want) in kd[..3].iter().zip([left * factor, right * factor, left * factor]) {
        assert!(close(*got, quantised(want)), "{got} vs {want}");
    }
    // Material "mirror" (MIRRORED_REPEAT in u): u in [1.05, 1.45] mirrors to [0.55, 0.95].
    for (got, want) in kd[3..].iter().zip([left, right, right]) {
        assert!(close(*got, quantised(want)), "{got} vs {want}");
    }
    // One material per distinct colour: the wrapped triangle shares the left one's.
    assert_eq!(scene.triangles[0].material, scene.triangles[2].material);
    assert_eq!(scene.triangles[4].material, scene.triangles[5].material);
    assert_eq!(scene.materials.len(), 2 + 4);
    assert!(scene.materials[scene.triangles[0].material as usize].name.starts_with("repeat #ff"));
}

#[test]
fn jpeg_texture_in_a_glb() {
    let mut b = one_triangle();
    let t = b.vec2(&[[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]);
    let img = image::RgbImage::from_pixel(8, 8, image::Rgb([200, 100, 50]));
    let mut jpeg = std::io::Cursor::new(Vec::new());
    img.write_to(&mut jpeg, image::ImageFormat::Jpeg).unwrap();
    let view = b.view(&jpeg.into_inner());
    let members = format!(
        r#""scene":0,"scenes":[{{"nodes":[0]}}],"nodes":[{{"mesh":0}}],
        "meshes":[{{"primitives":[{{"attributes":{{"POSITION":0,"TEXCOORD_0":{t}}},"material":0}}]}}],
        "images":[{{"bufferView":{view},"mimeType":"image/jpeg"}}],"textures":[{{"source":0}}],
        "materials":[{{"pbrMetallicRoughness":{{"metallicFactor":0,"baseColorTexture":{{"index":0}}}}}}]"#
    );
    let dir = TempDir::new("jpeg");
    let (scene, _) = Scene::load(&dir.write("jpeg.glb", b.glb(&members))).unwrap();
    let kd = scene.materials[scene.triangles[0].material as usize].kd;
    let want = Vec3::new(200.0, 100.0, 50.0).map(|c| lumbre_raytrace::srgb_to_linear(c / 255.0));
    // JPEG is lossy: a few 8-bit steps.
    assert!((kd - want).abs().max_element() < 0.02, "{kd} vs {want}");
}

#[test]
fn cameras_and_the_default_camera() {
    let b = one_triangle();
    // A perspective camera at (1, 2, 5) turned 90 degrees about +y (its -z looks down -x),
    // and an orthographic one (skipped).
    let s = FRAC_1_SQRT_2;
    let members = format!(
        r#""scene":0,"scenes":[{{"nodes":[0,1,2]}}],
        "nodes":[{{"mesh":0}},{{"camera":0,"translation":[1,2,5],"rotation":[0,{s},0,{s}]}},{{"camera":1}}],
        "cameras":[{{"type":"perspective","perspective":{{"yfov":0.5,"znear":0.01}}}},
                   {{"type":"orthographic","orthographic":{{"xmag":1,"ymag":1,"znear":0,"zfar":10}}}}],
        "meshes":[{{"primitives":[{{"attributes":{{"POSITION":0}}}}]}}]"#
    );
    let (scene, report) = load("cam.gltf", b.embedded(&members)).unwrap();
    assert_eq!(scene.cameras.len(), 1);
    let cam = scene.cameras[0];
    assert!(close(cam.eye, Vec3::new(1.0, 2.0, 5.0)), "{}", cam.eye);
    assert!(close((cam.target - cam.eye).normalize(), Vec3::NEG_X), "{cam}");
    assert!(close(cam.up.normalize(), Vec3::Y));
    assert!((cam.fov_y_deg - 0.5f32.to_degrees()).abs() < 1e-4);
    assert!(cam.validate().is_ok());
    assert_eq!(scene.default_camera(2.0), cam);
    assert!(report.warnings.iter().any(|w| w.contains("node 2: camera 1 is not a perspective camera")), "{report}");
    let (plain, _) = load("plain.gltf", b.embedded(ONE_MESH)).unwrap();
    assert_eq!(plain.default_camera(2.0), Camera::frame(plain.bounds, 2.0));
}

/// Asserts that loading fails with a message naming the file and containing `reason`.
fn fails(name: &str, text: impl AsRef<[u8]>, reason: &str) -> LoadError {
    let e = load(name, text).expect_err(reason);
    let msg = e.to_string();
    assert!(msg.contains(name) && msg.contains(reason), "{msg:?} lacks {name:?} or {reason:?}");
    e
}

#[test]
fn truncated_glb() {
    let glb = one_triangle().glb(ONE_MESH);
    fails("cut.glb", &glb[..glb.len() - 10], "truncated GLB: its header says");
    fails("cut.glb", &glb[..10], "truncated GLB: 10 bytes");
    let mut bad_chunk = glb.clone();
    bad_chunk[12..16].copy_from_slice(&100_000u32.to_le_bytes());
    fails("chunk.glb", bad_chunk, "chunk 0 at byte 12 says 100000 bytes");
    fails("text.glb", one_triangle().embedded(ONE_MESH), "not a binary glTF file");
}

#[test]
fn accessor_out_of_range() {
    let b = one_triangle();
    // Four positions claimed in a 36-byte view.
    let text = b.embedded(ONE_MESH).replace(r#""count":3"#, r#""count":4"#);
    fails(
        "long.gltf",
        text,
        "accessor 0 (POSITION of mesh 0 primitive 0 of node 0): 4 elements of 12 bytes (stride 12) from byte 0 of \
         buffer view 0 need more than its 36 bytes",
    );
    let wrong_type = b.embedded(ONE_MESH).replace(r#""type":"VEC3""#, r#""type":"VEC2""#);
    fails(
        "vec2.gltf",
        wrong_type,
        "accessor 0 (POSITION of mesh 0 primitive 0 of node 0) is VEC2 of FLOAT; expected VEC3 of FLOAT",
    );
    let past_buffer = b.embedded(ONE_MESH).replace(r#""byteOffset":0"#, r#""byteOffset":8"#);
    fails(
        "view.gltf",
        past_buffer,
        "buffer view 0 (byteOffset 8, byteLength 36) runs past the end of buffer 0 (36 bytes)",
    );
}

#[test]
fn bad_indices() {
    let mut b = one_triangle();
    let ix = b.indices(&[0, 1, 2, 0, 1, 7]);
    let members = ONE_MESH.replace(r#""POSITION":0}"#, &format!(r#""POSITION":0}},"indices":{ix}"#));
    // An index value past the vertices drops its triangle, counted and named.
    let (scene, report) = load("ix.gltf", b.embedded(&members)).unwrap();
    assert_eq!((scene.triangles.len(), report.dropped_out_of_range), (1, 1));
    assert!(
        report
            .warnings
            .iter()
            .any(|w| w.contains("mesh 0 primitive 0 of node 0: vertex index 7 out of range (3 vertices)")),
        "{report}"
    );
    // When nothing is left, the scene is empty: an error with the counts and the first bad index.
    let b2 = {
        let mut b = one_triangle();
        b.indices(&[0, 1, 9]);
        b
    };
    let members = ONE_MESH.replace(r#""POSITION":0}"#, r#""POSITION":0},"indices":1"#);
    fails("empty.gltf", b2.embedded(&members), "empty scene: no valid triangles (1 out of range");
    // An index to an object that does not exist is invalid glTF, named by its JSON path.
    let members = ONE_MESH.replace(r#""POSITION":0}"#, r#""POSITION":0},"indices":9"#);
    fails("obj.gltf", one_triangle().embedded(&members), "meshes[0].primitives[0].indices: Index out of bounds");
    let members = ONE_MESH.replace(r#""nodes":[{"mesh":0}]"#, r#""nodes":[{"mesh":0,"children":[0]}]"#);
    fails("cycle.gltf", one_triangle().embedded(&members), "node 0 is reached twice");
}

#[test]
fn missing_and_malformed_files() {
    let b = one_triangle();
    let dir = TempDir::new("gltf-missing");
    let path = dir.write("ext.gltf", b.document(ONE_MESH, r#""uri":"ext%20data.bin","#));
    let e = Scene::load(&path).unwrap_err().to_string();
    assert!(e.contains("ext.gltf: buffer 0: ") && e.contains("ext data.bin: cannot read file: not found"), "{e}");
    // With the buffer file there, it loads.
    dir.write("ext data.bin", &b.bin);
    assert_eq!(Scene::load(&path).unwrap().1.triangles, 1);
    fails(
        "short.gltf",
        b.document(ONE_MESH, r#""uri":"data:application/octet-stream;base64,AAAA","#),
        "buffer 0 has 3 bytes, its byteLength says 36",
    );
    fails("web.gltf", b.document(ONE_MESH, r#""uri":"https://example.com/a.bin","#), "has a scheme (https:)");
    let e = fails("json.gltf", "{\"asset\": {\"version\": \"2.0\"},\n \"nodes\": [1,", "malformed glTF JSON");
    assert_eq!(e.line, Some(2));
    let draco = b.embedded(&format!(r#""extensionsRequired":["KHR_draco_mesh_compression"],{ONE_MESH}"#));
    fails(
        "draco.gltf",
        draco,
        "requires glTF extension KHR_draco_mesh_compression, which this loader does not support",
    );
    let e = Scene::load(Path::new("scene.FBX")).unwrap_err().to_string();
    assert_eq!(e, "scene.FBX: unsupported scene format \".fbx\": expected .obj, .gltf or .glb");
    assert!(Scene::load(Path::new("scene")).unwrap_err().to_string().contains("no file extension"));
    // Upper-case extensions load too.
    assert_eq!(load("UPPER.GLTF", b.embedded(ONE_MESH)).unwrap().1.triangles, 1);
}

#[test]
fn image_that_does_not_decode_is_named() {
    let mut b = Builder::default();
    b.vec3(&[Vec3::ZERO, Vec3::X, Vec3::Y]);
    b.vec2(&[[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]);
    let members = format!(
        r#""scene":0,"scenes":[{{"nodes":[0]}}],"nodes":[{{"mesh":0}}],
        "meshes":[{{"primitives":[{{"attributes":{{"POSITION":0,"TEXCOORD_0":1}},"material":0}}]}}],
        "images":[{{"uri":"data:image/png;base64,{}","name":"broken"}}],"textures":[{{"source":0}}],
        "materials":[{{"pbrMetallicRoughness":{{"baseColorTexture":{{"index":0}}}}}}]"#,
        base64(b"\x89PNG\r\n\x1a\nnot really")
    );
    fails("img.gltf", b.embedded(&members), "image 0 (\"broken\") cannot be decoded");
}

/// A textured, indexed, camera-carrying file for the mutation tests: its `Builder` and JSON
/// members.
fn rich_file() -> (Builder, String) {
    let mut b = Builder::default();
    let p = b.vec3(&[Vec3::ZERO, Vec3::X, Vec3::new(1.0, 1.0, 0.0), Vec3::Y]);
    let n = b.vec3(&[Vec3::Z; 4]);
    let ix = b.indices(&[0, 1, 2, 0, 2, 3]);
    let t = b.vec2(&[[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]]);
    let img = b.view(&png_row(&[[10, 20, 30], [200, 100, 0]]));
    let members = format!(
        r#""scene":0,"scenes":[{{"nodes":[0]}}],"nodes":[{{"mesh":0,"children":[1],"scale":[1,2,1]}},{{"camera":0}}],
        "cameras":[{{"type":"perspective","perspective":{{"yfov":0.7,"znear":0.1}}}}],
        "meshes":[{{"primitives":[{{"attributes":{{"POSITION":{p},"NORMAL":{n},"TEXCOORD_0":{t}}},"indices":{ix},"material":0,"mode":4}}]}}],
        "images":[{{"bufferView":{img},"mimeType":"image/png"}}],"textures":[{{"source":0,"sampler":0}}],
        "samplers":[{{"wrapS":10497,"wrapT":33071}}],
        "materials":[{{"pbrMetallicRoughness":{{"baseColorTexture":{{"index":0,"texCoord":0}}}},"emissiveFactor":[0,0,0]}}]"#
    );
    (b, members)
}

/// Loads `bytes` as `name` from memory: a scene or an error naming the file, never a panic.
fn load_mutated(name: &str, bytes: &[u8]) -> bool {
    match Scene::load_gltf_bytes(Path::new(name), bytes, &[]) {
        Ok((scene, _)) => {
            assert!(!scene.triangles.is_empty() && scene.positions.iter().all(|p| p.is_finite()));
            true
        }
        Err(e) => {
            assert!(e.to_string().starts_with(name), "{e}");
            false
        }
    }
}

#[test]
fn mutated_glb_bytes_never_panic() {
    // Random bytes changed or the file cut short: every load returns, with a scene or an error.
    let (b, members) = rich_file();
    let glb = b.glb(&members);
    assert!(load_mutated("m.glb", &glb));
    let mut rng = Rng::new(7);
    let mut loaded = 0;
    for round in 0..3000 {
        let mut bytes = glb.clone();
        if round % 3 == 0 {
            bytes.truncate(rng.below(glb.len()));
        } else {
            for _ in 0..1 + rng.below(4) {
                let at = rng.below(bytes.len());
                bytes[at] = if round % 2 == 0 { rng.below(256) as u8 } else { bytes[at] ^ (1 << rng.below(8)) };
            }
        }
        loaded += usize::from(load_mutated("m.glb", &bytes));
    }
    assert!(loaded > 0 && loaded < 3000, "{loaded} of 3000 loaded");
}

#[test]
fn mutated_json_numbers_never_panic() {
    // Numbers of the JSON (indices, counts, offsets, strides, modes, component types, factors)
    // replaced by hostile values: every load returns, with a scene or an error.
    let (b, members) = rich_file();
    let text = b.embedded(&members);
    assert!(load_mutated("m.gltf", text.as_bytes()));
    // The numbers: runs of number characters right after ':', '[' or ','.
    let bytes = text.as_bytes();
    let is_num = |c: u8| c.is_ascii_digit() || b".eE+-".contains(&c);
    let spans: Vec<(usize, usize)> = (1..bytes.len())
        .filter(|&i| b":[,".contains(&bytes[i - 1]) && (bytes[i].is_ascii_digit() || bytes[i] == b'-'))
        .map(|i| (i, (i..bytes.len()).find(|&j| !is_num(bytes[j])).unwrap_or(bytes.len())))
        .collect();
    assert!(spans.len() > 60, "{}", spans.len());
    const HOSTILE: [&str; 16] = [
        "0",
        "1",
        "2",
        "3",
        "4",
        "5",
        "7",
        "-1",
        "255",
        "65535",
        "4294967295",
        "4294967296",
        "0.5",
        "1e30",
        "1e39",
        "18446744073709551615",
    ];
    let mut rng = Rng::new(11);
    let mut loaded = 0;
    for _ in 0..3000 {
        let mut picks: Vec<(usize, usize)> = (0..1 + rng.below(3)).map(|_| spans[rng.below(spans.len())]).collect();
        picks.sort_unstable();
        picks.dedup();
        let mut out = String::new();
        let mut at = 0;
        for (start, end) in picks {
            out.push_str(&text[at..start]);
            out.push_str(HOSTILE[rng.below(HOSTILE.len())]);
            at = end;
        }
        out.push_str(&text[at..]);
        loaded += usize::from(load_mutated("m.gltf", out.as_bytes()));
    }
    assert!(loaded > 0 && loaded < 3000, "{loaded} of 3000 loaded");
    eprintln!("{loaded} of 3000 mutated files loaded");
}

/// The glTF text of `scene` (no shading normals) seen from `camera`: one buffer embedded in
/// base64; one POSITION accessor; one primitive, with 16-bit indices, per run of triangles of
/// one material, so the file loads to the same triangles in the same order; materials by
/// `kd` and `ke` (emission above 1 through KHR_materials_emissive_strength).
fn scene_to_gltf(scene: &Scene, camera: &Camera) -> String {
    assert!(scene.normals.is_empty() && scene.positions.len() < 1 << 16);
    let mut b = Builder::default();
    let p = b.vec3(&scene.positions);
    let mut primitives = Vec::new();
    let mut start = 0;
    while start < scene.triangles.len() {
        let material = scene.triangles[start].material;
        let end = (start..scene.triangles.len())
            .find(|&i| scene.triangles[i].material != material)
            .unwrap_or(scene.triangles.len());
        let ix: Vec<u16> = scene.triangles[start..end].iter().flat_map(|t| t.v.map(|v| v as u16)).collect();
        let a = b.indices(&ix);
        primitives.push(format!(r#"{{"attributes":{{"POSITION":{p}}},"indices":{a},"material":{material}}}"#));
        start = end;
    }
    let materials: Vec<String> = scene
        .materials
        .iter()
        .map(|m| {
            let mut json = format!(
                r#"{{"name":"{}","pbrMetallicRoughness":{{"baseColorFactor":[{},1],"metallicFactor":0}}"#,
                m.name,
                list(&m.kd.to_array())
            );
            if m.ke.max_element() > 0.0 {
                let strength = m.ke.max_element();
                // A factor whose product with the strength gives `ke` back exactly in f32.
                let factor = m.ke.to_array().map(|k| {
                    let mut f = k / strength;
                    for _ in 0..8 {
                        match (f * strength).partial_cmp(&k) {
                            Some(std::cmp::Ordering::Less) => f = f.next_up(),
                            Some(std::cmp::Ordering::Greater) => f = f.next_down(),
                            _ => break,
                        }
                    }
                    f
                });
                json += &format!(r#","emissiveFactor":[{}]"#, list(&factor));
                if strength != 1.0 {
                    json += &format!(
                        r#","extensions":{{"KHR_materials_emissive_strength":{{"emissiveStrength":{strength}}}}}"#
                    );
                }
            }
            json + "}"
        })
        .collect();
    // The camera node: at the eye, its -z along the view, its +y towards `up`.
    let forward = (camera.target - camera.eye).normalize();
    let right = forward.cross(camera.up).normalize();
    let rotation = Quat::from_mat3(&Mat3::from_cols(right, right.cross(forward), -forward));
    let rotation = if rotation.abs_diff_eq(Quat::IDENTITY, 1e-7) {
        String::new()
    } else {
        format!(r#","rotation":[{}]"#, list(&rotation.to_array()))
    };
    let members = format!(
        "\"extensionsUsed\":[\"KHR_materials_emissive_strength\"],\n\"scene\":0,\"scenes\":[{{\"nodes\":[0,1]}}],\n\
         \"nodes\":[{{\"name\":\"scene\",\"mesh\":0}},{{\"name\":\"camera\",\"camera\":0,\"translation\":[{}]{rotation}}}],\n\
         \"cameras\":[{{\"type\":\"perspective\",\"perspective\":{{\"yfov\":{},\"znear\":0.01}}}}],\n\
         \"meshes\":[{{\"primitives\":[\n{}]}}],\n\"materials\":[\n{}]",
        list(&camera.eye.to_array()),
        camera.fov_y_deg.to_radians(),
        primitives.join(",\n"),
        materials.join(",\n")
    );
    b.embedded(&members)
}

/// The reference camera of the Cornell box.
fn cornell_camera() -> Camera {
    Camera::parse("0,1,3.9, 0,1,0, 0,1,0, 40").unwrap()
}

fn cornell_obj() -> Scene {
    Scene::load(&testdata("scenes/CornellBox-Diffuse.obj")).unwrap().0
}

#[test]
fn cornell_gltf_is_what_the_generator_writes() {
    let text = scene_to_gltf(&cornell_obj(), &cornell_camera());
    let path = testdata("scenes/CornellBox-Diffuse.gltf");
    if std::env::var("LUMBRE_BLESS").is_ok_and(|v| v == "1") {
        std::fs::write(&path, &text).unwrap();
        eprintln!("wrote {}", path.display());
    }
    let stored = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{e} (run with LUMBRE_BLESS=1)"));
    assert!(stored == text, "{} differs from what the generator writes (LUMBRE_BLESS=1 rewrites it)", path.display());
}

#[test]
fn cornell_gltf_matches_the_obj() {
    let obj = cornell_obj();
    let (gltf, report) = Scene::load(&testdata("scenes/CornellBox-Diffuse.gltf")).unwrap();
    assert_eq!((report.triangles, report.dropped()), (36, 0));
    assert!(report.warnings.is_empty(), "{report}");
    assert_eq!(gltf.triangle_positions(), obj.triangle_positions());
    assert_eq!(gltf.positions, obj.positions);
    assert_eq!(gltf.bounds, obj.bounds);
    for (a, b) in gltf.triangles.iter().zip(&obj.triangles) {
        let (ma, mb) = (&gltf.materials[a.material as usize], &obj.materials[b.material as usize]);
        assert_eq!((&ma.name, ma.kd, ma.ke, ma.kind), (&mb.name, mb.kd, mb.ke, mb.kind));
    }
    assert_eq!(gltf.lights, obj.lights);
    let cam = gltf.default_camera(1.0);
    let want = cornell_camera();
    assert_eq!((cam.eye, cam.up), (want.eye, want.up));
    assert!(close((cam.target - cam.eye).normalize(), Vec3::NEG_Z));
    assert!((cam.fov_y_deg - 40.0).abs() < 1e-4, "{}", cam.fov_y_deg);
}

#[test]
fn obj_and_gltf_render_identically() {
    let obj = cornell_obj();
    let (gltf, _) = load("cornell.gltf", scene_to_gltf(&obj, &cornell_camera())).unwrap();
    let render = PathRender {
        camera: cornell_camera(),
        options: PathOptions { width: 24, height: 24, spp: 4, ..Default::default() },
    };
    let image = |scene: Scene| render.render_cpu(&Prepared::new(scene, &Default::default()), &|| {}).unwrap().0;
    let (a, b) = (image(obj), image(gltf));
    assert!(a.pixels.iter().any(|p| p.max_element() > 0.0));
    assert_eq!(a.pixels, b.pixels);
}
