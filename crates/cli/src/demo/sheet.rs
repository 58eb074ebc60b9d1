//! Labelled contact sheets: a built-in 5x7 bitmap font, text drawn into linear-RGB images,
//! and [`Sheet`], a grid of equally sized tiles under column labels and beside row labels,
//! each tile with an optional caption.

use glam::Vec3;
use lumbre_raytrace::Image;

use crate::error::Result;

/// Columns and rows of a glyph; characters advance by one more column of space.
const GLYPH_W: u32 = 5;
const GLYPH_H: u32 = 7;
const ADVANCE: u32 = GLYPH_W + 1;

/// ASCII 32 (space) to 126 (`~`), one glyph a line: its 7 rows top to bottom, bit 4 the
/// leftmost column. Lowercase letters start at row 2; with no row below the baseline, those
/// with a descender (g, p, q, y) have a three-row body and their tail in rows 5 and 6.
#[rustfmt::skip]
const FONT: [[u8; 7]; 95] = [
    [0b00000, 0b00000, 0b00000, 0b00000, 0b00000, 0b00000, 0b00000], // space
    [0b00100, 0b00100, 0b00100, 0b00100, 0b00100, 0b00000, 0b00100], // !
    [0b01010, 0b01010, 0b01010, 0b00000, 0b00000, 0b00000, 0b00000], // "
    [0b01010, 0b01010, 0b11111, 0b01010, 0b11111, 0b01010, 0b01010], // #
    [0b00100, 0b01111, 0b10100, 0b01110, 0b00101, 0b11110, 0b00100], // $
    [0b11000, 0b11001, 0b00010, 0b00100, 0b01000, 0b10011, 0b00011], // %
    [0b01100, 0b10010, 0b10100, 0b01000, 0b10101, 0b10010, 0b01101], // &
    [0b01100, 0b00100, 0b01000, 0b00000, 0b00000, 0b00000, 0b00000], // '
    [0b00010, 0b00100, 0b01000, 0b01000, 0b01000, 0b00100, 0b00010], // (
    [0b01000, 0b00100, 0b00010, 0b00010, 0b00010, 0b00100, 0b01000], // )
    [0b00000, 0b00100, 0b10101, 0b01110, 0b10101, 0b00100, 0b00000], // *
    [0b00000, 0b00100, 0b00100, 0b11111, 0b00100, 0b00100, 0b00000], // +
    [0b00000, 0b00000, 0b00000, 0b00000, 0b01100, 0b00100, 0b01000], // ,
    [0b00000, 0b00000, 0b00000, 0b11111, 0b00000, 0b00000, 0b00000], // -
    [0b00000, 0b00000, 0b00000, 0b00000, 0b00000, 0b01100, 0b01100], // .
    [0b00000, 0b00001, 0b00010, 0b00100, 0b01000, 0b10000, 0b00000], // /
    [0b01110, 0b10001, 0b10011, 0b10101, 0b11001, 0b10001, 0b01110], // 0
    [0b00100, 0b01100, 0b00100, 0b00100, 0b00100, 0b00100, 0b01110], // 1
    [0b01110, 0b10001, 0b00001, 0b00010, 0b00100, 0b01000, 0b11111], // 2
    [0b11111, 0b00010, 0b00100, 0b00010, 0b00001, 0b10001, 0b01110], // 3
    [0b00010, 0b00110, 0b01010, 0b10010, 0b11111, 0b00010, 0b00010], // 4
    [0b11111, 0b10000, 0b11110, 0b00001, 0b00001, 0b10001, 0b01110], // 5
    [0b00110, 0b01000, 0b10000, 0b11110, 0b10001, 0b10001, 0b01110], // 6
    [0b11111, 0b00001, 0b00010, 0b00100, 0b01000, 0b01000, 0b01000], // 7
    [0b01110, 0b10001, 0b10001, 0b01110, 0b10001, 0b10001, 0b01110], // 8
    [0b01110, 0b10001, 0b10001, 0b01111, 0b00001, 0b00010, 0b01100], // 9
    [0b00000, 0b01100, 0b01100, 0b00000, 0b01100, 0b01100, 0b00000], // :
    [0b00000, 0b01100, 0b01100, 0b00000, 0b01100, 0b00100, 0b01000], // ;
    [0b00010, 0b00100, 0b01000, 0b10000, 0b01000, 0b00100, 0b00010], // <
    [0b00000, 0b00000, 0b11111, 0b00000, 0b11111, 0b00000, 0b00000], // =
    [0b01000, 0b00100, 0b00010, 0b00001, 0b00010, 0b00100, 0b01000], // >
    [0b01110, 0b10001, 0b00001, 0b00010, 0b00100, 0b00000, 0b00100], // ?
    [0b01110, 0b10001, 0b00001, 0b01101, 0b10101, 0b10101, 0b01110], // @
    [0b01110, 0b10001, 0b10001, 0b11111, 0b10001, 0b10001, 0b10001], // A
    [0b11110, 0b10001, 0b10001, 0b11110, 0b10001, 0b10001, 0b11110], // B
    [0b01110, 0b10001, 0b10000, 0b10000, 0b10000, 0b10001, 0b01110], // C
    [0b11100, 0b10010, 0b10001, 0b10001, 0b10001, 0b10010, 0b11100], // D
    [0b11111, 0b10000, 0b10000, 0b11110, 0b10000, 0b10000, 0b11111], // E
    [0b11111, 0b10000, 0b10000, 0b11110, 0b10000, 0b10000, 0b10000], // F
    [0b01110, 0b10001, 0b10000, 0b10111, 0b10001, 0b10001, 0b01111], // G
    [0b10001, 0b10001, 0b10001, 0b11111, 0b10001, 0b10001, 0b10001], // H
    [0b01110, 0b00100, 0b00100, 0b00100, 0b00100, 0b00100, 0b01110], // I
    [0b00111, 0b00010, 0b00010, 0b00010, 0b00010, 0b10010, 0b01100], // J
    [0b10001, 0b10010, 0b10100, 0b11000, 0b10100, 0b10010, 0b10001], // K
    [0b10000, 0b10000, 0b10000, 0b10000, 0b10000, 0b10000, 0b11111], // L
    [0b10001, 0b11011, 0b10101, 0b10101, 0b10001, 0b10001, 0b10001], // M
    [0b10001, 0b10001, 0b11001, 0b10101, 0b10011, 0b10001, 0b10001], // N
    [0b01110, 0b10001, 0b10001, 0b10001, 0b10001, 0b10001, 0b01110], // O
    [0b11110, 0b10001, 0b10001, 0b11110, 0b10000, 0b10000, 0b10000], // P
    [0b01110, 0b10001, 0b10001, 0b10001, 0b10101, 0b10010, 0b01101], // Q
    [0b11110, 0b10001, 0b10001, 0b11110, 0b10100, 0b10010, 0b10001], // R
    [0b01111, 0b10000, 0b10000, 0b01110, 0b00001, 0b00001, 0b11110], // S
    [0b11111, 0b00100, 0b00100, 0b00100, 0b00100, 0b00100, 0b00100], // T
    [0b10001, 0b10001, 0b10001, 0b10001, 0b10001, 0b10001, 0b01110], // U
    [0b10001, 0b10001, 0b10001, 0b10001, 0b10001, 0b01010, 0b00100], // V
    [0b10001, 0b10001, 0b10001, 0b10101, 0b10101, 0b10101, 0b01010], // W
    [0b10001, 0b10001, 0b01010, 0b00100, 0b01010, 0b10001, 0b10001], // X
    [0b10001, 0b10001, 0b10001, 0b01010, 0b00100, 0b00100, 0b00100], // Y
    [0b11111, 0b00001, 0b00010, 0b00100, 0b01000, 0b10000, 0b11111], // Z
    [0b01110, 0b01000, 0b01000, 0b01000, 0b01000, 0b01000, 0b01110], // [
    [0b00000, 0b10000, 0b01000, 0b00100, 0b00010, 0b00001, 0b00000], // backslash
    [0b01110, 0b00010, 0b00010, 0b00010, 0b00010, 0b00010, 0b01110], // ]
    [0b00100, 0b01010, 0b10001, 0b00000, 0b00000, 0b00000, 0b00000], // ^
    [0b00000, 0b00000, 0b00000, 0b00000, 0b00000, 0b00000, 0b11111], // _
    [0b01000, 0b00100, 0b00010, 0b00000, 0b00000, 0b00000, 0b00000], // `
    [0b00000, 0b00000, 0b01110, 0b00001, 0b01111, 0b10001, 0b01111], // a
    [0b10000, 0b10000, 0b10110, 0b11001, 0b10001, 0b10001, 0b11110], // b
    [0b00000, 0b00000, 0b01110, 0b10000, 0b10000, 0b10001, 0b01110], // c
    [0b00001, 0b00001, 0b01101, 0b10011, 0b10001, 0b10001, 0b01111], // d
    [0b00000, 0b00000, 0b01110, 0b10001, 0b11111, 0b10000, 0b01110], // e
    [0b00110, 0b01001, 0b01000, 0b11100, 0b01000, 0b01000, 0b01000], // f
    [0b00000, 0b00000, 0b01111, 0b10001, 0b01111, 0b00001, 0b01110], // g
    [0b10000, 0b10000, 0b10110, 0b11001, 0b10001, 0b10001, 0b10001], // h
    [0b00100, 0b00000, 0b01100, 0b00100, 0b00100, 0b00100, 0b01110], // i
    [0b00010, 0b00000, 0b00110, 0b00010, 0b00010, 0b10010, 0b01100], // j
    [0b10000, 0b10000, 0b10010, 0b10100, 0b11000, 0b10100, 0b10010], // k
    [0b01100, 0b00100, 0b00100, 0b00100, 0b00100, 0b00100, 0b01110], // l
    [0b00000, 0b00000, 0b11010, 0b10101, 0b10101, 0b10001, 0b10001], // m
    [0b00000, 0b00000, 0b10110, 0b11001, 0b10001, 0b10001, 0b10001], // n
    [0b00000, 0b00000, 0b01110, 0b10001, 0b10001, 0b10001, 0b01110], // o
    [0b00000, 0b00000, 0b11110, 0b10001, 0b11110, 0b10000, 0b10000], // p
    [0b00000, 0b00000, 0b01111, 0b10001, 0b01111, 0b00001, 0b00001], // q
    [0b00000, 0b00000, 0b10110, 0b11001, 0b10000, 0b10000, 0b10000], // r
    [0b00000, 0b00000, 0b01111, 0b10000, 0b01110, 0b00001, 0b11110], // s
    [0b01000, 0b01000, 0b11100, 0b01000, 0b01000, 0b01001, 0b00110], // t
    [0b00000, 0b00000, 0b10001, 0b10001, 0b10001, 0b10011, 0b01101], // u
    [0b00000, 0b00000, 0b10001, 0b10001, 0b10001, 0b01010, 0b00100], // v
    [0b00000, 0b00000, 0b10001, 0b10001, 0b10101, 0b10101, 0b01010], // w
    [0b00000, 0b00000, 0b10001, 0b01010, 0b00100, 0b01010, 0b10001], // x
    [0b00000, 0b00000, 0b10001, 0b10001, 0b01111, 0b00001, 0b01110], // y
    [0b00000, 0b00000, 0b11111, 0b00010, 0b00100, 0b01000, 0b11111], // z
    [0b00010, 0b00100, 0b00100, 0b01000, 0b00100, 0b00100, 0b00010], // {
    [0b00100, 0b00100, 0b00100, 0b00100, 0b00100, 0b00100, 0b00100], // |
    [0b01000, 0b00100, 0b00100, 0b00010, 0b00100, 0b00100, 0b01000], // }
    [0b00000, 0b00000, 0b01000, 0b10101, 0b00010, 0b00000, 0b00000], // ~
];

