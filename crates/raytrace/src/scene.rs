//! Triangle scenes: loading OBJ/MTL, validation, lights, and a scene prepared for the
//! renderers (its triangles and their kd-tree).

use std::cell::RefCell;
use std::fmt;
use std::io;
use std::path::Path;

use glam::{DVec3, Vec3};
use lumbre_kdtree::{Hit, QueryOptions, Ray, Structure, StructureOptions};

use crate::camera::Camera;
use crate::error::LoadError;
use crate::material::{GpuMaterial, Material, MaterialKind};
use crate::obj;

/// `Triangle::n` value of a corner without a shading normal.
pub const NO_NORMAL: u32 = u32::MAX;

/// Scene sizes (the diagonal of the bounding box) the ray tracers handle, as `(smallest,
/// largest)`. They work in f32, and the watertight triangle test multiplies three
/// coordinates relative to the ray origin: beyond these sizes (with room for a camera a
/// hundred times farther than the framing one) such products leave f32's normal range and
/// every ray misses. Within them, images do not depend on the scene's scale: ray offsets
/// and the framing camera are relative to the scene.
pub const SCENE_SIZE_RANGE: (f32, f32) = (1e-10, 1e10);

/// A triangle of a [`Scene`]: indices into its arrays.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Triangle {
    /// Indices into [`Scene::positions`].
    pub v: [u32; 3],
    /// Indices into [`Scene::normals`], or [`NO_NORMAL`] (all three) when the triangle has none.
    pub n: [u32; 3],
    /// Index into [`Scene::materials`].
    pub material: u32,
}

impl Triangle {
    /// Whether the triangle has per-corner shading normals.
    pub fn has_normals(&self) -> bool {
        self.n[0] != NO_NORMAL
    }
}

/// A light source.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Light {
    /// An isotropic point light: radiant intensity `intensity` (W/sr per channel) at `position`.
    Point {
        /// Where the light is.
        position: Vec3,
        /// Radiant intensity.
        intensity: Vec3,
    },
    /// An emissive triangle of the scene.
    Area {
        /// Index into [`Scene::triangles`].
        triangle: u32,
        /// Emitted radiance (the material's `Ke`).
        emission: Vec3,
        /// The triangle's area.
        area: f32,
    },
}

impl Light {
    /// Samples a point on the light from two uniform numbers in `[0, 1)`:
    /// `(point, unit normal, pdf with respect to area)`.
    ///
    /// Area lights are sampled uniformly with the square-root warp: with `s = sqrt(u)`, the
    /// barycentric weights are `(1 - s, v * s, 1 - (1 - s) - v * s)` on the triangle's corners
    /// `(p0, p1, p2)`, the normal is `normalize((p1 - p0) × (p2 - p0))` and the pdf is `1 / area`.
    /// A point light returns its position, a zero normal and pdf 1 (a delta distribution).
    /// An area light whose triangle index is not in `scene` returns pdf 0.
    ///
    /// ```
    /// use glam::Vec3;
    /// use lumbre_raytrace::{Light, Scene};
    /// let scene = Scene::from_triangles(&[[Vec3::ZERO, Vec3::X, Vec3::Y]]);
    /// let light = Light::Area { triangle: 0, emission: Vec3::ONE, area: 0.5 };
    /// let (p, n, pdf) = light.sample(&scene, 0.3, 0.6);
    /// assert!(p.x >= 0.0 && p.y >= 0.0 && p.x + p.y <= 1.0 && p.z == 0.0);
    /// assert_eq!((n, pdf), (Vec3::Z, 2.0));
    /// ```
    pub fn sample(&self, scene: &Scene, u: f32, v: f32) -> (Vec3, Vec3, f32) {
        match *self {
            Light::Point { position, .. } => (position, Vec3::ZERO, 1.0),
            Light::Area { triangle, area, .. } => {
                let Some([p0, p1, p2]) = scene.triangle(triangle) else {
                    return (Vec3::ZERO, Vec3::ZERO, 0.0);
                };
                let s = u.sqrt();
                let b0 = 1.0 - s;
                let b1 = v * s;
                let point = p0 * b0 + p1 * b1 + p2 * (1.0 - b0 - b1);
                let normal = (p1 - p0).cross(p2 - p0).normalize_or_zero();
                (point, normal, if area > 0.0 { 1.0 / area } else { 0.0 })
            }
        }
    }
}

