//! The side-by-side pages: every global-illumination method at its defaults on every scene
//! of the set beside the scene's reference ([`crate::bench::gi`] makes the renderings), one
//! table for all and one labelled contact sheet per scene.

use std::path::Path;

use lumbre_gpu::Backend;

use super::sheet::Sheet;
use crate::bench::gi::{Row, SIZE, methods, scene, slug, table};
use crate::error::Result;
use crate::table::{Table, sig};

/// Every scene with a reference on the GPU when there is one; on the CPU only the Cornell
/// box (the other scenes take minutes there). Writes `NAME-METHOD-BACKEND.png`, error maps,
/// cut-size maps and `NAME-sheet.png` (columns: the reference, then each method, captioned
/// with its error and GPU or CPU time; rows: image, relative error, cut sizes) into `out`.
pub fn pages(backend: &Backend, out: &Path) -> Result<Table> {
    let mut rows: Vec<Row> = Vec::new();
    for entry in crate::scenes::SET {
        if backend.gpu().is_none() && entry.name != "cornell" {
            continue;
        }
        let Some(reference) = crate::data::reference(entry.reference) else { continue };
        let reference = reference?;
        eprintln!("{} by every method ...", entry.name);
        reference.save(&out.join(format!("{}-reference.png", entry.name)))?;
        let (scene_rows, images) = scene(entry, &reference, backend, SIZE, Some(out))?;
        let columns =
            std::iter::once("reference".to_string()).chain(methods().iter().map(|m| m.name.to_string())).collect();
        let labels = ["image", "relative error", "cut sizes"].map(String::from).to_vec();
        let mut sheet = Sheet::new(SIZE, columns, labels);
        sheet.set(0, 0, &reference)?;
        for (col, ((name, image, diff, heat), row)) in images.iter().zip(&scene_rows).enumerate() {
            let col = col + 1;
            sheet.set(0, col, image)?;
            sheet.set(1, col, diff)?;
            if let Some(map) = heat {
                sheet.set(2, col, map)?;
                map.save(&out.join(format!("{}-{}-{}-cuts.png", entry.name, slug(name), backend.name())))?;
            }
            let time = row.gpu.unwrap_or(row.wall);
            sheet.note(0, col, &format!("{}% {} ms", sig(100.0 * row.error), sig(time.as_secs_f64() * 1e3)))?;
        }
        let file = out.join(format!("{}-sheet.png", entry.name));
        sheet.image().save(&file)?;
        rows.extend(scene_rows);
    }
    let mut t = table(&rows, backend);
    t.note("NAME-sheet.png per scene: the reference, then each method (its mean relative error and time); its relative error (black 0%, red 100%); lightcuts' cut sizes");
    Ok(t)
}