/// Drawn for a character the font lacks: the outline of the glyph cell.
#[rustfmt::skip]
const BOX: [u8; 7] = [0b11111, 0b10001, 0b10001, 0b10001, 0b10001, 0b10001, 0b11111];

/// The rows of `c`'s glyph ([`BOX`] outside printable ASCII).
fn glyph(c: char) -> &'static [u8; 7] {
    match c {
        ' '..='~' => &FONT[c as usize - ' ' as usize],
        _ => &BOX,
    }
}

/// Width in pixels of `text` drawn at `scale` (pixels per font pixel): 6 columns a
/// character less the space after the last; 0 for empty text.
pub fn text_width(text: &str, scale: u32) -> u32 {
    let n = text.chars().count() as u64;
    let w = (n * u64::from(ADVANCE)).saturating_sub(1) * u64::from(scale);
    u32::try_from(w).unwrap_or(u32::MAX)
}

/// Height in pixels of a line of text at `scale`.
fn text_height(scale: u32) -> u32 {
    GLYPH_H.saturating_mul(scale)
}

/// Draws `text` with its top-left corner at `(x, y)`, each font pixel a `scale` x `scale`
/// block of `colour` (linear RGB), on one line. Pixels past the image's edges are skipped;
/// characters outside printable ASCII draw as a box. Only pixels inside the text's box,
/// [`text_width`] by 7 x `scale`, are written.
pub fn draw_text(image: &mut Image, x: u32, y: u32, text: &str, scale: u32, colour: Vec3) {
    let s = u64::from(scale);
    for (i, c) in text.chars().enumerate() {
        let left = u64::from(x) + i as u64 * u64::from(ADVANCE) * s;
        if left >= u64::from(image.width) || s == 0 {
            break;
        }
        for (row, bits) in glyph(c).iter().enumerate() {
            for col in 0..GLYPH_W {
                if (bits >> (GLYPH_W - 1 - col)) & 1 == 1 {
                    let top = u64::from(y) + row as u64 * s;
                    for_each_in(image, left + u64::from(col) * s, top, s, s, |p| *p = colour);
                }
            }
        }
    }
}