/// What loading a scene found: counts of what was kept and dropped, and warnings.
///
/// Dropped counts are triangles after triangulation (a dropped quad counts 2).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LoadReport {
    /// Valid triangles in the scene.
    pub triangles: usize,
    /// Triangles dropped because a vertex, normal or texture index was out of range.
    pub dropped_out_of_range: usize,
    /// Triangles dropped because a corner has a NaN or infinite coordinate.
    pub dropped_non_finite: usize,
    /// Triangles dropped because they have no area (collinear corners to f32 precision).
    pub dropped_degenerate: usize,
    /// glTF mesh primitives skipped because they are points or lines, not triangles.
    pub skipped_primitives: usize,
    /// Materials in the scene (including the default material when it was added).
    pub materials: usize,
    /// Things worth telling the user (missing material library, unknown material names, ...).
    pub warnings: Vec<String>,
}

impl LoadReport {
    /// Total triangles dropped.
    pub fn dropped(&self) -> usize {
        self.dropped_out_of_range + self.dropped_non_finite + self.dropped_degenerate
    }
}

impl fmt::Display for LoadReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} triangles, {} materials; dropped {} out of range, {} non-finite, {} degenerate",
            self.triangles, self.materials, self.dropped_out_of_range, self.dropped_non_finite, self.dropped_degenerate
        )?;
        if self.skipped_primitives > 0 {
            write!(f, "; skipped {} point or line primitives", self.skipped_primitives)?;
        }
        for w in &self.warnings {
            write!(f, "\nwarning: {w}")?;
        }
        Ok(())
    }
}

/// A triangle scene ready for a kd-tree and an integrator.
///
/// Invariants (established by every constructor of this crate): every triangle has finite
/// corners, non-zero area and in-range indices; every position and normal is finite and
/// referenced; normals have unit length; there is at least one material when there is a
/// triangle; `bounds` is the box of `positions` (`(Vec3::ZERO, Vec3::ZERO)` when empty).
///
/// ```
/// use glam::Vec3;
/// use lumbre_raytrace::Scene;
/// let mut scene = Scene::from_triangles(&[[Vec3::ZERO, Vec3::X, Vec3::Y]]);
/// scene.add_point_light(Vec3::new(0.0, 0.0, 2.0), Vec3::splat(10.0));
/// assert_eq!(scene.triangles.len(), 1);
/// assert_eq!(scene.bounds, (Vec3::ZERO, Vec3::new(1.0, 1.0, 0.0)));
/// assert_eq!(scene.triangle_positions(), vec![[Vec3::ZERO, Vec3::X, Vec3::Y]]);
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Scene {
    /// Vertex positions.
    pub positions: Vec<Vec3>,
    /// Per-vertex shading normals (unit length); empty if the file has none.
    pub normals: Vec<Vec3>,
    /// Only valid (finite, non-degenerate, in-range) triangles.
    pub triangles: Vec<Triangle>,
    /// At least one (the default) when the file has none.
    pub materials: Vec<Material>,
    /// Point lights given by the user, and one area light per emissive triangle.
    pub lights: Vec<Light>,
    /// Axis-aligned bounds of the positions: `(min, max)`.
    pub bounds: (Vec3, Vec3),
    /// The cameras the file defines, in file order (glTF camera nodes; none for OBJ). See
    /// [`Scene::default_camera`].
    pub cameras: Vec<Camera>,
}

/// Triangles before validation: global indices into raw position/normal arrays (an index
/// past the end marks a corner out of range: the triangle is dropped and counted).
pub(crate) struct RawTri {
    pub(crate) v: [usize; 3],
    pub(crate) n: Option<[usize; 3]>,
    pub(crate) material: u32,
}

/// Whether a triangle is degenerate: the sine of its angle at `p0` is at most f32's epsilon
/// (its corners are collinear to f32 precision), which includes repeated corners.
fn degenerate(p: [Vec3; 3]) -> bool {
    let (a, b, c) = (p[0].as_dvec3(), p[1].as_dvec3(), p[2].as_dvec3());
    let (e1, e2) = (b - a, c - a);
    let (sine_area, lengths) = (e1.cross(e2).length(), e1.length() * e2.length());
    sine_area.is_nan() || sine_area <= f64::from(f32::EPSILON) * lengths
}

fn area(p: [Vec3; 3]) -> f32 {
    let (a, b, c) = (p[0].as_dvec3(), p[1].as_dvec3(), p[2].as_dvec3());
    (0.5 * (b - a).cross(c - a).length()) as f32
}

