//! The whole renderer: VPLs from the emitters, a light tree, the G-buffer, imperfect shadow
//! maps when asked for, and every pixel shaded by lightcuts or by instant radiosity; on the
//! CPU here, on the GPU in `gpu/render.rs`.

use glam::Vec3;
use lumbre_gpu::{Agree, Error, Progress, Report, Result, Tolerance};
use lumbre_kdtree::QueryOptions;
use lumbre_raytrace::{Image, Prepared};

use crate::cuts::{CutOptions, CutPixel, Lightcuts};
use crate::gbuffer::{View, gbuffer_rows_cpu};
use crate::greedy::GreedyTree;
use crate::instant::InstantRadiosity;
use crate::morton_tree::MortonTree;
use crate::rows::Rows;
use crate::shading::{DEFAULT_CLAMP, Lit, ShadingRef, Visibility};
use crate::tree::{LightNode, LightTree};
use crate::vpls::{Vpl, VplOptions, validate_vpls, vpls_cpu};

/// How the light tree is built.
///
/// ```
/// assert_eq!(lumbre_lightcuts::TreeBuilder::default().name(), "morton");
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TreeBuilder {
    /// The paper's greedy agglomerative build (CPU; on the GPU path the VPLs come back to
    /// the host for it and the tree goes up again).
    Greedy(GreedyTree),
    /// By Morton order, on the GPU (or its CPU twin).
    Morton(MortonTree),
}

impl Default for TreeBuilder {
    fn default() -> Self {
        TreeBuilder::Morton(MortonTree::default())
    }
}

impl TreeBuilder {
    /// `greedy` or `morton`.
    pub fn name(&self) -> &'static str {
        match self {
            TreeBuilder::Greedy(_) => "greedy",
            TreeBuilder::Morton(_) => "morton",
        }
    }

    /// The tree over `vpls` in a scene whose box is `bounds` (the Morton quantisation box,
    /// and the greedy metric's diagonal), on the CPU.
    pub fn build(&self, vpls: &[Vpl], bounds: (Vec3, Vec3)) -> Result<LightTree> {
        match self {
            TreeBuilder::Greedy(g) => {
                GreedyTree { diagonal: Some(g.diagonal.unwrap_or((bounds.1 - bounds.0).length())), ..*g }.build(vpls)
            }
            TreeBuilder::Morton(m) => MortonTree { bounds: Some(m.bounds.unwrap_or(bounds)), ..*m }.build(vpls),
        }
    }
}

/// How the pixels are shaded.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Method {
    /// Lightcuts over the light tree.
    Lightcuts(CutOptions),
    /// Instant radiosity: every VPL for every pixel (no tree is built).
    Instant,
}

impl Method {
    /// `lightcuts` or `instant`.
    pub fn name(&self) -> &'static str {
        match self {
            Method::Lightcuts(_) => "lightcuts",
            Method::Instant => "instant",
        }
    }
}

/// A rendered image with its cuts (lightcuts only) and counts: the whole image, or the
/// band of rows a [`Render`] with `rows` set computes (only those rows, from `first_row`;
/// [`Rendering::assemble`] puts bands together).
///
/// ```
/// use lumbre_lightcuts::{Render, Rows, View, VplOptions};
/// use lumbre_raytrace::{Prepared, Scene};
/// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/scenes/CornellBox-Diffuse.obj");
/// let prepared = Prepared::new(Scene::load_obj(path.as_ref())?.0, &Default::default());
/// let render = Render { view: View::cornell(4, 6), vpls: VplOptions::one_bounce(50), ..Default::default() };
/// let band = Render { rows: Some(Rows::from(2..5)), ..render }.cpu(&prepared)?;
/// assert_eq!((band.image.width, band.image.height, band.first_row, band.cuts.len()), (4, 3, 2, 12));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Rendering {
    /// Linear RGB radiance: the image's width by the band's rows (all rows by default).
    pub image: Image,
    /// Per pixel, its cut (empty for instant radiosity).
    pub cuts: Vec<CutPixel>,
    /// Number of VPLs.
    pub vpls: u32,
    /// Visibility queries (shadow rays or ISM lookups).
    pub queries: u64,
    /// The row of the whole image that is the first of `image` (0 for a whole render).
    pub first_row: u32,
}

