//! Composing scenes: meshes under affine transforms, quads and boxes, validated into one
//! [`Scene`] by the same code that validates loaded files.

use glam::{Affine3A, Mat3A, Vec3};

use crate::material::Material;
use crate::scene::{LoadReport, RawTri, Scene};

/// The faces of a box in the order [`SceneBuilder::add_box_faces`] takes their materials:
/// the faces whose outward normals are `-x`, `+x`, `-y`, `+y`, `-z`, `+z`.
///
/// ```
/// use lumbre_raytrace::BOX_FACES;
/// assert_eq!(BOX_FACES[3], glam::Vec3::Y); // the top face
/// ```
pub const BOX_FACES: [Vec3; 6] = [Vec3::NEG_X, Vec3::X, Vec3::NEG_Y, Vec3::Y, Vec3::NEG_Z, Vec3::Z];

/// Builds a [`Scene`] from pieces: copies of other scenes' triangles under affine
/// transforms, quads and boxes.
///
/// Pieces are kept as given until [`build`](SceneBuilder::build), which validates them as
/// [`Scene::load_obj`] validates a file: triangles with non-finite corners, no area or
/// indices out of range are dropped (and counted by
/// [`build_report`](SceneBuilder::build_report)), unused positions and normals are left out,
/// the bounds are computed and every triangle with an emitting material becomes a
/// [`Light::Area`](crate::Light::Area). Materials are added once: a material equal to one
/// already added (name included) is shared; a different material under a name already taken
/// is renamed `name-2`, `name-3`, ..., so every material of the scene has its own name (as an
/// MTL file needs). Triangles keep the order in which they were added.
///
/// ```
/// use glam::{Affine3A, Vec3};
/// use lumbre_raytrace::{Material, MaterialKind, SceneBuilder};
///
/// let white = Material { name: "white".into(), kd: Vec3::splat(0.7), ..Default::default() };
/// let lamp = Material { name: "lamp".into(), ke: Vec3::splat(10.0), kind: MaterialKind::Emitter, ..Default::default() };
/// let mut builder = SceneBuilder::new();
/// builder.add_box(Vec3::ZERO, Vec3::splat(2.0), white.clone(), true); // a room, faces inward
/// // A lamp just below the ceiling, facing down (front side = edge_u x edge_v = -y).
/// builder.add_quad(Vec3::new(0.8, 1.99, 0.8), Vec3::X * 0.4, Vec3::Z * 0.4, lamp);
/// let scene = builder.build();
/// assert_eq!(scene.triangles.len(), 14);
/// assert_eq!(scene.lights.len(), 2);
/// assert_eq!(scene.face_normal(12), Some(Vec3::NEG_Y));
/// assert_eq!(scene.materials.len(), 2);
/// assert_eq!(scene.bounds, (Vec3::ZERO, Vec3::splat(2.0)));
/// # let _ = Affine3A::IDENTITY;
/// ```
#[derive(Default)]
pub struct SceneBuilder {
    positions: Vec<Vec3>,
    normals: Vec<Vec3>,
    triangles: Vec<RawTri>,
    materials: Vec<Material>,
    warnings: Vec<String>,
}

impl std::fmt::Debug for SceneBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SceneBuilder")
            .field("positions", &self.positions.len())
            .field("normals", &self.normals.len())
            .field("triangles", &self.triangles.len())
            .field("materials", &self.materials.len())
            .finish()
    }
}

impl SceneBuilder {
    /// An empty builder.
    ///
    /// ```
    /// let scene = lumbre_raytrace::SceneBuilder::new().build();
    /// assert!(scene.triangles.is_empty() && scene.lights.is_empty());
    /// ```
    pub fn new() -> SceneBuilder {
        SceneBuilder::default()
    }

    /// Triangles added so far (before validation).
    ///
    /// ```
    /// use glam::Vec3;
    /// let mut builder = lumbre_raytrace::SceneBuilder::new();
    /// builder.add_quad(Vec3::ZERO, Vec3::X, Vec3::Y, Default::default());
    /// assert_eq!(builder.triangle_count(), 2);
    /// ```
    pub fn triangle_count(&self) -> usize {
        self.triangles.len()
    }

