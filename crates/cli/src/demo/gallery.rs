//! The gallery: the bundled scenes through the Whitted ray tracer and the phantom through
//! the volume engine, on both paths.

use std::path::Path;
use std::time::Instant;

use lumbre_gpu::Backend;

use crate::error::Result;
use crate::table::Table;

/// The bundled scenes through the Whitted ray tracer, CPU and GPU, written as PNGs.
pub fn renders(backend: &Backend, out: &Path) -> Result<Table> {
    use lumbre_gpu::Compute;
    use lumbre_raytrace::{Camera, Prepared, RenderOptions, WhittedRender, add_default_light, diff_stats};
    let mut t = Table::new(
        "Whitted ray tracer on the bundled scenes (256x256, 4 samples per pixel)",
        &[
            "scene",
            "triangles",
            "build ms",
            "CPU ms",
            "CPU Mrays/s",
            "GPU ms",
            "GPU Mrays/s",
            "GPU vs CPU RMSE",
            "images",
        ],
    );
    for name in ["CornellBox-Original", "CornellBox-Diffuse", "suzanne", "teapot"] {
        let mut scene = crate::data::scene(name, None)?;
        let camera = Camera::frame(scene.bounds, 1.0);
        add_default_light(&mut scene, &camera);
        let t0 = Instant::now();
        let prepared = Prepared::new(scene, &Default::default());
        let build = t0.elapsed();
        let o = RenderOptions { width: 256, height: 256, spp: 4, ..Default::default() };
        let render = WhittedRender { camera, options: o };
        let t1 = Instant::now();
        let (cpu_img, cpu_report) = render.cpu_reported(&prepared, &())?;
        let cpu_t = t1.elapsed();
        let cpu_path = out.join(format!("{name}-cpu.png"));
        cpu_img.save_png(&cpu_path)?;
        let mut row = vec![
            name.to_string(),
            prepared.tris.len().to_string(),
            format!("{:.1}", build.as_secs_f64() * 1e3),
            format!("{:.1}", cpu_t.as_secs_f64() * 1e3),
            crate::table::sig(cpu_report.get("rays").unwrap_or(0.0) / cpu_t.as_secs_f64() / 1e6),
        ];
        match backend.gpu() {
            Some(g) => {
                let scene = render.upload(g, &prepared)?;
                render.gpu_reported(g, &scene)?; // compiles the pipeline
                let (img, report) = render.gpu_reported(g, &scene)?;
                let time = report.gpu.unwrap_or_default();
                img.save_png(&out.join(format!("{name}-gpu.png")))?;
                let rmse = diff_stats(&cpu_img, &img)?.rmse;
                row.push(format!("{:.2}", time.as_secs_f64() * 1e3));
                row.push(crate::table::sig(report.get("rays").unwrap_or(0.0) / time.as_secs_f64() / 1e6));
                row.push(format!("{rmse:.5}"));
                row.push(format!("{name}-cpu.png, {name}-gpu.png"));
            }
            None => {
                row.extend(["-".into(), "-".into(), "-".into(), format!("{name}-cpu.png")]);
            }
        }
        t.row(row);
    }
    Ok(t)
}

