//! Typed storage buffers over `bytemuck::Pod`.

use std::marker::PhantomData;
use std::ops::Range;

use bytemuck::Pod;

use crate::transfers::Direction;
use crate::{Error, Gpu, Result};

/// A storage buffer of `len` values of `T` on the GPU.
///
/// Buffers are padded to a multiple of 16 bytes (at least 16), and bindings round their
/// size up to 16 bytes, so any buffer can be read as `array<vec4<u32>>`: wide loads are
/// what reaches full bandwidth. Kernels take their true lengths from parameters;
/// downloads cover exactly `len` values.
///
/// ```no_run
/// let gpu = lumbre_gpu::Gpu::new()?;
/// let buf = gpu.upload(&[1u32, 2, 3])?;
/// assert_eq!(gpu.download(&buf)?, vec![1, 2, 3]);
/// # Ok::<(), lumbre_gpu::Error>(())
/// ```
pub struct Buffer<T> {
    raw: wgpu::Buffer,
    len: usize,
    _t: PhantomData<T>,
}

impl<T> Clone for Buffer<T> {
    fn clone(&self) -> Self {
        Self { raw: self.raw.clone(), len: self.len, _t: PhantomData }
    }
}

impl<T> std::fmt::Debug for Buffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Buffer<{}>[{}]", std::any::type_name::<T>(), self.len)
    }
}

/// Usage every Lumbre buffer gets: bound as storage, copied from and to.
const USAGE: wgpu::BufferUsages =
    wgpu::BufferUsages::STORAGE.union(wgpu::BufferUsages::COPY_SRC).union(wgpu::BufferUsages::COPY_DST);

/// Allocation and binding granularity: one vec4.
const PAD: u64 = 16;

fn padded_bytes(bytes: u64) -> u64 {
    bytes.max(PAD).next_multiple_of(PAD)
}

impl<T: Pod> Buffer<T> {
    /// Number of values.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer holds no values.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Size of the values in bytes (without padding).
    pub fn size_bytes(&self) -> u64 {
        (self.len * size_of::<T>()) as u64
    }

    /// The wgpu buffer.
    pub fn raw(&self) -> &wgpu::Buffer {
        &self.raw
    }

    /// The application's buffer `raw` (made on the device of the [`Gpu`] that will use it)
    /// as a buffer of its first `len` values, for a kernel's input or output. Fails if `raw`
    /// lacks one of the usages every Lumbre buffer has (`STORAGE | COPY_SRC | COPY_DST`) or
    /// holds fewer than `len` values.
    ///
    /// ```no_run
    /// use lumbre_gpu::{Buffer, Gpu};
    /// let gpu = Gpu::new()?;
    /// let usage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST;
    /// let desc = wgpu::BufferDescriptor { label: Some("mine"), size: 64, usage, mapped_at_creation: false };
    /// let mine = gpu.device().create_buffer(&desc);
    /// let values = Buffer::<u32>::from_wgpu(mine.clone(), 16)?;
    /// gpu.write(&values, 0, &[7; 16])?;
    /// assert!(Buffer::<u32>::from_wgpu(mine.clone(), 17).is_err()); // 64 bytes hold 16
    /// assert_eq!(values.into_wgpu(), mine);
    /// # Ok::<(), lumbre_gpu::Error>(())
    /// ```
    pub fn from_wgpu(raw: wgpu::Buffer, len: usize) -> Result<Self> {
        let lacks = USAGE - raw.usage();
        if !lacks.is_empty() {
            return Err(Error::Input(format!(
                "a buffer for Lumbre needs the usages {USAGE:?}; this one ({:?}) lacks {lacks:?}",
                raw.usage()
            )));
        }
        let bytes = (len as u64).checked_mul(size_of::<T>() as u64);
        if bytes.is_none_or(|b| b > raw.size()) {
            return Err(Error::Input(format!(
                "a buffer of {} bytes cannot hold {len} values of {} bytes",
                raw.size(),
                size_of::<T>()
            )));
        }
        Ok(Buffer { raw, len, _t: PhantomData })
    }

    /// The wgpu buffer, for the application's own passes, copies and bindings.
    pub fn into_wgpu(self) -> wgpu::Buffer {
        self.raw
    }

