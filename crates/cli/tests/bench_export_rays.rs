//! `lumbre bench raytrace --tables incoherent --export-rays DIR` on two scenes of the set at
//! tiny sizes on the CPU: the folder's files hold the counts its index names, the rays read
//! back trace (on a kd-tree built from the triangles read back) to the very distances written,
//! the rates are the table's, and a missing folder is refused before any work.

use glam::Vec3;
use lumbre_kdtree::{BuildOptions, KdTree, QueryOptions, Ray};

#[allow(dead_code, unused_imports)] // each test program uses part of it
mod common;
use common::{TempDir, refused, succeeds};

/// The raw little-endian `f32`s of `path`.
fn read_f32s(path: &std::path::Path) -> Vec<f32> {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(bytes.len() % 4, 0, "{}", path.display());
    bytes.chunks_exact(4).map(|b| f32::from_le_bytes(b.try_into().unwrap())).collect()
}

/// The text of the value of `"key": ` after `from` in `json`: a number, or a string's text.
fn value<'a>(json: &'a str, from: usize, key: &str) -> &'a str {
    let pattern = format!("\"{key}\": ");
    let at = json[from..].find(&pattern).unwrap_or_else(|| panic!("no {key} after {from} in {json}")) + from;
    let rest = &json[at + pattern.len()..];
    let end = rest.find([',', '}']).unwrap_or(rest.len());
    rest[..end].trim_matches('"')
}

#[test]
fn exported_rays_retrace_to_the_exported_hits() {
    let dir = TempDir::new("bench-export-rays");
    let folder = dir.path().to_str().unwrap();
    let args = [
        "bench",
        "raytrace",
        "--tables",
        "incoherent",
        "--set",
        "cornell,two-lights",
        "--width",
        "40",
        "--height",
        "30",
        "--small-spp",
        "0",
        "--large-spp",
        "0",
        "--cpu-rays",
        "500",
        "--json",
        "--backend",
        "cpu",
        "--export-rays",
        folder,
    ];
    let table = succeeds(&args).stdout;
    let index = std::fs::read_to_string(dir.join("rays.json")).unwrap();
    assert_eq!(value(&index, 0, "format"), "lumbre incoherent rays 1");
    assert_eq!(value(&index, 0, "width"), "40");
    assert_eq!(value(&index, 0, "cpu_rays"), "500");
    let mut files = 1;
    for (name, triangles) in [("cornell", 36), ("two-lights", 7328)] {
        let at = index.find(&format!("\"name\": \"{name}\"")).unwrap_or_else(|| panic!("{name} not in {index}"));
        assert_eq!(value(&index, at, "triangles"), triangles.to_string());
        let corners = read_f32s(&dir.join(value(&index, at, "triangles_file")));
        assert_eq!(corners.len(), triangles * 9, "{name}");
        let tris: Vec<[Vec3; 3]> = corners
            .chunks_exact(9)
            .map(|c| [Vec3::from_slice(&c[0..3]), Vec3::from_slice(&c[3..6]), Vec3::from_slice(&c[6..9])])
            .collect();
        let tree = KdTree::build(&tris, &BuildOptions::default());
        // The table's row of this scene, for its CPU rates.
        let row = table.find(&format!("{{\"scene\": \"{name}\"")).unwrap_or_else(|| panic!("{name}: {table}"));
        for (kind, column) in [("primary", "CPU primary Mrays/s"), ("bounce", "CPU bounce Mrays/s")] {
            let k = index[at..].find(&format!("\"{kind}\": {{")).unwrap() + at;
            let count: usize = value(&index, k, "rays").parse().unwrap();
            assert_eq!(count, 500, "{name} {kind}");
            let flat = read_f32s(&dir.join(value(&index, k, "rays_file")));
            assert_eq!(flat.len(), count * 6, "{name} {kind}");
            let rays: Vec<Ray> =
                flat.chunks_exact(6).map(|r| Ray::new(Vec3::from_slice(&r[..3]), Vec3::from_slice(&r[3..]))).collect();
            let t = read_f32s(&dir.join(value(&index, k, "t_file")));
            assert_eq!(t.len(), count, "{name} {kind}");
            // The same rays on the same tree: the same distances to the bit, and some hits.
            let again = tree.closest_hits(&tris, &rays, 0.0, f32::INFINITY, &QueryOptions::default());
            for (i, (hit, &t)) in again.iter().zip(&t).enumerate() {
                assert_eq!(hit.map_or(f32::INFINITY, |h| h.t).to_bits(), t.to_bits(), "{name} {kind} ray {i}");
            }
            let hits = again.iter().flatten().count();
            assert!(hits > count / 4, "{name} {kind}: {hits} hits");
            assert_eq!(value(&index, k, "hits"), hits.to_string());
            // The index's rate is the table's (which shows four significant digits).
            let rate: f64 = value(&index, k, "rays_per_second").parse().unwrap();
            let shown: f64 = value(&table, row, column).parse().unwrap();
            assert!((rate / 1e6 - shown).abs() <= 1e-3 * shown, "{name} {kind}: {rate} against {shown}");
            files += 2;
        }
        files += 1;
    }
    assert_eq!(dir.files().len(), files, "{:?}", dir.files());
}

#[test]
fn a_missing_export_folder_is_refused() {
    let dir = TempDir::new("bench-export-rays-missing");
    let absent = dir.join("absent");
    let absent = absent.to_str().unwrap();
    let args = ["bench", "raytrace", "--tables", "incoherent", "--backend", "cpu", "--export-rays", absent];
    refused(&args, &["--export-rays", "absent: no such folder (create it first)"]);
    assert!(dir.files().is_empty());
}
