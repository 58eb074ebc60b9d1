//! glTF 2.0 scenes: `.gltf` (JSON with external or embedded buffers) and `.glb` (binary),
//! read into a [`Scene`] through the same validation as OBJ files.
//!
//! The `gltf` crate parses and validates the JSON; everything that touches bytes (the GLB
//! container, buffers, accessors, images) is read here with every offset and count checked,
//! because glTF files are hostile input and a bad one must be an error, never a panic.

use std::borrow::Cow;
use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};

use ::gltf::json;
use glam::{Mat3, Mat4, Quat, Vec2, Vec3};
use json::accessor::{ComponentType, Type};
use json::mesh::{Mode, Semantic};
use json::texture::WrappingMode;
use json::validation::Checked;

use crate::camera::Camera;
use crate::error::LoadError;
use crate::image::srgb_to_linear;
use crate::material::{Material, MaterialKind};
use crate::obj;
use crate::scene::{LoadReport, RawTri, Scene};

impl Scene {
    /// Loads a glTF 2.0 file: `.gltf` (JSON, with buffers and images in files beside it or in
    /// base64 `data:` URIs) or `.glb` (binary; told apart by its `glTF` magic, not the name).
    ///
    /// What is read, from the file's default scene (else its first, else every root node):
    ///
    /// - **Geometry**: every mesh primitive of mode `TRIANGLES`, `TRIANGLE_STRIP` or
    ///   `TRIANGLE_FAN` of every node, indexed or not, with the node transforms composed down
    ///   the hierarchy (positions by the world matrix, normals by its inverse transpose, the
    ///   winding reversed where the matrix mirrors). Point and line primitives are skipped
    ///   with a warning and counted in [`LoadReport::skipped_primitives`]. Out-of-range
    ///   indices, non-finite corners and degenerate triangles are dropped and counted, as for
    ///   OBJ.
    /// - **Materials**: every material is [`Diffuse`](MaterialKind::Diffuse) with
    ///   `kd = pbrMetallicRoughness.baseColorFactor` (rgb), or an
    ///   [`Emitter`](MaterialKind::Emitter) when `ke = emissiveFactor ×
    ///   KHR_materials_emissive_strength` is positive (its triangles become area lights).
    ///   Metallic, transmission, alpha and emissive textures are ignored, with one warning
    ///   per material. A primitive without a material gets [`Material::default`].
    /// - **Base colour textures** are baked into the triangles, since the renderers have no
    ///   textures: each triangle takes the texture's mean colour over its UV footprint
    ///   (texels at the centroid and three interior points, sRGB decoded to linear, wrapped
    ///   per the sampler) times `baseColorFactor`, quantised to 8 bits per channel, with one
    ///   material per distinct colour (named `"<material> #rrggbb"`), so a textured scan
    ///   becomes at most a few thousand materials.
    /// - **Cameras**: every perspective camera node becomes a [`Camera`] in
    ///   [`Scene::cameras`] (eye at the node's world origin, looking down its -Z with its +Y
    ///   up, `yfov` in degrees; its aspect ratio is the image's). Orthographic cameras are
    ///   skipped with a warning.
    ///
    /// Errors name the file and what is wrong: a truncated GLB, malformed JSON (with its
    /// line), an index to a missing object, an accessor of the wrong type or reaching past
    /// its buffer view (naming the accessor, mesh, primitive and node), a buffer or image that
    /// cannot be read or decoded (naming it), a required extension this loader lacks, node
    /// cycles, and a scene with no valid triangle.
    ///
    /// ```
    /// use lumbre_raytrace::Scene;
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/scenes/CornellBox-Diffuse.gltf");
    /// let (scene, report) = Scene::load_gltf(path.as_ref()).unwrap();
    /// assert_eq!((report.triangles, report.dropped()), (36, 0));
    /// assert_eq!(scene.emissive_triangles().len(), 2);
    /// assert_eq!(scene.cameras[0].eye, glam::Vec3::new(0.0, 1.0, 3.9));
    /// ```
    pub fn load_gltf(path: &Path) -> Result<(Scene, LoadReport), LoadError> {
        let bytes = crate::read::read_input(path)?;
        Self::load_gltf_with(path, &bytes, &|full: &Path| crate::read::read_input_io(full))
    }

    /// Loads a glTF file held in memory, with the files its URIs name taken from `files`
    /// (relative path as written in the URI, or file name; contents); `name` stands for the
    /// file's path in messages. Otherwise as [`Scene::load_gltf`]: for scenes bundled in a
    /// program.
    ///
    /// ```
    /// use lumbre_raytrace::Scene;
    /// // One triangle: three positions (36 bytes) in `tri.bin`.
    /// let bin: Vec<u8> = [0.0f32, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0].iter().flat_map(|f| f.to_le_bytes()).collect();
    /// let gltf = br#"{"asset": {"version": "2.0"}, "scene": 0, "scenes": [{"nodes": [0]}],
    ///     "nodes": [{"mesh": 0, "translation": [0, 0, -2]}],
    ///     "meshes": [{"primitives": [{"attributes": {"POSITION": 0}}]}],
    ///     "accessors": [{"bufferView": 0, "componentType": 5126, "count": 3, "type": "VEC3",
    ///                    "min": [0, 0, 0], "max": [1, 1, 0]}],
    ///     "bufferViews": [{"buffer": 0, "byteLength": 36}],
    ///     "buffers": [{"uri": "tri.bin", "byteLength": 36}]}"#;
    /// let (scene, report) = Scene::load_gltf_bytes("tri.gltf".as_ref(), gltf, &[("tri.bin", &bin)]).unwrap();
    /// assert_eq!(report.triangles, 1);
    /// assert_eq!(scene.bounds.0, glam::Vec3::new(0.0, 0.0, -2.0));
    /// ```
    pub fn load_gltf_bytes(
        name: &Path,
        bytes: &[u8],
        files: &[(&str, &[u8])],
    ) -> Result<(Scene, LoadReport), LoadError> {
        let dir = obj::parent_dir(name);
        let read = |full: &Path| -> io::Result<Vec<u8>> {
            let rel = full.strip_prefix(&dir).unwrap_or(full);
            let file = full.file_name().unwrap_or_default();
            files
                .iter()
                .find(|(n, _)| Path::new(n) == rel)
                .or_else(|| files.iter().find(|(n, _)| Path::new(n).file_name() == Some(file)))
                .map(|(_, bytes)| bytes.to_vec())
                .ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))
        };
        Self::load_gltf_with(name, bytes, &read)
    }

    /// [`Scene::load_gltf`] on the file's `bytes`, reading the files its URIs name through
    /// `read` (given each one's full path).
    fn load_gltf_with(
        path: &Path,
        bytes: &[u8],
        read: &dyn Fn(&Path) -> io::Result<Vec<u8>>,
    ) -> Result<(Scene, LoadReport), LoadError> {
        let is_glb = bytes.starts_with(b"glTF");
        let named_glb = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("glb"));
        if named_glb && !is_glb {
            return Err(LoadError::new(path, "not a binary glTF file: it does not start with \"glTF\""));
        }
        let (json_bytes, bin) = if is_glb { split_glb(path, bytes)? } else { (bytes, None) };
        let root = parse_json(path, json_bytes, is_glb)?;
        let dir = obj::parent_dir(path);
        let mut loader = Loader::new(path, &root, dir, read);
        loader.buffers = loader.read_buffers(bin)?;
        loader.load()
    }
}

