//! The line scanner in front of tobj.
//!
//! tobj reports neither line numbers nor out-of-range faces it could skip (one bad index fails
//! the whole load), and a few inputs make it misbehave (`l` lines become triangles, `Kd 0.5`
//! panics). So every OBJ and MTL file is first scanned here, line by line: malformed lines are
//! errors with their line number, and what tobj gets is a sanitized text that it cannot fail on:
//!
//! - all `mtllib` lines first, then all `v` (`x y z` or `x y z w`) and `vn` lines, then the
//!   `o`/`g`/`usemtl`/`f` lines in file order;
//! - faces with absolute, in-range indices only (relative indices resolved, texture indices
//!   dropped: texture coordinates are not used), `a//n` when every corner has a normal, else `a`;
//!   out-of-range faces are removed and counted;
//! - no `vt`, `l`, `p` or other statements.
//!
//! The scanner also records, per triangle that tobj will emit, whether it has normals (tobj
//! invents normals for corners that have none).

use std::path::{Path, PathBuf};

use glam::Vec3;

use crate::error::LoadError;

/// What the scanner hands to the loader.
#[derive(Debug, Default)]
pub(crate) struct ObjScan {
    /// The sanitized OBJ text for tobj.
    pub text: String,
    /// For each triangle tobj will emit, in order: whether its corners all have normals.
    pub tri_has_normals: Vec<bool>,
    /// Triangles (after fan triangulation) removed because an index was out of range.
    pub dropped_out_of_range: usize,
    /// Where the first face with an index out of range is, in words (with its line).
    pub first_out_of_range: Option<String>,
    /// Names given to `usemtl`, each with the first line that uses it.
    pub usemtl: Vec<(String, usize)>,
    /// Things worth telling the user.
    pub warnings: Vec<String>,
}

/// One face corner: 1-based absolute indices after resolving relative ones (0 = out of range).
#[derive(Clone, Copy)]
struct Corner {
    v: i64,
    vt: Option<i64>,
    vn: Option<i64>,
}

enum Body {
    Face { corners: Vec<Corner>, line: usize },
    Raw(String),
}

/// The UTF-8 byte order mark some editors write at the start of text files.
pub(crate) const UTF8_BOM: &[u8] = b"\xef\xbb\xbf";

