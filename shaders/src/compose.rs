//! Shader composition and validation, shared by `build.rs` and the `validate` feature.
//!
//! A shader file may start with directive comments:
//!
//! ```text
//! //! import shared/dispatch        (splice wgsl/shared/dispatch.wgsl in, once)
//! //! requires subgroups, int64     (GPU features this shader needs)
//! ```
//!
//! `enable ...;` lines are hoisted to the top of the composed source, as WGSL demands.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::Requirement;

/// One composed shader: its text, where each line came from, and what it needs.
#[derive(Clone, Debug)]
pub struct Composed {
    /// Name relative to `wgsl/` without extension, e.g. `runtime/copy`.
    pub name: String,
    /// The composed WGSL source.
    pub source: String,
    /// GPU features the shader declares it needs.
    pub requires: Vec<Requirement>,
    /// For each line of `source`: (file relative to the crate, 1-based line in that file).
    pub origin: Vec<(String, u32)>,
}

/// The folder holding the WGSL files, given the crate root.
pub fn wgsl_dir(crate_root: &Path) -> PathBuf {
    crate_root.join("wgsl")
}

/// Every composable shader (all `.wgsl` files outside `wgsl/shared/`), sorted by name.
pub fn discover(wgsl: &Path) -> Result<Vec<String>, String> {
    let mut names = Vec::new();
    let groups = std::fs::read_dir(wgsl).map_err(|e| format!("{}: {e}", wgsl.display()))?;
    for group in groups {
        let group = group.map_err(|e| e.to_string())?;
        let group_name = group.file_name().to_string_lossy().into_owned();
        if group_name == "shared" || !group.path().is_dir() {
            continue;
        }
        let files = std::fs::read_dir(group.path()).map_err(|e| e.to_string())?;
        for file in files {
            let path = file.map_err(|e| e.to_string())?.path();
            if path.extension().is_some_and(|e| e == "wgsl") {
                let stem = path.file_stem().unwrap_or_default().to_string_lossy();
                names.push(format!("{group_name}/{stem}"));
            }
        }
    }
    names.sort();
    Ok(names)
}

/// Composes `wgsl/<name>.wgsl` with its imports.
pub fn compose(wgsl: &Path, name: &str) -> Result<Composed, String> {
    let mut out = Composed { name: name.to_string(), source: String::new(), requires: Vec::new(), origin: Vec::new() };
    let mut enables: Vec<(String, (String, u32))> = Vec::new();
    let mut body: Vec<(String, (String, u32))> = Vec::new();
    let mut imported: Vec<String> = Vec::new();
    splice(wgsl, name, &mut out.requires, &mut imported, &mut enables, &mut body)?;
    for (line, origin) in enables.into_iter().chain(body) {
        out.source.push_str(&line);
        out.source.push('\n');
        out.origin.push(origin);
    }
    Ok(out)
}

type Lines = Vec<(String, (String, u32))>;

fn splice(
    wgsl: &Path,
    name: &str,
    requires: &mut Vec<Requirement>,
    imported: &mut Vec<String>,
    enables: &mut Lines,
    body: &mut Lines,
) -> Result<(), String> {
    let rel = format!("wgsl/{name}.wgsl");
    let path = wgsl.join(format!("{name}.wgsl"));
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    for (i, line) in text.lines().enumerate() {
        let at = (rel.clone(), i as u32 + 1);
        let trimmed = line.trim();
        if let Some(directive) = trimmed.strip_prefix("//!") {
            let directive = directive.trim();
            if let Some(module) = directive.strip_prefix("import ") {
                let module = module.trim().to_string();
                if !imported.contains(&module) {
                    imported.push(module.clone());
                    splice(wgsl, &module, requires, imported, enables, body)
                        .map_err(|e| format!("{}:{}: import {module}: {e}", at.0, at.1))?;
                }
            } else if let Some(list) = directive.strip_prefix("requires ") {
                for word in list.split(',').map(str::trim).filter(|w| !w.is_empty()) {
                    let req = Requirement::parse(word)
                        .ok_or_else(|| format!("{}:{}: unknown requirement `{word}` (subgroups, int64)", at.0, at.1))?;
                    if !requires.contains(&req) {
                        requires.push(req);
                    }
                }
            }
            body.push((line.to_string(), at));
        } else if trimmed.starts_with("enable ") {
            if !enables.iter().any(|(l, _)| l.trim() == trimmed) {
                enables.push((line.to_string(), at));
            }
        } else {
            body.push((line.to_string(), at));
        }
    }
    Ok(())
}

/// The naga capabilities a shader with these requirements is validated against.
pub fn capabilities(requires: &[Requirement]) -> naga::valid::Capabilities {
    use naga::valid::Capabilities as C;
    let mut caps = C::empty();
    for r in requires {
        caps |= match r {
            Requirement::Subgroups => C::SUBGROUP | C::SUBGROUP_BARRIER,
            Requirement::Int64 => C::SHADER_INT64,
        };
    }
    caps
}

/// Parses and validates a composed shader; returns its compute entry points, or a
/// diagnostic that names the original file and line.
pub fn validate(shader: &Composed) -> Result<Vec<String>, String> {
    let module = naga::front::wgsl::parse_str(&shader.source).map_err(|e| {
        let loc = e.location(&shader.source).map(|l| l.line_number);
        diagnostic(shader, loc, &e.emit_to_string_with_path(&shader.source, &shader.name))
    })?;
    let flags = naga::valid::ValidationFlags::all();
    let mut validator = naga::valid::Validator::new(flags, capabilities(&shader.requires));
    validator.validate(&module).map_err(|e| {
        let loc = e.location(&shader.source).map(|l| l.line_number);
        diagnostic(shader, loc, &e.emit_to_string_with_path(&shader.source, &shader.name))
    })?;
    let entries: Vec<String> = module
        .entry_points
        .iter()
        .filter(|ep| ep.stage == naga::ShaderStage::Compute)
        .map(|ep| ep.name.clone())
        .collect();
    if entries.is_empty() {
        return Err(format!("{}: no compute entry point", shader.name));
    }
    Ok(entries)
}

fn diagnostic(shader: &Composed, line: Option<u32>, naga_text: &str) -> String {
    let mut msg = String::new();
    match line.and_then(|l| shader.origin.get(l as usize - 1)) {
        Some((file, l)) => {
            let _ = writeln!(msg, "shader `{}` is invalid at {file}:{l}", shader.name);
        }
        None => {
            let _ = writeln!(msg, "shader `{}` is invalid", shader.name);
        }
    }
    msg.push_str(naga_text);
    msg
}