    /// The index of `material` in the scene being built: an equal material's, else a new
    /// one's (renamed if its name is taken, see the type's documentation).
    fn material(&mut self, mut material: Material) -> u32 {
        if let Some(i) = self.materials.iter().position(|m| *m == material) {
            return i as u32;
        }
        if self.materials.iter().any(|m| m.name == material.name) {
            // The first of `name-2`, `name-3`, ... that is free or names this very material.
            let base = material.name.clone();
            for k in 2.. {
                material.name = format!("{base}-{k}");
                match self.materials.iter().position(|m| m.name == material.name) {
                    None => break,
                    Some(i) if self.materials[i] == material => return i as u32,
                    Some(_) => {}
                }
            }
        }
        self.materials.push(material);
        (self.materials.len() - 1) as u32
    }

    /// Adds a copy of every triangle of `mesh` with its corners moved by `transform`: positions
    /// by the affine map, shading normals by the inverse transpose of its linear part. A
    /// transform that mirrors (negative determinant) also swaps two corners of every triangle,
    /// so each triangle's front side (see [`Scene::face_normal`]) stays on the same side of
    /// the surface. The triangles take `material` when given, else their own materials from
    /// `mesh` (every material of `mesh` is added, in order; a triangle whose material index is
    /// out of range gets the default material, with a warning). Point lights of `mesh` are
    /// not copied: a built scene's lights are its emitting triangles.
    ///
    /// A [`Mat4`](glam::Mat4) without projection converts with `Affine3A::from_mat4`.
    ///
    /// ```
    /// use glam::{Affine3A, Vec3};
    /// use lumbre_raytrace::{Scene, SceneBuilder};
    /// let tri = Scene::from_triangles(&[[Vec3::ZERO, Vec3::X, Vec3::Y]]);
    /// let mut builder = SceneBuilder::new();
    /// builder.add_mesh(&tri, Affine3A::IDENTITY, None);
    /// builder.add_mesh(&tri, Affine3A::from_translation(Vec3::Z * 2.0), None);
    /// // A mirror image in x: the face still looks towards +z.
    /// builder.add_mesh(&tri, Affine3A::from_scale(Vec3::new(-1.0, 1.0, 1.0)), None);
    /// let scene = builder.build();
    /// assert_eq!(scene.triangles.len(), 3);
    /// assert_eq!(scene.bounds, (Vec3::new(-1.0, 0.0, 0.0), Vec3::new(1.0, 1.0, 2.0)));
    /// assert_eq!(scene.face_normal(2), Some(Vec3::Z));
    /// assert_eq!(scene.materials.len(), 1); // the same default material, shared
    /// ```
    pub fn add_mesh(&mut self, mesh: &Scene, transform: Affine3A, material: Option<Material>) -> &mut SceneBuilder {
        let overridden = material.map(|m| self.material(m));
        let materials: Vec<u32> = match overridden {
            Some(_) => Vec::new(),
            None => mesh.materials.iter().map(|m| self.material(m.clone())).collect(),
        };
        let mut fallback: Option<u32> = None;
        let mut bad_materials = 0usize;
        // Shading normals by the inverse transpose; `build` normalises them.
        let normal_matrix: Mat3A = transform.matrix3.inverse().transpose();
        let flip = transform.matrix3.determinant() < 0.0;
        let (pbase, nbase) = (self.positions.len(), self.normals.len());
        self.positions.extend(mesh.positions.iter().map(|&p| transform.transform_point3(p)));
        self.normals.extend(mesh.normals.iter().map(|&n| normal_matrix * n));
        self.triangles.reserve(mesh.triangles.len());
        for t in &mesh.triangles {
            let material = match overridden.or_else(|| materials.get(t.material as usize).copied()) {
                Some(m) => m,
                None => {
                    bad_materials += 1;
                    *fallback.get_or_insert_with(|| self.material(Material::default()))
                }
            };
            let order = if flip { [0, 2, 1] } else { [0, 1, 2] };
            // Out-of-range indices stay out of range here, for `build` to drop and count.
            let v = order.map(|k| pbase.saturating_add(t.v[k] as usize));
            let n = t.has_normals().then(|| order.map(|k| nbase.saturating_add(t.n[k] as usize)));
            self.triangles.push(RawTri { v, n, material });
        }
        if bad_materials > 0 {
            self.warnings.push(format!(
                "{bad_materials} triangle(s) of a mesh with {} material(s) had a material index out of range; \
                 they use the default material",
                mesh.materials.len()
            ));
        }
        self
    }