impl Scene {
    /// Loads a scene file by its extension (case-insensitive): `.obj` with
    /// [`Scene::load_obj`], `.gltf` and `.glb` with [`Scene::load_gltf`]. Any other extension
    /// is an error naming it and the three accepted.
    ///
    /// ```
    /// use lumbre_raytrace::Scene;
    /// let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/scenes/");
    /// let (obj, _) = Scene::load(format!("{dir}CornellBox-Diffuse.obj").as_ref()).unwrap();
    /// let (gltf, _) = Scene::load(format!("{dir}CornellBox-Diffuse.gltf").as_ref()).unwrap();
    /// assert_eq!(obj.triangle_positions(), gltf.triangle_positions());
    /// let err = Scene::load("scene.fbx".as_ref()).unwrap_err();
    /// assert_eq!(err.to_string(), "scene.fbx: unsupported scene format \".fbx\": expected .obj, .gltf or .glb");
    /// ```
    pub fn load(path: &Path) -> Result<(Scene, LoadReport), LoadError> {
        let ext = path.extension().map(|e| e.to_string_lossy().to_ascii_lowercase());
        match ext.as_deref() {
            Some("obj") => Scene::load_obj(path),
            Some("gltf" | "glb") => Scene::load_gltf(path),
            Some(other) => Err(LoadError::new(
                path,
                format!("unsupported scene format \".{other}\": expected .obj, .gltf or .glb"),
            )),
            None => Err(LoadError::new(path, "no file extension: expected .obj, .gltf or .glb")),
        }
    }

    /// The camera to render from when the user gives none: the file's first camera
    /// ([`Scene::cameras`]) if it has one, else [`Camera::frame`] of the bounds for an image
    /// of this aspect (width / height).
    ///
    /// ```
    /// use glam::Vec3;
    /// use lumbre_raytrace::{Camera, Scene};
    /// let mut scene = Scene::from_triangles(&[[Vec3::ZERO, Vec3::X, Vec3::Y]]);
    /// assert_eq!(scene.default_camera(1.5), Camera::frame(scene.bounds, 1.5));
    /// let cam = Camera::parse("0,0,5, 0,0,0, 0,1,0, 30").unwrap();
    /// scene.cameras.push(cam);
    /// assert_eq!(scene.default_camera(1.5), cam);
    /// ```
    pub fn default_camera(&self, aspect: f32) -> Camera {
        self.cameras.first().copied().unwrap_or_else(|| Camera::frame(self.bounds, aspect))
    }

    /// Loads an OBJ file and the MTL libraries it names (relative to the OBJ's folder).
    ///
    /// Polygons are triangulated as fans. Malformed lines (numbers, indices, statements) are
    /// errors naming the file and line; faces with out-of-range indices, non-finite corners or
    /// no area are dropped and counted in the [`LoadReport`]. A missing MTL file is a warning
    /// and its faces get the default material; a malformed MTL file is an error naming it.
    /// A file with no valid triangle is an error (`empty scene`). Texture coordinates are
    /// checked but not kept. Area lights are made for every triangle with an emitting material.
    /// Positions are parsed in f64 and rounded to f32 where they are; to render a scene far
    /// from the origin, [`Scene::load_obj_recentred`] moves them near it first.
    ///
    /// ```
    /// use lumbre_raytrace::Scene;
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/scenes/CornellBox-Original.obj");
    /// let (scene, report) = Scene::load_obj(path.as_ref()).unwrap();
    /// assert_eq!(report.triangles, 36);
    /// assert_eq!(scene.emissive_triangles().len(), 2);
    /// ```
    pub fn load_obj(path: &Path) -> Result<(Scene, LoadReport), LoadError> {
        let bytes = crate::read::read_input(path)?;
        let (scene, report, _) = Self::load_obj_with(path, &bytes, &crate::read::read_input_io, false)?;
        Ok((scene, report))
    }

