//! Transfer accounting: every byte that crosses between host and device through a [`Gpu`]
//! is counted, so tests and reports can show that a pipeline keeps its data on the GPU.

use std::fmt;
use std::ops::{Add, Sub};
#[cfg(feature = "wgpu")]
use std::sync::atomic::{AtomicU64, Ordering};

#[cfg(feature = "wgpu")]
use crate::Gpu;

/// Calls and bytes of the transfers in one direction.
///
/// ```
/// use lumbre_gpu::Traffic;
/// let a = Traffic { calls: 3, bytes: 4096 };
/// let b = Traffic { calls: 1, bytes: 16 };
/// assert_eq!(a - b, Traffic { calls: 2, bytes: 4080 });
/// assert_eq!(a + b, Traffic { calls: 4, bytes: 4112 });
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Traffic {
    /// Transfers made (each write, uniform or read-back is one).
    pub calls: u64,
    /// Bytes moved (as sent: padding to the 4-byte copy granularity included).
    pub bytes: u64,
}

impl Add for Traffic {
    type Output = Traffic;
    fn add(self, o: Traffic) -> Traffic {
        Traffic { calls: self.calls + o.calls, bytes: self.bytes + o.bytes }
    }
}

impl Sub for Traffic {
    type Output = Traffic;
    /// What happened between two snapshots (saturating: never negative).
    fn sub(self, o: Traffic) -> Traffic {
        Traffic { calls: self.calls.saturating_sub(o.calls), bytes: self.bytes.saturating_sub(o.bytes) }
    }
}

impl fmt::Display for Traffic {
    /// `3 calls, 4.0 KiB`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let calls = if self.calls == 1 { "call" } else { "calls" };
        write!(f, "{} {calls}, {}", self.calls, human_bytes(self.bytes))
    }
}

/// `512 B`, `4.0 KiB`, `12.3 MiB`, `1.50 GiB`.
fn human_bytes(b: u64) -> String {
    const KIB: f64 = 1024.0;
    let x = b as f64;
    if x < KIB {
        format!("{b} B")
    } else if x < KIB * KIB {
        format!("{:.1} KiB", x / KIB)
    } else if x < KIB * KIB * KIB {
        format!("{:.1} MiB", x / (KIB * KIB))
    } else {
        format!("{:.2} GiB", x / (KIB * KIB * KIB))
    }
}

/// A snapshot of a context's transfers since it was created: host to device
/// ([`uploads`](Transfers::uploads): [`Gpu::upload`], [`Gpu::write`], [`Gpu::uniform`]) and
/// device to host ([`downloads`](Transfers::downloads): [`Gpu::download`] and every other
/// read-back of data; [`timestamps`](Transfers::timestamps): the read-back of the timestamp
/// queries that [`Recorder::submit`](crate::Recorder::submit) makes to time its passes).
/// Buffer creation, zero-filling and copies between buffers stay on the device and are not
/// transfers.
///
/// The counters are shared by every clone of a [`Gpu`]; the difference of two snapshots is
/// what happened between them.
///
/// ```no_run
/// let gpu = lumbre_gpu::Gpu::new()?;
/// let before = gpu.transfers();
/// let buf = gpu.upload(&[1u32, 2, 3, 4])?;
/// let back = gpu.download(&buf)?;
/// let moved = gpu.transfers() - before;
/// assert_eq!((moved.uploads.calls, moved.uploads.bytes), (1, 16));
/// assert_eq!((moved.downloads.calls, moved.downloads.bytes), (1, 16));
/// println!("{moved}"); // up 1 call, 16 B; down 1 call, 16 B
/// # let _ = back;
/// # Ok::<(), lumbre_gpu::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Transfers {
    /// Host to device: uploads, writes and uniforms.
    pub uploads: Traffic,
    /// Device to host: read-backs of data.
    pub downloads: Traffic,
    /// Device to host: read-backs of timestamp queries (timing only).
    pub timestamps: Traffic,
}

