//! Scenes far from the origin, moved near it: the renderers work in f32, where a scene at 1e5
//! keeps only the ulps of its coordinates (1/128) for every hit point and ray offset. OBJ
//! positions are parsed in f64 and moved before they are rounded to f32, so a scene far from
//! the origin has the f32 geometry of the same scene near it; scenes whose positions are f32
//! in the file (glTF) are moved in f32, exactly.

use std::path::Path;

use glam::{DVec3, Vec3};

use crate::error::LoadError;
use crate::scene::{Light, LoadReport, RawTri, Scene};

/// A scene's largest coordinate may be this many powers of two above its size (the largest
/// side of its bounds) before its f64 positions, moved near the origin, are rounded more
/// coarsely than an eighth of an f32 step at its size: f64 keeps 53 bits, the f32 geometry
/// near the origin needs 24 of the size, and three are left for the rounding. Past it the
/// loader warns.
const FAR_POWERS: i32 = 53 - 24 - 3;

/// The power of two at or below `x > 0`.
fn pow2_floor(x: f64) -> f64 {
    2f64.powi(x.log2().floor() as i32)
}

/// The shift that moves bounds `(lo, hi)` near the origin: their centre, rounded to a power
/// of two no larger than a sixteenth of their largest side, and no finer than the ulp of the
/// largest coordinate in a float of `mantissa_bits` (23 for f32, 52 for f64), so that the
/// shift and the moved coordinates are exact in that float. The coarse rounding makes the
/// shift of a copy moved by a multiple of that power of two the shift of the original plus
/// the move: both copies then have the same geometry after the shift, bit for bit.
pub(crate) fn centre_shift(lo: DVec3, hi: DVec3, mantissa_bits: i32) -> DVec3 {
    let magnitude = lo.abs().max(hi.abs()).max_element();
    if !magnitude.is_finite() || magnitude == 0.0 {
        return DVec3::ZERO;
    }
    let ulp = pow2_floor(magnitude) * 2f64.powi(-mantissa_bits);
    let side = (hi - lo).max_element();
    let grid = if side > 0.0 { pow2_floor(side / 16.0).max(ulp) } else { ulp };
    ((lo + hi) * 0.5 / grid).round() * grid
}

/// The shift of an OBJ file's f64 positions: [`centre_shift`] of the corners of the triangles
/// whose corners are all in range and finite in f32 (the others are dropped). Adds a warning
/// naming `path` when the scene is so far from the origin for its size that f64 has rounded
/// its positions more coarsely than the f32 geometry near the origin resolves
/// ([`FAR_POWERS`]).
pub(crate) fn obj_shift(path: &Path, raw: &[DVec3], tris: &[RawTri], warnings: &mut Vec<String>) -> DVec3 {
    let mut bounds: Option<(DVec3, DVec3)> = None;
    for t in tris {
        let Some(corners) = t.v.iter().map(|&i| raw.get(i).copied()).collect::<Option<Vec<DVec3>>>() else {
            continue;
        };
        if !corners.iter().all(|p| p.as_vec3().is_finite()) {
            continue;
        }
        for p in corners {
            bounds = Some(bounds.map_or((p, p), |(lo, hi)| (lo.min(p), hi.max(p))));
        }
    }
    let Some((lo, hi)) = bounds else { return DVec3::ZERO };
    let (magnitude, side) = (lo.abs().max(hi.abs()).max_element(), (hi - lo).max_element());
    if side > 0.0 && magnitude > side * 2f64.powi(FAR_POWERS) {
        let step = pow2_floor(magnitude) * 2f64.powi(-52);
        warnings.push(format!(
            "{}: coordinates reach {} for a scene {} across ({} times its size): f64 rounds its \
             positions to steps of {}, {} of its size, coarser than the f32 geometry near the origin \
             resolves; move the model nearer the origin in the file",
            path.display(),
            short(magnitude),
            short(side),
            short(magnitude / side),
            short(step),
            short(step / side),
        ));
    }
    centre_shift(lo, hi, 52)
}

