//! Named pixel rectangles whose mean error the metrics report, with the Cornell box preset.

use std::fmt;

/// A named rectangle of pixels: columns `x .. x + width`, rows `y .. y + height` (row 0 at
/// the top).
///
/// ```
/// use lumbre_raytrace::metrics::Region;
/// let r = Region::new("wall", 2, 3, 4, 5);
/// assert!(r.contains(2, 3) && r.contains(5, 7) && !r.contains(6, 7));
/// assert_eq!(r.to_string(), "wall=2,3,4,5");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Region {
    /// What the rectangle covers, e.g. `left wall`.
    pub name: String,
    /// First column.
    pub x: u32,
    /// First row.
    pub y: u32,
    /// Columns.
    pub width: u32,
    /// Rows.
    pub height: u32,
}

/// The Cornell box preset: each surface's rectangle as `(name, u0, u1, v0, v1)`, with
/// `u = (column - image_width / 2) / image_height` (horizontal offset from the image centre
/// in image heights) and `v = row / image_height`. The reference camera
/// (`0,1,3.9, 0,1,0, 0,1,0, 40`) has a vertical field of view, so a surface keeps these
/// coordinates at every resolution and aspect ratio. Read off a render of
/// `CornellBox-Diffuse.obj` and kept a few pixels (at 640x480) inside each surface, clear of
/// the light, the boxes' edges and the walls' corners; a test casts rays through every pixel
/// of every rectangle to check that they hit the named surface.
const CORNELL: [(&str, f64, f64, f64, f64); 7] = [
    ("left wall", -0.45, -0.30, 0.25, 0.70),
    ("right wall", 0.30, 0.45, 0.25, 0.70),
    ("back wall", -0.22, 0.22, 0.26, 0.40),
    ("ceiling", -0.35, 0.35, 0.05, 0.11),
    ("floor", -0.30, -0.06, 0.88, 0.95),
    ("tall box", -0.19, -0.04, 0.47, 0.80),
    ("short box", 0.01, 0.23, 0.70, 0.90),
];

/// The pixels `[lo, hi)` inside the continuous interval `[a, b]`, clipped to `[0, n)`;
/// when no whole pixel fits, the one pixel holding the interval's midpoint.
fn inward(a: f64, b: f64, n: u32) -> (u32, u32) {
    // The slack keeps edges that land on whole pixels (up to rounding) on them.
    let lo = (a - 1e-9).ceil().clamp(0.0, f64::from(n));
    let hi = (b + 1e-9).floor().clamp(0.0, f64::from(n));
    if hi > lo {
        return (lo as u32, hi as u32);
    }
    let mid = (0.5 * (a + b)).floor();
    if mid < 0.0 || mid >= f64::from(n) { (0, 0) } else { (mid as u32, mid as u32 + 1) }
}

impl Region {
    /// A region from its name and pixel rectangle.
    ///
    /// ```
    /// let r = lumbre_raytrace::metrics::Region::new("floor", 0, 10, 20, 5);
    /// assert_eq!((r.name.as_str(), r.y, r.height), ("floor", 10, 5));
    /// ```
    pub fn new(name: impl Into<String>, x: u32, y: u32, width: u32, height: u32) -> Region {
        Region { name: name.into(), x, y, width, height }
    }

    /// Whether pixel `(x, y)` is in the rectangle.
    ///
    /// ```
    /// let r = lumbre_raytrace::metrics::Region::new("one pixel", 3, 4, 1, 1);
    /// assert!(r.contains(3, 4) && !r.contains(4, 4) && !r.contains(3, 5));
    /// ```
    pub fn contains(&self, x: u32, y: u32) -> bool {
        x >= self.x && y >= self.y && x - self.x < self.width && y - self.y < self.height
    }

