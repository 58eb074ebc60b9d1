//! PLY point clouds: ascii and binary little-endian, read and written.

use std::io::Write;
use std::path::Path;

use super::{Clamped, PointCloud, PointReport};
use crate::error::LoadError;

/// A PLY scalar type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Scalar {
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    F32,
    F64,
}

impl Scalar {
    fn parse(name: &str) -> Option<Scalar> {
        Some(match name {
            "char" | "int8" => Scalar::I8,
            "uchar" | "uint8" => Scalar::U8,
            "short" | "int16" => Scalar::I16,
            "ushort" | "uint16" => Scalar::U16,
            "int" | "int32" => Scalar::I32,
            "uint" | "uint32" => Scalar::U32,
            "float" | "float32" => Scalar::F32,
            "double" | "float64" => Scalar::F64,
            _ => return None,
        })
    }

    fn size(self) -> usize {
        match self {
            Scalar::I8 | Scalar::U8 => 1,
            Scalar::I16 | Scalar::U16 => 2,
            Scalar::I32 | Scalar::U32 | Scalar::F32 => 4,
            Scalar::F64 => 8,
        }
    }

    fn is_integer(self) -> bool {
        !matches!(self, Scalar::F32 | Scalar::F64)
    }

    /// Reads a little-endian value; `b` holds at least `size()` bytes.
    fn read_le(self, b: &[u8]) -> f64 {
        let a2 = || [b[0], b[1]];
        let a4 = || [b[0], b[1], b[2], b[3]];
        match self {
            Scalar::I8 => f64::from(b[0] as i8),
            Scalar::U8 => f64::from(b[0]),
            Scalar::I16 => f64::from(i16::from_le_bytes(a2())),
            Scalar::U16 => f64::from(u16::from_le_bytes(a2())),
            Scalar::I32 => f64::from(i32::from_le_bytes(a4())),
            Scalar::U32 => f64::from(u32::from_le_bytes(a4())),
            Scalar::F32 => f64::from(f32::from_le_bytes(a4())),
            Scalar::F64 => f64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]),
        }
    }

    /// Parses an ascii value (f32 text straight to f32, so written f32s read back exactly).
    fn parse_text(self, tok: &str) -> Option<f64> {
        match self {
            Scalar::F32 => tok.parse::<f32>().ok().map(f64::from),
            _ => tok.parse::<f64>().ok(),
        }
    }

    /// The value of full intensity of a colour of this type: 8-bit and 32-bit integers are
    /// 0..255, 16-bit integers 0..65535, floats 0..1.
    fn color_max(self) -> f64 {
        match self {
            Scalar::I16 | Scalar::U16 => 65535.0,
            Scalar::F32 | Scalar::F64 => 1.0,
            _ => 255.0,
        }
    }
}

#[derive(Clone, Copy, Debug)]
enum Kind {
    Scalar(Scalar),
    List { count: Scalar, item: Scalar },
}

#[derive(Debug)]
struct Property {
    name: String,
    kind: Kind,
}