    /// Adds the parallelogram with corners `corner`, `corner + edge_u`,
    /// `corner + edge_u + edge_v` and `corner + edge_v` as two triangles, counter-clockwise seen
    /// from its front side, whose normal is `edge_u × edge_v` (for an emitter: the side it
    /// lights). No shading normals: the quad is flat.
    ///
    /// ```
    /// use glam::Vec3;
    /// use lumbre_raytrace::{Material, SceneBuilder};
    /// let mut builder = SceneBuilder::new();
    /// builder.add_quad(Vec3::ZERO, Vec3::X * 2.0, Vec3::Y, Material::default());
    /// let scene = builder.build();
    /// assert_eq!(scene.triangles.len(), 2);
    /// assert_eq!((scene.face_normal(0), scene.face_normal(1)), (Some(Vec3::Z), Some(Vec3::Z)));
    /// ```
    pub fn add_quad(&mut self, corner: Vec3, edge_u: Vec3, edge_v: Vec3, material: Material) -> &mut SceneBuilder {
        let material = self.material(material);
        let base = self.positions.len();
        self.positions.extend([corner, corner + edge_u, corner + edge_u + edge_v, corner + edge_v]);
        for v in [[0, 1, 2], [0, 2, 3]] {
            self.triangles.push(RawTri { v: v.map(|k| base + k), n: None, material });
        }
        self
    }

    /// Adds the axis-aligned box between `min` and `max` (taken corner-wise, so the two may be
    /// given in any order) as six quads (see [`add_quad`](SceneBuilder::add_quad)) of one
    /// material, facing out of the box, or into it when `inward` (a room). A box flat in
    /// one axis has degenerate faces, which [`build`](SceneBuilder::build) drops.
    ///
    /// ```
    /// use glam::Vec3;
    /// use lumbre_raytrace::{Material, SceneBuilder};
    /// let mut builder = SceneBuilder::new();
    /// builder.add_box(Vec3::ZERO, Vec3::ONE, Material::default(), false);
    /// let scene = builder.build();
    /// assert_eq!(scene.triangles.len(), 12);
    /// // The first face is the -x one; outward, its normal is -x.
    /// assert_eq!(scene.face_normal(0), Some(Vec3::NEG_X));
    /// ```
    pub fn add_box(&mut self, min: Vec3, max: Vec3, material: Material, inward: bool) -> &mut SceneBuilder {
        let faces = [(); 6].map(|_| material.clone());
        self.add_box_faces(min, max, faces, inward)
    }

    /// [`add_box`](SceneBuilder::add_box) with a material per face, in the order of
    /// [`BOX_FACES`] (`-x`, `+x`, `-y`, `+y`, `-z`, `+z`): a room with coloured walls.
    ///
    /// ```
    /// use glam::Vec3;
    /// use lumbre_raytrace::{Material, SceneBuilder};
    /// let grey = |name: &str, kd: f32| Material { name: name.into(), kd: Vec3::splat(kd), ..Default::default() };
    /// let faces = [grey("left", 0.1), grey("right", 0.2), grey("floor", 0.3), grey("ceiling", 0.4), grey("back", 0.5), grey("front", 0.6)];
    /// let mut builder = SceneBuilder::new();
    /// builder.add_box_faces(Vec3::ZERO, Vec3::ONE, faces, true);
    /// let scene = builder.build();
    /// // The floor (third face) of a room faces up.
    /// assert_eq!(scene.face_normal(4), Some(Vec3::Y));
    /// assert_eq!(scene.materials[scene.triangles[4].material as usize].name, "floor");
    /// ```
    pub fn add_box_faces(&mut self, min: Vec3, max: Vec3, materials: [Material; 6], inward: bool) -> &mut SceneBuilder {
        let (lo, hi) = (min.min(max), min.max(max));
        let d = hi - lo;
        let (x, y, z) = (Vec3::X * d.x, Vec3::Y * d.y, Vec3::Z * d.z);
        // (corner, edge_u, edge_v) with edge_u x edge_v along the outward normal of BOX_FACES.
        let faces = [
            (lo, z, y),
            (Vec3::new(hi.x, lo.y, lo.z), y, z),
            (lo, x, z),
            (Vec3::new(lo.x, hi.y, lo.z), z, x),
            (lo, y, x),
            (Vec3::new(lo.x, lo.y, hi.z), x, y),
        ];
        for ((corner, u, v), material) in faces.into_iter().zip(materials) {
            let (u, v) = if inward { (v, u) } else { (u, v) };
            self.add_quad(corner, u, v, material);
        }
        self
    }