/// Applies `f` to every pixel of the `w` x `h` rectangle at `(x, y)` that lies inside the
/// image (coordinates in u64 so that no sum overflows).
fn for_each_in(image: &mut Image, x: u64, y: u64, w: u64, h: u64, mut f: impl FnMut(&mut Vec3)) {
    let (width, height) = (u64::from(image.width), u64::from(image.height));
    for py in y..(y.saturating_add(h)).min(height) {
        for px in x..(x.saturating_add(w)).min(width) {
            f(&mut image.pixels[(py * width + px) as usize]);
        }
    }
}

/// `text` if it fits in `width` pixels at `scale`, else its longest prefix that fits with
/// `..` after it (empty when not even `..` fits).
fn cut(text: &str, width: u32, scale: u32) -> String {
    if text_width(text, scale) <= width {
        return text.to_string();
    }
    // n characters take (6n - 1) * scale pixels.
    let fits = ((width / scale.max(1)) as usize + 1) / ADVANCE as usize;
    if fits < 2 {
        return String::new();
    }
    let kept: String = text.chars().take(fits - 2).collect();
    kept.trim_end().to_string() + ".."
}

/// `text` broken at spaces into at most `max_lines` lines of at most `width` pixels at
/// `scale`: a word too long for a line is cut with `..`, and so is the last line when more
/// text follows.
fn wrap(text: &str, width: u32, scale: u32, max_lines: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        let joined = if line.is_empty() { word.to_string() } else { format!("{line} {word}") };
        if line.is_empty() || text_width(&joined, scale) <= width {
            line = joined;
        } else {
            lines.push(std::mem::replace(&mut line, word.to_string()));
        }
    }
    if !line.is_empty() {
        lines.push(line);
    }
    if lines.len() > max_lines {
        if let Some(last) = max_lines.checked_sub(1) {
            // The last kept line and the start of the next do not fit together: cut them.
            lines[last] = format!("{} {}", lines[last], lines[last + 1]);
        }
        lines.truncate(max_lines);
    }
    lines.iter().map(|l| cut(l, width, scale)).filter(|l| !l.is_empty()).collect()
}