#[derive(Debug)]
struct Element {
    name: String,
    count: usize,
    props: Vec<Property>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Format {
    Ascii,
    BinaryLe,
}

#[derive(Debug)]
struct Header {
    format: Format,
    elements: Vec<Element>,
    /// Byte offset of the body.
    body: usize,
    /// 1-based line number of the first body line (for ascii files).
    body_line: usize,
}

fn parse_header(path: &Path, bytes: &[u8]) -> Result<Header, LoadError> {
    let mut pos = if bytes.starts_with(crate::obj::UTF8_BOM) { crate::obj::UTF8_BOM.len() } else { 0 };
    let mut ln = 0usize;
    let mut format = None;
    let mut elements: Vec<Element> = Vec::new();
    loop {
        if pos >= bytes.len() {
            return Err(if ln == 0 {
                LoadError::new(path, "empty file: not a PLY file")
            } else {
                LoadError::new(path, "PLY header has no end_header line")
            });
        }
        let end = bytes[pos..].iter().position(|&b| b == b'\n').map_or(bytes.len(), |i| pos + i);
        let raw = &bytes[pos..end];
        pos = (end + 1).min(bytes.len());
        ln += 1;
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        let err = |reason: String| LoadError::at_line(path, ln, reason);
        let Ok(line) = std::str::from_utf8(raw) else {
            return Err(if ln == 1 {
                err("not a PLY file (missing \"ply\" magic)".into())
            } else {
                err("header line is not valid text".into())
            });
        };
        if ln == 1 {
            if line.trim() != "ply" {
                return Err(err("not a PLY file (missing \"ply\" magic)".into()));
            }
            continue;
        }
        let toks: Vec<&str> = line.split_whitespace().collect();
        match toks.first().copied() {
            None | Some("comment") | Some("obj_info") => {}
            Some("format") => {
                format = Some(match toks.get(1).copied() {
                    Some("ascii") => Format::Ascii,
                    Some("binary_little_endian") => Format::BinaryLe,
                    Some("binary_big_endian") => {
                        return Err(err(
                            "binary_big_endian PLY is not supported (use ascii or binary_little_endian)".into()
                        ));
                    }
                    other => return Err(err(format!("unknown PLY format \"{}\"", other.unwrap_or("")))),
                });
            }
            Some("element") => {
                let [_, name, count] = toks[..] else {
                    return Err(err("element line needs a name and a count".into()));
                };
                let count = count.parse().map_err(|_| err(format!("malformed element count \"{count}\"")))?;
                elements.push(Element { name: name.to_owned(), count, props: Vec::new() });
            }
            Some("property") => {
                let Some(element) = elements.last_mut() else {
                    return Err(err("property before any element".into()));
                };
                let ty = |t: &str| Scalar::parse(t).ok_or_else(|| err(format!("unknown property type \"{t}\"")));
                let (kind, name) = match toks[..] {
                    [_, "list", count, item, name] => {
                        let count = ty(count)?;
                        if !count.is_integer() {
                            return Err(err(format!("list count type \"{}\" is not an integer type", toks[2])));
                        }
                        (Kind::List { count, item: ty(item)? }, name)
                    }
                    [_, t, name] if t != "list" => (Kind::Scalar(ty(t)?), name),
                    _ => return Err(err(format!("malformed property line \"{line}\""))),
                };
                element.props.push(Property { name: name.to_owned(), kind });
            }
            Some("end_header") => break,
            Some(other) => return Err(err(format!("unknown PLY header keyword \"{other}\""))),
        }
    }
    let format = format.ok_or_else(|| LoadError::new(path, "PLY header has no format line"))?;
    Ok(Header { format, elements, body: pos, body_line: ln + 1 })
}

/// Where the fields of a point are among the vertex element's properties.
struct VertexLayout {
    xyz: [usize; 3],
    rgb: Option<[usize; 3]>,
    reflection: Option<usize>,
    refraction: Option<usize>,
}

impl VertexLayout {
    fn new(path: &Path, e: &Element, report: &mut PointReport) -> Result<VertexLayout, LoadError> {
        let find = |names: &[&str]| {
            e.props.iter().position(|p| names.contains(&p.name.as_str()) && matches!(p.kind, Kind::Scalar(_)))
        };
        let mut xyz = [0; 3];
        for (slot, axis) in xyz.iter_mut().zip(["x", "y", "z"]) {
            *slot = find(&[axis])
                .ok_or_else(|| LoadError::new(path, format!("vertex element has no scalar \"{axis}\" property")))?;
        }
        let channels =
            [find(&["red", "diffuse_red"]), find(&["green", "diffuse_green"]), find(&["blue", "diffuse_blue"])];
        let rgb = match channels {
            [Some(r), Some(g), Some(b)] => Some([r, g, b]),
            [None, None, None] => None,
            _ => {
                report.warnings.push("vertex colour needs red, green and blue; colours ignored".into());
                None
            }
        };
        Ok(VertexLayout { xyz, rgb, reflection: find(&["reflection"]), refraction: find(&["refraction"]) })
    }

