//! `--export-rays DIR`: each scene's triangles, the rays the CPU traced and its closest hits,
//! written for a peer ray tracer (`benches/peers/embree_rays.py`) to trace the same rays.
//!
//! Every binary file is raw little-endian `f32`, no header:
//!
//! - `NAME.triangles.f32`: 9 per triangle, its corners `v0 v1 v2` as `x y z`;
//! - `NAME.KIND.rays.f32` (`KIND` is `primary` or `bounce`): 6 per ray, origin `x y z` then
//!   direction `x y z` (rays are `origin + t * direction`, `t` in `[0, inf)`);
//! - `NAME.KIND.t.f32`: 1 per ray, the CPU's closest hit `t`, `inf` for a miss.
//!
//! `rays.json`, written last, names the scenes in run order with their counts and file
//! names, and the CPU's median seconds and rays/s for each kind of ray: a folder without it
//! is an unfinished run.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use glam::Vec3;
use lumbre_kdtree::{Hit, QueryOptions, Ray};

use crate::error::Result;
use crate::table::json_string;

/// The index file of an export folder.
pub const INDEX: &str = "rays.json";

/// The version of the layout, the index's `format`.
pub const FORMAT: &str = "lumbre incoherent rays 1";

/// An error naming `--export-rays` unless `dir` is an existing folder.
pub fn check_folder(dir: &Path) -> Result<()> {
    if !dir.is_dir() {
        let what = if dir.exists() { "not a folder" } else { "no such folder (create it first)" };
        return Err(format!("--export-rays {}: {what}", dir.display()).into());
    }
    Ok(())
}

/// One kind of ray (primary or bounce) as the CPU traced it: the rays, their closest hits
/// and the median wall time of a pass over them.
pub struct Traced {
    pub rays: Vec<Ray>,
    pub hits: Vec<Option<Hit>>,
    pub time: Duration,
}

/// An export folder being filled, one scene at a time.
pub struct Export {
    dir: PathBuf,
    /// The index's entry of each scene written.
    scenes: Vec<String>,
}

impl Export {
    /// Writes into the existing folder `dir` ([`check_folder`]).
    pub fn new(dir: &Path) -> Result<Export> {
        check_folder(dir)?;
        Ok(Export { dir: dir.to_path_buf(), scenes: Vec::new() })
    }

    /// Writes scene `name`'s triangles and its `(kind, traced)` rays and hits.
    pub fn scene(&mut self, name: &str, tris: &[[Vec3; 3]], eps: f32, kinds: &[(&str, &Traced)]) -> Result<()> {
        let tri_file = format!("{name}.triangles.f32");
        write_f32s(&self.dir.join(&tri_file), tris.iter().flatten().flat_map(|v| v.to_array()))?;
        let mut entries = Vec::new();
        for (kind, t) in kinds {
            let rays_file = format!("{name}.{kind}.rays.f32");
            let t_file = format!("{name}.{kind}.t.f32");
            write_f32s(
                &self.dir.join(&rays_file),
                t.rays.iter().flat_map(|r| r.origin.to_array().into_iter().chain(r.dir.to_array())),
            )?;
            write_f32s(&self.dir.join(&t_file), t.hits.iter().map(|h| h.map_or(f32::INFINITY, |h| h.t)))?;
            let seconds = t.time.as_secs_f64();
            let rate = if seconds > 0.0 { t.rays.len() as f64 / seconds } else { 0.0 };
            entries.push(format!(
                "{}: {{\"rays\": {}, \"hits\": {}, \"seconds\": {seconds:e}, \"rays_per_second\": {rate:e}, \
                 \"rays_file\": {}, \"t_file\": {}}}",
                json_string(kind),
                t.rays.len(),
                t.hits.iter().flatten().count(),
                json_string(&rays_file),
                json_string(&t_file),
            ));
        }
        self.scenes.push(format!(
            "{{\"name\": {}, \"triangles\": {}, \"triangles_file\": {}, \"ray_offset\": {eps:e}, {}}}",
            json_string(name),
            tris.len(),
            json_string(&tri_file),
            entries.join(", ")
        ));
        Ok(())
    }