/// GLB chunk types.
const CHUNK_JSON: u32 = 0x4E4F_534A;
const CHUNK_BIN: u32 = 0x004E_4942;

fn u32_at(bytes: &[u8], at: usize) -> Option<u32> {
    let b = bytes.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

/// Splits a GLB file into its JSON chunk and its binary chunk (if any), checking every
/// length against the bytes there are.
fn split_glb<'b>(path: &Path, bytes: &'b [u8]) -> Result<(&'b [u8], Option<&'b [u8]>), LoadError> {
    let err = |reason: String| LoadError::new(path, reason);
    if bytes.len() < 12 {
        return Err(err(format!("truncated GLB: {} bytes, shorter than its 12-byte header", bytes.len())));
    }
    let version = u32_at(bytes, 4).unwrap_or(0);
    if version != 2 {
        return Err(err(format!("GLB version {version}: only version 2 is supported")));
    }
    let length = u32_at(bytes, 8).unwrap_or(0) as usize;
    if length > bytes.len() {
        return Err(err(format!("truncated GLB: its header says {length} bytes, the file has {}", bytes.len())));
    }
    if length < 12 {
        return Err(err(format!("GLB header gives a length of {length} bytes, less than the header itself")));
    }
    let bytes = &bytes[..length];
    let (mut json, mut bin) = (None, None);
    let mut at = 12;
    let mut index = 0;
    while at < bytes.len() {
        let (Some(len), Some(kind)) = (u32_at(bytes, at), u32_at(bytes, at + 4)) else {
            return Err(err(format!("truncated GLB: chunk {index} at byte {at} has no complete 8-byte header")));
        };
        let start = at + 8;
        let end = start.checked_add(len as usize).filter(|&e| e <= bytes.len()).ok_or_else(|| {
            err(format!(
                "truncated GLB: chunk {index} at byte {at} says {len} bytes, only {} follow",
                bytes.len() - start
            ))
        })?;
        let data = &bytes[start..end];
        match (index, kind) {
            (0, CHUNK_JSON) => json = Some(data),
            (0, _) => {
                return Err(err(format!("GLB chunk 0 has type {kind:#010x}, expected JSON ({CHUNK_JSON:#010x})")));
            }
            (1, CHUNK_BIN) => bin = Some(data),
            _ => {} // Unknown chunks are skipped, as the specification asks.
        }
        at = end;
        index += 1;
    }
    let json = json.ok_or_else(|| err("GLB has no JSON chunk".to_owned()))?;
    Ok((json, bin))
}

/// Parses and validates the glTF JSON; errors name the JSON line (for a `.gltf`) or the
/// JSON paths that fail validation.
fn parse_json(path: &Path, bytes: &[u8], in_glb: bool) -> Result<json::Root, LoadError> {
    let root: json::Root = json::deserialize::from_slice(bytes).map_err(|e| {
        if in_glb {
            LoadError::new(path, format!("malformed glTF JSON in the GLB's JSON chunk: {e}"))
        } else {
            LoadError::at_line(path, e.line(), format!("malformed glTF JSON: {e}"))
        }
    })?;
    for ext in &root.extensions_required {
        if !json::extensions::ENABLED_EXTENSIONS.contains(&ext.as_str()) {
            return Err(LoadError::new(
                path,
                format!(
                    "the file requires glTF extension {ext}, which this loader does not support (it reads {})",
                    json::extensions::ENABLED_EXTENSIONS.join(", ")
                ),
            ));
        }
    }
    // The crate's validation reads each POSITION accessor without checking its index.
    for (m, mesh) in root.meshes.iter().enumerate() {
        for (p, prim) in mesh.primitives.iter().enumerate() {
            if let Some(a) = prim.attributes.get(&Checked::Valid(Semantic::Positions)) {
                if a.value() >= root.accessors.len() {
                    return Err(LoadError::new(
                        path,
                        format!(
                            "invalid glTF: meshes[{m}].primitives[{p}].attributes[\"POSITION\"]: accessor {} does not \
                             exist (the file has {})",
                            a.value(),
                            root.accessors.len()
                        ),
                    ));
                }
            }
        }
    }
    match ::gltf::Document::from_json(root) {
        Ok(doc) => Ok(doc.into_json()),
        Err(::gltf::Error::Validation(errors)) => {
            // Not errors here: POSITION bounds, missing or malformed (this loader computes the
            // bounds itself), and accessors without a buffer view (the specification fills
            // them with zeros, and so does this loader).
            let errors: Vec<String> = errors
                .iter()
                .filter(|(p, e)| {
                    let p = p.to_string();
                    let bounds = p.ends_with("[\"POSITION\"].min") || p.ends_with("[\"POSITION\"].max");
                    let zeros = p.starts_with("accessors[") && p.ends_with("].bufferView");
                    !(bounds || zeros && *e == json::validation::Error::Missing)
                })
                .map(|(p, e)| format!("{p}: {e}"))
                .collect();
            if errors.is_empty() {
                let root = json::deserialize::from_slice(bytes).map_err(|e| LoadError::new(path, e.to_string()))?;
                return Ok(root);
            }
            let more = if errors.len() > 5 { format!("; and {} more", errors.len() - 5) } else { String::new() };
            Err(LoadError::new(path, format!("invalid glTF: {}{more}", errors[..errors.len().min(5)].join("; "))))
        }
        Err(e) => Err(LoadError::new(path, format!("invalid glTF: {e}"))),
    }
}

