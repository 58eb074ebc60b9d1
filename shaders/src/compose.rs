//! Shader composition and validation, shared by `build.rs` and the `validate` feature.
//!
//! A shader file may start with directive comments:
//!
//! ```text
//! //! import shared/dispatch        (splice wgsl/shared/dispatch.wgsl in, once)
//! //! import a, b: kdtree/bvh       (the same, for the variants a and b only; a name may
//!                                    be `prefix*` or `*suffix`, as in `define`)
//! //! requires subgroups, int64     (GPU features this shader needs)
//! //! variants plain, subgroups     (compose once per variant; `{variant}` in imports
//!                                    is replaced by the variant's name)
//! //! define tiny: const N: u32 = 2u; (this WGSL line, for the variant `tiny` only, or
//!                                    those matching `tiny*` or `*tiny`; without `name:`,
//!                                    for every variant)
//! //! module                        (imported by others, never composed on its own)
//! ```
//!
//! Modules live beside the shaders of their group (`kdtree/traverse`) or, when several
//! groups use them, in `wgsl/shared/`.
//!
//! `enable ...;` lines are hoisted to the top of the composed source, as WGSL demands.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::Requirement;

/// One composed shader: its text, where each line came from, and what it needs.
#[derive(Clone, Debug)]
pub struct Composed {
    /// Name relative to `wgsl/` without extension, with `:variant` if it has variants,
    /// e.g. `runtime/copy` or `compact/scan_u32:subgroups`.
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

/// Whether a WGSL file declares itself a module (`//! module`).
fn is_module(text: &str) -> bool {
    text.lines().filter_map(|l| l.trim().strip_prefix("//!")).any(|d| d.trim() == "module")
}

/// Every composable shader (the `.wgsl` files outside `wgsl/shared/` that are not modules),
/// sorted by name.
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
            let module = || std::fs::read_to_string(&path).map(|t| is_module(&t)).unwrap_or(false);
            if path.extension().is_some_and(|e| e == "wgsl") && !module() {
                let stem = path.file_stem().unwrap_or_default().to_string_lossy();
                names.push(format!("{group_name}/{stem}"));
            }
        }
    }
    names.sort();
    Ok(names)
}

/// The variants a shader declares with `//! variants a, b` (empty if none).
pub fn variants(wgsl: &Path, name: &str) -> Result<Vec<String>, String> {
    let path = wgsl.join(format!("{name}.wgsl"));
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(text
        .lines()
        .filter_map(|l| l.trim().strip_prefix("//!").map(str::trim))
        .filter_map(|d| d.strip_prefix("variants "))
        .flat_map(|list| list.split(',').map(|v| v.trim().to_string()).filter(|v| !v.is_empty()).collect::<Vec<_>>())
        .collect())
}

/// Composes `wgsl/<name>.wgsl` with its imports, for `variant` if it has variants.
pub fn compose(wgsl: &Path, name: &str, variant: Option<&str>) -> Result<Composed, String> {
    let name_v = match variant {
        Some(v) => format!("{name}:{v}"),
        None => name.to_string(),
    };
    let mut out = Composed { name: name_v, source: String::new(), requires: Vec::new(), origin: Vec::new() };
    let mut enables: Vec<(String, (String, u32))> = Vec::new();
    let mut body: Vec<(String, (String, u32))> = Vec::new();
    let mut imported: Vec<String> = Vec::new();
    let ctx = Ctx { wgsl, variant };
    splice(&ctx, name, &mut out.requires, &mut imported, &mut enables, &mut body)?;
    for (line, origin) in enables.into_iter().chain(body) {
        out.source.push_str(&line);
        out.source.push('\n');
        out.origin.push(origin);
    }
    Ok(out)
}

type Lines = Vec<(String, (String, u32))>;

struct Ctx<'a> {
    wgsl: &'a Path,
    variant: Option<&'a str>,
}