    /// The scene: validated (see the type's documentation), with its bounds and an area
    /// light per emitting triangle. Call [`Scene::check_size`] to know whether the f32 ray
    /// tracers can handle its size.
    ///
    /// ```
    /// use glam::Vec3;
    /// use lumbre_raytrace::{Material, SceneBuilder};
    /// let mut builder = SceneBuilder::new();
    /// builder.add_quad(Vec3::ZERO, Vec3::X, Vec3::Y, Material::default());
    /// assert_eq!(builder.build().triangles.len(), 2);
    /// ```
    pub fn build(self) -> Scene {
        self.build_report().0
    }

    /// [`build`](SceneBuilder::build), with the report of what was kept and dropped, and the
    /// warnings.
    ///
    /// ```
    /// use glam::Vec3;
    /// use lumbre_raytrace::{Material, SceneBuilder};
    /// let mut builder = SceneBuilder::new();
    /// builder.add_quad(Vec3::ZERO, Vec3::X, Vec3::X * 2.0, Material::default()); // no area
    /// builder.add_quad(Vec3::ZERO, Vec3::X, Vec3::Y * f32::NAN, Material::default());
    /// let (scene, report) = builder.build_report();
    /// assert!(scene.triangles.is_empty());
    /// assert_eq!((report.dropped_degenerate, report.dropped_non_finite), (2, 2));
    /// ```
    pub fn build_report(self) -> (Scene, LoadReport) {
        let mut report = LoadReport { warnings: self.warnings, ..Default::default() };
        let scene = Scene::assemble(&self.positions, &self.normals, &self.triangles, self.materials, &mut report);
        (scene, report)
    }
}