/// The phantom as voxels in the three modes, an orbit strip, and in-place update timings.
pub fn volumes(backend: &Backend, out: &Path) -> Result<Vec<Table>> {
    use glam::Vec3;
    use lumbre_gpu::Compute;
    use lumbre_octree::{GpuBuild, Octree, Points, Root};
    use lumbre_raytrace::{Camera, VolumeMode, VolumeOptions, VolumeRender, cloud_points, phantom_cloud};
    let cloud = phantom_cloud(96);
    // A cutaway: the front half removed, to show the inside of the head.
    let full = cloud_points(&cloud);
    let keep: Vec<usize> = (0..full.positions.len()).filter(|&i| full.positions[i][2] <= 0.05).collect();
    let points = Points {
        positions: keep.iter().map(|&i| full.positions[i]).collect(),
        attrs: keep.iter().map(|&i| full.attrs[i]).collect(),
    };
    let depth = 7;
    let root = Root { min: [-1.5; 3], size: 3.0 };
    let t0 = Instant::now();
    let (tree, _) = Octree::build_in(&points.positions, &points.attrs, depth, root)?;
    let cpu_build = t0.elapsed();
    let gpu_build = match backend.gpu() {
        Some(g) => {
            let b = GpuBuild { depth, root: Some(root) };
            let (t, timings) = b.gpu_timed(g, &points)?;
            if t != tree.pack() {
                return Err("GPU octree differs from the CPU octree".into());
            }
            format!("{:.2}", timings.gpu().as_secs_f64() * 1e3)
        }
        None => "-".into(),
    };
    let bounds = (Vec3::splat(-1.0), Vec3::ONE);
    let camera = {
        let mut c = Camera::frame(bounds, 1.0);
        c.eye = Vec3::new(1.2, 0.9, 2.9);
        c
    };
    let mut modes = Table::new(
        format!(
            "Phantom (96³ grid, front half cut away: {} points), octree depth {depth}, 320x320",
            points.positions.len()
        ),
        &["mode", "CPU ms", "GPU ms", "GPU vs CPU RMSE", "images"],
    );
    modes.note(format!("build: CPU {:.1} ms, GPU {gpu_build} ms (identical trees)", cpu_build.as_secs_f64() * 1e3));
    for (mode, name) in [(VolumeMode::Colour, "colour"), (VolumeMode::Depth, "depth"), (VolumeMode::Phong, "phong")] {
        let r = VolumeRender {
            camera,
            options: VolumeOptions { width: 320, height: 320, mode, ..Default::default() },
            tree_depth: depth,
        };
        let t = Instant::now();
        let img = r.cpu(&tree)?;
        let cpu_t = t.elapsed();
        img.save_png(&out.join(format!("phantom-{name}-cpu.png")))?;
        let (g_ms, rmse, files) = match backend.gpu() {
            Some(g) => {
                let on = r.upload(g, &tree.pack())?;
                r.gpu_reported(g, &on)?;
                let (gi, report) = r.gpu_reported(g, &on)?;
                let gt = report.gpu.unwrap_or_default();
                gi.save_png(&out.join(format!("phantom-{name}-gpu.png")))?;
                let rmse = lumbre_raytrace::diff_stats(&img, &gi)?.rmse;
                (
                    format!("{:.2}", gt.as_secs_f64() * 1e3),
                    format!("{rmse:.5}"),
                    format!("phantom-{name}-cpu.png, phantom-{name}-gpu.png"),
                )
            }
            None => ("-".into(), "-".into(), format!("phantom-{name}-cpu.png")),
        };
        modes.row(vec![name.into(), format!("{:.1}", cpu_t.as_secs_f64() * 1e3), g_ms, rmse, files]);
    }
    // Orbit strip: 8 Phong frames side by side in one image.
    let (w, n) = (160u32, 8u32);
    let mut strip = lumbre_raytrace::Image::new(w * n, w);
    for i in 0..n {
        let cam = Camera::orbit(bounds, 1.0, i, n);
        let r = VolumeRender {
            camera: cam,
            options: VolumeOptions { width: w, height: w, mode: VolumeMode::Phong, ..Default::default() },
            tree_depth: depth,
        };
        let img = r.cpu(&tree)?;
        for y in 0..w {
            for x in 0..w {
                strip.set(i * w + x, y, img.get(x, y));
            }
        }
    }
    strip.save_png(&out.join("phantom-orbit.png"))?;
    modes.note("orbit strip: phantom-orbit.png (8 Phong frames around the head)");
    // In-place updates: every point advected, 5 frames.
    let mut upd = Table::new(
        "Octree update after every point moves (phantom cutaway, depth 7)",
        &["frame", "moved", "created", "deleted", "CPU in-place ms", "CPU rebuild ms"],
    );
    let mut tree = tree;
    let mut pos = points.positions.clone();
    for f in 0..5 {
        let next = crate::volume::advect(&pos, Vec3::ZERO, 0.02);
        let t = Instant::now();
        let report = tree.update_in_place(&pos, &next, &points.attrs)?;
        let in_place = t.elapsed();
        let t = Instant::now();
        let (fresh, _) = Octree::build_in(&next, &points.attrs, depth, tree.root)?;
        let rebuild = t.elapsed();
        if fresh != tree {
            return Err("updated octree differs from a rebuild".into());
        }
        upd.row(vec![
            f.to_string(),
            report.moved.to_string(),
            report.created.to_string(),
            report.deleted.to_string(),
            format!("{:.1}", in_place.as_secs_f64() * 1e3),
            format!("{:.1}", rebuild.as_secs_f64() * 1e3),
        ]);
        pos = next;
    }
    upd.note("each updated tree was checked equal to a fresh build of the moved points");
    Ok(vec![modes, upd])
}