fn splice(
    ctx: &Ctx<'_>,
    name: &str,
    requires: &mut Vec<Requirement>,
    imported: &mut Vec<String>,
    enables: &mut Lines,
    body: &mut Lines,
) -> Result<(), String> {
    let rel = format!("wgsl/{name}.wgsl");
    let path = ctx.wgsl.join(format!("{name}.wgsl"));
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    for (i, line) in text.lines().enumerate() {
        let at = (rel.clone(), i as u32 + 1);
        let trimmed = line.trim();
        if let Some(directive) = trimmed.strip_prefix("//!") {
            let directive = directive.trim();
            if let Some(module) = directive.strip_prefix("import ") {
                // `import a, b: module` applies to the variants a and b only.
                let module = match module.split_once(':') {
                    Some((only, module)) => {
                        let v = ctx.variant.ok_or_else(|| {
                            format!("{}:{}: `import {only}:` in a shader without variants", at.0, at.1)
                        })?;
                        if !only.split(',').any(|o| names(o.trim(), v)) {
                            body.push((line.to_string(), at));
                            continue;
                        }
                        module
                    }
                    None => module,
                };
                let mut module = module.trim().to_string();
                if module.contains("{variant}") {
                    let v = ctx
                        .variant
                        .ok_or_else(|| format!("{}:{}: `{{variant}}` in a shader without variants", at.0, at.1))?;
                    module = module.replace("{variant}", v);
                }
                if !imported.contains(&module) {
                    imported.push(module.clone());
                    splice(ctx, &module, requires, imported, enables, body)
                        .map_err(|e| format!("{}:{}: import {module}: {e}", at.0, at.1))?;
                }
            } else if let Some(def) = directive.strip_prefix("define ") {
                // `define name: line` applies to one variant, `define line` to all.
                let (only, wgsl_line) = match def.split_once(':') {
                    Some((v, rest))
                        if !v.trim().is_empty()
                            && v.trim().chars().all(|c| c.is_alphanumeric() || c == '_' || c == '*') =>
                    {
                        (Some(v.trim()), rest.trim())
                    }
                    _ => (None, def.trim()),
                };
                if only.is_some() && ctx.variant.is_none() {
                    return Err(format!(
                        "{}:{}: `define {}:` in a shader without variants",
                        at.0,
                        at.1,
                        only.unwrap_or("")
                    ));
                }
                if only.is_none_or(|o| ctx.variant.is_some_and(|v| names(o, v))) {
                    body.push((wgsl_line.to_string(), at.clone()));
                }
            } else if let Some(list) = directive.strip_prefix("requires ") {
                for word in list.split(',').map(str::trim).filter(|w| !w.is_empty()) {
                    let req = Requirement::parse(word).ok_or_else(|| {
                        format!("{}:{}: unknown requirement `{word}` (subgroups, int64, subgroup_barrier)", at.0, at.1)
                    })?;
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

/// Whether `pattern` of a `define` or an `import` names `variant`: its name, `prefix*` or
/// `*suffix`.
fn names(pattern: &str, variant: &str) -> bool {
    match (pattern.strip_suffix('*'), pattern.strip_prefix('*')) {
        (Some(prefix), _) => variant.starts_with(prefix),
        (_, Some(suffix)) => variant.ends_with(suffix),
        _ => pattern == variant,
    }
}

/// The naga capabilities a shader with these requirements is validated against.
pub fn capabilities(requires: &[Requirement]) -> naga::valid::Capabilities {
    use naga::valid::Capabilities as C;
    let mut caps = C::empty();
    for r in requires {
        caps |= match r {
            Requirement::Subgroups => C::SUBGROUP | C::SUBGROUP_BARRIER,
            Requirement::Int64 => C::SHADER_INT64,
            Requirement::SubgroupBarrier => C::SUBGROUP_BARRIER,
        };
    }
    caps
}

/// A compute entry point and the `@group(0)` bindings it uses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// Entry point name.
    pub name: String,
    /// Binding numbers in group 0 that this entry point statically uses, ascending.
    pub bindings: Vec<u32>,
}

/// Parses and validates a composed shader; returns its compute entry points, or a
/// diagnostic that names the original file and line.
pub fn validate(shader: &Composed) -> Result<Vec<Entry>, String> {
    let module = naga::front::wgsl::parse_str(&shader.source).map_err(|e| {
        let loc = e.location(&shader.source).map(|l| l.line_number);
        diagnostic(shader, loc, &e.emit_to_string_with_path(&shader.source, &shader.name))
    })?;
    let flags = naga::valid::ValidationFlags::all();
    let mut validator = naga::valid::Validator::new(flags, capabilities(&shader.requires));
    let info = validator.validate(&module).map_err(|e| {
        let loc = e.location(&shader.source).map(|l| l.line_number);
        diagnostic(shader, loc, &e.emit_to_string_with_path(&shader.source, &shader.name))
    })?;
    let mut entries = Vec::new();
    for (i, ep) in module.entry_points.iter().enumerate() {
        if ep.stage != naga::ShaderStage::Compute {
            continue;
        }
        let fi = info.get_entry_point(i);
        let mut bindings: Vec<u32> = module
            .global_variables
            .iter()
            .filter(|(h, _)| !fi[*h].is_empty())
            .filter_map(|(_, g)| g.binding.as_ref())
            .filter(|b| b.group == 0)
            .map(|b| b.binding)
            .collect();
        bindings.sort_unstable();
        entries.push(Entry { name: ep.name.clone(), bindings });
    }
    if entries.is_empty() {
        return Err(format!("{}: no compute entry point", shader.name));
    }
    Ok(entries)
}

/// The parameter structs a composed shader binds in group 0 (its uniforms, and a read-only
/// storage `params`), by type name, with their sizes in bytes (what each Rust `Params` mirror
/// must measure).
pub fn uniforms(shader: &Composed) -> Result<Vec<(String, u32)>, String> {
    let module = naga::front::wgsl::parse_str(&shader.source).map_err(|e| e.emit_to_string(&shader.source))?;
    let mut out: Vec<(String, u32)> = Vec::new();
    for (_, g) in module.global_variables.iter() {
        // A kernel's parameters: its uniforms, and a read-only storage `params` (what a kernel
        // dispatched many times with changing values takes: lavapipe compiles a variant of a
        // shader for each set of uniform values it meets, and keeps them all).
        let params = g.name.as_deref() == Some("params") && matches!(g.space, naga::AddressSpace::Storage { .. });
        if !(g.space == naga::AddressSpace::Uniform || params) || g.binding.as_ref().is_none_or(|b| b.group != 0) {
            continue;
        }
        let ty = &module.types[g.ty];
        let name = ty.name.clone().unwrap_or_else(|| "uniform".into());
        let size = ty.inner.size(module.to_ctx());
        if !out.iter().any(|(n, _)| *n == name) {
            out.push((name, size));
        }
    }
    Ok(out)
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