/// The transform that stands a mesh whose bounds are `bounds` upright at `base`: scaled
/// uniformly to `height` (in y), turned by `yaw_deg` degrees about +y (counter-clockwise
/// seen from above), with the centre of its bounds' bottom face at `base`. For
/// [`SceneBuilder::add_mesh`]: placing models of any size and origin on a floor.
///
/// ```
/// use glam::Vec3;
/// use lumbre_raytrace::stand_on;
/// let bounds = (Vec3::new(10.0, 5.0, 10.0), Vec3::new(12.0, 9.0, 11.0)); // 4 high
/// let t = stand_on(bounds, Vec3::new(0.0, 1.0, 0.0), 2.0, 90.0);
/// assert!((t.transform_point3(Vec3::new(11.0, 5.0, 10.5)) - Vec3::Y).length() < 1e-6);
/// assert!((t.transform_point3(Vec3::new(11.0, 9.0, 10.5)) - Vec3::new(0.0, 3.0, 0.0)).length() < 1e-6);
/// // Turned by 90 degrees: +x becomes -z.
/// assert!((t.transform_point3(Vec3::new(12.0, 5.0, 10.5)) - Vec3::new(0.0, 1.0, -0.5)).length() < 1e-6);
/// ```
pub fn stand_on(bounds: (Vec3, Vec3), base: Vec3, height: f32, yaw_deg: f32) -> Affine3A {
    let (lo, hi) = bounds;
    let bottom = Vec3::new(0.5 * (lo.x + hi.x), lo.y, 0.5 * (lo.z + hi.z));
    let scale = height / (hi.y - lo.y);
    Affine3A::from_translation(base)
        * Affine3A::from_rotation_y(yaw_deg.to_radians())
        * Affine3A::from_scale(Vec3::splat(scale))
        * Affine3A::from_translation(-bottom)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::material::MaterialKind;
    use crate::scene::{Light, NO_NORMAL};

    fn diffuse(name: &str, kd: f32) -> Material {
        Material { name: name.into(), kd: Vec3::splat(kd), ..Default::default() }
    }

    fn emitter(name: &str, ke: Vec3) -> Material {
        Material { name: name.into(), ke, kind: MaterialKind::Emitter, ..Default::default() }
    }

    fn cornell() -> Scene {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/scenes/CornellBox-Diffuse.obj");
        Scene::load_obj(path.as_ref()).unwrap().0
    }

    fn suzanne() -> Scene {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/scenes/suzanne.obj");
        Scene::load_obj(path.as_ref()).unwrap().0
    }

    #[test]
    fn identity_copy_reproduces_the_scene() {
        for scene in [cornell(), suzanne()] {
            let mut builder = SceneBuilder::new();
            builder.add_mesh(&scene, Affine3A::IDENTITY, None);
            let mut copy = builder.build();
            // Normalising a unit normal again may move its last bit.
            assert_eq!(copy.normals.len(), scene.normals.len());
            for (a, b) in copy.normals.iter().zip(&scene.normals) {
                assert!((*a - *b).abs().max_element() <= 2.0 * f32::EPSILON, "{a} vs {b}");
            }
            copy.normals.clone_from(&scene.normals);
            assert_eq!(copy, scene);
        }
    }

    #[test]
    fn transforms_move_positions_and_normals() {
        let mesh = suzanne();
        let t = Affine3A::from_translation(Vec3::new(1.0, -2.0, 3.0))
            * Affine3A::from_rotation_x(0.7)
            * Affine3A::from_scale(Vec3::new(2.0, 0.5, 1.5));
        let mut builder = SceneBuilder::new();
        builder.add_mesh(&mesh, t, None);
        let moved = builder.build();
        assert_eq!(moved.triangles.len(), mesh.triangles.len());
        let normal_matrix = t.matrix3.inverse().transpose();
        for (a, b) in mesh.triangles.iter().zip(&moved.triangles) {
            for k in 0..3 {
                let want = t.transform_point3(mesh.positions[a.v[k] as usize]);
                assert_eq!(moved.positions[b.v[k] as usize], want);
                assert_ne!(b.n[k], NO_NORMAL);
                let n = moved.normals[b.n[k] as usize];
                let want = (normal_matrix * mesh.normals[a.n[k] as usize]).normalize();
                assert!((n - want).length() < 1e-6, "{n} vs {want}");
                assert!((n.length() - 1.0).abs() < 1e-6);
            }
        }
        // A shading normal stays perpendicular to the transformed surface: compare the face
        // normals, which the transform moves the same way, with the mean corner normal.
        let mut agree = 0;
        for i in 0..moved.triangles.len() as u32 {
            let f = moved.face_normal(i).unwrap();
            let b = &moved.triangles[i as usize];
            let mean: Vec3 = b.n.iter().map(|&k| moved.normals[k as usize]).sum();
            agree += usize::from(f.dot(mean) > 0.0);
        }
        assert!(agree * 100 >= moved.triangles.len() * 95, "{agree} of {}", moved.triangles.len());
        let (lo, hi) = moved.bounds;
        assert!(moved.positions.iter().all(|p| p.cmpge(lo).all() && p.cmple(hi).all()));
        assert!(moved.positions.contains(&lo.min(hi)) || lo.cmple(hi).all());
    }

    #[test]
    fn mirroring_keeps_front_sides() {
        let mesh = cornell();
        for scale in [Vec3::new(-1.0, 1.0, 1.0), Vec3::new(1.0, -2.0, 1.0), Vec3::new(-1.0, -1.0, -1.0)] {
            let t = Affine3A::from_scale(scale);
            let mut builder = SceneBuilder::new();
            builder.add_mesh(&mesh, t, None);
            let mirrored = builder.build();
            for i in 0..mesh.triangles.len() as u32 {
                let want = (t.matrix3.inverse().transpose() * mesh.face_normal(i).unwrap()).normalize();
                let got = mirrored.face_normal(i).unwrap();
                assert!((got - want).length() < 1e-5, "{scale}: triangle {i}: {got} vs {want}");
            }
            // The light still faces down, into the box, when y is not mirrored.
            let light = mirrored.emissive_triangles()[0];
            let down = mirrored.face_normal(light).unwrap().y < 0.0;
            assert_eq!(down, scale.y > 0.0, "{scale}");
        }
    }

    #[test]
    fn quad_and_box_winding() {
        let mut builder = SceneBuilder::new();
        builder.add_quad(Vec3::new(1.0, 2.0, 3.0), Vec3::Z, Vec3::X * 2.0, diffuse("q", 0.5));
        let scene = builder.build();
        assert_eq!(
            scene.triangle(0).unwrap(),
            [Vec3::new(1.0, 2.0, 3.0), Vec3::new(1.0, 2.0, 4.0), Vec3::new(3.0, 2.0, 4.0)]
        );
        // Z x X = Y: the front side is up, both triangles.
        assert_eq!((scene.face_normal(0), scene.face_normal(1)), (Some(Vec3::Y), Some(Vec3::Y)));
        let area: f32 =
            scene.triangle_positions().iter().map(|p| 0.5 * (p[1] - p[0]).cross(p[2] - p[0]).length()).sum();
        assert_eq!(area, 2.0);

        for inward in [false, true] {
            let (lo, hi) = (Vec3::new(-1.0, 0.0, -2.0), Vec3::new(1.0, 3.0, 2.0));
            let mut builder = SceneBuilder::new();
            builder.add_box(hi, lo, diffuse("box", 0.5), inward); // corners in either order
            let scene = builder.build();
            assert_eq!(scene.bounds, (lo, hi));
            assert_eq!(scene.triangles.len(), 12);
            let centre = (lo + hi) * 0.5;
            for i in 0..12u32 {
                let n = scene.face_normal(i).unwrap();
                assert_eq!(n, BOX_FACES[i as usize / 2] * if inward { -1.0 } else { 1.0 });
                let p = scene.triangle(i).unwrap();
                let c = (p[0] + p[1] + p[2]) / 3.0;
                // Outward faces look away from the centre, inward ones towards it.
                assert_eq!((c - centre).dot(n) > 0.0, !inward, "face {i}");
            }
        }
    }

    #[test]
    fn lights_are_made_for_emitters() {
        let mut builder = SceneBuilder::new();
        builder.add_box(Vec3::ZERO, Vec3::splat(2.0), diffuse("wall", 0.6), true);
        builder.add_quad(
            Vec3::new(0.5, 1.9, 0.5),
            Vec3::X * 0.2,
            Vec3::Z * 0.5,
            emitter("warm", Vec3::new(8.0, 6.0, 4.0)),
        );
        builder.add_quad(Vec3::new(0.1, 0.5, 0.5), Vec3::Y, Vec3::Z, emitter("cool", Vec3::new(1.0, 2.0, 4.0)));
        let scene = builder.build();
        assert_eq!(scene.emissive_triangles(), vec![12, 13, 14, 15]);
        let lights: Vec<(u32, Vec3, f32)> = scene
            .lights
            .iter()
            .map(|l| match *l {
                Light::Area { triangle, emission, area } => (triangle, emission, area),
                Light::Point { .. } => panic!("a point light"),
            })
            .collect();
        let warm = Vec3::new(8.0, 6.0, 4.0);
        let cool = Vec3::new(1.0, 2.0, 4.0);
        let (triangles, emissions): (Vec<u32>, Vec<Vec3>) = lights.iter().map(|l| (l.0, l.1)).unzip();
        assert_eq!(triangles, [12, 13, 14, 15]);
        assert_eq!(emissions, [warm, warm, cool, cool]);
        for (l, area) in lights.iter().zip([0.05, 0.05, 0.5, 0.5]) {
            assert!((l.2 - area).abs() < 1e-6, "{l:?}");
        }
        // The ceiling lamp faces down, the wall lamp faces +x: both into the room.
        assert_eq!(scene.face_normal(12), Some(Vec3::NEG_Y));
        assert_eq!(scene.face_normal(14), Some(Vec3::X));
    }

    #[test]
    fn material_indices() {
        let mesh = cornell();
        let red = diffuse("red", 0.3);
        let mut builder = SceneBuilder::new();
        builder.add_box(Vec3::splat(5.0), Vec3::splat(6.0), red.clone(), false);
        builder.add_mesh(&mesh, Affine3A::IDENTITY, None);
        builder.add_mesh(&mesh, Affine3A::from_translation(Vec3::X * 3.0), Some(red.clone()));
        // Same name, different albedo: renamed.
        builder.add_quad(Vec3::ZERO, Vec3::X, Vec3::Z, diffuse("red", 0.9));
        builder.add_quad(Vec3::ZERO, Vec3::X, Vec3::Z, diffuse("red", 0.9));
        let scene = builder.build();
        let names: Vec<&str> = scene.materials.iter().map(|m| m.name.as_str()).collect();
        let mut want = vec!["red"];
        want.extend(mesh.materials.iter().map(|m| m.name.as_str()));
        want.push("red-2");
        assert_eq!(names, want);
        let n = mesh.triangles.len();
        assert_eq!(scene.triangles.len(), 12 + 2 * n + 4);
        assert!(scene.triangles[..12].iter().all(|t| t.material == 0));
        for (a, b) in mesh.triangles.iter().zip(&scene.triangles[12..12 + n]) {
            assert_eq!(scene.materials[b.material as usize], mesh.materials[a.material as usize]);
        }
        assert!(scene.triangles[12 + n..12 + 2 * n].iter().all(|t| t.material == 0));
        let last = mesh.materials.len() as u32 + 1;
        assert!(scene.triangles[12 + 2 * n..].iter().all(|t| t.material == last));
        assert_eq!(scene.materials[last as usize].kd, Vec3::splat(0.9));
        // The override also replaces the emitter: only the first copy's light remains.
        assert_eq!(scene.lights.len(), 2);
    }

    #[test]
    fn bad_input_is_dropped_and_counted() {
        let mut mesh = Scene::from_triangles(&[[Vec3::ZERO, Vec3::X, Vec3::Y], [Vec3::ZERO, Vec3::Y, Vec3::Z]]);
        mesh.triangles[1].v[2] = 99; // out of range
        mesh.triangles[0].material = 7; // no such material
        let mut builder = SceneBuilder::new();
        builder.add_mesh(&mesh, Affine3A::IDENTITY, None);
        builder.add_mesh(&mesh, Affine3A::from_scale(Vec3::new(1.0, 0.0, 1.0)), None); // flattens
        builder.add_mesh(&mesh, Affine3A::from_translation(Vec3::splat(f32::INFINITY)), None);
        let (scene, report) = builder.build_report();
        assert_eq!(scene.triangles.len(), 1);
        assert_eq!((report.dropped_out_of_range, report.dropped_degenerate, report.dropped_non_finite), (3, 1, 1));
        assert!(report.warnings.iter().any(|w| w.contains("out of range")), "{:?}", report.warnings);
        assert_eq!(scene.materials.len(), 1);
    }

    #[test]
    fn stand_on_places_the_bounds() {
        let mesh = suzanne();
        let t = stand_on(mesh.bounds, Vec3::new(3.0, 0.5, -1.0), 2.0, 30.0);
        let mut builder = SceneBuilder::new();
        builder.add_mesh(&mesh, t, None);
        let (lo, hi) = builder.build().bounds;
        assert!((lo.y - 0.5).abs() < 1e-5 && (hi.y - 2.5).abs() < 1e-5, "{lo} {hi}");
    }
}