impl Agree for Rendering {
    /// Rows, VPL counts, cuts and queries exactly; radiances within `tol`.
    fn disagreement(&self, gpu: &Self, tol: Tolerance) -> Option<String> {
        if self.first_row != gpu.first_row {
            return Some(format!("first row {} vs {}", self.first_row, gpu.first_row));
        }
        if self.vpls != gpu.vpls {
            return Some(format!("{} vs {} VPLs", self.vpls, gpu.vpls));
        }
        let lit = |r: &Rendering| Lit { image: r.image.clone(), cuts: r.cuts.clone(), queries: r.queries };
        lit(self).disagreement(&lit(gpu), tol)
    }
}

/// The renderer (see the crate documentation).
///
/// ```no_run
/// use lumbre_gpu::{Compute, Gpu};
/// use lumbre_lightcuts::{Render, View, VplOptions};
/// use lumbre_raytrace::{Prepared, Scene};
/// let (scene, _) = Scene::load_obj("testdata/scenes/CornellBox-Diffuse.obj".as_ref()).unwrap();
/// let prepared = Prepared::new(scene, &Default::default());
/// let vpls = VplOptions::default().with_count(&prepared, 10_000, 0.25)?;
/// let render = Render { view: View::cornell(128, 128), vpls, ..Default::default() };
/// let (out, report) = render.run_reported(&lumbre_gpu::Backend::Gpu(Gpu::new()?), &prepared, &())?;
/// println!("{} VPLs: {report}", out.vpls);
/// # Ok::<(), lumbre_gpu::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Render {
    /// Camera and size.
    pub view: View,
    /// The VPLs.
    pub vpls: VplOptions,
    /// The light tree (lightcuts only).
    pub tree: TreeBuilder,
    /// Lightcuts or instant radiosity.
    pub method: Method,
    /// The `1 / d^2` clamp distance as a fraction of the scene's diagonal.
    pub clamp: f32,
    /// Shadow rays, imperfect shadow maps or none.
    pub visibility: Visibility,
    /// Traversal and triangle test of every ray.
    pub query: QueryOptions,
    /// The band of rows of `view` to compute, or `None` for all of them: the pixels are
    /// those of the whole render, bit for bit, and only they are computed (see
    /// [`Rendering::assemble`]); the VPLs, light tree and shadow maps are made whole.
    pub rows: Option<Rows>,
}

impl Default for Render {
    fn default() -> Self {
        Render {
            view: View::cornell(512, 512),
            vpls: VplOptions::default(),
            tree: TreeBuilder::default(),
            method: Method::Lightcuts(CutOptions::default()),
            clamp: DEFAULT_CLAMP,
            visibility: Visibility::Rays,
            query: QueryOptions::default(),
            rows: None,
        }
    }
}

impl Render {
    /// The clamp distance as a fraction of the scene's diagonal: `clamp`, unless the scene
    /// is far larger than what the camera looks at (more than [`VIEW_SCALES`] times the
    /// distance from the eye to the target), then the same fraction of that span: a ground
    /// plane reaching to the horizon must not clamp the light of everything near the camera.
    ///
    /// ```
    /// use glam::Vec3;
    /// use lumbre_lightcuts::{Render, VIEW_SCALES};
    /// let r = Render::default(); // the Cornell box's view: 3.9 from the eye to the target
    /// let room = (Vec3::splat(-1.0), Vec3::splat(1.0));
    /// assert_eq!(r.clamp_for(room), r.clamp);
    /// let ground = (Vec3::new(-100.0, 0.0, -100.0), Vec3::new(100.0, 4.0, 100.0));
    /// let diagonal = (ground.1 - ground.0).length();
    /// assert!((r.clamp_for(ground) * diagonal - r.clamp * 3.9 * VIEW_SCALES).abs() < 1e-4);
    /// ```
    pub fn clamp_for(&self, bounds: (Vec3, Vec3)) -> f32 {
        let diagonal = (bounds.1 - bounds.0).length();
        let view = (self.view.camera.target - self.view.camera.eye).length() * VIEW_SCALES;
        if diagonal > view && view > 0.0 { self.clamp * view / diagonal } else { self.clamp }
    }

