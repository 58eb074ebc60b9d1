//! Lists the reference images in `reference/` (a link to `testdata/reference`) as
//! `include_bytes!` lines for `src/data.rs`, so that the binary bundles every reference that
//! has been rendered and a reference not rendered yet breaks nothing. Adding an image to the
//! folder reruns this script.

use std::fmt::Write as _;
use std::path::PathBuf;

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let dir = root.join("reference");
    // The resolved folder, so that a change behind the link is seen.
    let watched = dir.canonicalize().unwrap_or_else(|_| dir.clone());
    println!("cargo:rerun-if-changed={}", watched.display());
    let mut files: Vec<(String, PathBuf)> = std::fs::read_dir(&dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.is_file() && p.extension().is_some_and(|e| e.eq_ignore_ascii_case("exr")))
                .filter_map(|p| Some((p.file_name()?.to_str()?.to_owned(), p.canonicalize().ok()?)))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    let mut code = String::from(
        "/// (file name, contents) of every reference image (`.exr`) in `testdata/reference` when\n\
         /// this binary was built.\n\
         pub const REFERENCES: &[(&str, &[u8])] = &[\n",
    );
    for (name, path) in &files {
        let _ = writeln!(code, "    ({name:?}, include_bytes!({:?})),", path.display().to_string());
    }
    code.push_str("];\n");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("references.rs");
    std::fs::write(&out, code).unwrap_or_else(|e| panic!("cannot write {}: {e}", out.display()));
}