/// The background of a sheet and the colour of its labels (linear RGB).
const BACKGROUND: Vec3 = Vec3::splat(0.02);
const INK: Vec3 = Vec3::ONE;
/// Captions sit on the tile darkened to this fraction, so white text reads over any image.
const BAND: f32 = 0.1;
/// Lines of a column label at most (longer labels are cut with `..`).
const HEADER_LINES: usize = 3;
/// Lines of a caption at most.
const NOTE_LINES: usize = 2;

/// A contact sheet: `rows` x `columns` tiles of `tile` x `tile` pixels on a dark grey
/// background, with the column labels in a header row above them and the row labels in a
/// column at their left, in white. Each tile may hold an image and a caption over its
/// bottom. Labels and captions are drawn at `tile / 128` pixels per font pixel (1 to 4);
/// the header is as tall as the longest column label needs (wrapped at spaces, up to three
/// lines) and the label column as wide as the longest row label (at most one tile); a label
/// longer than its space is cut with `..`.
pub struct Sheet {
    tile: u32,
    columns: Vec<String>,
    rows: Vec<String>,
    /// Row-major tiles, already `tile` x `tile`.
    images: Vec<Option<Image>>,
    notes: Vec<Option<String>>,
}

/// Where everything of a sheet goes, from its tile size and labels.
struct Layout {
    /// Pixels per font pixel.
    scale: u32,
    /// Space around text.
    pad: u32,
    /// Space between tiles and around the grid.
    gap: u32,
    /// From one line of text to the next.
    line: u32,
    /// Height of the header row and width of the label column (0 when they have no text).
    header: u32,
    left: u32,
    columns: Vec<Vec<String>>,
    rows: Vec<Vec<String>>,
}

impl Layout {
    /// Height of `n` lines of text.
    fn block(&self, n: usize) -> u32 {
        (n as u32 * self.line).saturating_sub(self.line - text_height(self.scale))
    }
}

impl Sheet {
    /// A sheet of `tile` x `tile` tiles, one column per entry of `columns` and one row per
    /// entry of `rows`, each entry the label drawn for it; every tile starts empty.
    pub fn new(tile: u32, columns: Vec<String>, rows: Vec<String>) -> Sheet {
        let n = columns.len() * rows.len();
        Sheet { tile, columns, rows, images: vec![None; n], notes: vec![None; n] }
    }