    /// The band of rows this render computes (`rows`, or every row of the view), checked
    /// against the view: an [`Error::Input`] naming an empty band or one outside the image.
    ///
    /// ```
    /// use lumbre_lightcuts::{Render, Rows, View};
    /// let render = Render { view: View::cornell(8, 8), ..Default::default() };
    /// assert_eq!(render.band()?, Rows::all(8));
    /// assert_eq!(Render { rows: Some((3..5).into()), ..render }.band()?, (3..5).into());
    /// assert!(Render { rows: Some((3..9).into()), ..render }.band().is_err());
    /// # Ok::<(), lumbre_gpu::Error>(())
    /// ```
    pub fn band(&self) -> Result<Rows> {
        self.view.validate()?;
        let rows = self.rows.unwrap_or(Rows::all(self.view.height));
        rows.check(self.view.height)?;
        Ok(rows)
    }

    /// The CPU path: the rendering.
    ///
    /// ```
    /// use lumbre_lightcuts::{Render, View, VplOptions};
    /// use lumbre_raytrace::{Prepared, Scene};
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/scenes/CornellBox-Diffuse.obj");
    /// let prepared = Prepared::new(Scene::load_obj(path.as_ref())?.0, &Default::default());
    /// let render = Render { view: View::cornell(4, 4), vpls: VplOptions::one_bounce(50), ..Default::default() };
    /// assert_eq!(render.cpu(&prepared)?.image.pixels.len(), 16);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn cpu(&self, p: &Prepared) -> Result<Rendering> {
        self.run_cpu(p, &()).map(|(r, _)| r)
    }

    /// [`cpu`](Render::cpu) with progress, reporting the stages `vpls`, `tree`, `gbuffer`, the ISM's, then `lightcuts` or
    /// `instant radiosity`, with their statistics.
    ///
    /// ```
    /// use lumbre_lightcuts::{Render, View, VplOptions};
    /// use lumbre_raytrace::{Prepared, Scene};
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/scenes/CornellBox-Diffuse.obj");
    /// let prepared = Prepared::new(Scene::load_obj(path.as_ref()).unwrap().0, &Default::default());
    /// let render = Render { view: View::cornell(8, 8), vpls: VplOptions::one_bounce(200), ..Default::default() };
    /// let (out, report) = render.run_cpu(&prepared, &())?;
    /// assert_eq!(out.image.pixels.len(), 64);
    /// assert!(report.stage("tree").is_some());
    /// # Ok::<(), lumbre_gpu::Error>(())
    /// ```
    pub fn run_cpu(&self, p: &Prepared, progress: &dyn Progress) -> Result<(Rendering, Report)> {
        let band = self.band()?;
        let mut report = Report::default();
        let vpls = report.time("vpls", || vpls_cpu(p, &self.vpls, &self.query))?;
        report.stat("vpls", vpls.len() as f64);
        let tree = match self.method {
            Method::Lightcuts(_) => report.time("tree", || self.tree.build(&vpls, p.scene.bounds))?,
            // Instant radiosity reads only the lights: a tree of one node stands for it.
            Method::Instant => LightTree { nodes: instant_nodes(&vpls)?, vpls },
        };
        let gbuffer = report.time("gbuffer", || gbuffer_rows_cpu(p, &self.view, band, &self.query))?;
        let input = ShadingRef { prepared: p, tree: &tree, gbuffer: &gbuffer };
        let clamp = self.clamp_for(p.scene.bounds);
        let (lit, r) = match self.shade() {
            ShadeWith::Cuts(lc) => Lightcuts { clamp, ..lc }.shade_cpu(input, progress)?,
            ShadeWith::Instant(ir) => InstantRadiosity { clamp, ..ir }.shade_cpu(input, progress)?,
        };
        report.merge(r);
        let out = Rendering {
            image: lit.image,
            cuts: lit.cuts,
            vpls: tree.vpls.len() as u32,
            queries: lit.queries,
            first_row: band.start,
        };
        Ok((out, report))
    }

    /// The shading pass this render runs.
    pub(crate) fn shade(&self) -> ShadeWith {
        match self.method {
            Method::Lightcuts(cut) => {
                ShadeWith::Cuts(Lightcuts { cut, clamp: self.clamp, visibility: self.visibility, query: self.query })
            }
            Method::Instant => ShadeWith::Instant(InstantRadiosity {
                clamp: self.clamp,
                visibility: self.visibility,
                query: self.query,
            }),
        }
    }
}

