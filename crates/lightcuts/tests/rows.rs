//! Renders by bands of rows: bands rendered one by one and assembled are the whole render
//! bit for bit (images, cuts, VPL and query counts), on the CPU (bands cut anywhere, by
//! proptest) and on the GPU (against the GPU's whole render, and the CPU's where the device
//! rounds as the CPU does); bad bands and bad assemblies are refused with errors naming
//! them.

mod common;

use std::sync::OnceLock;

use common::{cornell, exact_device};
use lumbre_gpu::testing::test_gpu;
use lumbre_gpu::{Compute, Error, Recorder};
use lumbre_lightcuts::ism::IsmOptions;
use lumbre_lightcuts::{CutOptions, Method, Render, Rendering, Rows, View, Visibility, VplOptions};
use lumbre_raytrace::Prepared;
use proptest::prelude::*;

/// Width and height of the test image: rows not a multiple of the kernels' 8-row tiles.
const W: u32 = 10;
const H: u32 = 19;

/// The Cornell box, prepared once for every test of the binary.
fn scene() -> &'static Prepared {
    static SCENE: OnceLock<Prepared> = OnceLock::new();
    SCENE.get_or_init(cornell)
}

/// Small shadow maps (the GPU tests' settings).
fn maps() -> Visibility {
    Visibility::Ism(IsmOptions { size: 32, points: 1 << 15, points_per_vpl: 4096, ..Default::default() })
}

/// The renders under test, by name: lightcuts and instant radiosity, with shadow rays and
/// with imperfect shadow maps (heap 32: in workgroup memory on the GPU).
fn renders(width: u32, height: u32) -> Vec<(&'static str, Render)> {
    let base = Render { view: View::cornell(width, height), vpls: VplOptions::one_bounce(150), ..Default::default() };
    let cuts = Method::Lightcuts(CutOptions { heap: 32, ..Default::default() });
    vec![
        ("lightcuts, rays", base),
        ("lightcuts, maps", Render { method: cuts, visibility: maps(), ..base }),
        ("instant, rays", Render { method: Method::Instant, ..base }),
        ("instant, maps", Render { method: Method::Instant, visibility: maps(), ..base }),
    ]
}

/// Bands ending at each of `ends` (increasing, the last the image's height).
fn bands(ends: &[u32]) -> Vec<Rows> {
    let mut start = 0;
    ends.iter()
        .map(|&end| {
            let band = Rows::from(start..end);
            start = end;
            band
        })
        .collect()
}

/// The splits of the fixed tests: 1, 2, 3 and 7 bands, with bands off the 8-row tiles and
/// bands of one row.
fn splits() -> Vec<Vec<Rows>> {
    vec![bands(&[H]), bands(&[8, H]), bands(&[5, 6, H]), bands(&[1, 8, 9, 13, 16, 17, H])]
}

/// `render` in `bands` by `run`, each part checked to hold its band, assembled.
fn in_bands(render: &Render, bands: &[Rows], run: impl Fn(&Render) -> Rendering) -> Rendering {
    let parts: Vec<Rendering> = bands
        .iter()
        .map(|&rows| {
            let part = run(&Render { rows: Some(rows), ..*render });
            assert_eq!(part.rows(), rows);
            assert_eq!(part.image.width, render.view.width);
            part
        })
        .collect();
    Rendering::assemble(parts, render.view.height).unwrap()
}

/// Whether `a` and `b` are the same rendering bit for bit (NaN included), with a message
/// naming the first pixel that differs.
fn same_bits(a: &Rendering, b: &Rendering) -> Result<(), String> {
    let bits = |r: &Rendering| r.image.pixels.iter().flat_map(|p| p.to_array().map(f32::to_bits)).collect::<Vec<_>>();
    let (x, y) = (bits(a), bits(b));
    if let Some(i) = (0..x.len().min(y.len())).find(|&i| x[i] != y[i]) {
        return Err(format!("pixel {} channel {}: {} vs {}", i / 3, i % 3, f32::from_bits(x[i]), f32::from_bits(y[i])));
    }
    if a != b {
        return Err(format!(
            "{}x{} vs {}x{}, {} vs {} VPLs, {} vs {} queries, cuts equal: {}",
            a.image.width,
            a.image.height,
            b.image.width,
            b.image.height,
            a.vpls,
            b.vpls,
            a.queries,
            b.queries,
            a.cuts == b.cuts
        ));
    }
    Ok(())
}