    /// The Cornell box's surfaces seen from the reference camera `0,1,3.9, 0,1,0, 0,1,0, 40`
    /// in a `width` x `height` image: left wall, right wall, back wall, ceiling, floor, tall
    /// box, short box.
    ///
    /// The rectangles are fixed in image heights from the image centre, so they fit any
    /// resolution and aspect ratio (at 4:3, the left wall is columns 16.25% to 27.5% of
    /// the width and rows 25% to 70% of the height). Each is rounded inwards to whole
    /// pixels, so from 48 rows every pixel lies wholly on its surface; in smaller images a
    /// rectangle too thin for a whole pixel becomes the pixel holding its centre (whose own
    /// centre is on the surface). In images much narrower than square a wall may be cut at
    /// the image edge (empty, `width == 0`, when none of it is in view).
    ///
    /// ```
    /// use lumbre_raytrace::metrics::Region;
    /// let regions = Region::cornell(640, 480);
    /// assert_eq!(regions.len(), 7);
    /// assert_eq!(regions[0], Region::new("left wall", 104, 120, 72, 216));
    /// ```
    pub fn cornell(width: u32, height: u32) -> Vec<Region> {
        let (cx, h) = (0.5 * f64::from(width), f64::from(height));
        CORNELL
            .iter()
            .map(|&(name, u0, u1, v0, v1)| {
                let (x0, x1) = inward(cx + u0 * h, cx + u1 * h, width);
                let (y0, y1) = inward(v0 * h, v1 * h, height);
                Region::new(name, x0, y0, x1 - x0, y1 - y0)
            })
            .collect()
    }

    /// Parses `name=x,y,width,height` items separated by `;` (spaces around items and
    /// numbers allowed, a trailing `;` too). Names are non-empty, unique, and contain no `=`
    /// or `;`; widths and heights are positive. Errors quote the offending text.
    ///
    /// ```
    /// use lumbre_raytrace::metrics::Region;
    /// let r = Region::parse_list("wall = 0,0,10,20; box=5,6,7,8;").unwrap();
    /// assert_eq!(r, vec![Region::new("wall", 0, 0, 10, 20), Region::new("box", 5, 6, 7, 8)]);
    /// assert!(Region::parse_list("wall=0,0,10").unwrap_err().contains("\"wall=0,0,10\""));
    /// ```
    pub fn parse_list(text: &str) -> Result<Vec<Region>, String> {
        const FORM: &str = "name=x,y,width,height";
        let mut regions: Vec<Region> = Vec::new();
        for item in text.split(';').map(str::trim).filter(|s| !s.is_empty()) {
            let Some((name, rect)) = item.split_once('=') else {
                return Err(format!("region \"{item}\": expected {FORM}"));
            };
            let name = name.trim();
            if name.is_empty() {
                return Err(format!("region \"{item}\": the name before '=' is empty"));
            }
            let fields: Vec<&str> = rect.split(',').map(str::trim).collect();
            if fields.len() != 4 {
                return Err(format!(
                    "region \"{item}\": expected 4 numbers after '=' ({FORM}), found {}",
                    fields.len()
                ));
            }
            let mut v = [0u32; 4];
            for (slot, field) in v.iter_mut().zip(&fields) {
                *slot = field
                    .parse()
                    .map_err(|_| format!("region \"{item}\": \"{field}\" is not a whole number of pixels"))?;
            }
            if v[2] == 0 || v[3] == 0 {
                return Err(format!("region \"{item}\": width and height must be at least 1"));
            }
            if regions.iter().any(|r| r.name == name) {
                return Err(format!("region \"{item}\": the name \"{name}\" is given twice"));
            }
            regions.push(Region::new(name, v[0], v[1], v[2], v[3]));
        }
        if regions.is_empty() {
            return Err(format!("regions \"{text}\": no region given (expected {FORM};...)"));
        }
        Ok(regions)
    }
}

impl fmt::Display for Region {
    /// The form [`Region::parse_list`] reads: `name=x,y,width,height`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}={},{},{},{}", self.name, self.x, self.y, self.width, self.height)
    }
}
