//! A tiny OBJ reader for tests and benches: `v` and `f` lines only. Faces may be polygons
//! with `v`, `v/vt`, `v//vn` or `v/vt/vn` references (negative indices count from the end);
//! they are fan-triangulated. Everything else is ignored.

use glam::Vec3;

/// The triangles of an OBJ file's text. Panics with the line number on malformed input.
pub fn parse_obj(text: &str) -> Vec<[Vec3; 3]> {
    let mut vertices: Vec<Vec3> = Vec::new();
    let mut tris = Vec::new();
    for (line_no, line) in text.lines().enumerate() {
        let mut fields = line.split_whitespace();
        match fields.next() {
            Some("v") => {
                let c: Vec<f32> =
                    fields.take(3).map(|f| f.parse().unwrap_or_else(|e| panic!("line {}: {e}", line_no + 1))).collect();
                assert_eq!(c.len(), 3, "line {}: a vertex needs 3 coordinates", line_no + 1);
                vertices.push(Vec3::new(c[0], c[1], c[2]));
            }
            Some("f") => {
                let idx: Vec<usize> = fields
                    .map(|f| {
                        let i: i64 = f
                            .split('/')
                            .next()
                            .unwrap()
                            .parse()
                            .unwrap_or_else(|e| panic!("line {}: {e}", line_no + 1));
                        let i = if i < 0 { vertices.len() as i64 + i } else { i - 1 };
                        assert!(i >= 0 && (i as usize) < vertices.len(), "line {}: index out of range", line_no + 1);
                        i as usize
                    })
                    .collect();
                assert!(idx.len() >= 3, "line {}: a face needs 3 vertices", line_no + 1);
                for k in 1..idx.len() - 1 {
                    tris.push([vertices[idx[0]], vertices[idx[k]], vertices[idx[k + 1]]]);
                }
            }
            _ => {}
        }
    }
    tris
}