    /// Writes the index, `rays.json`: how the rays were made and traced (`made`, a JSON
    /// object's fields), the CPU's threads and passes, and every scene written.
    pub fn finish(self, made: &str, passes: usize) -> Result<()> {
        let opts = QueryOptions::default();
        let index = format!(
            "{{\"format\": {}, \"layout\": {}, {made}, \"cpu_threads\": {}, \"cpu_passes\": {passes}, \
             \"cpu_timing\": {}, \"traversal\": {}, \"triangle_test\": {}, \"scenes\": [\n  {}\n]}}\n",
            json_string(FORMAT),
            json_string(
                "raw little-endian f32: triangles_file 9 per triangle (v0, v1, v2 as x y z), rays_file 6 per \
                 ray (origin x y z, direction x y z), t_file 1 per ray (closest hit t along the direction from \
                 0, inf for a miss)"
            ),
            rayon::current_num_threads(),
            json_string(
                "closest hit of every ray (the structure built beforehand, untimed; no shading), rays in parallel \
                 with rayon; seconds: the median wall time of cpu_passes passes"
            ),
            json_string(&format!("{:?}", opts.traversal)),
            json_string(&format!("{:?}", opts.test)),
            self.scenes.join(",\n  ")
        );
        lumbre_raytrace::write_file(&self.dir.join(INDEX), index.as_bytes())?;
        Ok(())
    }
}

/// Writes `values` to `path` as raw little-endian `f32`, whole or not at all.
fn write_f32s(path: &Path, values: impl Iterator<Item = f32>) -> Result<()> {
    lumbre_raytrace::write_with(path, |w: &mut dyn Write| {
        for v in values {
            w.write_all(&v.to_le_bytes())?;
        }
        Ok(())
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use lumbre_gpu::testing::TempDir;

    use super::*;

    /// The `f32`s of a file written by [`write_f32s`].
    fn read_f32s(path: &Path) -> Vec<f32> {
        let bytes = std::fs::read(path).unwrap();
        assert_eq!(bytes.len() % 4, 0, "{}", path.display());
        bytes.chunks_exact(4).map(|b| f32::from_le_bytes(b.try_into().unwrap())).collect()
    }

    #[test]
    fn an_export_reads_back_as_written() {
        let dir = TempDir::new("export-rays");
        let tris = [[Vec3::ZERO, Vec3::X, Vec3::Y], [Vec3::Z, Vec3::new(1.0, 2.0, 3.0), Vec3::splat(-0.5)]];
        let rays = vec![Ray::new(Vec3::new(0.25, 0.25, 1.0), -Vec3::Z), Ray::new(Vec3::splat(7.0), Vec3::X)];
        let hits = vec![Some(Hit { t: 1.0, tri: 0, u: 0.25, v: 0.25 }), None];
        let traced = Traced { rays: rays.clone(), hits, time: Duration::from_millis(4) };
        let mut export = Export::new(dir.path()).unwrap();
        export.scene("two", &tris, 1e-4, &[("primary", &traced)]).unwrap();
        export.finish("\"seed\": 1", 3).unwrap();
        assert_eq!(dir.files(), ["rays.json", "two.primary.rays.f32", "two.primary.t.f32", "two.triangles.f32"]);
        let t = read_f32s(&dir.join("two.triangles.f32"));
        assert_eq!(t, [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 1.0, 2.0, 3.0, -0.5, -0.5, -0.5]);
        let r = read_f32s(&dir.join("two.primary.rays.f32"));
        assert_eq!(r, [0.25, 0.25, 1.0, 0.0, 0.0, -1.0, 7.0, 7.0, 7.0, 1.0, 0.0, 0.0]);
        assert_eq!(read_f32s(&dir.join("two.primary.t.f32")), [1.0, f32::INFINITY]);
        let index = std::fs::read_to_string(dir.join(INDEX)).unwrap();
        for field in [
            "\"format\": \"lumbre incoherent rays 1\"",
            "\"seed\": 1",
            "\"cpu_passes\": 3",
            "\"name\": \"two\", \"triangles\": 2, \"triangles_file\": \"two.triangles.f32\"",
            "\"primary\": {\"rays\": 2, \"hits\": 1, \"seconds\": 4e-3, \"rays_per_second\": 5e2",
        ] {
            assert!(index.contains(field), "{field} not in {index}");
        }
    }

    #[test]
    fn the_folder_must_exist() {
        let dir = TempDir::new("export-rays-missing");
        let e = Export::new(&dir.join("absent")).err().unwrap().to_string();
        assert!(e.starts_with("--export-rays ") && e.ends_with("absent: no such folder (create it first)"), "{e}");
        let file = dir.write("a-file", "x");
        let e = check_folder(&file).unwrap_err().to_string();
        assert!(e.ends_with("a-file: not a folder"), "{e}");
    }
}
