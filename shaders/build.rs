//! Composes every shader under `wgsl/`, validates it with naga, and writes the Rust
//! constants. An invalid shader fails the build with naga's diagnostic.

#[allow(dead_code, missing_docs)]
#[path = "src/compose.rs"]
mod compose;
#[allow(dead_code, missing_docs)]
#[path = "src/requirement.rs"]
mod requirement;

use requirement::Requirement;

use std::fmt::Write as _;
use std::path::PathBuf;

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let wgsl = compose::wgsl_dir(&root);
    println!("cargo:rerun-if-changed=wgsl");
    println!("cargo:rerun-if-changed=src/compose.rs");
    println!("cargo:rerun-if-changed=src/requirement.rs");

    let names = compose::discover(&wgsl).unwrap_or_else(|e| fail(&e));
    let mut groups: Vec<(String, Vec<String>)> = Vec::new();
    let mut all = Vec::new();
    for name in &names {
        let shader = compose::compose(&wgsl, name).unwrap_or_else(|e| fail(&e));
        let entries = compose::validate(&shader).unwrap_or_else(|e| fail(&e));
        let (group, stem) = name.split_once('/').expect("discover yields group/stem");
        let ident = stem.to_uppercase();
        let requires: Vec<&str> = shader.requires.iter().map(|r| r.rust_name()).collect();
        let mut item = String::new();
        let _ = writeln!(item, "    /// `wgsl/{name}.wgsl`, composed with its imports.");
        let _ = writeln!(
            item,
            "    pub const {ident}: crate::Shader = crate::Shader {{ name: {name:?}, source: {src:?}, entry_points: &{entries:?}, requires: &[{req}] }};",
            src = shader.source,
            req = requires.join(", "),
        );
        match groups.iter_mut().find(|(g, _)| g == group) {
            Some((_, items)) => items.push(item),
            None => groups.push((group.to_string(), vec![item])),
        }
        all.push(format!("{group}::{ident}"));
    }

    let mut out = String::new();
    for (group, items) in &groups {
        let _ = writeln!(out, "/// Shaders of the `{group}` group.\npub mod {group} {{\n");
        for item in items {
            out.push_str(item);
        }
        out.push_str("}\n");
    }
    let _ = writeln!(
        out,
        "/// Every shader, for validation and listings.\npub const ALL: &[crate::Shader] = &[{}];",
        all.join(", ")
    );
    let dest = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("shaders.rs");
    std::fs::write(&dest, out).unwrap_or_else(|e| fail(&format!("{}: {e}", dest.display())));
}

fn fail(msg: &str) -> ! {
    for line in msg.lines() {
        println!("cargo:warning={line}");
    }
    eprintln!("{msg}");
    std::process::exit(1);
}