    /// Adds the point whose scalar property values are `v` (list properties hold 0), or counts
    /// it; `at` (a line, or the vertex index of binary files) names it in clamping warnings.
    fn push(
        &self,
        e: &Element,
        v: &[f64],
        at: usize,
        cloud: &mut PointCloud,
        report: &mut PointReport,
        clamped: &mut Clamped,
    ) {
        let max = |i: usize| match e.props[i].kind {
            Kind::Scalar(s) => s.color_max(),
            Kind::List { .. } => 1.0,
        };
        let position = self.xyz.map(|i| v[i] as f32);
        let color = match self.rgb {
            Some(rgb) => rgb.map(|i| (v[i] / max(i)) as f32),
            None => [1.0; 3],
        };
        let reflection = self.reflection.map_or(0.0, |i| v[i] as f32);
        let refraction = self.refraction.map_or(0.0, |i| v[i] as f32);
        let finite = position.iter().chain(&color).chain([&reflection, &refraction]).all(|x| x.is_finite());
        if finite {
            let color = clamped.colour(color, at);
            let [reflection, refraction] = clamped.coefficients([reflection, refraction], at);
            cloud.push(position, color, reflection, refraction);
        } else {
            report.dropped_non_finite += 1;
        }
    }
}

/// [`PointCloud::load_ply`].
pub(crate) fn load(path: &Path) -> Result<(PointCloud, PointReport), LoadError> {
    let bytes = crate::read::read_input(path)?;
    let header = parse_header(path, &bytes)?;
    let mut report = PointReport::default();
    let vertex = header
        .elements
        .iter()
        .position(|e| e.name == "vertex")
        .ok_or_else(|| LoadError::new(path, "PLY file has no vertex element"))?;
    let layout = VertexLayout::new(path, &header.elements[vertex], &mut report)?;
    let body = &bytes[header.body..];
    let mut cloud = PointCloud::default();
    let mut clamped = Clamped::default();
    let mut out = Out { cloud: &mut cloud, report: &mut report, clamped: &mut clamped };
    match header.format {
        Format::Ascii => read_ascii(path, &header, body, vertex, &layout, &mut out)?,
        Format::BinaryLe => read_binary(path, &header, body, vertex, &layout, &mut out)?,
    }
    clamped.warn(&mut report, if header.format == Format::Ascii { "line" } else { "vertex" });
    report.finish(&cloud);
    Ok((cloud, report))
}

/// Where the body readers put what they read.
struct Out<'a> {
    cloud: &'a mut PointCloud,
    report: &'a mut PointReport,
    clamped: &'a mut Clamped,
}

fn read_ascii(
    path: &Path,
    header: &Header,
    body: &[u8],
    vertex: usize,
    layout: &VertexLayout,
    out: &mut Out<'_>,
) -> Result<(), LoadError> {
    let mut lines = body.split(|&b| b == b'\n').enumerate().map(|(i, l)| (header.body_line + i, l));
    let mut values: Vec<f64> = Vec::new();
    for (ei, e) in header.elements.iter().enumerate() {
        for index in 0..e.count {
            let (ln, line) = loop {
                let Some((ln, raw)) = lines.next() else {
                    return Err(LoadError::new(
                        path,
                        format!("truncated: the file ends after {index} of {} {} elements", e.count, e.name),
                    ));
                };
                let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
                let line =
                    std::str::from_utf8(raw).map_err(|_| LoadError::at_line(path, ln, "line is not valid text"))?;
                if !line.trim().is_empty() {
                    break (ln, line);
                }
            };
            let err = |reason: String| LoadError::at_line(path, ln, reason);
            let mut toks = line.split_whitespace();
            let mut next = |what: &str, ty: Scalar| -> Result<f64, LoadError> {
                let tok = toks.next().ok_or_else(|| err(format!("too few values for a {} element", e.name)))?;
                ty.parse_text(tok).ok_or_else(|| err(format!("malformed number \"{tok}\" for {what}")))
            };
            values.clear();
            for p in &e.props {
                match p.kind {
                    Kind::Scalar(ty) => values.push(next(&p.name, ty)?),
                    Kind::List { count, item } => {
                        let n = next(&p.name, count)?;
                        if !(n >= 0.0 && n.fract() == 0.0 && n <= u32::MAX as f64) {
                            return Err(err(format!("list length {n} of {} is not a count", p.name)));
                        }
                        for _ in 0..n as usize {
                            next(&p.name, item)?;
                        }
                        values.push(0.0);
                    }
                }
            }
            if toks.next().is_some() {
                return Err(err(format!("too many values for a {} element", e.name)));
            }
            if ei == vertex {
                layout.push(e, &values, ln, out.cloud, out.report, out.clamped);
            }
        }
    }
    Ok(())
}