/// Decodes standard or URL-safe base64, padding optional.
fn base64_decode(text: &str) -> Result<Vec<u8>, String> {
    let data = text.trim_end_matches('=');
    if text.len() - data.len() > 2 {
        return Err("too much '=' padding".into());
    }
    let mut out = Vec::with_capacity(data.len() / 4 * 3 + 3);
    let (mut acc, mut bits) = (0u32, 0u32);
    for (i, c) in data.bytes().enumerate() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return Err(format!("byte {c:#04x} at offset {i} is not base64")),
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    if data.len() % 4 == 1 {
        return Err(format!("{} characters cannot be base64 (truncated?)", data.len()));
    }
    Ok(out)
}

/// Decodes `%XX` escapes of a URI path; `None` when an escape is malformed or the result is
/// not UTF-8.
fn percent_decode(uri: &str) -> Option<String> {
    let bytes = uri.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// glTF's name of an accessor type.
fn type_name(t: Type) -> &'static str {
    match t {
        Type::Scalar => "SCALAR",
        Type::Vec2 => "VEC2",
        Type::Vec3 => "VEC3",
        Type::Vec4 => "VEC4",
        Type::Mat2 => "MAT2",
        Type::Mat3 => "MAT3",
        Type::Mat4 => "MAT4",
    }
}

/// glTF's name of a component type.
fn component_name(c: ComponentType) -> &'static str {
    match c {
        ComponentType::I8 => "BYTE",
        ComponentType::U8 => "UNSIGNED_BYTE",
        ComponentType::I16 => "SHORT",
        ComponentType::U16 => "UNSIGNED_SHORT",
        ComponentType::U32 => "UNSIGNED_INT",
        ComponentType::F32 => "FLOAT",
    }
}

/// One component at the start of `b` (which holds at least its size), as f64 (exact for
/// every glTF component type); normalized integers map to `[0, 1]` or `[-1, 1]`.
fn component(c: ComponentType, normalized: bool, b: &[u8]) -> f64 {
    let (v, scale) = match c {
        ComponentType::I8 => (f64::from(b[0] as i8), 127.0),
        ComponentType::U8 => (f64::from(b[0]), 255.0),
        ComponentType::I16 => (f64::from(i16::from_le_bytes([b[0], b[1]])), 32767.0),
        ComponentType::U16 => (f64::from(u16::from_le_bytes([b[0], b[1]])), 65535.0),
        ComponentType::U32 => (f64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]])), 4294967295.0),
        ComponentType::F32 => return f64::from(f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
    };
    if normalized { (v / scale).max(-1.0) } else { v }
}

/// A decoded base colour texture: 8-bit sRGB texels, rows from the top (UV (0, 0) is the
/// top-left corner, as glTF has it).
struct Texture {
    width: usize,
    height: usize,
    rgb: Vec<u8>,
}

/// What a material's base colour texture needs: the image, the sampler's wrap modes and
/// the texture coordinate set.
#[derive(Clone, Copy)]
struct BaseTexture {
    image: usize,
    wrap: [WrappingMode; 2],
    set: u32,
}

/// The barycentric points of a triangle where its texture colour is sampled: the centroid
/// and three interior points.
const SAMPLE_POINTS: [[f32; 3]; 4] = [
    [1.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0],
    [4.0 / 6.0, 1.0 / 6.0, 1.0 / 6.0],
    [1.0 / 6.0, 4.0 / 6.0, 1.0 / 6.0],
    [1.0 / 6.0, 1.0 / 6.0, 4.0 / 6.0],
];

/// A texture coordinate folded into `[0, 1]` by a sampler's wrap mode (non-finite gives 0).
fn wrap(t: f32, mode: WrappingMode) -> f32 {
    if !t.is_finite() {
        return 0.0;
    }
    match mode {
        WrappingMode::ClampToEdge => t.clamp(0.0, 1.0),
        WrappingMode::Repeat => t - t.floor(),
        WrappingMode::MirroredRepeat => {
            let m = t.rem_euclid(2.0);
            if m > 1.0 { 2.0 - m } else { m }
        }
    }
}

impl Texture {
    /// The linear colour of the texel under `uv`.
    fn texel(&self, uv: Vec2, wrap_mode: [WrappingMode; 2], lut: &[f32; 256]) -> Vec3 {
        let x = ((wrap(uv.x, wrap_mode[0]) * self.width as f32) as usize).min(self.width - 1);
        let y = ((wrap(uv.y, wrap_mode[1]) * self.height as f32) as usize).min(self.height - 1);
        let i = 3 * (y * self.width + x);
        Vec3::new(lut[self.rgb[i] as usize], lut[self.rgb[i + 1] as usize], lut[self.rgb[i + 2] as usize])
    }

    /// The mean linear colour over a triangle of texture coordinates (see [`SAMPLE_POINTS`]).
    fn mean(&self, uv: [Vec2; 3], wrap_mode: [WrappingMode; 2], lut: &[f32; 256]) -> Vec3 {
        let sum: Vec3 =
            SAMPLE_POINTS.iter().map(|b| self.texel(uv[0] * b[0] + uv[1] * b[1] + uv[2] * b[2], wrap_mode, lut)).sum();
        sum / SAMPLE_POINTS.len() as f32
    }
}

/// Where a node instance's vertices went in the raw arrays: (first position, first normal
/// if the primitive has normals, vertex count).
type VertexRange = (usize, Option<usize>, usize);

/// A camera node seen during the traversal, finished once the scene's bounds are known.
struct CameraNode {
    node: usize,
    eye: Vec3,
    forward: Vec3,
    up: Vec3,
    fov_y_deg: f32,
}

