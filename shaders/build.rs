//! Composes the shaders under `wgsl/` of every group whose cargo feature is on, validates
//! them with naga, and writes the Rust constants. An invalid shader fails the build with
//! naga's diagnostic. Imports reach into any group's files, enabled or not.

#[allow(dead_code, missing_docs)]
#[path = "src/compose.rs"]
mod compose;

// compose.rs names it as `super::Requirement`.
use requirement::Requirement;
#[allow(dead_code, missing_docs)]
#[path = "src/requirement.rs"]
mod requirement;

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
    let enabled = |group: &str| std::env::var_os(format!("CARGO_FEATURE_{}", group.to_uppercase())).is_some();
    for name in names.iter().filter(|n| n.split_once('/').is_some_and(|(g, _)| enabled(g))) {
        let variants = compose::variants(&wgsl, name).unwrap_or_else(|e| fail(&e));
        let variants: Vec<Option<&str>> =
            if variants.is_empty() { vec![None] } else { variants.iter().map(|v| Some(v.as_str())).collect() };
        for variant in variants {
            let shader = compose::compose(&wgsl, name, variant).unwrap_or_else(|e| fail(&e));
            let entries = compose::validate(&shader).unwrap_or_else(|e| fail(&e));
            let (group, stem) = name.split_once('/').expect("discover yields group/stem");
            let ident = match variant {
                Some(v) => format!("{stem}_{v}").to_uppercase(),
                None => stem.to_uppercase(),
            };
            let requires: Vec<&str> = shader.requires.iter().map(|r| r.rust_name()).collect();
            let names: Vec<&str> = entries.iter().map(|e| e.name.as_str()).collect();
            let bindings: Vec<String> = entries.iter().map(|e| format!("({:?}, &{:?})", e.name, e.bindings)).collect();
            let mut item = String::new();
            let _ = writeln!(
                item,
                "    /// `wgsl/{name}.wgsl`{}, composed with its imports.",
                variant.map(|v| format!(" ({v} variant)")).unwrap_or_default()
            );
            let _ = writeln!(
                item,
                "    pub const {ident}: crate::Shader = crate::Shader {{ name: {sname:?}, source: {src:?}, entry_points: &{names:?}, bindings: &[{binds}], requires: &[{req}] }};",
                sname = shader.name,
                src = shader.source,
                req = requires.join(", "),
                binds = bindings.join(", "),
            );
            for (ty, size) in compose::uniforms(&shader).unwrap_or_else(|e| fail(&e)) {
                let _ = writeln!(
                    item,
                    "    /// Size in bytes of the parameters `{ty}` of [`{ident}`] (its Rust mirror must match).\n    pub const {ident}_{}_SIZE: usize = {size};",
                    upper_snake(&ty)
                );
            }
            match groups.iter_mut().find(|(g, _)| g == group) {
                Some((_, items)) => items.push(item),
                None => groups.push((group.to_string(), vec![item])),
            }
            all.push(format!("{group}::{ident}"));
        }
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
        "/// Every shader built (those of the enabled groups), for validation and listings.\npub const ALL: &[crate::Shader] = &[{}];",
        all.join(", ")
    );
    let dest = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("shaders.rs");
    std::fs::write(&dest, out).unwrap_or_else(|e| fail(&format!("{}: {e}", dest.display())));
}

/// `SortParams` -> `SORT_PARAMS`.
fn upper_snake(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_uppercase());
    }
    out
}

fn fail(msg: &str) -> ! {
    for line in msg.lines() {
        println!("cargo:warning={line}");
    }
    eprintln!("{msg}");
    std::process::exit(1);
}