    fn index(&self, row: usize, col: usize) -> Result<usize> {
        if row >= self.rows.len() || col >= self.columns.len() {
            return Err(format!(
                "tile (row {row}, column {col}) outside a sheet of {} rows and {} columns",
                self.rows.len(),
                self.columns.len()
            )
            .into());
        }
        Ok(row * self.columns.len() + col)
    }

    /// Puts `image` in the tile at `row`, `col` (from 0), stretched to the tile by nearest
    /// neighbour when its size differs. An error when the tile is outside the sheet or the
    /// image is empty.
    pub fn set(&mut self, row: usize, col: usize, image: &Image) -> Result<()> {
        let i = self.index(row, col)?;
        if image.width == 0 || image.height == 0 {
            return Err(format!("tile (row {row}, column {col}): empty {}x{} image", image.width, image.height).into());
        }
        let t = u64::from(self.tile);
        let (w, h) = (u64::from(image.width), u64::from(image.height));
        let mut tile = Image::new(self.tile, self.tile);
        for y in 0..self.tile {
            for x in 0..self.tile {
                let (sx, sy) = (u64::from(x) * w / t, u64::from(y) * h / t);
                tile.set(x, y, image.get(sx as u32, sy as u32));
            }
        }
        self.images[i] = Some(tile);
        Ok(())
    }

    /// A caption for the tile at `row`, `col` (such as "2.3% 12 ms"), drawn over the tile's
    /// bottom on a dark band, up to two lines; an error when the tile is outside the sheet.
    pub fn note(&mut self, row: usize, col: usize, text: &str) -> Result<()> {
        let i = self.index(row, col)?;
        self.notes[i] = Some(text.to_string());
        Ok(())
    }

    fn layout(&self) -> Layout {
        let scale = (self.tile / 128).clamp(1, 4);
        let (pad, gap, line) = (2 * scale, 2 * scale, text_height(scale) + 2 * scale);
        let room = self.tile.saturating_sub(2 * pad);
        let columns: Vec<Vec<String>> = self.columns.iter().map(|c| wrap(c, room, scale, HEADER_LINES)).collect();
        let row_lines = ((self.tile + 2 * scale) / line) as usize;
        let rows: Vec<Vec<String>> = self.rows.iter().map(|r| wrap(r, self.tile, scale, row_lines)).collect();
        let mut layout = Layout { scale, pad, gap, line, header: 0, left: 0, columns, rows };
        let lines = layout.columns.iter().map(Vec::len).max().unwrap_or(0);
        if lines > 0 {
            layout.header = layout.block(lines) + 2 * pad;
        }
        let widest = layout.rows.iter().flatten().map(|l| text_width(l, scale)).max().unwrap_or(0);
        if widest > 0 {
            layout.left = widest + 2 * pad;
        }
        layout
    }

    /// Top-left corner of the tile at `row`, `col`.
    fn origin(&self, layout: &Layout, row: usize, col: usize) -> (u32, u32) {
        let step = self.tile + layout.gap;
        (layout.left + layout.gap + col as u32 * step, layout.header + layout.gap + row as u32 * step)
    }

    /// The sheet drawn: background, labels, tiles and captions.
    pub fn image(&self) -> Image {
        let layout = self.layout();
        let (right, bottom) = self.origin(&layout, self.rows.len(), self.columns.len());
        let mut sheet = Image::from_pixels(right, bottom, vec![BACKGROUND; right as usize * bottom as usize])
            .unwrap_or_else(|_| Image::new(right, bottom));
        let s = layout.scale;
        for (col, lines) in layout.columns.iter().enumerate() {
            // Centred over the tile, the last line just above the tiles.
            let (x0, _) = self.origin(&layout, 0, col);
            let top = layout.header.saturating_sub(layout.pad + layout.block(lines.len()));
            for (i, l) in lines.iter().enumerate() {
                let x = x0 + self.tile.saturating_sub(text_width(l, s)) / 2;
                draw_text(&mut sheet, x, top + i as u32 * layout.line, l, s, INK);
            }
        }
        for (row, lines) in layout.rows.iter().enumerate() {
            // Left-aligned, centred on the tile's height.
            let (_, y0) = self.origin(&layout, row, 0);
            let top = y0 + self.tile.saturating_sub(layout.block(lines.len())) / 2;
            for (i, l) in lines.iter().enumerate() {
                draw_text(&mut sheet, layout.pad, top + i as u32 * layout.line, l, s, INK);
            }
        }
        for row in 0..self.rows.len() {
            for col in 0..self.columns.len() {
                let i = row * self.columns.len() + col;
                let (x0, y0) = self.origin(&layout, row, col);
                if let Some(tile) = &self.images[i] {
                    for y in 0..self.tile {
                        for x in 0..self.tile {
                            sheet.set(x0 + x, y0 + y, tile.get(x, y));
                        }
                    }
                }
                if let Some(note) = &self.notes[i] {
                    self.caption(&mut sheet, &layout, (x0, y0), note);
                }
            }
        }
        sheet
    }