    /// Loads an OBJ file held in memory, with the MTL libraries it names taken from
    /// `files` (file name, contents); `name` stands for the OBJ's path in messages and its
    /// folder for the libraries'. Otherwise as [`Scene::load_obj`]: for scenes bundled in
    /// a program.
    ///
    /// ```
    /// use lumbre_raytrace::Scene;
    /// let obj = b"mtllib box.mtl\nusemtl white\nv 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n";
    /// let mtl = b"newmtl white\nKd 0.5 0.5 0.5\n";
    /// let (scene, report) = Scene::load_obj_bytes("box.obj".as_ref(), obj, &[("box.mtl", mtl)]).unwrap();
    /// assert_eq!(report.triangles, 1);
    /// assert_eq!(scene.materials[0].kd.x, 0.5);
    /// ```
    pub fn load_obj_bytes(name: &Path, obj: &[u8], files: &[(&str, &[u8])]) -> Result<(Scene, LoadReport), LoadError> {
        let read = |full: &Path| -> io::Result<Vec<u8>> {
            let file = full.file_name().and_then(|f| f.to_str()).unwrap_or_default();
            files
                .iter()
                .find(|(n, _)| *n == file)
                .map(|(_, bytes)| bytes.to_vec())
                .ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))
        };
        let (scene, report, _) = Self::load_obj_with(name, obj, &read, false)?;
        Ok((scene, report))
    }

    /// [`Scene::load_obj`] on the OBJ text `bytes`, reading the MTL libraries through `read`
    /// (given each library's full path). Positions are parsed in f64; with `recentre`, they
    /// are moved near the origin in f64 before rounding to f32 (see
    /// [`Scene::load_obj_recentred`]), and the shift subtracted is returned (else zero).
    pub(crate) fn load_obj_with(
        path: &Path,
        bytes: &[u8],
        read: &dyn Fn(&Path) -> io::Result<Vec<u8>>,
        recentre: bool,
    ) -> Result<(Scene, LoadReport, DVec3), LoadError> {
        let dir = obj::parent_dir(path);
        let scan = obj::scan_obj(path, bytes, &dir)?;

        let mtl_error: RefCell<Option<LoadError>> = RefCell::new(None);
        let mtl_warnings: RefCell<Vec<String>> = RefCell::new(Vec::new());
        let loader = |name: &Path| -> tobj::MTLLoadResult {
            let full = dir.join(name);
            let bytes = match read(&full) {
                Ok(b) => b,
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    mtl_warnings.borrow_mut().push(format!(
                        "material library {} not found; its materials are replaced by the default material",
                        full.display()
                    ));
                    return Ok((Vec::new(), Default::default()));
                }
                Err(e) => {
                    mtl_error.borrow_mut().get_or_insert(LoadError::read(&full, &e));
                    return Err(tobj::LoadError::OpenFileFailed);
                }
            };
            let scanned = match obj::scan_mtl(&full, &bytes) {
                Ok(s) => s,
                Err(e) => {
                    mtl_error.borrow_mut().get_or_insert(e);
                    return Err(tobj::LoadError::MaterialParseError);
                }
            };
            mtl_warnings.borrow_mut().extend(scanned.warnings);
            tobj::load_mtl_buf(&mut scanned.text.as_bytes()).inspect_err(|e| {
                mtl_error.borrow_mut().get_or_insert(LoadError::new(&full, format!("tobj: {e}")));
            })
        };
        // `..Default::default()` stays for tobj's optional `merging`/`reordering` fields, which
        // exist when another crate enables those features.
        #[allow(clippy::needless_update)]
        let options = tobj::LoadOptions {
            single_index: false,
            triangulate: true,
            ignore_points: true,
            ignore_lines: true,
            ..Default::default()
        };
        let loaded = tobj::load_obj_buf(&mut scan.text.as_bytes(), &options, loader);
        if let Some(e) = mtl_error.into_inner() {
            return Err(e);
        }
        let (models, tobj_materials) =
            loaded.map_err(|e| LoadError::new(path, format!("tobj could not load the scanned file: {e}")))?;
        let tobj_materials = tobj_materials.unwrap_or_default();

        let mut warnings = mtl_warnings.into_inner();
        warnings.extend(scan.warnings);
        let mut materials: Vec<Material> =
            tobj_materials.iter().map(|m| Material::from_mtl(&m.name, &obj::mtl_params(m))).collect();
        for (name, line) in &scan.usemtl {
            if !materials.iter().any(|m| m.name == *name) {
                warnings.push(format!("line {line}: unknown material \"{name}\"; the default material is used"));
            }
        }
        for m in &materials {
            if m.kind == MaterialKind::Mirror && m.ks.max_element() <= 0.0 {
                warnings
                    .push(format!("material \"{}\" is a mirror (illum 3/5) with Ks = 0: it reflects nothing", m.name));
            }
        }

        let mut raw_positions: Vec<DVec3> = Vec::new();
        let mut raw_normals: Vec<Vec3> = Vec::new();
        let mut raw_tris: Vec<RawTri> = Vec::new();
        let mut default_material: Option<u32> = None;
        for model in &models {
            let mesh = &model.mesh;
            let (pbase, nbase) = (raw_positions.len(), raw_normals.len());
            raw_positions.extend(mesh.positions.chunks_exact(3).map(|c| DVec3::new(c[0], c[1], c[2])));
            raw_normals.extend(mesh.normals.chunks_exact(3).map(|c| DVec3::new(c[0], c[1], c[2]).as_vec3()));
            let material = match mesh.material_id {
                Some(i) if i < materials.len() => i as u32,
                _ => *default_material.get_or_insert_with(|| {
                    materials.push(Material::default());
                    (materials.len() - 1) as u32
                }),
            };
            let has_normal_indices = mesh.normal_indices.len() == mesh.indices.len();
            for (k, tri) in mesh.indices.chunks_exact(3).enumerate() {
                let with_normals =
                    has_normal_indices && scan.tri_has_normals.get(raw_tris.len()).copied().unwrap_or(false);
                let v = [0, 1, 2].map(|i| pbase + tri[i] as usize);
                let n = with_normals.then(|| [0, 1, 2].map(|i| nbase + mesh.normal_indices[3 * k + i] as usize));
                raw_tris.push(RawTri { v, n, material });
            }
        }
        if raw_tris.len() != scan.tri_has_normals.len() {
            warnings.push(format!(
                "tobj produced {} triangles where the scanner expected {}; normals may be missing",
                raw_tris.len(),
                scan.tri_has_normals.len()
            ));
        }
        if default_material.is_some() && materials.len() > 1 {
            warnings.push("some faces have no material or an unknown one: they use the default material".into());
        }
        let shift = if recentre {
            crate::recentre::obj_shift(path, &raw_positions, &raw_tris, &mut warnings)
        } else {
            DVec3::ZERO
        };
        let raw_positions = crate::recentre::shifted_f32(&raw_positions, shift);
        let mut report = LoadReport { dropped_out_of_range: scan.dropped_out_of_range, warnings, ..Default::default() };
        let scene = Scene::assemble(&raw_positions, &raw_normals, &raw_tris, materials, &mut report);
        scene.check_loaded(path, &report, scan.first_out_of_range.as_deref())?;
        Ok((scene, report, shift))
    }

    /// The loaders' last check: an error naming `path` when the scene has no valid triangle
    /// (with the drop counts and the first out-of-range index, if any) or a size outside
    /// [`SCENE_SIZE_RANGE`].
    pub(crate) fn check_loaded(
        &self,
        path: &Path,
        report: &LoadReport,
        first_out_of_range: Option<&str>,
    ) -> Result<(), LoadError> {
        if self.triangles.is_empty() {
            return Err(LoadError::new(
                path,
                format!(
                    "empty scene: no valid triangles ({} out of range, {} non-finite, {} degenerate dropped){}",
                    report.dropped_out_of_range,
                    report.dropped_non_finite,
                    report.dropped_degenerate,
                    first_out_of_range.map(|f| format!("; {f}")).unwrap_or_default()
                ),
            ));
        }
        self.check_size().map_err(|e| LoadError::new(path, e))
    }

    /// A scene of the given triangles with the default material and no lights. Non-finite and
    /// degenerate triangles are dropped (see [`Scene::from_triangles_report`] for the counts).
    pub fn from_triangles(tris: &[[Vec3; 3]]) -> Scene {
        Scene::from_triangles_report(tris).0
    }

    /// Divides every material's emission by the power of two at or below its largest
    /// channel (so the brightest channel lies in `[1, 2)`) and returns that power of two: a
    /// render of the normalised scene times it is the render of this one. Methods that carry
    /// light in f32 powers or fixed-point sums (VPLs, photons) lose a very dim scene's light
    /// to underflow (Ke of 1e-30 gave black images); normalised, they keep it. Scaling by a
    /// power of two is exact, so a scene of ordinary brightness renders to the same bits.
    /// Returns 1 for a scene without emission.
    ///
    /// ```
    /// use glam::Vec3;
    /// use lumbre_raytrace::Scene;
    /// let mut scene = Scene::from_triangles(&[[Vec3::ZERO, Vec3::X, Vec3::Y]]);
    /// scene.materials[0].ke = Vec3::new(3e-30, 1e-30, 0.0);
    /// let unit = scene.normalize_emission();
    /// assert_eq!(unit, 2f32.powi(-99)); // 3e-30 is 1.86 * 2^-99
    /// assert!((scene.materials[0].ke.x * unit - 3e-30).abs() < 1e-37);
    /// assert!(scene.materials[0].ke.x >= 1.0 && scene.materials[0].ke.x < 2.0);
    /// ```
    pub fn normalize_emission(&mut self) -> f32 {
        let ke = self.materials.iter().map(|m| m.ke.max_element());
        let lights = self.lights.iter().map(|l| match l {
            Light::Point { intensity, .. } => intensity.max_element(),
            Light::Area { emission, .. } => emission.max_element(),
        });
        let max = ke.chain(lights).filter(|k| k.is_finite()).fold(0.0f32, f32::max);
        if max <= 0.0 {
            return 1.0;
        }
        // Normal f32 powers of two only, so the division is exact.
        let e = (f64::from(max).log2().floor() as i32).clamp(-126, 127);
        let unit = 2f32.powi(e);
        for m in &mut self.materials {
            m.ke /= unit;
        }
        for l in &mut self.lights {
            match l {
                Light::Point { intensity, .. } => *intensity /= unit,
                Light::Area { emission, .. } => *emission /= unit,
            }
        }
        unit
    }

    /// [`Scene::from_triangles`], with the report of what was dropped.
    ///
    /// ```
    /// use glam::Vec3;
    /// use lumbre_raytrace::Scene;
    /// let tris = [[Vec3::ZERO, Vec3::X, Vec3::Y], [Vec3::ZERO, Vec3::X, Vec3::X * 2.0]];
    /// let (scene, report) = Scene::from_triangles_report(&tris);
    /// assert_eq!((scene.triangles.len(), report.dropped_degenerate), (1, 1));
    /// ```
    pub fn from_triangles_report(tris: &[[Vec3; 3]]) -> (Scene, LoadReport) {
        let positions: Vec<Vec3> = tris.iter().flatten().copied().collect();
        let raw: Vec<RawTri> =
            (0..tris.len()).map(|i| RawTri { v: [3 * i, 3 * i + 1, 3 * i + 2], n: None, material: 0 }).collect();
        let mut report = LoadReport::default();
        let scene = Scene::assemble(&positions, &[], &raw, vec![Material::default()], &mut report);
        (scene, report)
    }

    /// Validates raw triangles, compacts the arrays to what valid triangles use, computes the
    /// bounds and the area lights, and fills in the report's counts.
    pub(crate) fn assemble(
        raw_positions: &[Vec3],
        raw_normals: &[Vec3],
        raw_tris: &[RawTri],
        mut materials: Vec<Material>,
        report: &mut LoadReport,
    ) -> Scene {
        if materials.is_empty() {
            materials.push(Material::default());
        }
        let mut pos_map = vec![u32::MAX; raw_positions.len()];
        let mut nrm_map = vec![u32::MAX; raw_normals.len()];
        let mut scene = Scene { materials, ..Scene::default() };
        let mut bad_normals = 0usize;
        for t in raw_tris {
            let Some(p) = t.v.iter().map(|&i| raw_positions.get(i).copied()).collect::<Option<Vec<Vec3>>>() else {
                report.dropped_out_of_range += 1;
                continue;
            };
            let p = [p[0], p[1], p[2]];
            if !p.iter().all(|q| q.is_finite()) {
                report.dropped_non_finite += 1;
                continue;
            }
            if degenerate(p) {
                report.dropped_degenerate += 1;
                continue;
            }
            let material = if (t.material as usize) < scene.materials.len() { t.material } else { 0 };
            let v = t.v.map(|i| {
                if pos_map[i] == u32::MAX {
                    pos_map[i] = scene.positions.len() as u32;
                    scene.positions.push(raw_positions[i]);
                }
                pos_map[i]
            });
            let normals = t.n.and_then(|n| {
                let ns = n.map(|i| raw_normals.get(i).copied().unwrap_or(Vec3::NAN).normalize_or_zero());
                ns.iter().all(|q| *q != Vec3::ZERO).then_some((n, ns))
            });
            if t.n.is_some() && normals.is_none() {
                bad_normals += 1;
            }
            let n = match normals {
                Some((n, ns)) => [0, 1, 2].map(|k| {
                    let i = n[k];
                    if nrm_map[i] == u32::MAX {
                        nrm_map[i] = scene.normals.len() as u32;
                        scene.normals.push(ns[k]);
                    }
                    nrm_map[i]
                }),
                None => [NO_NORMAL; 3],
            };
            scene.triangles.push(Triangle { v, n, material });
        }
        if bad_normals > 0 {
            report.warnings.push(format!(
                "{bad_normals} triangle(s) had zero or non-finite normals; they use the geometric normal"
            ));
        }
        if let Some(&first) = scene.positions.first() {
            scene.bounds = scene.positions.iter().fold((first, first), |(lo, hi), &p| (lo.min(p), hi.max(p)));
        }
        for (i, t) in scene.triangles.iter().enumerate() {
            let m = &scene.materials[t.material as usize];
            if m.is_emitter() {
                let p = t.v.map(|k| scene.positions[k as usize]);
                scene.lights.push(Light::Area { triangle: i as u32, emission: m.ke, area: area(p) });
            }
        }
        report.triangles = scene.triangles.len();
        report.materials = scene.materials.len();
        scene
    }

    /// The corners of triangle `i`, or `None` when `i` (or one of its indices) is out of range.
    pub fn triangle(&self, i: u32) -> Option<[Vec3; 3]> {
        let t = self.triangles.get(i as usize)?;
        Some([
            *self.positions.get(t.v[0] as usize)?,
            *self.positions.get(t.v[1] as usize)?,
            *self.positions.get(t.v[2] as usize)?,
        ])
    }

    /// The corners of every triangle, in order: the input of the kd-tree builder.
    pub fn triangle_positions(&self) -> Vec<[Vec3; 3]> {
        self.triangles.iter().map(|t| t.v.map(|i| self.positions[i as usize])).collect()
    }

    /// The diagonal of [`Scene::bounds`] (0 for an empty scene).
    ///
    /// ```
    /// use glam::Vec3;
    /// let scene = lumbre_raytrace::Scene::from_triangles(&[[Vec3::ZERO, Vec3::X * 3.0, Vec3::Y * 4.0]]);
    /// assert_eq!(scene.size(), 5.0);
    /// ```
    pub fn size(&self) -> f32 {
        (self.bounds.1 - self.bounds.0).length()
    }

    /// An error when the scene's [size](Scene::size) is outside [`SCENE_SIZE_RANGE`] (an
    /// empty scene passes: it has nothing to hit).
    ///
    /// ```
    /// use glam::Vec3;
    /// use lumbre_raytrace::Scene;
    /// let tri = |s: f32| Scene::from_triangles(&[[Vec3::ZERO, Vec3::X * s, Vec3::Y * s]]);
    /// assert!(tri(1e-3).check_size().is_ok() && tri(1e9).check_size().is_ok());
    /// assert!(tri(1e-20).check_size().unwrap_err().contains("scale the model up"));
    /// assert!(tri(1e20).check_size().unwrap_err().contains("scale the model down"));
    /// ```
    pub fn check_size(&self) -> Result<(), String> {
        let size = self.size();
        let (lo, hi) = SCENE_SIZE_RANGE;
        if self.triangles.is_empty() || (lo..=hi).contains(&size) {
            return Ok(());
        }
        let (what, fix) = if size < lo { ("small", "up") } else { ("large", "down") };
        Err(format!(
            "scene size {size:e} (the diagonal of its bounding box) is too {what}: the f32 ray tracers handle \
             {lo:e} to {hi:e} (the triangle test multiplies three coordinates); scale the model {fix}"
        ))
    }

    /// Adds a point light.
    pub fn add_point_light(&mut self, position: Vec3, intensity: Vec3) {
        self.lights.push(Light::Point { position, intensity });
    }

    /// Indices of the triangles whose material is an [`Emitter`](MaterialKind::Emitter).
    pub fn emissive_triangles(&self) -> Vec<u32> {
        (0..self.triangles.len() as u32)
            .filter(|&i| {
                self.materials.get(self.triangles[i as usize].material as usize).is_some_and(|m| m.is_emitter())
            })
            .collect()
    }

    /// Every material in GPU layout, in order.
    pub fn gpu_materials(&self) -> Vec<GpuMaterial> {
        self.materials.iter().map(Material::to_gpu).collect()
    }

    /// The geometric (face) normal of triangle `i`: `normalize((p1 - p0) × (p2 - p0))`.
    pub fn face_normal(&self, i: u32) -> Option<Vec3> {
        let [p0, p1, p2] = self.triangle(i)?;
        let n: DVec3 = (p1 - p0).as_dvec3().cross((p2 - p0).as_dvec3());
        Some(n.normalize_or_zero().as_vec3())
    }
}