/// Splits a file into lines (LF or CRLF), checking each is UTF-8; a leading byte order mark
/// is skipped.
pub(crate) fn text_lines<'a>(
    path: &'a Path,
    bytes: &'a [u8],
) -> impl Iterator<Item = Result<(usize, &'a str), LoadError>> + 'a {
    let bytes = bytes.strip_prefix(UTF8_BOM).unwrap_or(bytes);
    let bytes = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    let empty = bytes.is_empty();
    bytes.split(|&b| b == b'\n').enumerate().filter(move |_| !empty).map(move |(i, raw)| {
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        std::str::from_utf8(raw)
            .map(|s| (i + 1, s))
            .map_err(|_| LoadError::at_line(path, i + 1, "line is not valid UTF-8"))
    })
}

/// The text after the first word of `line`, trimmed.
fn rest_of(line: &str, keyword: &str) -> String {
    let t = line.trim_start();
    t.get(keyword.len()..).unwrap_or("").trim().to_owned()
}

/// The part of `line` before a `#` comment.
fn strip_comment(line: &str) -> &str {
    line.split('#').next().unwrap_or("")
}

fn parse_f32(path: &Path, line: usize, tok: &str, what: &str) -> Result<f32, LoadError> {
    tok.parse::<f32>().map_err(|_| LoadError::at_line(path, line, format!("malformed number \"{tok}\" in {what}")))
}

/// Parses one face index: `Ok(Some(i))` absolute 1-based (0 when out of range), `Ok(None)` empty.
fn parse_index(tok: &str, count: i64) -> Option<Option<i64>> {
    if tok.is_empty() {
        return Some(None);
    }
    let digits = tok.strip_prefix(['+', '-']).unwrap_or(tok);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let Ok(x) = tok.parse::<i64>() else {
        return Some(Some(0)); // integer syntax but too large: out of range
    };
    let abs = if x < 0 { count + x + 1 } else { x };
    Some(Some(abs.max(0)))
}

/// Scans an OBJ file (see the module docs). `dir` is the folder `mtllib` names are relative to.
pub(crate) fn scan_obj(path: &Path, bytes: &[u8], dir: &Path) -> Result<ObjScan, LoadError> {
    let mut scan = ObjScan::default();
    let mut mtllibs: Vec<String> = Vec::new();
    let mut verts = String::new();
    let mut normals = String::new();
    let mut body: Vec<Body> = Vec::new();
    let (mut nv, mut nvt, mut nvn) = (0i64, 0i64, 0i64);
    let mut lines_skipped = 0usize;

    for item in text_lines(path, bytes) {
        let (ln, line) = item?;
        let mut words = line.split_whitespace();
        let Some(keyword) = words.next() else { continue };
        match keyword {
            "v" => {
                let toks: Vec<&str> = strip_comment(line).split_whitespace().skip(1).collect();
                let mut vals = Vec::with_capacity(toks.len());
                for t in &toks {
                    vals.push(parse_f32(path, ln, t, "vertex")?);
                }
                match vals.len() {
                    3 | 6 => verts.push_str(&format!("v {} {} {}\n", toks[0], toks[1], toks[2])),
                    4 if vals[3] == 0.0 => return Err(LoadError::at_line(path, ln, "vertex has w = 0")),
                    4 => verts.push_str(&format!("v {} {} {} {}\n", toks[0], toks[1], toks[2], toks[3])),
                    n => {
                        return Err(LoadError::at_line(
                            path,
                            ln,
                            format!("vertex has {n} values; expected \"x y z\", \"x y z w\" or \"x y z r g b\""),
                        ));
                    }
                }
                nv += 1;
            }
            "vn" => {
                let toks: Vec<&str> = strip_comment(line).split_whitespace().skip(1).collect();
                for t in &toks {
                    parse_f32(path, ln, t, "normal")?;
                }
                if toks.len() != 3 {
                    return Err(LoadError::at_line(path, ln, format!("normal has {} values; expected 3", toks.len())));
                }
                normals.push_str(&format!("vn {} {} {}\n", toks[0], toks[1], toks[2]));
                nvn += 1;
            }
            "vt" => {
                let toks: Vec<&str> = strip_comment(line).split_whitespace().skip(1).collect();
                for t in &toks {
                    parse_f32(path, ln, t, "texture coordinate")?;
                }
                if toks.is_empty() || toks.len() > 3 {
                    return Err(LoadError::at_line(
                        path,
                        ln,
                        format!("texture coordinate has {} values; expected 1 to 3", toks.len()),
                    ));
                }
                nvt += 1;
            }
            "f" => {
                let mut corners = Vec::new();
                for tok in strip_comment(line).split_whitespace().skip(1) {
                    let parts: Vec<&str> = tok.split('/').collect();
                    let bad = || LoadError::at_line(path, ln, format!("malformed index \"{tok}\" in face"));
                    if parts.len() > 3 {
                        return Err(bad());
                    }
                    let v = parse_index(parts[0], nv).ok_or_else(bad)?.ok_or_else(bad)?;
                    let vt = match parts.get(1) {
                        Some(p) => parse_index(p, nvt).ok_or_else(bad)?,
                        None => None,
                    };
                    let vn = match parts.get(2) {
                        Some(p) => parse_index(p, nvn).ok_or_else(bad)?,
                        None => None,
                    };
                    corners.push(Corner { v, vt, vn });
                }
                if corners.len() < 3 {
                    return Err(LoadError::at_line(
                        path,
                        ln,
                        format!("face needs at least 3 vertices, found {}", corners.len()),
                    ));
                }
                body.push(Body::Face { corners, line: ln });
            }
            "o" | "g" => {
                let name = rest_of(line, keyword);
                body.push(Body::Raw(if name.is_empty() { keyword.to_owned() } else { format!("{keyword} {name}") }));
            }
            "usemtl" => {
                let name = rest_of(line, keyword);
                if name.is_empty() {
                    return Err(LoadError::at_line(path, ln, "usemtl without a material name"));
                }
                if !scan.usemtl.iter().any(|(n, _)| *n == name) {
                    scan.usemtl.push((name.clone(), ln));
                }
                body.push(Body::Raw(format!("usemtl {name}")));
            }
            "mtllib" => {
                let rest = rest_of(line, keyword);
                if rest.is_empty() {
                    return Err(LoadError::at_line(path, ln, "mtllib without a file name"));
                }
                // One name with spaces, or several names separated by spaces (both occur).
                if dir.join(&rest).is_file() || !rest.contains(char::is_whitespace) {
                    mtllibs.push(rest);
                } else {
                    mtllibs.extend(rest.split_whitespace().map(str::to_owned));
                }
            }
            "l" => lines_skipped += 1,
            _ => {} // p, s, vp, curves, comments, unknown statements: ignored, as tobj does
        }
    }

    if lines_skipped > 0 {
        scan.warnings.push(format!("{lines_skipped} line element(s) (`l`) ignored"));
    }
    let mut text = String::with_capacity(verts.len() + normals.len() + bytes.len() / 2);
    for m in &mtllibs {
        text.push_str(&format!("mtllib {m}\n"));
    }
    text.push_str(&verts);
    text.push_str(&normals);
    let in_range = |i: i64, n: i64| i >= 1 && i <= n;
    for item in body {
        match item {
            Body::Raw(s) => {
                text.push_str(&s);
                text.push('\n');
            }
            Body::Face { corners, line } => {
                let tris = corners.len() - 2;
                let ok = corners.iter().all(|c| {
                    in_range(c.v, nv) && c.vt.is_none_or(|t| in_range(t, nvt)) && c.vn.is_none_or(|n| in_range(n, nvn))
                });
                if !ok {
                    scan.dropped_out_of_range += tris;
                    scan.first_out_of_range.get_or_insert_with(|| {
                        format!(
                            "{}:{line}: face index out of range (the file has {nv} vertices, {nvt} texture \
                             coordinates and {nvn} normals)",
                            path.display()
                        )
                    });
                    continue;
                }
                let with_normals = corners.iter().all(|c| c.vn.is_some());
                text.push('f');
                for c in &corners {
                    match (with_normals, c.vn) {
                        (true, Some(n)) => text.push_str(&format!(" {}//{}", c.v, n)),
                        _ => text.push_str(&format!(" {}", c.v)),
                    }
                }
                text.push('\n');
                scan.tri_has_normals.extend(std::iter::repeat_n(with_normals, tris));
            }
        }
    }
    if let Some(first) = &scan.first_out_of_range {
        scan.warnings.push(format!(
            "{} triangle(s) with an index out of range dropped; the first at {first}",
            scan.dropped_out_of_range
        ));
    }
    scan.text = text;
    Ok(scan)
}

/// A sanitized MTL file and what the scanner noticed.
#[derive(Debug, Default)]
pub(crate) struct MtlScan {
    pub text: String,
    pub warnings: Vec<String>,
}

/// The range of an MTL statement's values: `(low, high)`, and whether a value outside it is
/// clamped into it (`true`) or the statement dropped so that the default applies (`false`).
fn mtl_range(keyword: &str) -> Option<(f32, f32, bool)> {
    match keyword {
        // Reflectances: above 1 a surface would reflect more light than it receives.
        "Ka" | "Kd" | "Ks" => Some((0.0, 1.0, true)),
        // Emitted radiance and the Phong exponent have no upper bound.
        "Ke" | "Ns" => Some((0.0, f32::INFINITY, true)),
        "d" | "Tr" => Some((0.0, 1.0, true)),
        // An index of refraction below 1 (or zero) is not a material's: the default is used.
        "Ni" => Some((1.0, f32::INFINITY, false)),
        _ => None,
    }
}

/// At most this many out-of-range warnings per MTL file; the rest are counted.
const MTL_RANGE_WARNINGS: usize = 8;

/// Scans an MTL file: the statements Lumbre uses (`newmtl`, `Kd`, `Ks`, `Ke`, `Ka`, `Ns`,
/// `Ni`, `d`, `Tr`, `illum`) are checked and normalised (`Kd 0.5` becomes `Kd 0.5 0.5 0.5`);
/// everything else (textures, `Tf`, unknown statements) is left out. Values outside their
/// range ([`mtl_range`]) are clamped into it, or for `Ni` dropped, with a warning naming the
/// file and line.
pub(crate) fn scan_mtl(path: &Path, bytes: &[u8]) -> Result<MtlScan, LoadError> {
    let mut out = MtlScan::default();
    let mut out_of_range = 0usize;
    // Clamps `vals` into the keyword's range; `None` when the statement is to be dropped.
    let mut in_range = |ln: usize, keyword: &str, vals: &[f32], warnings: &mut Vec<String>| -> Option<Vec<f32>> {
        let Some((lo, hi, clamp)) = mtl_range(keyword) else { return Some(vals.to_vec()) };
        if vals.iter().all(|v| (lo..=hi).contains(v)) {
            return Some(vals.to_vec());
        }
        out_of_range += 1;
        let clamped: Vec<f32> = vals.iter().map(|v| v.clamp(lo, hi)).collect();
        if out_of_range <= MTL_RANGE_WARNINGS {
            let given = vals.iter().map(f32::to_string).collect::<Vec<_>>().join(" ");
            let allowed = if hi.is_finite() { format!("{lo} to {hi}") } else { format!("at least {lo}") };
            let action = if clamp {
                format!("clamped to {}", clamped.iter().map(f32::to_string).collect::<Vec<_>>().join(" "))
            } else {
                "ignored, the default is used".to_owned()
            };
            warnings.push(format!(
                "{}:{ln}: {keyword} {given} is out of range (allowed: {allowed}); {action}",
                path.display()
            ));
        }
        clamp.then_some(clamped)
    };
    for item in text_lines(path, bytes) {
        let (ln, line) = item?;
        let mut words = line.split_whitespace();
        let Some(keyword) = words.next() else { continue };
        let err = |reason: String| LoadError::at_line(path, ln, reason);
        let number = |tok: &str| -> Result<f32, LoadError> {
            let x = parse_f32(path, ln, tok, keyword)?;
            if x.is_finite() { Ok(x) } else { Err(err(format!("non-finite value \"{tok}\" in {keyword}"))) }
        };
        let toks: Vec<&str> = strip_comment(line).split_whitespace().skip(1).collect();
        match keyword {
            "newmtl" => {
                let name = rest_of(line, keyword);
                if name.is_empty() {
                    return Err(err("newmtl without a material name".into()));
                }
                out.text.push_str(&format!("newmtl {name}\n"));
            }
            "Ka" | "Kd" | "Ks" | "Ke" => {
                if matches!(toks.first(), Some(&"spectral" | &"xyz")) {
                    out.warnings.push(format!(
                        "{}:{ln}: {keyword} {} colours are not supported; statement ignored",
                        path.display(),
                        toks[0]
                    ));
                    continue;
                }
                let vals = toks.iter().map(|t| number(t)).collect::<Result<Vec<f32>, _>>()?;
                let rgb = match vals[..] {
                    [g] => [g; 3],
                    [r, g, b] => [r, g, b],
                    _ => return Err(err(format!("{keyword} needs 1 or 3 numbers, found {}", vals.len()))),
                };
                if let Some(rgb) = in_range(ln, keyword, &rgb, &mut out.warnings) {
                    out.text.push_str(&format!("{keyword} {} {} {}\n", rgb[0], rgb[1], rgb[2]));
                }
            }
            "Ns" | "Ni" | "Tr" | "d" => {
                let toks: Vec<&str> = toks.into_iter().filter(|t| *t != "-halo").collect();
                let [tok] = toks[..] else {
                    return Err(err(format!("{keyword} needs 1 number, found {}", toks.len())));
                };
                if let Some(v) = in_range(ln, keyword, &[number(tok)?], &mut out.warnings) {
                    out.text.push_str(&format!("{keyword} {}\n", v[0]));
                }
            }
            "illum" => {
                let illum = match toks[..] {
                    [t] => t.parse::<u8>().ok().filter(|&i| i <= 10),
                    _ => None,
                };
                let Some(illum) = illum else {
                    return Err(err(format!("illum needs an integer from 0 to 10, found \"{}\"", toks.join(" "))));
                };
                out.text.push_str(&format!("illum {illum}\n"));
            }
            _ => {}
        }
    }
    if out_of_range > MTL_RANGE_WARNINGS {
        out.warnings.push(format!(
            "{}: {} more statements outside their range (clamped or ignored as above)",
            path.display(),
            out_of_range - MTL_RANGE_WARNINGS
        ));
    }
    Ok(out)
}

/// The MTL values of one tobj material, as [`crate::material::MtlParams`].
/// tobj parses in f64 (for positions far from the origin); the scanner has already checked
/// that every MTL value is a finite f32, so converting back loses nothing.
pub(crate) fn mtl_params(m: &tobj::Material) -> crate::material::MtlParams {
    let rgb = |c: Option<[f64; 3]>| c.map(|c| Vec3::from(c.map(|x| x as f32)));
    let one = |x: Option<f64>| x.map(|x| x as f32);
    crate::material::MtlParams {
        kd: rgb(m.diffuse),
        ks: rgb(m.specular),
        ns: one(m.shininess),
        ke: rgb(m.emissive),
        ni: one(m.optical_density),
        d: one(m.dissolve),
        tr: m.unknown_param.get("Tr").and_then(|t| t.trim().parse().ok()),
        illum: m.illumination_model,
    }
}

/// The folder relative paths in `path` resolve against.
pub(crate) fn parent_dir(path: &Path) -> PathBuf {
    path.parent().map(Path::to_path_buf).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(text: &str) -> Result<ObjScan, LoadError> {
        scan_obj(Path::new("t.obj"), text.as_bytes(), Path::new("."))
    }

    #[test]
    fn relative_indices_and_normals() {
        let s = scan("v 0 0 0\nv 1 0 0\nv 0 1 0\nvn 0 0 1\nf -3//-1 -2//1 -1//1\nf 1 2 3\n").unwrap();
        assert!(s.text.contains("f 1//1 2//1 3//1\n"));
        assert!(s.text.contains("f 1 2 3\n"));
        assert_eq!(s.tri_has_normals, vec![true, false]);
    }

    #[test]
    fn out_of_range_faces_are_counted() {
        let s = scan("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 4\nf 0 1 2\nf 1 2 3 -9\nf 1/5 2 3\n").unwrap();
        assert_eq!(s.dropped_out_of_range, 1 + 1 + 2 + 1);
        assert!(s.tri_has_normals.is_empty());
        let s = scan("v 0 0 0\nf 1 1 99999999999999999999999\n").unwrap();
        assert_eq!(s.dropped_out_of_range, 1);
    }

    #[test]
    fn malformed_lines() {
        let e = scan("v 0 0 0\nv 1 0 0\nv 1.2.3 0 0\n").unwrap_err();
        assert_eq!(e.to_string(), "t.obj:3: malformed number \"1.2.3\" in vertex");
        assert_eq!(scan("v 0 0\n").unwrap_err().line, Some(1));
        assert_eq!(scan("v 0 0 0 0\n").unwrap_err().reason, "vertex has w = 0");
        assert_eq!(scan("\nvn 0 x 0\n").unwrap_err().line, Some(2));
        assert_eq!(scan("vt 0 q\n").unwrap_err().line, Some(1));
        assert!(scan("f 1/2/3/4 1 1\n").unwrap_err().reason.contains("1/2/3/4"));
        assert!(scan("f a 1 1\n").unwrap_err().reason.contains("malformed index \"a\""));
        assert!(scan("f /1 1 1\n").is_err());
        assert!(scan("f 1 2\n").unwrap_err().reason.contains("at least 3"));
        assert!(scan("usemtl\n").is_err());
        assert_eq!(scan("v 0 0 0\n\u{ff}\n").map(|_| ()), Ok(()));
        let bad = scan_obj(Path::new("t.obj"), b"v 0 0 0\n\xff\n", Path::new(".")).unwrap_err();
        assert_eq!(bad.line, Some(2));
    }

    #[test]
    fn vertex_colours_and_comments() {
        let s = scan("v 0 0 0 1 0 0 # red\nv 1 0 0 2\n").unwrap();
        assert!(s.text.contains("v 0 0 0\n"));
        assert!(s.text.contains("v 1 0 0 2\n"));
    }

    #[test]
    fn mtl_scan() {
        let p = Path::new("m.mtl");
        let s = scan_mtl(p, b"newmtl a\nKd 0.5\nd -halo 0.3\nmap_Kd\nillum 4\nKs spectral x.rfl\n").unwrap();
        assert!(s.text.contains("Kd 0.5 0.5 0.5\n"));
        assert!(s.text.contains("d 0.3\n"));
        assert_eq!(s.warnings.len(), 1);
        assert_eq!(scan_mtl(p, b"newmtl a\n\nKd 1 2\n").unwrap_err().line, Some(3));
        assert_eq!(scan_mtl(p, b"Ns x\n").unwrap_err().reason, "malformed number \"x\" in Ns");
        assert!(scan_mtl(p, b"illum 2.5\n").is_err());
        assert!(scan_mtl(p, b"Kd nan 0 0\n").unwrap_err().reason.contains("non-finite"));
        assert!(scan_mtl(p, b"newmtl\n").is_err());
    }
}