/// The state of one glTF load.
struct Loader<'a> {
    path: &'a Path,
    root: &'a json::Root,
    dir: PathBuf,
    read: &'a dyn Fn(&Path) -> io::Result<Vec<u8>>,
    /// Each buffer's bytes, cut to its `byteLength`.
    buffers: Vec<Vec<u8>>,
    warnings: Vec<String>,
    raw_positions: Vec<Vec3>,
    raw_normals: Vec<Vec3>,
    raw_tris: Vec<RawTri>,
    /// The glTF materials in file order, then the default one and the baked texture colours.
    materials: Vec<Material>,
    default_material: Option<u32>,
    base_textures: Vec<Option<BaseTexture>>,
    baked: HashMap<(usize, [u8; 3]), u32>,
    vertex_ranges: HashMap<(usize, usize, Option<usize>), VertexRange>,
    tex_coords: HashMap<usize, Vec<Vec2>>,
    textures: Vec<Option<Texture>>,
    srgb_lut: [f32; 256],
    skipped_primitives: usize,
    missing_tex_coords: Vec<bool>,
    first_out_of_range: Option<String>,
    cameras: Vec<CameraNode>,
}

impl<'a> Loader<'a> {
    fn new(path: &'a Path, root: &'a json::Root, dir: PathBuf, read: &'a dyn Fn(&Path) -> io::Result<Vec<u8>>) -> Self {
        Loader {
            path,
            root,
            dir,
            read,
            buffers: Vec::new(),
            warnings: Vec::new(),
            raw_positions: Vec::new(),
            raw_normals: Vec::new(),
            raw_tris: Vec::new(),
            materials: Vec::new(),
            default_material: None,
            base_textures: Vec::new(),
            baked: HashMap::new(),
            vertex_ranges: HashMap::new(),
            tex_coords: HashMap::new(),
            textures: root.images.iter().map(|_| None).collect(),
            srgb_lut: std::array::from_fn(|i| srgb_to_linear(i as f32 / 255.0)),
            skipped_primitives: 0,
            missing_tex_coords: vec![false; root.materials.len()],
            first_out_of_range: None,
            cameras: Vec::new(),
        }
    }

    fn err(&self, reason: impl Into<String>) -> LoadError {
        LoadError::new(self.path, reason)
    }

    /// The bytes a URI names: a base64 `data:` URI, or a file relative to the glTF's folder.
    fn read_uri(&self, uri: &str, what: &str) -> Result<Vec<u8>, LoadError> {
        if let Some(rest) = uri.strip_prefix("data:") {
            let Some((header, data)) = rest.split_once(',') else {
                return Err(self.err(format!("{what}: data URI without a comma")));
            };
            if !header.ends_with(";base64") {
                return Err(self.err(format!("{what}: data URI \"data:{header},...\" is not base64")));
            }
            return base64_decode(data).map_err(|e| self.err(format!("{what}: malformed base64 data URI: {e}")));
        }
        if let Some((scheme, _)) = uri.split_once(':') {
            if !scheme.contains('/') {
                return Err(self.err(format!(
                    "{what}: URI \"{uri}\" has a scheme ({scheme}:); only relative paths and data URIs are read"
                )));
            }
        }
        let rel = percent_decode(uri).ok_or_else(|| self.err(format!("{what}: malformed URI \"{uri}\"")))?;
        let full = self.dir.join(rel);
        (self.read)(&full).map_err(|e| self.err(format!("{what}: {}", LoadError::read(&full, &e))))
    }

    /// Every buffer's bytes; the one without a URI is the GLB's binary chunk.
    fn read_buffers(&self, bin: Option<&[u8]>) -> Result<Vec<Vec<u8>>, LoadError> {
        let mut buffers = Vec::with_capacity(self.root.buffers.len());
        for (i, b) in self.root.buffers.iter().enumerate() {
            let what = format!("buffer {i}");
            let mut data = match (&b.uri, bin) {
                (Some(uri), _) => self.read_uri(uri, &what)?,
                (None, Some(bin)) if i == 0 => bin.to_vec(),
                (None, _) => {
                    return Err(self.err(format!(
                        "{what} has no uri and is not the first buffer of a GLB file with a binary chunk"
                    )));
                }
            };
            let length = usize::try_from(b.byte_length.0).unwrap_or(usize::MAX);
            if data.len() < length {
                return Err(self.err(format!("{what} has {} bytes, its byteLength says {length}", data.len())));
            }
            data.truncate(length);
            buffers.push(data);
        }
        Ok(buffers)
    }

    /// The bytes of buffer view `index` and its stride for elements of `elem` bytes.
    fn view(&self, index: usize, elem: usize, what: &str) -> Result<(&[u8], usize), LoadError> {
        let view = self
            .root
            .buffer_views
            .get(index)
            .ok_or_else(|| self.err(format!("{what}: buffer view {index} does not exist")))?;
        let b = view.buffer.value();
        let buffer =
            self.buffers.get(b).ok_or_else(|| self.err(format!("{what}: buffer view {index}: no buffer {b}")))?;
        let offset = view.byte_offset.map_or(0, |o| usize::try_from(o.0).unwrap_or(usize::MAX));
        let length = usize::try_from(view.byte_length.0).unwrap_or(usize::MAX);
        let bytes = offset.checked_add(length).and_then(|end| buffer.get(offset..end)).ok_or_else(|| {
            self.err(format!(
                "{what}: buffer view {index} (byteOffset {offset}, byteLength {length}) runs past the end of buffer \
                 {b} ({} bytes)",
                buffer.len()
            ))
        })?;
        let stride = view.byte_stride.map_or(elem, |s| s.0);
        if stride < elem {
            return Err(self.err(format!(
                "{what}: buffer view {index} has byteStride {stride}, less than its {elem}-byte elements"
            )));
        }
        Ok((bytes, stride))
    }

    /// `count` elements of `elem` bytes, `stride` apart from `offset` in buffer view `view`,
    /// checked to lie inside it.
    fn elements(
        &self,
        view: usize,
        offset: u64,
        count: usize,
        elem: usize,
        stride: Option<usize>,
        what: &str,
    ) -> Result<(&[u8], usize), LoadError> {
        let (bytes, view_stride) = self.view(view, elem, what)?;
        let stride = stride.unwrap_or(view_stride);
        let offset = usize::try_from(offset).unwrap_or(usize::MAX);
        let need = match count {
            0 => Some(0),
            _ => stride.checked_mul(count - 1).and_then(|s| s.checked_add(elem)).and_then(|s| s.checked_add(offset)),
        };
        match need {
            Some(n) if n <= bytes.len() => Ok((&bytes[offset.min(bytes.len())..], stride)),
            _ => Err(self.err(format!(
                "{what}: {count} elements of {elem} bytes (stride {stride}) from byte {offset} of buffer view {view} \
                 need more than its {} bytes",
                bytes.len()
            ))),
        }
    }