/// A scene ready to render: the scene, its triangles and the structure its rays walk.
#[derive(Clone, Debug)]
pub struct Prepared {
    /// The scene.
    pub scene: Scene,
    /// `scene.triangle_positions()`.
    pub tris: Vec<[Vec3; 3]>,
    /// The BVH or kd-tree over `tris`, which every ray of the renderers (CPU and GPU) walks.
    pub structure: Structure,
    /// Offset of secondary ray origins along the normal: see [`ray_offset`].
    pub eps: f32,
}

impl Prepared {
    /// Builds the structure `opts` names over `scene`'s triangles (by default a BVH; a
    /// kd-tree with `StructureOptions::KdTree`).
    ///
    /// ```
    /// use glam::Vec3;
    /// use lumbre_kdtree::{BuildOptions, Ray, Structure, StructureOptions};
    /// let scene = lumbre_raytrace::Scene::from_triangles(&[[Vec3::ZERO, Vec3::X, Vec3::Y]]);
    /// let p = lumbre_raytrace::Prepared::new(scene.clone(), &Default::default());
    /// assert!(matches!(p.structure, Structure::Bvh(_)));
    /// let kd = lumbre_raytrace::Prepared::new(scene, &StructureOptions::KdTree(BuildOptions::default()));
    /// let ray = Ray::new(Vec3::new(0.2, 0.2, 1.0), -Vec3::Z);
    /// assert_eq!(p.closest_hit(&ray, f32::INFINITY, &Default::default()).map(|h| h.t), Some(1.0));
    /// assert_eq!(kd.closest_hit(&ray, f32::INFINITY, &Default::default()).map(|h| h.t), Some(1.0));
    /// ```
    pub fn new(scene: Scene, opts: &StructureOptions) -> Prepared {
        let tris = scene.triangle_positions();
        let structure = Structure::build(&tris, opts);
        let eps = ray_offset(scene.bounds);
        Prepared { scene, tris, structure, eps }
    }