fn read_binary(
    path: &Path,
    header: &Header,
    body: &[u8],
    vertex: usize,
    layout: &VertexLayout,
    out: &mut Out<'_>,
) -> Result<(), LoadError> {
    let mut pos = 0usize;
    let mut values: Vec<f64> = Vec::new();
    for (ei, e) in header.elements.iter().enumerate() {
        let truncated = |index: usize| {
            LoadError::new(
                path,
                format!(
                    "truncated: {} element {index} of {} runs past the end of the file ({} data bytes)",
                    e.name,
                    e.count,
                    body.len()
                ),
            )
        };
        let all_scalar = e.props.iter().all(|p| matches!(p.kind, Kind::Scalar(_)));
        if all_scalar && ei != vertex {
            // Skip the whole element at once.
            let stride: usize = e.props.iter().map(|p| if let Kind::Scalar(s) = p.kind { s.size() } else { 0 }).sum();
            let len = stride.checked_mul(e.count).ok_or_else(|| truncated(0))?;
            if body.len() - pos < len {
                return Err(truncated((body.len() - pos) / stride.max(1)));
            }
            pos += len;
            continue;
        }
        if ei == vertex {
            // Never more than the bytes left can hold, whatever the header claims.
            let stride: usize = e.props.iter().map(|p| if let Kind::Scalar(s) = p.kind { s.size() } else { 1 }).sum();
            let capacity = e.count.min(body.len().saturating_sub(pos) / stride.max(1));
            out.cloud.positions.reserve(capacity);
        }
        for index in 0..e.count {
            values.clear();
            for p in &e.props {
                let mut take = |ty: Scalar| -> Result<f64, LoadError> {
                    let b = body.get(pos..pos + ty.size()).ok_or_else(|| truncated(index))?;
                    pos += ty.size();
                    Ok(ty.read_le(b))
                };
                match p.kind {
                    Kind::Scalar(ty) => values.push(take(ty)?),
                    Kind::List { count, item } => {
                        let n = take(count)?;
                        if n < 0.0 {
                            return Err(LoadError::new(
                                path,
                                format!("{} element {index}: negative list length {n} for {}", e.name, p.name),
                            ));
                        }
                        let len = (n as usize).checked_mul(item.size()).ok_or_else(|| truncated(index))?;
                        if body.len() - pos < len {
                            return Err(truncated(index));
                        }
                        pos += len;
                        values.push(0.0);
                    }
                }
            }
            if ei == vertex {
                layout.push(e, &values, index, out.cloud, out.report, out.clamped);
            }
        }
    }
    if pos < body.len() {
        out.report.warnings.push(format!("{} bytes after the last element ignored", body.len() - pos));
    }
    Ok(())
}