    /// A binding of the whole buffer, its size rounded up to 16 bytes (so empty buffers can
    /// be bound, and any buffer read as vec4s).
    pub fn binding(&self) -> wgpu::BindingResource<'_> {
        self.binding_range(0..self.len)
    }

    /// A binding of values `range` (for buffers larger than one binding), its size rounded
    /// up to 16 bytes within the buffer. The start must be aligned to the device's
    /// `min_storage_buffer_offset_alignment` in bytes.
    pub fn binding_range(&self, range: Range<usize>) -> wgpu::BindingResource<'_> {
        let t = size_of::<T>() as u64;
        let offset = range.start as u64 * t;
        let bytes = padded_bytes((range.end - range.start) as u64 * t).min(self.raw.size().saturating_sub(offset));
        wgpu::BindingResource::Buffer(wgpu::BufferBinding {
            buffer: &self.raw,
            offset,
            size: wgpu::BufferSize::new(bytes),
        })
    }

    /// The first `n` vec4s of the buffer as a buffer of its own (same memory).
    pub(crate) fn quads(&self, n: usize) -> Buffer<[u32; 4]> {
        debug_assert!(n as u64 * 16 <= self.raw.size());
        Buffer { raw: self.raw.clone(), len: n, _t: PhantomData }
    }

    /// Reinterprets the buffer as a buffer of `U` (same bytes).
    pub fn cast<U: Pod>(self) -> Result<Buffer<U>> {
        let bytes = self.size_bytes();
        if !bytes.is_multiple_of(size_of::<U>() as u64) {
            return Err(Error::Input(format!("cannot view {bytes} bytes as values of {} bytes", size_of::<U>())));
        }
        Ok(Buffer { raw: self.raw, len: (bytes / size_of::<U>() as u64) as usize, _t: PhantomData })
    }
}

/// Which limit a new buffer is checked against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fit {
    /// The whole buffer will be bound at once: `max_storage_buffer_binding_size`.
    Binding,
    /// The caller binds it in pieces with [`Buffer::binding_range`]: `max_buffer_size`.
    Pieces,
}

/// `(start, len)` of each piece of `n` elements cut into pieces of `piece` (the last one
/// shorter).
///
/// ```
/// assert_eq!(lumbre_gpu::pieces(9, 4), vec![(0, 4), (4, 4), (8, 1)]);
/// assert!(lumbre_gpu::pieces(0, 4).is_empty());
/// ```
pub fn pieces(n: usize, piece: usize) -> Vec<(usize, usize)> {
    (0..n.div_ceil(piece)).map(|k| (k * piece, piece.min(n - k * piece))).collect()
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 { a } else { gcd(b, a % b) }
}

impl Gpu {
    /// The piece length, in elements of `elem_bytes`, for buffers longer than one storage
    /// binding that kernels process `tile` elements per workgroup: the largest multiple of
    /// `tile` whose bytes fit one binding and whose every piece starts at a byte offset that
    /// keeps the binding alignment.
    ///
    /// ```no_run
    /// let gpu = lumbre_gpu::Gpu::new()?;
    /// let piece = gpu.piece_len(12, 256); // xyz points, 256 per workgroup
    /// assert_eq!(piece % 256, 0);
    /// assert_eq!(piece * 12 % gpu.limits().min_storage_buffer_offset_alignment as usize, 0);
    /// # Ok::<(), lumbre_gpu::Error>(())
    /// ```
    pub fn piece_len(&self, elem_bytes: usize, tile: usize) -> usize {
        let l = self.limits();
        let max = l.max_storage_buffer_binding_size as usize / elem_bytes;
        let align = l.min_storage_buffer_offset_alignment as usize;
        // Elements per aligned step: offsets are multiples of `align` bytes.
        let step = align / gcd(align, elem_bytes);
        let unit = tile / gcd(tile, step) * step;
        (max / unit * unit).max(unit)
    }