    /// The values of accessor `index`, which must be of type `ty` with a component type in
    /// `allowed`, converted by `convert` (normalized integers already scaled), flattened:
    /// `count × components` values. Sparse accessors are applied.
    fn accessor<T: Copy>(
        &self,
        index: usize,
        ty: Type,
        allowed: &[ComponentType],
        what: &str,
        convert: impl Fn(f64) -> T,
    ) -> Result<Vec<T>, LoadError> {
        let what = format!("accessor {index} ({what})");
        let a = self.root.accessors.get(index).ok_or_else(|| self.err(format!("{what} does not exist")))?;
        let expected = || {
            let names: Vec<&str> = allowed.iter().map(|&c| component_name(c)).collect();
            format!("{} of {}", type_name(ty), names.join(" or "))
        };
        let (found_ty, found_ct) = match (&a.type_, &a.component_type) {
            (Checked::Valid(t), Checked::Valid(c)) => (*t, c.0),
            _ => return Err(self.err(format!("{what} has an invalid type; expected {}", expected()))),
        };
        if found_ty != ty || !allowed.contains(&found_ct) {
            return Err(self.err(format!(
                "{what} is {} of {}; expected {}",
                type_name(found_ty),
                component_name(found_ct),
                expected()
            )));
        }
        let comps = ty.multiplicity();
        let csize = found_ct.size();
        let elem = comps * csize;
        let count = usize::try_from(a.count.0).unwrap_or(usize::MAX);
        let total = count.checked_mul(comps).ok_or_else(|| self.err(format!("{what}: count {count} is too large")))?;
        let decode = |b: &[u8]| convert(component(found_ct, a.normalized, b));
        let mut out: Vec<T> = match a.buffer_view {
            Some(v) => {
                let offset = a.byte_offset.map_or(0, |o| o.0);
                let (bytes, stride) = self.elements(v.value(), offset, count, elem, None, &what)?;
                let mut out = Vec::with_capacity(total);
                for i in 0..count {
                    for c in 0..comps {
                        out.push(decode(&bytes[i * stride + c * csize..]));
                    }
                }
                out
            }
            None => {
                // No buffer view: zeros (to be overridden by sparse values), no more than
                // the file's buffers could describe.
                let limit = self.buffers.iter().map(Vec::len).sum::<usize>().max(1 << 20);
                if count.saturating_mul(elem) > limit {
                    return Err(self.err(format!(
                        "{what} has no buffer view and {count} elements, more than the file's buffers hold"
                    )));
                }
                vec![convert(0.0); total]
            }
        };
        if let Some(sparse) = &a.sparse {
            let n = usize::try_from(sparse.count.0).unwrap_or(usize::MAX);
            if n > count {
                return Err(self.err(format!("{what}: {n} sparse values for {count} elements")));
            }
            let Checked::Valid(ict) = &sparse.indices.component_type else {
                return Err(self.err(format!("{what}: sparse indices of an invalid component type")));
            };
            let ict = ict.0;
            let isize_ = ict.size();
            let (ibytes, _) = self.elements(
                sparse.indices.buffer_view.value(),
                sparse.indices.byte_offset.0,
                n,
                isize_,
                Some(isize_),
                &format!("{what}, sparse indices"),
            )?;
            let (vbytes, _) = self.elements(
                sparse.values.buffer_view.value(),
                sparse.values.byte_offset.0,
                n,
                elem,
                Some(elem),
                &format!("{what}, sparse values"),
            )?;
            for k in 0..n {
                let target = component(ict, false, &ibytes[k * isize_..]) as usize;
                if target >= count {
                    return Err(self
                        .err(format!("{what}: sparse index {target} (entry {k}) is out of range ({count} elements)")));
                }
                for c in 0..comps {
                    out[target * comps + c] = decode(&vbytes[k * elem + c * csize..]);
                }
            }
        }
        Ok(out)
    }

    /// Vec3 float data (POSITION, NORMAL).
    fn vec3s(&self, index: usize, what: &str) -> Result<Vec<Vec3>, LoadError> {
        let flat = self.accessor(index, Type::Vec3, &[ComponentType::F32], what, |v| v as f32)?;
        Ok(flat.chunks_exact(3).map(Vec3::from_slice).collect())
    }

    /// Texture coordinates (float, or normalized unsigned byte or short), cached.
    fn tex_coords(&mut self, index: usize, what: &str) -> Result<&[Vec2], LoadError> {
        if !self.tex_coords.contains_key(&index) {
            let allowed = [ComponentType::F32, ComponentType::U8, ComponentType::U16];
            let flat = self.accessor(index, Type::Vec2, &allowed, what, |v| v as f32)?;
            let uv = flat.chunks_exact(2).map(Vec2::from_slice).collect();
            self.tex_coords.insert(index, uv);
        }
        Ok(self.tex_coords.get(&index).map(Vec::as_slice).unwrap_or_default())
    }

