//! The flags every rendering command shares: the image's size, the camera, the backend and
//! the output file, each checked before any work (the README's "Bad input" rule).

use std::path::{Path, PathBuf};

use clap::Args;
use lumbre_gpu::Backend;
use lumbre_kdtree::{BuildOptions, BvhOptions, StructureOptions};
use lumbre_raytrace::PathSchedule;

use crate::backend::BackendArgs;
use crate::error::Result;
use crate::limits;

/// `--width`, `--height`, `--camera`, `--backend` and `-o`.
#[derive(Args, Clone, Debug)]
pub struct View {
    /// Image width in pixels.
    #[arg(long, default_value_t = 640)]
    pub width: u32,
    /// Image height in pixels.
    #[arg(long, default_value_t = 480)]
    pub height: u32,
    /// `eye_x,eye_y,eye_z,target_x,target_y,target_z,up_x,up_y,up_z,fov_y_degrees`;
    /// default: framing the scene.
    #[arg(long)]
    pub camera: Option<String>,
    #[command(flatten)]
    pub backend: BackendArgs,
    /// Output image: .png (8-bit sRGB) or .exr (linear f32).
    #[arg(short, long)]
    pub out: Option<PathBuf>,
}

impl View {
    /// Every check of these flags that needs no backend: the output path (`default` without
    /// `-o`), the camera's form and the image size against this machine's memory.
    pub fn check(&self, default: &str) -> Result<()> {
        self.out_or(default)?;
        self.check_inputs()
    }

    /// [`View::check`] for a command whose output is a shard's part when `sharded` (`-o`
    /// required, ending in `.lpart`).
    pub fn check_sharded(&self, default: &str, sharded: bool) -> Result<()> {
        if !sharded {
            return self.check(default);
        }
        self.check_inputs()?;
        crate::merge::part_path(self.out.as_deref()).map(|_| ())
    }

    /// [`View::out_on`] for a command whose output is a shard's part when `sharded`.
    pub fn out_sharded(&self, default: &str, backend: &Backend, sharded: bool) -> Result<PathBuf> {
        if !sharded {
            return self.out_on(default, backend);
        }
        self.check_size_on(backend)?;
        crate::merge::part_path(self.out.as_deref())
    }

    /// The checks of [`View::check`] but the output's: the camera's form and the image size
    /// against this machine's memory.
    fn check_inputs(&self) -> Result<()> {
        if let Some(c) = &self.camera {
            lumbre_raytrace::Camera::parse(c).map_err(|e| format!("--camera {c}: {e}"))?;
        }
        limits::check_image(self.width, self.height, &Backend::Cpu, limits::available_memory())
    }

    /// The image size on `backend` (a GPU's largest buffer), then the output path: `-o`, or
    /// `default`.
    pub fn out_on(&self, default: &str, backend: &Backend) -> Result<PathBuf> {
        self.check_size_on(backend)?;
        self.out_or(default)
    }

    /// The image size on `backend` (a GPU's largest buffer).
    fn check_size_on(&self, backend: &Backend) -> Result<()> {
        limits::check_image(self.width, self.height, backend, limits::available_memory())
    }

    /// The output path, or `default` when `-o` was not given.
    fn out_or(&self, default: &str) -> Result<PathBuf> {
        image_path("-o", self.out.as_deref().unwrap_or(Path::new(default)))
    }

    /// Width over height.
    pub fn aspect(&self) -> f32 {
        self.width as f32 / self.height as f32
    }
}

/// `out` as the image file of `flag`: an error unless it ends in `.png` or `.exr` and its
/// folder exists.
pub fn image_path(flag: &str, out: &Path) -> Result<PathBuf> {
    match out.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).as_deref() {
        Some("png" | "exr") => {}
        _ => return Err(format!("{flag} {}: the file name must end in .png or .exr", out.display()).into()),
    }
    match out.parent() {
        Some(dir) if !dir.as_os_str().is_empty() && !dir.is_dir() => {
            Err(format!("{flag} {}: the folder {} does not exist", out.display(), dir.display()).into())
        }
        _ => Ok(out.to_path_buf()),
    }
}

/// `--kd-tree` and `--leaf-size`: the structure a triangle scene's rays walk.
#[derive(Args, Clone, Copy, Debug, Default)]
pub struct Structure {
    /// Rays walk the kd-tree instead of the BVH (binned SAH), whose diffuse bounces and
    /// path-traced frames run 1.2-2x the kd-tree's on a GPU (benches/RESULTS.md).
    #[arg(long)]
    pub kd_tree: bool,
    /// Leaves: nodes with at most this many triangles (>= 1) are not split (the SAH may stop
    /// earlier). Default: the BVH's 4; the kd-tree's 6 (smaller than lumbre_kdtree's 10:
    /// incoherent rays run 5-18% faster, primary rays as fast, for a longer build).
    #[arg(long)]
    pub leaf_size: Option<u32>,
}