    /// The closest hit of `ray` in `(0, t_max)`.
    pub fn closest_hit(&self, ray: &Ray, t_max: f32, query: &QueryOptions) -> Option<Hit> {
        self.structure.closest_hit(&self.tris, ray, 0.0, t_max, query)
    }

    /// Whether `ray` hits anything in `(0, t_max)`.
    pub fn any_hit(&self, ray: &Ray, t_max: f32, query: &QueryOptions) -> bool {
        self.structure.any_hit(&self.tris, ray, 0.0, t_max, query)
    }

    /// The shading normal of triangle `tri` at barycentric `(u, v)`: its corners' normals
    /// interpolated and normalized, or the geometric normal `ng` when it has none or they
    /// cancel (the twin of `shade_normal` in `raytrace/scene.wgsl`).
    ///
    /// ```
    /// use glam::Vec3;
    /// use lumbre_raytrace::{Prepared, Scene};
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/scenes/CornellBox-Diffuse.obj");
    /// let scene = Scene::load(path.as_ref())?.0;
    /// let p = Prepared::new(scene, &Default::default());
    /// // The box has no vertex normals: the geometric normal is the shading normal.
    /// assert_eq!(p.shade_normal(0, 0.2, 0.3, Vec3::Y), Vec3::Y);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn shade_normal(&self, tri: u32, u: f32, v: f32, ng: Vec3) -> Vec3 {
        let t = self.scene.triangles[tri as usize];
        if !t.has_normals() {
            return ng;
        }
        let [a, b, c] = t.n.map(|i| self.scene.normals[i as usize]);
        let n = a * (1.0 - u - v) + b * u + c * v;
        let len = n.length();
        if len > 0.0 { n / len } else { ng }
    }
}

