//! The scenes and reference images bundled in the binary (`crates/cli/data`, a link to
//! `testdata/scenes`, and `crates/cli/reference`, a link to `testdata/reference`), so
//! `lumbre demo`, `lumbre scenes` and `lumbre bench raytrace` run from any folder, installed
//! or copied.

use std::path::Path;

use lumbre_raytrace::Scene;

use crate::error::{Error, Result};

/// (file name, contents) of every bundled file.
pub const FILES: &[(&str, &[u8])] = &[
    ("CornellBox-Diffuse.obj", include_bytes!("../data/CornellBox-Diffuse.obj")),
    ("CornellBox-Diffuse.mtl", include_bytes!("../data/CornellBox-Diffuse.mtl")),
    ("CornellBox-Original.obj", include_bytes!("../data/CornellBox-Original.obj")),
    ("CornellBox-Original.mtl", include_bytes!("../data/CornellBox-Original.mtl")),
    ("suzanne.obj", include_bytes!("../data/suzanne.obj")),
    ("teapot.obj", include_bytes!("../data/teapot.obj")),
    ("stanford-bunny.obj", include_bytes!("../data/stanford-bunny.obj")),
];

/// Loads scene `name` (`"CornellBox-Diffuse"`) from `dir` when given, else from the bundled
/// copy.
pub fn scene(name: &str, dir: Option<&Path>) -> Result<Scene> {
    let file = format!("{name}.obj");
    let loaded = match dir {
        Some(d) => Scene::load_obj(&d.join(&file)),
        None => {
            let (_, obj) =
                FILES.iter().find(|(f, _)| *f == file).ok_or_else(|| format!("no bundled scene named {name}"))?;
            Scene::load_obj_bytes(Path::new(&file), obj, FILES)
        }
    };
    Ok(loaded?.0)
}

// `REFERENCES`: the reference images found in `crates/cli/reference` (a link to
// `testdata/reference`) at build time, listed by `build.rs`.
include!(concat!(env!("OUT_DIR"), "/references.rs"));

/// The bundled reference image `file` (a name in `testdata/reference`), or `None` when it was
/// not there when this binary was built (not rendered yet).
pub fn reference(file: &str) -> Option<Result<lumbre_raytrace::Image>> {
    let (name, bytes) = REFERENCES.iter().find(|(name, _)| *name == file)?;
    Some(lumbre_raytrace::Image::exr_from_bytes(Path::new(name), bytes).map_err(Error::from))
}