/// `x` to three significant digits, in exponent form: `1e15`, `2.5e-3`.
fn short(x: f64) -> String {
    let s = format!("{x:.2e}");
    let (mantissa, exponent) = s.split_once('e').unwrap_or((&s, "0"));
    format!("{}e{exponent}", mantissa.trim_end_matches('0').trim_end_matches('.'))
}

/// `raw` moved by `-shift` and rounded to f32; a position outside f32's range before the
/// move becomes NaN, so that its triangles are dropped as non-finite as they would be
/// without the move.
pub(crate) fn shifted_f32(raw: &[DVec3], shift: DVec3) -> Vec<Vec3> {
    raw.iter().map(|&p| if p.as_vec3().is_finite() { (p - shift).as_vec3() } else { Vec3::NAN }).collect()
}

impl Scene {
    /// Moves the scene (positions, bounds, point lights and cameras) so that the centre of
    /// its bounds is near the origin, and returns the shift subtracted; move a camera of the
    /// original scene by the same. The renderers work in f32, where a scene far from the
    /// origin keeps only the ulps of its coordinates (1/128 at 1e5) for every hit point and
    /// offset: the Cornell box moved by 1e5 rendered 5-50% darker. The shift is the centre
    /// rounded to a power of two at most a sixteenth of the scene's largest side and at
    /// least the ulp of its largest coordinate, so every moved coordinate is exact, and the
    /// same scene moved by a multiple of that power of two gets the same positions.
    ///
    /// The f32 positions of a scene far from the origin are already rounded: loading with
    /// [`Scene::load_recentred`] moves OBJ positions in f64, before they are rounded.
    ///
    /// ```
    /// use glam::Vec3;
    /// use lumbre_raytrace::Scene;
    /// let far = Vec3::splat(1e5);
    /// let mut scene = Scene::from_triangles(&[[far, far + Vec3::X, far + Vec3::Y]]);
    /// let shift = scene.recentre();
    /// assert_eq!(shift, Vec3::new(100000.5, 100000.5, 1e5));
    /// assert_eq!(scene.positions[1] + shift, far + Vec3::X); // exact
    /// assert_eq!(scene.bounds, (Vec3::new(-0.5, -0.5, 0.0), Vec3::new(0.5, 0.5, 0.0)));
    /// ```
    pub fn recentre(&mut self) -> Vec3 {
        let (lo, hi) = self.bounds;
        let shift = centre_shift(lo.as_dvec3(), hi.as_dvec3(), 23).as_vec3();
        for p in &mut self.positions {
            *p -= shift;
        }
        self.bounds = (lo - shift, hi - shift);
        for l in &mut self.lights {
            if let Light::Point { position, .. } = l {
                *position -= shift;
            }
        }
        for c in &mut self.cameras {
            c.eye -= shift;
            c.target -= shift;
        }
        shift
    }

    /// [`Scene::load`], with the scene moved near the origin: OBJ files by
    /// [`Scene::load_obj_recentred`] (in f64, before rounding to f32), glTF files by
    /// [`Scene::recentre`] (their positions are f32 in the file). Returns the shift
    /// subtracted, in f64: move what is given in the file's coordinates by it, a camera with
    /// [`Camera::parse_moved`](crate::Camera::parse_moved).
    ///
    /// ```
    /// use glam::DVec3;
    /// use lumbre_raytrace::Scene;
    /// let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/scenes/");
    /// let (obj, _, shift) = Scene::load_recentred(format!("{dir}CornellBox-Diffuse.obj").as_ref()).unwrap();
    /// let (gltf, _, same) = Scene::load_recentred(format!("{dir}CornellBox-Diffuse.gltf").as_ref()).unwrap();
    /// assert_eq!((shift, same), (DVec3::Y, DVec3::Y)); // the centre (-0.01, 0.995, -0.025), rounded
    /// assert_eq!(obj.bounds, gltf.bounds);
    /// ```
    pub fn load_recentred(path: &Path) -> Result<(Scene, LoadReport, DVec3), LoadError> {
        let ext = path.extension().map(|e| e.to_string_lossy().to_ascii_lowercase());
        if ext.as_deref() == Some("obj") {
            return Scene::load_obj_recentred(path);
        }
        let (mut scene, report) = Scene::load(path)?;
        let shift = scene.recentre().as_dvec3();
        Ok((scene, report, shift))
    }