impl Transfers {
    /// Everything read back, data and timestamps together.
    ///
    /// ```
    /// use lumbre_gpu::{Traffic, Transfers};
    /// let t = Transfers {
    ///     downloads: Traffic { calls: 2, bytes: 64 },
    ///     timestamps: Traffic { calls: 1, bytes: 16 },
    ///     ..Default::default()
    /// };
    /// assert_eq!(t.read_back(), Traffic { calls: 3, bytes: 80 });
    /// ```
    pub fn read_back(&self) -> Traffic {
        self.downloads + self.timestamps
    }
}

impl Sub for Transfers {
    type Output = Transfers;
    /// What happened between two snapshots (`later - earlier`).
    ///
    /// ```
    /// use lumbre_gpu::{Traffic, Transfers};
    /// let earlier = Transfers { uploads: Traffic { calls: 1, bytes: 8 }, ..Default::default() };
    /// let later = Transfers { uploads: Traffic { calls: 3, bytes: 40 }, ..Default::default() };
    /// assert_eq!((later - earlier).uploads, Traffic { calls: 2, bytes: 32 });
    /// ```
    fn sub(self, o: Transfers) -> Transfers {
        Transfers {
            uploads: self.uploads - o.uploads,
            downloads: self.downloads - o.downloads,
            timestamps: self.timestamps - o.timestamps,
        }
    }
}

impl Add for Transfers {
    type Output = Transfers;
    fn add(self, o: Transfers) -> Transfers {
        Transfers {
            uploads: self.uploads + o.uploads,
            downloads: self.downloads + o.downloads,
            timestamps: self.timestamps + o.timestamps,
        }
    }
}

impl fmt::Display for Transfers {
    /// `up 12 calls, 1.2 MiB; down 3 calls, 3.0 KiB` (and the timestamp reads, if any).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "up {}; down {}", self.uploads, self.downloads)?;
        if self.timestamps.calls > 0 {
            write!(f, " (and {} of timestamps)", self.timestamps)?;
        }
        Ok(())
    }
}

/// What is being moved, for the counters.
#[cfg(feature = "wgpu")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Direction {
    /// Host to device.
    Up,
    /// Device to host, data.
    Down,
    /// Device to host, timestamp queries.
    Timestamps,
}

/// The atomic counters behind [`Gpu::transfers`].
#[cfg(feature = "wgpu")]
#[derive(Debug, Default)]
pub(crate) struct Counters {
    calls: [AtomicU64; 3],
    bytes: [AtomicU64; 3],
}

#[cfg(feature = "wgpu")]
impl Counters {
    /// Counts one transfer of `bytes`.
    pub(crate) fn add(&self, dir: Direction, bytes: u64) {
        let i = dir as usize;
        self.calls[i].fetch_add(1, Ordering::Relaxed);
        self.bytes[i].fetch_add(bytes, Ordering::Relaxed);
    }

    fn get(&self, dir: Direction) -> Traffic {
        let i = dir as usize;
        Traffic { calls: self.calls[i].load(Ordering::Relaxed), bytes: self.bytes[i].load(Ordering::Relaxed) }
    }

    fn snapshot(&self) -> Transfers {
        Transfers {
            uploads: self.get(Direction::Up),
            downloads: self.get(Direction::Down),
            timestamps: self.get(Direction::Timestamps),
        }
    }
}

#[cfg(feature = "wgpu")]
impl Gpu {
    /// The transfers between host and device made through this context (and its clones)
    /// since it was created; subtract two snapshots for what happened between them (see
    /// [`Transfers`]).
    ///
    /// ```no_run
    /// let gpu = lumbre_gpu::Gpu::new()?;
    /// let before = gpu.transfers();
    /// let _params = gpu.uniform(&[1u32, 2])?;
    /// assert_eq!((gpu.transfers() - before).uploads.bytes, 16);
    /// # Ok::<(), lumbre_gpu::Error>(())
    /// ```
    pub fn transfers(&self) -> Transfers {
        self.0.transfers.snapshot()
    }

    /// Counts a transfer (every host <-> device copy of the runtime goes through here).
    pub(crate) fn count_transfer(&self, dir: Direction, bytes: u64) {
        self.0.transfers.add(dir, bytes);
    }
}
