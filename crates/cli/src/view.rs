//! The flags every rendering command shares: the image's size, the camera, the backend and
//! the output file, each checked before any work (the README's "Bad input" rule).

use std::path::{Path, PathBuf};

use clap::Args;
use lumbre_gpu::Backend;

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