fn header_text(cloud: &PointCloud, format: &str) -> String {
    format!(
        "ply\nformat {format} 1.0\ncomment written by lumbre-raytrace\nelement vertex {}\n\
         property float x\nproperty float y\nproperty float z\n\
         property uchar red\nproperty uchar green\nproperty uchar blue\n\
         property float reflection\nproperty float refraction\nend_header\n",
        cloud.len()
    )
}

/// An 8-bit colour channel: clamped to `[0, 1]`, times 255, rounded to nearest.
fn color_u8(c: f32) -> u8 {
    (c.clamp(0.0, 1.0) * 255.0 + 0.5) as u8
}

fn save(
    cloud: &PointCloud,
    path: &Path,
    format: &str,
    point: impl Fn(&mut dyn Write, usize) -> std::io::Result<()>,
) -> Result<(), LoadError> {
    cloud.check().map_err(|e| LoadError::new(path, e))?;
    crate::write::write_with(path, |w| {
        w.write_all(header_text(cloud, format).as_bytes())?;
        for i in 0..cloud.len() {
            point(&mut *w, i)?;
        }
        Ok(())
    })
}

/// [`PointCloud::save_ply_ascii`].
pub(crate) fn save_ascii(cloud: &PointCloud, path: &Path) -> Result<(), LoadError> {
    save(cloud, path, "ascii", |w, i| {
        let (p, c) = (cloud.positions[i], cloud.colors[i].map(color_u8));
        writeln!(
            w,
            "{} {} {} {} {} {} {} {}",
            p[0], p[1], p[2], c[0], c[1], c[2], cloud.reflection[i], cloud.refraction[i]
        )
    })
}

/// [`PointCloud::save_ply_binary`].
pub(crate) fn save_binary(cloud: &PointCloud, path: &Path) -> Result<(), LoadError> {
    save(cloud, path, "binary_little_endian", |w, i| {
        let mut rec = [0u8; 23];
        for (k, x) in cloud.positions[i].iter().enumerate() {
            rec[4 * k..4 * k + 4].copy_from_slice(&x.to_le_bytes());
        }
        rec[12..15].copy_from_slice(&cloud.colors[i].map(color_u8));
        rec[15..19].copy_from_slice(&cloud.reflection[i].to_le_bytes());
        rec[19..23].copy_from_slice(&cloud.refraction[i].to_le_bytes());
        w.write_all(&rec)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalar_reads() {
        assert_eq!(Scalar::I8.read_le(&[0xff]), -1.0);
        assert_eq!(Scalar::U16.read_le(&[0x01, 0x02]), 513.0);
        assert_eq!(Scalar::F32.read_le(&1.5f32.to_le_bytes()), 1.5);
        assert_eq!(Scalar::F64.read_le(&(-2.25f64).to_le_bytes()), -2.25);
        assert_eq!(Scalar::parse("float64"), Some(Scalar::F64));
        assert_eq!(Scalar::parse("half"), None);
    }

    #[test]
    fn header_errors() {
        let p = Path::new("h.ply");
        assert!(parse_header(p, b"").unwrap_err().reason.contains("empty"));
        assert!(parse_header(p, b"plx\n").unwrap_err().reason.contains("magic"));
        assert!(parse_header(p, b"ply\nformat ascii 1.0\n").unwrap_err().reason.contains("end_header"));
        let e = parse_header(p, b"ply\nformat ascii 1.0\nproperty float x\nend_header\n").unwrap_err();
        assert_eq!(e.line, Some(3));
        let e = parse_header(p, b"ply\nformat ascii 1.0\nelement vertex 1\nproperty half x\nend_header\n").unwrap_err();
        assert!(e.reason.contains("half"));
        let e = parse_header(p, b"ply\nelement vertex 1\nend_header\n").unwrap_err();
        assert!(e.reason.contains("format"));
        let h = parse_header(p, b"ply\r\nformat ascii 1.0\r\nelement vertex 2\r\nend_header\r\n1").unwrap();
        assert_eq!((h.body_line, h.elements[0].count), (5, 2));
    }
}