/// The kd-tree's leaves without `--leaf-size` (benches/RESULTS.md, "Kd-tree leaves for
/// incoherent rays").
const KD_LEAF_SIZE: u32 = 6;

impl Structure {
    /// `--leaf-size 0` is refused.
    pub fn check(&self) -> Result<()> {
        if self.leaf_size == Some(0) {
            return Err("--leaf-size 0: must be at least 1".into());
        }
        Ok(())
    }

    /// The options to build with.
    pub fn options(&self) -> StructureOptions {
        if self.kd_tree {
            let max_leaf_size = self.leaf_size.unwrap_or(KD_LEAF_SIZE);
            StructureOptions::KdTree(BuildOptions { max_leaf_size, ..Default::default() })
        } else {
            let leaf_size = self.leaf_size.unwrap_or(BvhOptions::default().leaf_size);
            StructureOptions::Bvh(BvhOptions { leaf_size, ..Default::default() })
        }
    }

    /// A short name with the leaf size, for tables and run descriptions.
    pub fn name(&self) -> String {
        match self.options() {
            StructureOptions::KdTree(o) => format!("kd-tree (leaves of {})", o.max_leaf_size),
            StructureOptions::Bvh(o) => format!("BVH (leaves of {})", o.leaf_size),
        }
    }
}

/// `--wavefront`, `--pool` and `--reorder`: how the GPU path tracer schedules its paths (the
/// image is the same bits on every schedule).
#[derive(Args, Clone, Copy, Debug, Default)]
pub struct Schedule {
    /// Path: trace on the GPU as a wavefront (one kernel per stage, queues between them)
    /// instead of one kernel per batch of samples (benches/RESULTS.md compares them).
    #[arg(long)]
    pub wavefront: bool,
    /// Path, --wavefront: paths in flight (default 1048576; rounded up to a multiple of 64).
    #[arg(long, value_name = "PATHS")]
    pub pool: Option<u32>,
    /// Path, --wavefront: sort the queued rays by origin and direction before each trace.
    #[arg(long)]
    pub reorder: bool,
}

impl Schedule {
    /// `--pool` and `--reorder` need `--wavefront`; `--pool 0` is refused.
    pub fn check(&self) -> Result<()> {
        if !self.wavefront && (self.pool.is_some() || self.reorder) {
            return Err("--pool and --reorder schedule the wavefront: add --wavefront".into());
        }
        if self.pool == Some(0) {
            return Err("--pool 0: at least one path in flight".into());
        }
        Ok(())
    }

    /// On a GPU, the wavefront's pool against the GPU's largest buffer, before any work.
    pub fn check_on(&self, backend: &Backend) -> Result<()> {
        let (PathSchedule::Wavefront { pool, .. }, Some(gpu)) = (self.schedule(), backend.gpu()) else {
            return Ok(());
        };
        let l = gpu.limits();
        let largest = l.max_storage_buffer_binding_size.min(l.max_buffer_size);
        let most = largest / PathSchedule::LARGEST_PER_PATH;
        if u64::from(pool) > most {
            return Err(format!(
                "--pool {pool}: the paths in flight need {} of GPU memory ({} bytes each, {} of them in one \
                 buffer); {} holds at most {most} in its largest buffer of {}: lower --pool",
                limits::human(u64::from(pool) * PathSchedule::BYTES_PER_PATH),
                PathSchedule::BYTES_PER_PATH,
                PathSchedule::LARGEST_PER_PATH,
                gpu.adapter_name(),
                limits::human(largest)
            )
            .into());
        }
        Ok(())
    }

    /// The path tracer's schedule.
    pub fn schedule(&self) -> PathSchedule {
        if !self.wavefront {
            return PathSchedule::Megakernel;
        }
        PathSchedule::Wavefront { pool: self.pool.unwrap_or(PathSchedule::POOL), reorder: self.reorder }
    }
}

/// A short name of a path tracer's schedule, for tables and run descriptions.
pub fn schedule_name(s: PathSchedule) -> String {
    match s {
        PathSchedule::Megakernel => "megakernel".into(),
        PathSchedule::Wavefront { pool, reorder: false } => format!("wavefront ({pool} paths)"),
        PathSchedule::Wavefront { pool, reorder: true } => format!("wavefront ({pool} paths), reordered"),
    }
}