    /// [`Scene::load_obj`], with the positions parsed in f64 and moved near the origin before
    /// they are rounded to f32: by the centre of the triangles' bounds, rounded as
    /// [`Scene::recentre`] rounds it (in f64). Returns the shift subtracted. A scene far from
    /// the origin gets the f32 geometry it has near it (bit for bit when the offset and the
    /// file's coordinates are exact in f64), where reading in f32 first would round the
    /// Cornell box's coordinates to 1/16 at 1e6. A scene so far out for its size that f64
    /// itself rounds its positions more coarsely than f32 resolves them near the origin
    /// (its largest coordinate over 2^26 times its largest side) loads with a warning
    /// naming the file and both figures.
    ///
    /// ```
    /// use glam::{DVec3, Vec3};
    /// use lumbre_raytrace::Scene;
    /// let dir = std::env::temp_dir().join(format!("lumbre-recentred-doc-{}", std::process::id()));
    /// std::fs::create_dir_all(&dir).unwrap();
    /// let tri = |o: f64| format!("v {} 0 0\nv {} 0 0\nv {} 0.125 0\nf 1 2 3\n", o, o + 1.0, o + 0.25);
    /// std::fs::write(dir.join("near.obj"), tri(0.0)).unwrap();
    /// std::fs::write(dir.join("far.obj"), tri(1e7)).unwrap();
    /// let (near, _, near_shift) = Scene::load_obj_recentred(&dir.join("near.obj")).unwrap();
    /// let (far, report, shift) = Scene::load_obj_recentred(&dir.join("far.obj")).unwrap();
    /// assert_eq!(near_shift, DVec3::new(0.5, 0.0625, 0.0));
    /// assert_eq!(shift, DVec3::new(1e7 + 0.5, 0.0625, 0.0));
    /// assert_eq!(far.positions, near.positions); // in f32, 1e7 + 0.25 would be 1e7
    /// assert_eq!(far.positions[2], Vec3::new(-0.25, 0.0625, 0.0));
    /// assert!(report.warnings.is_empty());
    /// std::fs::write(dir.join("farther.obj"), tri(1e15)).unwrap();
    /// let (_, report, _) = Scene::load_obj_recentred(&dir.join("farther.obj")).unwrap();
    /// assert!(report.warnings[0].contains("farther.obj: coordinates reach 1e15 for a scene 1e0 across"));
    /// # std::fs::remove_dir_all(&dir).unwrap();
    /// ```
    pub fn load_obj_recentred(path: &Path) -> Result<(Scene, LoadReport, DVec3), LoadError> {
        let bytes = crate::read::read_input(path)?;
        Scene::load_obj_with(path, &bytes, &crate::read::read_input_io, true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shifts_are_exact_and_follow_a_moved_copy() {
        let (lo, hi) = (DVec3::new(-1.02, 0.0, -1.04), DVec3::new(1.0, 1.99, 0.99));
        assert_eq!(centre_shift(lo, hi, 52), DVec3::Y);
        let o = DVec3::splat(1e6);
        assert_eq!(centre_shift(lo + o, hi + o, 52), DVec3::Y + o);
        // Far out the shift is a multiple of the largest coordinate's ulp.
        let s = centre_shift(DVec3::splat(3e7), DVec3::splat(3e7 + 1e-3), 23);
        assert_eq!(s, DVec3::splat(3e7));
        assert_eq!(centre_shift(DVec3::ZERO, DVec3::ZERO, 52), DVec3::ZERO);
        assert_eq!(centre_shift(DVec3::splat(2.0), DVec3::splat(2.0), 52), DVec3::splat(2.0));
    }

    /// The OBJ text `obj` loaded as if it were the file `path` (its material libraries read
    /// from beside `path`), recentred.
    fn load_as(path: &str, obj: &str) -> (Scene, LoadReport, DVec3) {
        Scene::load_obj_with(Path::new(path), obj.as_bytes(), &crate::read::read_input_io, true).unwrap()
    }

    fn load(obj: &str) -> (Scene, LoadReport, DVec3) {
        load_as("t.obj", obj)
    }

    #[test]
    fn the_cornell_box_far_away_has_its_geometry_near_the_origin() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/scenes/CornellBox-Diffuse.obj");
        let text = std::fs::read_to_string(path).unwrap();
        let moved = |offset: f64| -> String {
            let line = |l: &str| match l.split_whitespace().collect::<Vec<_>>()[..] {
                ["v", x, y, z] => {
                    let [x, y, z] = [x, y, z].map(|c| c.parse::<f64>().unwrap() + offset);
                    format!("v {x} {y} {z}")
                }
                _ => l.to_owned(),
            };
            text.lines().map(line).collect::<Vec<_>>().join("\n")
        };
        let (plain, _, plain_shift) = load_as(path, &moved(0.0));
        for offset in [1e5, 1e6, -3e6] {
            let (far, report, shift) = load_as(path, &moved(offset));
            assert_eq!(shift, plain_shift + offset, "at {offset:e}");
            assert_eq!(far.triangle_positions(), plain.triangle_positions(), "at {offset:e}");
            assert!(report.warnings.is_empty(), "at {offset:e}: {:?}", report.warnings);
        }
        // At 2^40 the file's coordinates themselves are rounded to 2^-12 in f64: named.
        let (far, report, _) = load_as(path, &moved(2f64.powi(40)));
        let error =
            |(a, b): (&[Vec3; 3], &[Vec3; 3])| (0..3).map(|k| (a[k] - b[k]).abs().max_element()).fold(0.0, f32::max);
        let worst = far.triangle_positions().iter().zip(&plain.triangle_positions()).map(error).fold(0.0, f32::max);
        assert!(worst > 0.0 && worst <= 2f32.powi(-13), "{worst}");
        assert!(report.warnings[0].contains("steps of 2.44e-4"), "{:?}", report.warnings);
        // Read in f32, the box at 1e6 had its light in the ceiling's plane; in f64 it stays below.
        let (far, _, _) = load_as(path, &moved(1e6));
        let light = far.emissive_triangles()[0];
        let ceiling = far.bounds.1.y;
        assert!(far.triangle(light).unwrap().iter().all(|p| p.y < ceiling), "{ceiling}");
    }

    #[test]
    fn far_scenes_for_their_size_are_named_and_non_finite_corners_dropped() {
        let (_, report, _) = load("v 1e9 0 0\nv 1e9 0.01 0\nv 1e9 0 0.01\nf 1 2 3\n");
        assert_eq!(report.warnings.len(), 1, "{:?}", report.warnings);
        let w = &report.warnings[0];
        assert!(w.starts_with("t.obj: coordinates reach 1e9 for a scene 1e-2 across (1e11 times its size)"), "{w}");
        assert!(w.contains("steps of 1.19e-7, 1.19e-5 of its size"), "{w}");
        let (scene, report, shift) = load("v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1e39 0 0\nf 1 2 3\nf 1 2 4\n");
        assert_eq!((report.triangles, report.dropped_non_finite, report.warnings.len()), (1, 1, 0));
        assert_eq!((shift, scene.bounds.1), (DVec3::new(0.5, 0.5, 0.0), Vec3::new(0.5, 0.5, 0.0)));
    }

    #[test]
    fn positions_outside_f32_stay_non_finite() {
        let raw = [DVec3::splat(3.5e38), DVec3::new(1.0, 2.0, 3.0)];
        let moved = shifted_f32(&raw, DVec3::splat(3e38));
        assert!(moved[0].is_nan());
        assert_eq!((short(1e15 + 1.0), short(0.00125), short(-3.0)), ("1e15".into(), "1.25e-3".into(), "-3e0".into()));
        assert_eq!(moved[1], Vec3::new(1.0, 2.0, 3.0) - Vec3::splat(3e38));
    }
}