/// The CPU's whole renders of [`renders`], made once.
fn cpu_wholes() -> &'static [(&'static str, Render, Rendering)] {
    static WHOLES: OnceLock<Vec<(&'static str, Render, Rendering)>> = OnceLock::new();
    WHOLES.get_or_init(|| {
        renders(W, H)
            .into_iter()
            .map(|(name, render)| {
                let whole = render.cpu(scene()).unwrap();
                (name, render, whole)
            })
            .collect()
    })
}

#[test]
fn cpu_bands_assemble_into_the_whole_render() {
    for (name, render, whole) in cpu_wholes() {
        assert!(whole.image.pixels.iter().any(|p| p.x > 0.0), "{name}: a lit image");
        assert!(whole.queries > 0, "{name}");
        assert_eq!(whole.cuts.is_empty(), matches!(render.method, Method::Instant), "{name}");
        for bands in splits() {
            let assembled = in_bands(render, &bands, |r| r.cpu(scene()).unwrap());
            same_bits(&assembled, whole).unwrap_or_else(|e| panic!("{name}, {} bands: {e}", bands.len()));
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    /// Bands cut anywhere (each row boundary cut or not).
    #[test]
    fn cpu_bands_cut_anywhere_assemble_into_the_whole_render(
        cut in proptest::collection::vec(any::<bool>(), H as usize - 1),
        which in 0..4usize,
    ) {
        let (name, render, whole) = &cpu_wholes()[which];
        let ends: Vec<u32> = (1..H).filter(|&y| cut[y as usize - 1]).chain([H]).collect();
        let assembled = in_bands(render, &bands(&ends), |r| r.cpu(scene()).unwrap());
        prop_assert!(same_bits(&assembled, whole).is_ok(), "{name}, ends {ends:?}: {:?}", same_bits(&assembled, whole));
    }
}

#[test]
fn gpu_bands_assemble_into_the_whole_render() {
    let gpu = test_gpu(lumbre_gpu::wgpu::Features::empty()).unwrap();
    for (name, render, cpu) in cpu_wholes() {
        let whole = render.gpu(&gpu, scene()).unwrap();
        if exact_device(&gpu) {
            same_bits(&whole, cpu).unwrap_or_else(|e| panic!("{name}: GPU against CPU: {e}"));
        }
        for bands in splits() {
            let assembled = in_bands(render, &bands, |r| r.gpu(&gpu, scene()).unwrap());
            same_bits(&assembled, &whole).unwrap_or_else(|e| panic!("{name}, {} bands: {e}", bands.len()));
        }
    }
}

#[test]
fn gpu_band_computes_only_its_rows() {
    // The G-buffer and shading buffers hold the band alone, and the kernels' tile dispatches
    // are sized from them: a band of one row is one row of 8x8 tiles.
    let gpu = test_gpu(lumbre_gpu::wgpu::Features::empty()).unwrap();
    let (_, render) = renders(W, H).remove(0);
    let band = Render { rows: Some(Rows::from(9..10)), ..render };
    let input = band.upload(&gpu, scene()).unwrap();
    let mut rec: Recorder = gpu.recorder();
    let out = band.record(&mut rec, &input).unwrap();
    rec.submit().unwrap();
    assert_eq!((out.lit.width, out.lit.height), (W, 1));
    assert_eq!(gpu.download(&out.lit.image).unwrap().len(), W as usize);
    let part = band.download(&gpu, &out).unwrap();
    assert_eq!(part.rows(), Rows::from(9..10));
}

#[test]
fn bad_bands_are_refused() {
    let gpu = test_gpu(lumbre_gpu::wgpu::Features::empty()).unwrap();
    let (_, render) = renders(W, H).remove(0);
    for (rows, says) in
        [(7..7, "rows 7..7: empty"), (12..20, "rows 12..20: outside the image's 19 rows"), (25..30, "rows 25..30")]
    {
        let bad = Render { rows: Some(rows.into()), ..render };
        for (side, err) in [("cpu", bad.cpu(scene()).unwrap_err()), ("gpu", bad.gpu(&gpu, scene()).unwrap_err())] {
            assert!(matches!(err, Error::Input(_)), "{side}: {err}");
            assert!(err.to_string().contains(says), "{side}: {err}");
        }
    }
}

#[test]
fn bad_assemblies_are_refused() {
    let (_, render) = renders(W, H).remove(2); // instant radiosity: no cuts
    let part = |rows: std::ops::Range<u32>| Render { rows: Some(rows.into()), ..render }.cpu(scene()).unwrap();
    let (top, middle, bottom) = (part(0..6), part(6..13), part(13..H));
    let assemble = |parts: Vec<&Rendering>| {
        Rendering::assemble(parts.into_iter().cloned(), H).map(|r| r.image.height).map_err(|e| e.to_string())
    };
    // Any order of the parts.
    assert_eq!(assemble(vec![&bottom, &top, &middle]), Ok(H));
    let err = |parts: Vec<&Rendering>| assemble(parts).unwrap_err();
    assert!(err(vec![&top, &bottom]).contains("rows 6..13 of the image are in no band"));
    assert!(err(vec![&top, &middle]).contains("rows 13..19 of the image are in no band"));
    assert!(err(vec![&middle, &bottom]).contains("rows 0..6 of the image are in no band"));
    assert!(err(vec![]).contains("no band"));
    let overlapping = part(4..8);
    assert!(err(vec![&top, &overlapping, &middle, &bottom]).contains("band of rows 4..8 overlaps band of rows 0..6"));
    assert!(err(vec![&top, &top, &middle, &bottom]).contains("overlaps"));
    let past = Rendering { first_row: 13 + 3, ..bottom.clone() };
    assert!(
        Rendering::assemble([top.clone(), middle.clone(), part(13..16), past], H)
            .unwrap_err()
            .to_string()
            .contains("rows 16..22: outside the image's 19 rows")
    );
    // Parts of different renders.
    let wider = Render { view: View::cornell(W + 1, H), rows: Some((13..H).into()), ..render }.cpu(scene()).unwrap();
    assert!(err(vec![&top, &middle, &wider]).contains("11 pixels wide"));
    let fewer = Render { vpls: VplOptions::one_bounce(20), rows: Some((13..H).into()), ..render }.cpu(scene()).unwrap();
    assert!(err(vec![&top, &middle, &fewer]).contains("VPLs"));
    let (_, cuts) = renders(W, H).remove(0);
    let with_cuts = Render { rows: Some((13..H).into()), ..cuts }.cpu(scene()).unwrap();
    assert!(err(vec![&top, &middle, &with_cuts]).contains("cuts"));
}

#[test]
fn split_covers_the_image_in_tiles() {
    for height in [1, 7, 8, 19, 64, 100, 1081] {
        for parts in 1..=height.min(12) {
            let bands = Rows::split(height, parts).unwrap();
            assert_eq!(bands.len(), parts as usize);
            assert_eq!(bands[0].start, 0);
            assert_eq!(bands.last().unwrap().end, height);
            assert!(bands.windows(2).all(|w| w[0].end == w[1].start && !w[0].is_empty()), "{height} / {parts}");
            if parts <= height.div_ceil(8) {
                assert!(bands.iter().all(|b| b.start % 8 == 0), "{height} / {parts}: {bands:?}");
                let tiles: Vec<u32> = bands.iter().map(|b| b.len().div_ceil(8)).collect();
                assert!(
                    tiles.iter().max().unwrap() - tiles.iter().min().unwrap() <= 1,
                    "{height} / {parts}: {bands:?}"
                );
            }
        }
    }
    assert!(Rows::split(10, 0).is_err());
    assert!(Rows::split(10, 11).unwrap_err().to_string().contains("11 bands of an image of 10 rows"));
}