    /// Checks that `bytes` fit the limit for `fit`, naming `what` in the error.
    ///
    /// ```no_run
    /// let gpu = lumbre_gpu::Gpu::new()?;
    /// assert!(gpu.check_size("huge", u64::MAX, lumbre_gpu::Fit::Binding).is_err());
    /// # Ok::<(), lumbre_gpu::Error>(())
    /// ```
    pub fn check_size(&self, what: &str, bytes: u64, fit: Fit) -> Result<()> {
        let l = self.limits();
        let buffer_max = l.max_buffer_size;
        if bytes > buffer_max {
            return Err(Error::LimitExceeded {
                what: what.into(),
                limit: "max_buffer_size",
                requested: bytes,
                max: buffer_max,
            });
        }
        let binding_max = l.max_storage_buffer_binding_size;
        if fit == Fit::Binding && bytes > binding_max {
            return Err(Error::LimitExceeded {
                what: what.into(),
                limit: "max_storage_buffer_binding_size",
                requested: bytes,
                max: binding_max,
            });
        }
        Ok(())
    }

    fn raw_buffer<T: Pod>(&self, len: usize, fit: Fit, extra: wgpu::BufferUsages) -> Result<Buffer<T>> {
        let bytes = (len as u64)
            .checked_mul(size_of::<T>() as u64)
            .ok_or_else(|| Error::Input(format!("{len} values overflow a byte count")))?;
        self.check_size(std::any::type_name::<T>(), bytes, fit)?;
        let raw = self.scoped(|| {
            Ok(self.device().create_buffer(&wgpu::BufferDescriptor {
                label: None,
                size: padded_bytes(bytes),
                usage: USAGE | extra,
                mapped_at_creation: false,
            }))
        })?;
        Ok(Buffer { raw, len, _t: PhantomData })
    }

    /// A zero-filled buffer of `len` values that fits one binding.
    pub fn zeroed<T: Pod>(&self, len: usize) -> Result<Buffer<T>> {
        self.raw_buffer(len, Fit::Binding, wgpu::BufferUsages::empty())
    }

    /// A zero-filled buffer that fits one binding and can also hold the arguments of indirect
    /// dispatches (`INDIRECT` usage): kernels that size the next kernel's grid write them.
    ///
    /// ```no_run
    /// let gpu = lumbre_gpu::Gpu::new()?;
    /// let args = gpu.zeroed_indirect::<u32>(3)?;
    /// assert!(args.raw().usage().contains(lumbre_gpu::wgpu::BufferUsages::INDIRECT));
    /// # Ok::<(), lumbre_gpu::Error>(())
    /// ```
    pub fn zeroed_indirect<T: Pod>(&self, len: usize) -> Result<Buffer<T>> {
        self.raw_buffer(len, Fit::Binding, wgpu::BufferUsages::INDIRECT)
    }

    /// A zero-filled buffer checked against `fit` (use [`Fit::Pieces`] for data that is
    /// bound in ranges).
    pub fn zeroed_fit<T: Pod>(&self, len: usize, fit: Fit) -> Result<Buffer<T>> {
        self.raw_buffer(len, fit, wgpu::BufferUsages::empty())
    }

    /// Uploads `data` into a new buffer that fits one binding.
    pub fn upload<T: Pod>(&self, data: &[T]) -> Result<Buffer<T>> {
        self.upload_fit(data, Fit::Binding)
    }

    /// Uploads `data` into a new buffer checked against `fit`.
    pub fn upload_fit<T: Pod>(&self, data: &[T], fit: Fit) -> Result<Buffer<T>> {
        let buf = self.raw_buffer(data.len(), fit, wgpu::BufferUsages::empty())?;
        self.write(&buf, 0, data)?;
        Ok(buf)
    }

    /// Writes `data` into `buf` starting at value `offset`.
    pub fn write<T: Pod>(&self, buf: &Buffer<T>, offset: usize, data: &[T]) -> Result<()> {
        if offset + data.len() > buf.len() {
            return Err(Error::Input(format!(
                "write of {} values at {offset} overruns a buffer of {}",
                data.len(),
                buf.len()
            )));
        }
        let bytes: &[u8] = bytemuck::cast_slice(data);
        if bytes.is_empty() {
            return Ok(());
        }
        let at = (offset * size_of::<T>()) as u64;
        self.scoped(|| {
            if bytes.len().is_multiple_of(4) && at.is_multiple_of(4) {
                self.queue().write_buffer(&buf.raw, at, bytes);
                self.count_transfer(Direction::Up, bytes.len() as u64);
            } else {
                // Pad to 4-byte alignment by re-writing the neighbouring bytes we already have.
                let start = at / 4 * 4;
                let end = (at + bytes.len() as u64).next_multiple_of(4).min(buf.raw.size());
                let mut padded = self.download_bytes(&buf.raw, start..end)?;
                let off = (at - start) as usize;
                padded[off..off + bytes.len()].copy_from_slice(bytes);
                self.queue().write_buffer(&buf.raw, start, &padded);
                self.count_transfer(Direction::Up, padded.len() as u64);
            }
            Ok(())
        })
    }