/// How many eye-to-target distances a scene may span before the clamp follows the view
/// (see [`Render::clamp_for`]); the rooms of the scene set span less.
pub const VIEW_SCALES: f32 = 3.0;

/// The shading pass a render runs.
pub(crate) enum ShadeWith {
    Cuts(Lightcuts),
    Instant(InstantRadiosity),
}

/// The stand-in tree of instant radiosity: one leaf per light, no clusters; only the
/// lights are read.
fn instant_nodes(vpls: &[Vpl]) -> Result<Vec<LightNode>> {
    validate_vpls(vpls)?;
    let n = vpls.len();
    let mut nodes = vec![LightNode::default(); 2 * n - 1];
    for (k, v) in vpls.iter().enumerate() {
        nodes[n - 1 + k] = LightNode::leaf(v, k as u32);
    }
    for i in (0..n - 1).rev() {
        let (a, b) = (2 * i as u32 + 1, 2 * i as u32 + 2);
        nodes[i] = LightNode::merge(&nodes[a as usize], a, &nodes[b as usize], b, i as u32, 0);
    }
    Ok(nodes)
}

/// The cut sizes as a false-colour image: black where the VPLs light nothing, then a ramp
/// from dark blue (a cut of 1) through cyan, green and yellow to red (`scale` clusters or
/// more).
///
/// ```
/// use lumbre_lightcuts::{CutPixel, cut_heatmap};
/// let cuts = [CutPixel::default(), CutPixel { size: 1, ..Default::default() }, CutPixel { size: 100, ..Default::default() }];
/// let img = cut_heatmap(&cuts, 3, 1, 100).unwrap();
/// assert_eq!(img.pixels[0], glam::Vec3::ZERO);
/// assert_eq!(img.pixels[2], glam::Vec3::new(1.0, 0.0, 0.0));
/// ```
pub fn cut_heatmap(cuts: &[CutPixel], width: u32, height: u32, scale: u32) -> Result<Image> {
    const RAMP: [Vec3; 5] = [
        Vec3::new(0.0, 0.0, 0.5),
        Vec3::new(0.0, 0.8, 1.0),
        Vec3::new(0.0, 0.9, 0.0),
        Vec3::new(1.0, 1.0, 0.0),
        Vec3::new(1.0, 0.0, 0.0),
    ];
    let scale = scale.max(2) as f32;
    let pixels = cuts
        .iter()
        .map(|c| {
            if c.size == 0 {
                return Vec3::ZERO;
            }
            let t = ((c.size - 1) as f32 / (scale - 1.0)).clamp(0.0, 1.0) * 4.0;
            let k = (t as usize).min(3);
            RAMP[k].lerp(RAMP[k + 1], t - k as f32)
        })
        .collect();
    Image::from_pixels(width, height, pixels).map_err(Error::Input)
}