    /// The glTF materials as Lumbre materials (and their base colour textures), warning
    /// once per material about what is not kept.
    fn read_materials(&mut self) -> Result<(), LoadError> {
        for (i, m) in self.root.materials.iter().enumerate() {
            let name = m.name.clone().unwrap_or_else(|| format!("material {i}"));
            let pbr = &m.pbr_metallic_roughness;
            let [r, g, b, _] = pbr.base_color_factor.0;
            let factor = Vec3::new(r, g, b);
            let kd = factor.clamp(Vec3::ZERO, Vec3::ONE);
            if kd != factor {
                self.warnings.push(format!("material \"{name}\": baseColorFactor {factor} clamped to [0, 1]"));
            }
            let ext = m.extensions.as_ref();
            let strength = ext.and_then(|e| e.emissive_strength.as_ref()).map_or(1.0, |s| s.emissive_strength.0);
            let emissive = Vec3::from(m.emissive_factor.0) * strength;
            let ke = if emissive.is_finite() { emissive.max(Vec3::ZERO) } else { Vec3::ZERO };
            if ke != emissive {
                self.warnings.push(format!(
                    "material \"{name}\": emission {emissive} (emissiveFactor × emissive strength) clamped to {ke}"
                ));
            }
            let kind = if ke.max_element() > 0.0 { MaterialKind::Emitter } else { MaterialKind::Diffuse };
            let mut ignored = Vec::new();
            if pbr.metallic_factor.0 > 0.0 {
                ignored.push(format!("metallicFactor {}", pbr.metallic_factor.0));
            }
            if let Some(t) = ext.and_then(|e| e.transmission.as_ref()).filter(|t| t.transmission_factor.0 > 0.0) {
                ignored.push(format!("transmission {}", t.transmission_factor.0));
            }
            if let Checked::Valid(mode @ (json::material::AlphaMode::Blend | json::material::AlphaMode::Mask)) =
                &m.alpha_mode
            {
                ignored.push(format!("alphaMode {mode:?}"));
            }
            if m.emissive_texture.is_some() {
                ignored.push("emissiveTexture".into());
            }
            if !ignored.is_empty() {
                self.warnings.push(format!("material \"{name}\": {} ignored (shaded as diffuse)", ignored.join(", ")));
            }
            let base = match &pbr.base_color_texture {
                None => None,
                Some(info) => {
                    let t = info.index.value();
                    let texture = self.root.textures.get(t).ok_or_else(|| {
                        self.err(format!("material {i} (\"{name}\"): base colour texture {t} does not exist"))
                    })?;
                    let sampler =
                        match texture.sampler {
                            Some(s) => Some(self.root.samplers.get(s.value()).ok_or_else(|| {
                                self.err(format!("texture {t}: sampler {} does not exist", s.value()))
                            })?),
                            None => None,
                        };
                    let mode = |w: Option<&Checked<WrappingMode>>| match w {
                        Some(Checked::Valid(w)) => *w,
                        _ => WrappingMode::Repeat,
                    };
                    let wrap = [mode(sampler.map(|s| &s.wrap_s)), mode(sampler.map(|s| &s.wrap_t))];
                    Some(BaseTexture { image: texture.source.value(), wrap, set: info.tex_coord })
                }
            };
            self.base_textures.push(base);
            self.materials.push(Material { name, kd, ke, kind, ..Material::default() });
        }
        Ok(())
    }