    /// A small uniform buffer holding `value` (kernel parameters).
    pub fn uniform<T: Pod>(&self, value: &T) -> Result<wgpu::Buffer> {
        let bytes = bytemuck::bytes_of(value);
        self.scoped(|| {
            let buf = self.device().create_buffer(&wgpu::BufferDescriptor {
                label: Some("params"),
                size: padded_bytes(bytes.len() as u64).next_multiple_of(16),
                usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            });
            let mut padded = bytes.to_vec();
            padded.resize(buf.size() as usize, 0);
            self.queue().write_buffer(&buf, 0, &padded);
            self.count_transfer(Direction::Up, padded.len() as u64);
            Ok(buf)
        })
    }

    /// Reads the whole buffer back (blocking).
    pub fn download<T: Pod>(&self, buf: &Buffer<T>) -> Result<Vec<T>> {
        self.download_range(buf, 0..buf.len())
    }

    /// Reads values `range` back (blocking).
    pub fn download_range<T: Pod>(&self, buf: &Buffer<T>, range: Range<usize>) -> Result<Vec<T>> {
        if range.start > range.end || range.end > buf.len() {
            return Err(Error::Input(format!("download of {range:?} from a buffer of {}", buf.len())));
        }
        if range.is_empty() {
            return Ok(Vec::new());
        }
        let t = size_of::<T>() as u64;
        let (start, end) = (range.start as u64 * t, range.end as u64 * t);
        let a = start / 4 * 4;
        let b = end.next_multiple_of(4).min(buf.raw.size());
        let bytes = self.download_bytes(&buf.raw, a..b)?;
        let want = &bytes[(start - a) as usize..(end - a) as usize];
        // The staging copy may not be aligned for T; copy into a typed vector.
        let mut out = vec![T::zeroed(); range.len()];
        bytemuck::cast_slice_mut::<T, u8>(&mut out).copy_from_slice(want);
        Ok(out)
    }

    /// Reads bytes `range` (4-byte aligned) of any buffer with `COPY_SRC` usage.
    pub fn download_bytes(&self, raw: &wgpu::Buffer, range: Range<u64>) -> Result<Vec<u8>> {
        self.read_back(raw, range, Direction::Down)
    }

    /// Reads bytes `range` back, counting them as `dir` (data or timestamps).
    pub(crate) fn read_back(&self, raw: &wgpu::Buffer, range: Range<u64>, dir: Direction) -> Result<Vec<u8>> {
        let size = range.end - range.start;
        let staging = self.scoped(|| {
            let staging = self.device().create_buffer(&wgpu::BufferDescriptor {
                label: Some("readback"),
                size,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            });
            let mut enc = self.device().create_command_encoder(&Default::default());
            enc.copy_buffer_to_buffer(raw, range.start, &staging, 0, size);
            self.queue().submit([enc.finish()]);
            Ok(staging)
        })?;
        let (tx, rx) = std::sync::mpsc::channel();
        staging.map_async(wgpu::MapMode::Read, .., move |r| {
            let _ = tx.send(r);
        });
        self.wait()?;
        // Another thread's poll may have collected our callback and not yet run it: keep
        // polling briefly until it arrives.
        let deadline = std::time::Instant::now() + self.0.timeout;
        let mapped = loop {
            match rx.recv_timeout(std::time::Duration::from_millis(5)) {
                Ok(r) => break r,
                Err(_) if std::time::Instant::now() < deadline => {
                    let _ = self.device().poll(wgpu::PollType::Poll);
                }
                Err(_) => return Err(Error::Timeout(self.0.timeout)),
            }
        };
        mapped.map_err(|e| Error::Validation(format!("buffer map failed: {e}")))?;
        let data = staging.get_mapped_range(..).map_err(|e| Error::Validation(format!("mapped range: {e}")))?.to_vec();
        staging.unmap();
        self.count_transfer(dir, data.len() as u64);
        Ok(data)
    }
}