    /// Draws `note` centred over the bottom of the tile at `(x0, y0)` on a darkened band.
    fn caption(&self, sheet: &mut Image, layout: &Layout, (x0, y0): (u32, u32), note: &str) {
        let s = layout.scale;
        let lines = wrap(note, self.tile.saturating_sub(2 * layout.pad), s, NOTE_LINES);
        if lines.is_empty() {
            return;
        }
        let band = (layout.block(lines.len()) + 2 * layout.pad).min(self.tile);
        let top = y0 + self.tile - band;
        let (x, y, t) = (u64::from(x0), u64::from(top), u64::from(self.tile));
        for_each_in(sheet, x, y, t, u64::from(band), |p| *p *= BAND);
        for (i, l) in lines.iter().enumerate() {
            let x = x0 + self.tile.saturating_sub(text_width(l, s)) / 2;
            draw_text(sheet, x, top + layout.pad + i as u32 * layout.line, l, s, INK);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const RED: Vec3 = Vec3::new(1.0, 0.0, 0.0);

    /// The image as rows of `#` (pixel equal to `ink`) and `.` (anything else).
    fn art(image: &Image, ink: Vec3) -> Vec<String> {
        (0..image.height)
            .map(|y| (0..image.width).map(|x| if image.get(x, y) == ink { '#' } else { '.' }).collect())
            .collect()
    }

    fn drawn(text: &str, scale: u32) -> Vec<String> {
        let mut img = Image::new(text_width(text, scale), text_height(scale));
        draw_text(&mut img, 0, 0, text, scale, Vec3::ONE);
        art(&img, Vec3::ONE)
    }

    #[test]
    fn one_and_percent_render_their_pixels() {
        assert_eq!(drawn("1", 1), ["..#..", ".##..", "..#..", "..#..", "..#..", "..#..", ".###."]);
        assert_eq!(drawn("%", 1), ["##...", "##..#", "...#.", "..#..", ".#...", "#..##", "...##"]);
        // Scale 2: every font pixel a 2x2 block; a column of space between characters.
        let two = drawn("1%", 2);
        assert_eq!(two.len(), 14);
        assert_eq!(two[0], "....##......####......");
        assert_eq!(two[1], two[0]);
        assert_eq!(two[13], "..######..........####");
    }

    #[test]
    fn unknown_characters_draw_a_box() {
        let boxed = ["#####", "#...#", "#...#", "#...#", "#...#", "#...#", "#####"];
        assert_eq!(drawn("é", 1), boxed);
        assert_eq!(drawn("\u{1}", 1), boxed);
        assert_eq!(drawn("\n", 1), boxed);
    }

    #[test]
    fn font_is_five_columns_wide_and_its_glyphs_differ() {
        for (i, g) in FONT.iter().enumerate() {
            assert!(g.iter().all(|&r| r < 32), "glyph {i} wider than 5 columns");
            assert_eq!(g.iter().all(|&r| r == 0), i == 0, "only the space is blank (glyph {i})");
            assert!(FONT[..i].iter().all(|h| h != g), "glyph {i} repeats an earlier one");
            assert_ne!(g, &BOX, "glyph {i} looks like the unknown-character box");
        }
    }

    #[test]
    fn text_width_counts_characters() {
        assert_eq!(text_width("", 3), 0);
        assert_eq!(text_width("1", 1), 5);
        assert_eq!(text_width("ab", 2), 22);
        assert_eq!(text_width("é%", 1), 11);
        assert_eq!(text_width("x", 0), 0);
        assert_eq!(text_width(&"m".repeat(1000), u32::MAX), u32::MAX);
    }

    #[test]
    fn text_is_clipped_at_every_edge() {
        let (w, h) = (23, 11);
        let text = "Hi %1";
        let edges = [0, 1, w - 4, w - 1, w, w + 9, u32::MAX - 3, u32::MAX];
        for &x in &edges {
            for &y in &[0, 1, h - 3, h - 1, h, u32::MAX] {
                for scale in [1, 2, 5] {
                    let mut img = Image::new(w, h);
                    draw_text(&mut img, x, y, text, scale, RED);
                    // What is inside the image is exactly the unclipped drawing, shifted.
                    let full = drawn(text, scale);
                    for py in 0..h {
                        for px in 0..w {
                            let (dx, dy) = (u64::from(px).checked_sub(x.into()), u64::from(py).checked_sub(y.into()));
                            let expected = match (dx, dy) {
                                (Some(dx), Some(dy)) => full
                                    .get(dy as usize)
                                    .and_then(|r| r.as_bytes().get(dx as usize))
                                    .is_some_and(|&b| b == b'#'),
                                _ => false,
                            };
                            assert_eq!(img.get(px, py) == RED, expected, "({x}, {y}) scale {scale} pixel ({px}, {py})");
                        }
                    }
                }
            }
        }
        // The right and bottom edges cut through glyphs: some pixels are written.
        let mut img = Image::new(w, h);
        draw_text(&mut img, w - 3, h - 4, "H", 1, RED);
        assert_eq!(img.pixels.iter().filter(|&&p| p == RED).count(), 6); // "#.." three times, "###"
    }

    #[test]
    fn long_labels_are_cut_and_wrapped() {
        assert_eq!(cut("reference", 200, 1), "reference");
        // 29 pixels hold 5 characters: 3 of the label and "..".
        assert_eq!(cut("reference", 29, 1), "ref..");
        assert_eq!(cut("path tracer", 29, 1), "pat..");
        assert_eq!(cut("ab cd", 29, 1), "ab cd");
        assert_eq!(cut("abc def", 29, 1), "abc..");
        assert_eq!(cut("abcdef", 10, 1), "");
        assert_eq!(wrap("Whitted (direct light) on cpu", 100, 1, 3), ["Whitted (direct", "light) on cpu"]);
        assert_eq!(wrap("one two three four", 45, 1, 2), ["one two", "three.."]);
        assert_eq!(wrap("supercalifragilistic x", 40, 1, 3), ["supe..", "x"]);
        assert!(wrap("   ", 40, 1, 3).is_empty());
        assert!(wrap("a b", 40, 1, 0).is_empty());
    }

    fn labels(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn sheet_size_follows_tiles_and_labels() {
        // No labels: the tiles and the gaps between and around them (scale 1 at 64 pixels).
        let bare = Sheet::new(64, labels(&["", ""]), labels(&["", "", ""])).image();
        assert_eq!((bare.width, bare.height), (2 + 2 * 66, 2 + 3 * 66));
        // One line of labels at scale 2: a header 7*2 + 2*4 tall; a label column as wide as
        // "relative error" (14 characters) plus padding.
        let sheet = Sheet::new(256, labels(&["reference", "x"]), labels(&["image", "relative error"])).image();
        let left = text_width("relative error", 2) + 8;
        assert_eq!(left, 174);
        assert_eq!((sheet.width, sheet.height), (left + 4 + 2 * 260, 22 + 4 + 2 * 260));
        // A column label of two lines adds a line to the header.
        let sheet = Sheet::new(256, labels(&["reference", &"a ".repeat(15)]), labels(&["image"])).image();
        assert_eq!(sheet.height, 22 + 18 + 4 + 260);
        // A row label longer than a tile is wrapped, so the label column stays one tile wide.
        let sheet = Sheet::new(64, labels(&["c"]), labels(&["a very long row label indeed"])).image();
        let widest = wrap("a very long row label indeed", 64, 1, 7).iter().map(|l| text_width(l, 1)).max();
        assert!(widest.unwrap() <= 64);
        assert_eq!(sheet.width, widest.unwrap() + 4 + 2 + 66);
    }

    #[test]
    fn tiles_land_where_they_should() {
        let mut sheet = Sheet::new(128, labels(&["a", "b", "c"]), labels(&["one", "two"]));
        // A 16x8 red image fills its 128x128 tile (nearest neighbour).
        let red = Image::from_pixels(16, 8, vec![RED; 128]).unwrap();
        sheet.set(1, 2, &red).unwrap();
        let layout = sheet.layout();
        let (x0, y0) = sheet.origin(&layout, 1, 2);
        assert_eq!((x0, y0), (layout.left + 2 + 2 * 130, layout.header + 2 + 130));
        let img = sheet.image();
        let reds = img.pixels.iter().filter(|&&p| p == RED).count();
        assert_eq!(reds, 128 * 128);
        for (x, y) in [(x0, y0), (x0 + 127, y0), (x0, y0 + 127), (x0 + 127, y0 + 127)] {
            assert_eq!(img.get(x, y), RED);
        }
        for (x, y) in [(x0 - 1, y0), (x0, y0 - 1), (x0 + 128, y0), (x0, y0 + 128)] {
            assert_eq!(img.get(x, y), BACKGROUND);
        }
        // Nearest neighbour: a 2x1 image gives the tile's left half one colour, right half the other.
        let two = Image::from_pixels(2, 1, vec![RED, Vec3::Y]).unwrap();
        sheet.set(0, 0, &two).unwrap();
        let (x0, y0) = sheet.origin(&layout, 0, 0);
        let img = sheet.image();
        assert_eq!((img.get(x0 + 63, y0 + 100), img.get(x0 + 64, y0 + 100)), (RED, Vec3::Y));
        // Labels: white text above column "b" and left of row "two", none over the tiles.
        let (bx, _) = sheet.origin(&layout, 0, 1);
        let ink_in = |x: std::ops::Range<u32>, y: std::ops::Range<u32>| {
            y.flat_map(|y| x.clone().map(move |x| (x, y))).filter(|&(x, y)| img.get(x, y) == INK).count()
        };
        assert!(ink_in(bx..bx + 128, 0..layout.header) > 0);
        let (_, ty) = sheet.origin(&layout, 1, 0);
        assert!(ink_in(0..layout.left, ty..ty + 128) > 0);
        assert_eq!(ink_in(layout.left..img.width, layout.header..img.height), 0);
        // Outside the sheet, or an empty image: an error naming the tile.
        let err = sheet.set(2, 0, &red).unwrap_err().to_string();
        assert!(err.contains("row 2, column 0") && err.contains("2 rows and 3 columns"), "{err}");
        assert!(sheet.note(0, 3, "x").is_err());
        assert!(sheet.set(0, 0, &Image::new(0, 4)).unwrap_err().to_string().contains("empty 0x4"));
    }

    #[test]
    fn captions_sit_on_a_dark_band_over_the_tile_bottom() {
        let mut sheet = Sheet::new(128, labels(&["a"]), labels(&["b"]));
        let grey = Image::from_pixels(1, 1, vec![Vec3::splat(0.5)]).unwrap();
        sheet.set(0, 0, &grey).unwrap();
        sheet.note(0, 0, "2.3% 12 ms").unwrap();
        let layout = sheet.layout();
        let (x0, y0) = sheet.origin(&layout, 0, 0);
        let img = sheet.image();
        // One line: the band is 7 + 2 * 2 pixels tall at scale 1.
        assert_eq!(img.get(x0 + 1, y0 + 128 - 12), Vec3::splat(0.5));
        assert_eq!(img.get(x0 + 1, y0 + 128 - 11), Vec3::splat(0.5 * BAND));
        assert_eq!(img.get(x0 + 127, y0 + 127), Vec3::splat(0.5 * BAND));
        // The caption's text, centred: its first column is where centring puts it.
        let x = x0 + (128 - text_width("2.3% 12 ms", 1)) / 2;
        let col: Vec<bool> = (0..7).map(|dy| img.get(x, y0 + 128 - 9 + dy) == INK).collect();
        assert_eq!(col, [false, true, false, false, false, false, true]); // the left of "2"
    }

    #[test]
    fn degenerate_sheets_draw_without_panic() {
        for tile in [0, 1, 3, 8, 600] {
            let long = "a label far longer than any tile of this sheet could hold".to_string();
            let mut sheet = Sheet::new(tile, vec![long.clone(), String::new()], vec![long, "é".into()]);
            sheet.set(1, 1, &Image::new(3, 700)).unwrap();
            sheet.note(1, 1, "2.3% 12 ms and a caption that runs on past two lines of any tile").unwrap();
            sheet.note(0, 0, "").unwrap();
            let img = sheet.image();
            let layout = sheet.layout();
            assert_eq!((img.width, img.height), sheet.origin(&layout, 2, 2), "tile {tile}");
        }
        let empty = Sheet::new(64, Vec::new(), Vec::new()).image();
        assert_eq!((empty.width, empty.height), (2, 2));
    }

    proptest! {
        #[test]
        fn drawing_writes_only_inside_the_text_box(
            text in "\\PC{0,12}",
            x in 0u32..40,
            y in 0u32..30,
            scale in 0u32..4,
            w in 1u32..32,
            h in 1u32..24,
        ) {
            let mut img = Image::new(w, h);
            draw_text(&mut img, x, y, &text, scale, Vec3::ONE);
            let (bw, bh) = (text_width(&text, scale), text_height(scale));
            for py in 0..h {
                for px in 0..w {
                    let inside = px >= x && px < x + bw && py >= y && py < y + bh;
                    prop_assert!(inside || img.get(px, py) == Vec3::ZERO, "({px}, {py}) outside the box");
                }
            }
            if bw > 0 && bh > 0 && x < w && y < h && text.chars().any(|c| c != ' ') {
                // Every glyph but the space has pixels: when the first such glyph lies
                // wholly inside the image, some of them show.
                let first = text.chars().position(|c| c != ' ').unwrap() as u32 * ADVANCE * scale;
                if x + first + 5 * scale <= w && y + bh <= h {
                    prop_assert!(img.pixels.contains(&Vec3::ONE));
                }
            }
        }
    }
}