    /// Decodes image `index` (once) and returns it.
    fn texture(&mut self, index: usize) -> Result<&Texture, LoadError> {
        if self.textures.get(index).is_some_and(Option::is_none) {
            let image = &self.root.images[index];
            let label = image.name.as_deref().or(image.uri.as_deref().filter(|u| !u.starts_with("data:")));
            let what = match label {
                Some(l) => format!("image {index} (\"{l}\")"),
                None => format!("image {index}"),
            };
            let bytes: Cow<'_, [u8]> = match (&image.buffer_view, &image.uri) {
                (Some(v), _) => Cow::Borrowed(self.view(v.value(), 1, &what)?.0),
                (None, Some(uri)) => Cow::Owned(self.read_uri(uri, &what)?),
                (None, None) => return Err(self.err(format!("{what} has neither a uri nor a bufferView"))),
            };
            let decoded =
                ::image::load_from_memory(&bytes).map_err(|e| self.err(format!("{what} cannot be decoded: {e}")))?;
            let rgb = decoded.to_rgb8();
            let (width, height) = (rgb.width() as usize, rgb.height() as usize);
            if width == 0 || height == 0 {
                return Err(self.err(format!("{what} is empty ({width}x{height})")));
            }
            self.textures[index] = Some(Texture { width, height, rgb: rgb.into_raw() });
        }
        match self.textures.get(index) {
            Some(Some(t)) => Ok(t),
            _ => Err(self.err(format!("image {index} does not exist (the file has {})", self.root.images.len()))),
        }
    }

    /// The scene material of a triangle of glTF material `m` whose texture colour is `colour`.
    fn baked_material(&mut self, m: usize, colour: Vec3) -> u32 {
        let q = colour.to_array().map(|c| (c.clamp(0.0, 1.0) * 255.0).round() as u8);
        *self.baked.entry((m, q)).or_insert_with(|| {
            let base = &self.materials[m];
            let baked = Material {
                name: format!("{} #{:02x}{:02x}{:02x}", base.name, q[0], q[1], q[2]),
                kd: Vec3::from(q.map(|c| f32::from(c) / 255.0)),
                ..base.clone()
            };
            self.materials.push(baked);
            (self.materials.len() - 1) as u32
        })
    }

    /// The world positions (and normals) of a node's use of a POSITION (and NORMAL)
    /// accessor, pushed once to the raw arrays.
    fn vertices(
        &mut self,
        node: usize,
        positions: usize,
        normals: Option<usize>,
        world: Mat4,
        at: &str,
    ) -> Result<VertexRange, LoadError> {
        if let Some(&range) = self.vertex_ranges.get(&(node, positions, normals)) {
            return Ok(range);
        }
        let p = self.vec3s(positions, &format!("POSITION of {at}"))?;
        let count = p.len();
        let pbase = self.raw_positions.len();
        self.raw_positions.extend(p.iter().map(|&v| world.transform_point3(v)));
        let nbase = match normals {
            Some(n) => {
                let normals = self.vec3s(n, &format!("NORMAL of {at}"))?;
                if normals.len() != count {
                    return Err(self.err(format!(
                        "accessor {n} (NORMAL of {at}) has {} elements, its POSITION accessor {positions} has {count}",
                        normals.len()
                    )));
                }
                let inverse_transpose = Mat3::from_mat4(world).inverse().transpose();
                let nbase = self.raw_normals.len();
                self.raw_normals.extend(normals.iter().map(|&v| inverse_transpose * v));
                Some(nbase)
            }
            None => None,
        };
        let range = (pbase, nbase, count);
        self.vertex_ranges.insert((node, positions, normals), range);
        Ok(range)
    }

    /// Adds the triangles of mesh `mesh_index`, instanced by node `node` at `world`.
    fn add_mesh(&mut self, node: usize, mesh_index: usize, world: Mat4) -> Result<(), LoadError> {
        let root = self.root;
        let mesh = root.meshes.get(mesh_index).ok_or_else(|| {
            self.err(format!("node {node}: mesh {mesh_index} does not exist (the file has {})", root.meshes.len()))
        })?;
        // glTF: a transform with a negative determinant turns the winding clockwise; swap two
        // corners so front faces stay front faces.
        let mirrored = world.determinant() < 0.0;
        for (p, prim) in mesh.primitives.iter().enumerate() {
            let at = format!("mesh {mesh_index} primitive {p} of node {node}");
            let mode = match prim.mode {
                Checked::Valid(m) => m,
                Checked::Invalid => return Err(self.err(format!("{at}: invalid mode"))),
            };
            if !matches!(mode, Mode::Triangles | Mode::TriangleStrip | Mode::TriangleFan) {
                self.skipped_primitives += 1;
                continue;
            }
            let attribute = |s: Semantic| prim.attributes.get(&Checked::Valid(s)).map(|i| i.value());
            let positions =
                attribute(Semantic::Positions).ok_or_else(|| self.err(format!("{at} has no POSITION attribute")))?;
            let (pbase, nbase, count) = self.vertices(node, positions, attribute(Semantic::Normals), world, &at)?;
            let indices: Option<Vec<u32>> = match prim.indices {
                Some(i) => {
                    let allowed = [ComponentType::U8, ComponentType::U16, ComponentType::U32];
                    Some(self.accessor(i.value(), Type::Scalar, &allowed, &format!("indices of {at}"), |v| v as u32)?)
                }
                None => None,
            };
            let n = indices.as_ref().map_or(count, Vec::len);
            let corner = |k: usize| indices.as_ref().map_or(k, |ix| ix[k] as usize);
            let tris: Vec<[usize; 3]> = match mode {
                Mode::TriangleStrip => (0..n.saturating_sub(2))
                    .map(|k| [corner(k), corner(k + 1 + k % 2), corner(k + 2 - k % 2)])
                    .collect(),
                Mode::TriangleFan => {
                    (0..n.saturating_sub(2)).map(|k| [corner(k + 1), corner(k + 2), corner(0)]).collect()
                }
                _ => {
                    if !n.is_multiple_of(3) {
                        let what = if indices.is_some() { "indices" } else { "vertices (no indices)" };
                        self.warnings
                            .push(format!("{at}: {n} {what}, not a multiple of 3; the last {} ignored", n % 3));
                    }
                    (0..n / 3).map(|k| [corner(3 * k), corner(3 * k + 1), corner(3 * k + 2)]).collect()
                }
            };

            let material_index = prim.material.map(|m| m.value()).filter(|&m| m < root.materials.len());
            let base_material = match material_index {
                Some(m) => m as u32,
                None => *self.default_material.get_or_insert_with(|| {
                    self.materials.push(Material::default());
                    (self.materials.len() - 1) as u32
                }),
            };
            let texture = material_index.and_then(|m| Some((m, self.base_textures[m]?)));
            let uv_accessor = texture.and_then(|(_, t)| attribute(Semantic::TexCoords(t.set)));
            let uv: Option<Vec<Vec2>> = match (texture, uv_accessor) {
                (Some((m, t)), None) => {
                    if !std::mem::replace(&mut self.missing_tex_coords[m], true) {
                        self.warnings.push(format!(
                            "material \"{}\": its base colour texture uses TEXCOORD_{}, which {at} lacks; \
                             baseColorFactor alone is used there",
                            self.materials[m].name, t.set
                        ));
                    }
                    None
                }
                (Some((_, t)), Some(a)) => {
                    let uv = self.tex_coords(a, &format!("TEXCOORD_{} of {at}", t.set))?.to_vec();
                    if uv.len() != count {
                        return Err(self.err(format!(
                            "accessor {a} (TEXCOORD_{} of {at}) has {} elements, its POSITION accessor has {count}",
                            t.set,
                            uv.len()
                        )));
                    }
                    self.texture(t.image)?;
                    Some(uv)
                }
                _ => None,
            };

            for mut v in tris {
                let in_range = v.iter().all(|&c| c < count);
                if !in_range && self.first_out_of_range.is_none() {
                    let bad = v.iter().find(|&&c| c >= count).copied().unwrap_or_default();
                    self.first_out_of_range = Some(format!("{at}: vertex index {bad} out of range ({count} vertices)"));
                }
                let mut material = base_material;
                if let (true, Some(uv), Some((m, t))) = (in_range, &uv, texture) {
                    if let Some(Some(tex)) = self.textures.get(t.image) {
                        let colour = tex.mean(v.map(|c| uv[c]), t.wrap, &self.srgb_lut);
                        material = self.baked_material(m, colour * self.materials[m].kd);
                    }
                }
                if mirrored {
                    v.swap(1, 2);
                }
                let positions = v.map(|c| if c < count { pbase + c } else { usize::MAX });
                let normals = nbase.filter(|_| in_range).map(|nb| v.map(|c| nb + c));
                self.raw_tris.push(RawTri { v: positions, n: normals, material });
            }
            if prim.targets.as_ref().is_some_and(|t| !t.is_empty()) {
                self.warnings.push(format!("{at}: morph targets ignored (the base shape is loaded)"));
            }
        }
        Ok(())
    }

    /// Records a perspective camera node (orthographic ones are skipped with a warning).
    fn add_camera(&mut self, node: usize, camera: usize, world: Mat4) -> Result<(), LoadError> {
        let c = self
            .root
            .cameras
            .get(camera)
            .ok_or_else(|| self.err(format!("node {node}: camera {camera} does not exist")))?;
        match (&c.type_, &c.perspective) {
            (Checked::Valid(json::camera::Type::Perspective), Some(p)) => self.cameras.push(CameraNode {
                node,
                eye: world.transform_point3(Vec3::ZERO),
                forward: world.transform_vector3(Vec3::NEG_Z).normalize_or_zero(),
                up: world.transform_vector3(Vec3::Y),
                fov_y_deg: p.yfov.to_degrees(),
            }),
            _ => self.warnings.push(format!("node {node}: camera {camera} is not a perspective camera; skipped")),
        }
        Ok(())
    }

    /// The node's transform: its matrix, or translation × rotation × scale.
    fn local_transform(node: &json::Node) -> Mat4 {
        if let Some(m) = node.matrix {
            return Mat4::from_cols_array(&m);
        }
        let t = node.translation.map_or(Vec3::ZERO, Vec3::from);
        let r = node.rotation.as_ref().map_or(Quat::IDENTITY, |q| Quat::from_array(q.0).normalize());
        let s = node.scale.map_or(Vec3::ONE, Vec3::from);
        Mat4::from_scale_rotation_translation(s, r, t)
    }

    /// The nodes to start from: the default scene's, else the first scene's, else every
    /// node that is no other node's child.
    fn root_nodes(&mut self) -> Result<Vec<usize>, LoadError> {
        let root = self.root;
        let scene = root.scene.map(|s| s.value()).or((!root.scenes.is_empty()).then_some(0));
        match scene {
            Some(s) => {
                let scene = root.scenes.get(s).ok_or_else(|| self.err(format!("default scene {s} does not exist")))?;
                Ok(scene.nodes.iter().map(|n| n.value()).collect())
            }
            None => {
                let mut is_child = vec![false; root.nodes.len()];
                for c in root.nodes.iter().flat_map(|n| n.children.iter().flatten()) {
                    if let Some(flag) = is_child.get_mut(c.value()) {
                        *flag = true;
                    }
                }
                self.warnings.push("the file has no scene: every root node is loaded".into());
                Ok((0..root.nodes.len()).filter(|&n| !is_child[n]).collect())
            }
        }
    }

    /// Walks the node trees and builds the scene.
    fn load(mut self) -> Result<(Scene, LoadReport), LoadError> {
        let root = self.root;
        for ext in &root.extensions_used {
            if !json::extensions::ENABLED_EXTENSIONS.contains(&ext.as_str()) {
                self.warnings.push(format!("extension {ext} ignored"));
            }
        }
        self.read_materials()?;
        let mut seen = vec![false; root.nodes.len()];
        let mut stack: Vec<(usize, Mat4)> = self.root_nodes()?.into_iter().rev().map(|n| (n, Mat4::IDENTITY)).collect();
        let mut skinned = false;
        while let Some((n, parent)) = stack.pop() {
            let node = root
                .nodes
                .get(n)
                .ok_or_else(|| self.err(format!("node {n} does not exist (the file has {})", root.nodes.len())))?;
            if std::mem::replace(&mut seen[n], true) {
                return Err(self.err(format!(
                    "node {n} is reached twice: glTF nodes form trees (a cycle, or a node with two parents)"
                )));
            }
            let world = parent * Self::local_transform(node);
            if let Some(mesh) = node.mesh {
                skinned |= node.skin.is_some();
                self.add_mesh(n, mesh.value(), world)?;
            }
            if let Some(camera) = node.camera {
                self.add_camera(n, camera.value(), world)?;
            }
            for child in node.children.iter().flatten().rev() {
                stack.push((child.value(), world));
            }
        }
        if skinned {
            self.warnings.push("skins ignored: skinned meshes are placed by their nodes' transforms".into());
        }
        if self.skipped_primitives > 0 {
            self.warnings.push(format!("{} point or line primitive(s) skipped", self.skipped_primitives));
        }
        if let Some(first) = &self.first_out_of_range {
            self.warnings.push(format!("first out-of-range index: {first}"));
        }
        let mut report = LoadReport {
            skipped_primitives: self.skipped_primitives,
            warnings: std::mem::take(&mut self.warnings),
            ..Default::default()
        };
        let materials = std::mem::take(&mut self.materials);
        let mut scene = Scene::assemble(&self.raw_positions, &self.raw_normals, &self.raw_tris, materials, &mut report);
        scene.check_loaded(self.path, &report, self.first_out_of_range.as_deref())?;
        let centre = (scene.bounds.0 + scene.bounds.1) * 0.5;
        for c in &self.cameras {
            // The target is the point of the view ray nearest the scene's centre (any point
            // of the ray gives the same image).
            let along = (centre - c.eye).dot(c.forward);
            let distance = if along > 0.0 && along.is_finite() { along } else { scene.size().max(1.0) };
            let camera = Camera { eye: c.eye, target: c.eye + c.forward * distance, up: c.up, fov_y_deg: c.fov_y_deg };
            match camera.validate() {
                Ok(()) => scene.cameras.push(camera),
                Err(e) => report.warnings.push(format!("node {}: camera skipped: {e}", c.node)),
            }
        }
        Ok((scene, report))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_round_trips_and_rejects_garbage() {
        assert_eq!(base64_decode("aGVsbG8=").unwrap(), b"hello");
        assert_eq!(base64_decode("aGVsbG8").unwrap(), b"hello");
        assert_eq!(base64_decode("").unwrap(), b"");
        assert!(base64_decode("aGV*bG8=").unwrap_err().contains("offset 3"));
        assert!(base64_decode("a").is_err());
        assert!(base64_decode("aGVsbG8====").is_err());
    }

    #[test]
    fn percent_decoding() {
        assert_eq!(percent_decode("my%20scene.bin").as_deref(), Some("my scene.bin"));
        assert_eq!(percent_decode("a%2"), None);
        assert_eq!(percent_decode("a%zz"), None);
        assert_eq!(percent_decode("%FF"), None);
    }

    #[test]
    fn wrap_modes() {
        assert_eq!(wrap(1.25, WrappingMode::Repeat), 0.25);
        assert_eq!(wrap(-0.25, WrappingMode::Repeat), 0.75);
        assert_eq!(wrap(1.25, WrappingMode::MirroredRepeat), 0.75);
        assert_eq!(wrap(-0.25, WrappingMode::MirroredRepeat), 0.25);
        assert_eq!(wrap(1.25, WrappingMode::ClampToEdge), 1.0);
        assert_eq!(wrap(f32::NAN, WrappingMode::Repeat), 0.0);
    }

    #[test]
    fn glb_lengths_are_checked() {
        let p = Path::new("t.glb");
        let mut glb = b"glTF".to_vec();
        glb.extend(2u32.to_le_bytes());
        glb.extend(28u32.to_le_bytes());
        glb.extend(4u32.to_le_bytes());
        glb.extend(CHUNK_JSON.to_le_bytes());
        glb.extend(b"{}  ");
        assert_eq!(glb.len(), 24);
        assert!(split_glb(p, &glb).unwrap_err().reason.contains("header says 28 bytes, the file has 24"));
        glb[8..12].copy_from_slice(&24u32.to_le_bytes());
        assert_eq!(split_glb(p, &glb).unwrap(), (&b"{}  "[..], None));
        glb[12..16].copy_from_slice(&40u32.to_le_bytes());
        assert!(split_glb(p, &glb).unwrap_err().reason.contains("says 40 bytes, only 4 follow"));
        glb[8..12].copy_from_slice(&3u32.to_le_bytes());
        assert!(split_glb(p, &glb).is_err());
    }
}