/// How far secondary rays start off a surface, for a scene with these bounds: `1e-4` of the
/// bounds' diagonal, and at least `2^-20` of the largest coordinate's magnitude (eight ulps:
/// a hit point computed in f32 is off by a few ulps of its coordinates). Relative to the
/// scene, so images do not depend on its scale or position.
///
/// ```
/// use glam::Vec3;
/// use lumbre_raytrace::twin::ray_offset;
/// assert_eq!(ray_offset((Vec3::ZERO, Vec3::new(3.0, 4.0, 0.0))), 5.0 * 1e-4);
/// let tiny = ray_offset((Vec3::ZERO, Vec3::splat(1e-9)));
/// assert!(tiny > 0.0 && tiny < 1e-12);
/// let far = ray_offset((Vec3::splat(1e6), Vec3::splat(1e6 + 1.0)));
/// assert!(far >= 1e6 / 1048576.0);
/// ```
pub fn ray_offset(bounds: (Vec3, Vec3)) -> f32 {
    let (lo, hi) = bounds;
    let magnitude = lo.abs().max(hi.abs()).max_element();
    ((hi - lo).length() * 1e-4).max(magnitude / 1_048_576.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn degenerate_detection() {
        assert!(degenerate([Vec3::ZERO, Vec3::ZERO, Vec3::X]));
        assert!(degenerate([Vec3::ZERO, Vec3::X, Vec3::X * 2.0]));
        assert!(!degenerate([Vec3::ZERO, Vec3::X, Vec3::Y * 1e-3]));
        assert!(!degenerate([Vec3::splat(1e6), Vec3::splat(1e6) + Vec3::X, Vec3::splat(1e6) + Vec3::Y]));
    }

    #[test]
    fn sample_is_uniform_and_on_the_triangle() {
        let tri = [Vec3::ZERO, Vec3::new(2.0, 0.0, 0.0), Vec3::new(0.0, 2.0, 0.0)];
        let scene = Scene::from_triangles(&[tri]);
        let light = Light::Area { triangle: 0, emission: Vec3::ONE, area: 2.0 };
        let n = 64;
        let mut mean = Vec3::ZERO;
        for i in 0..n {
            for j in 0..n {
                let (p, nrm, pdf) = light.sample(&scene, (i as f32 + 0.5) / n as f32, (j as f32 + 0.5) / n as f32);
                assert!(p.x >= 0.0 && p.y >= 0.0 && p.x + p.y <= 2.0 + 1e-6);
                assert_eq!((nrm, pdf), (Vec3::Z, 0.5));
                mean += p;
            }
        }
        mean /= (n * n) as f32;
        // The centroid of a uniform distribution on the triangle is (2/3, 2/3, 0).
        assert!((mean - Vec3::new(2.0 / 3.0, 2.0 / 3.0, 0.0)).length() < 1e-2, "{mean}");
        let bad = Light::Area { triangle: 9, emission: Vec3::ONE, area: 1.0 };
        assert_eq!(bad.sample(&scene, 0.5, 0.5).2, 0.0);
    }
}
