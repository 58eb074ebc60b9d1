//! The factorisation a solve needs (Y, or its factors, and the patch ranges), its file
//! format, and scene fingerprints.
//!
//! # File format (`.lrr`, little-endian)
//!
//! | offset | size | field |
//! | --- | --- | --- |
//! | 0 | 8 | magic `LUMBRLRR` |
//! | 8 | 4 | version, 1 |
//! | 12 | 4 | flags: 0 dense (Y), 1 factored (F, W, rho); all values f32 |
//! | 16 | 8 | n, elements |
//! | 24 | 8 | k, patches |
//! | 32 | 8 | fingerprint of the scene ([`TwoMesh::fingerprint`]) |
//! | 40 | 4 (k + 1) | the patch ranges (u32) |
//! | 44 + 4k | 12 n k | dense: Y, n x 3k row-major (row e: channels r, g, b of k values) |
//! | 44 + 4k | 4 n k + 12 k^2 + 12 n | factored: F (n x k), W (3 x k x k), rho (n x 3) |
//! | end - 8 | 8 | checksum of every byte before it ([`checksum`]) |

use std::fs::File;
use std::io::{BufReader, Read, Write};
use std::path::Path;

use lumbre_gpu::{Error, Result};

use crate::lowrank::check_patches;
use crate::matrix::Matrix;
use crate::mesh::TwoMesh;

/// First bytes of a factor file.
pub const MAGIC: [u8; 8] = *b"LUMBRLRR";
/// The version this build writes and reads.
pub const VERSION: u32 = 1;

/// A streaming 64-bit hash over 8-byte little-endian words (FxHash's mix: rotate, xor,
/// multiply), the last partial word zero-padded and the byte count mixed in at the end. Not
/// cryptographic: it catches truncation, corruption and mix-ups.
///
/// ```
/// use lumbre_radiosity::file::checksum;
/// assert_eq!(checksum(b"abc"), checksum(b"abc"));
/// assert_ne!(checksum(b"abc"), checksum(b"abd"));
/// assert_ne!(checksum(b"abc"), checksum(b"abc\0"));
/// ```
pub fn checksum(bytes: &[u8]) -> u64 {
    let mut h = Hasher::default();
    h.update(bytes);
    h.finish()
}

#[derive(Default)]
struct Hasher {
    h: u64,
    pending: [u8; 8],
    len: usize,
    total: u64,
}

impl Hasher {
    fn mix(&mut self, w: u64) {
        self.h = (self.h.rotate_left(5) ^ w).wrapping_mul(0x517c_c1b7_2722_0a95);
    }

    fn update(&mut self, mut bytes: &[u8]) {
        self.total += bytes.len() as u64;
        if self.len > 0 {
            let take = (8 - self.len).min(bytes.len());
            self.pending[self.len..self.len + take].copy_from_slice(&bytes[..take]);
            self.len += take;
            bytes = &bytes[take..];
            if self.len < 8 {
                return;
            }
            self.mix(u64::from_le_bytes(self.pending));
            self.len = 0;
        }
        let words = bytes.chunks_exact(8);
        let rest = words.remainder();
        for w in words {
            self.mix(u64::from_le_bytes(w.try_into().unwrap_or([0; 8])));
        }
        self.pending[..rest.len()].copy_from_slice(rest);
        self.len = rest.len();
    }

    fn finish(mut self) -> u64 {
        if self.len > 0 {
            let mut w = [0u8; 8];
            w[..self.len].copy_from_slice(&self.pending[..self.len]);
            self.mix(u64::from_le_bytes(w));
        }
        let total = self.total;
        self.mix(total);
        self.h
    }
}

/// How a factorisation stores `Y = -U (I - V^T U)^-1`.
#[derive(Clone, Debug, PartialEq)]
pub enum Form {
    /// Y itself, n x 3k (the paper's form): a solve reads 3 n k values.
    Dense {
        /// Y, row e holding channels r, g, b of k values.
        y: Matrix,
    },
    /// `Y_ch = -diag(rho_ch) F W_ch` with `W_ch = D^-1 (I - V^T U_ch)^-1`, D the diagonal of
    /// the patch sizes c_p (since `U_ch = diag(rho_ch) F D^-1`): a solve reads n k + 3 k^2
    /// values, `B = E + rho ⊙ F (W_ch (V^T E)_ch)`, and the precompute needs no n k^2 product.
    Factored {
        /// Element-to-patch form factors (n x k, one channel).
        f: Matrix,
        /// `W_ch`, 3 x k x k (`[channel][p][q]`).
        w: Vec<f32>,
        /// Reflectance per element.
        rho: Vec<[f32; 3]>,
    },
}

/// What a solve needs: Y (or its factors, see [`Form`]) and the paper's I, with the
/// fingerprint of the scene it was made for (0 when unknown).
///
/// ```
/// use lumbre_radiosity::{Factorization, Matrix};
/// let y = Matrix::new(2, 3, vec![-0.1, -0.2, -0.3, -0.4, -0.5, -0.6]).unwrap();
/// let f = Factorization::new(vec![0, 2], y).unwrap();
/// let path = std::env::temp_dir().join("lumbre-doc-factor.lrr");
/// f.save(&path).unwrap();
/// assert_eq!(Factorization::load(&path, None).unwrap(), f);
/// assert!(Factorization::load(&path, Some(42)).is_err()); // made for another scene
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Factorization {
    /// Number of elements.
    pub n: usize,
    /// Number of patches.
    pub k: usize,
    /// The patch ranges (length k + 1).
    pub patch_start: Vec<u32>,
    /// Y or its factors.
    pub form: Form,
    /// The scene's fingerprint, 0 when unknown.
    pub fingerprint: u64,
}

fn io(path: &Path, e: std::io::Error) -> Error {
    if e.kind() == std::io::ErrorKind::UnexpectedEof {
        Error::Input(format!("{}: truncated factor file", path.display()))
    } else {
        Error::Input(format!("{}: {e}", path.display()))
    }
}

/// Writes f32 values little-endian into `w`, hashing them.
fn put(w: &mut dyn Write, hash: &mut Hasher, values: &[f32]) -> std::io::Result<()> {
    for chunk in values.chunks(1 << 18) {
        let bytes: Vec<u8> = chunk.iter().flat_map(|v| v.to_le_bytes()).collect();
        hash.update(&bytes);
        w.write_all(&bytes)?;
    }
    Ok(())
}

/// Reads `len` f32 values, hashing them.
fn take(r: &mut impl Read, hash: &mut Hasher, len: usize) -> std::io::Result<Vec<f32>> {
    let mut out = vec![0.0f32; len];
    let mut buf = vec![0u8; 1 << 20];
    for chunk in out.chunks_mut(buf.len() / 4) {
        let bytes = &mut buf[..chunk.len() * 4];
        r.read_exact(bytes)?;
        hash.update(bytes);
        for (v, b) in chunk.iter_mut().zip(bytes.chunks_exact(4)) {
            *v = f32::from_le_bytes(b.try_into().unwrap_or([0; 4]));
        }
    }
    Ok(out)
}

impl Factorization {
    /// A dense factorisation of Y (n x 3k) over the patch ranges (k + 1 values, no empty
    /// patch).
    pub fn new(patch_start: Vec<u32>, y: Matrix) -> Result<Factorization> {
        check_patches(&patch_start, y.rows)?;
        let k = patch_start.len() - 1;
        if y.cols != 3 * k {
            return Err(Error::Input(format!("Y has {} columns, expected 3k = {}", y.cols, 3 * k)));
        }
        Ok(Factorization { n: y.rows, k, patch_start, form: Form::Dense { y }, fingerprint: 0 })
    }

    /// A factored factorisation from the system and its inverses `(I - V^T U)^-1`
    /// (3 x k x k): `W_ch = D^-1 (I - V^T U_ch)^-1`, each row p divided by c_p.
    pub fn factored(lr: &crate::lowrank::LowRank, inverse: &[f32]) -> Result<Factorization> {
        let k = lr.k();
        if inverse.len() != 3 * k * k {
            return Err(Error::Input(format!("{} inverse values, expected 3 k^2 = {}", inverse.len(), 3 * k * k)));
        }
        let inv = lr.inv_sizes();
        let w = inverse.iter().enumerate().map(|(i, &m)| m * inv[(i / k) % k]).collect();
        Ok(Factorization {
            n: lr.n(),
            k,
            patch_start: lr.patch_start.clone(),
            form: Form::Factored { f: lr.f.clone(), w, rho: lr.rho.clone() },
            fingerprint: 0,
        })
    }

    /// The same factorisation, marked as made for the scene with this fingerprint.
    pub fn with_fingerprint(mut self, fingerprint: u64) -> Factorization {
        self.fingerprint = fingerprint;
        self
    }

    /// Y (n x 3k), computed from the factors when factored (an n k^2 product: small systems).
    pub fn y(&self) -> std::borrow::Cow<'_, Matrix> {
        match &self.form {
            Form::Dense { y } => std::borrow::Cow::Borrowed(y),
            Form::Factored { f, w, rho } => {
                let k = self.k;
                let mut y = Matrix::zeros(self.n, 3 * k);
                for (e, r) in rho.iter().enumerate() {
                    for (ch, &rc) in r.iter().enumerate() {
                        for q in 0..k {
                            let s: f64 = (0..k).map(|p| f.get(e, p) as f64 * w[(ch * k + p) * k + q] as f64).sum();
                            y.data[e * 3 * k + ch * k + q] = (-(rc as f64) * s) as f32;
                        }
                    }
                }
                std::borrow::Cow::Owned(y)
            }
        }
    }

    /// Values a solve reads (Y's, or F's and W's).
    pub fn values(&self) -> usize {
        match &self.form {
            Form::Dense { .. } => 3 * self.n * self.k,
            Form::Factored { .. } => self.n * self.k + 3 * self.k * self.k,
        }
    }

    /// The bytes of the header and patch ranges.
    fn header(&self) -> Vec<u8> {
        let mut h = Vec::with_capacity(44 + 4 * self.k);
        h.extend_from_slice(&MAGIC);
        h.extend_from_slice(&VERSION.to_le_bytes());
        let flags = matches!(self.form, Form::Factored { .. }) as u32;
        h.extend_from_slice(&flags.to_le_bytes());
        h.extend_from_slice(&(self.n as u64).to_le_bytes());
        h.extend_from_slice(&(self.k as u64).to_le_bytes());
        h.extend_from_slice(&self.fingerprint.to_le_bytes());
        for s in &self.patch_start {
            h.extend_from_slice(&s.to_le_bytes());
        }
        h
    }

    /// Writes the factor file (see the module's table) whole or not at all, never through a
    /// symbolic link ([`lumbre_raytrace::write_with`]).
    pub fn save(&self, path: &Path) -> Result<()> {
        lumbre_raytrace::write_with(path, |w| {
            let mut hash = Hasher::default();
            let header = self.header();
            hash.update(&header);
            w.write_all(&header)?;
            match &self.form {
                Form::Dense { y } => put(w, &mut hash, &y.data),
                Form::Factored { f, w: wm, rho } => put(w, &mut hash, &f.data)
                    .and_then(|_| put(w, &mut hash, wm))
                    .and_then(|_| put(w, &mut hash, &rho.iter().flatten().copied().collect::<Vec<f32>>())),
            }?;
            w.write_all(&hash.finish().to_le_bytes())
        })
        .map_err(|e| Error::Input(e.to_string()))
    }

    /// Reads a factor file. With `expected` the scene's fingerprint, a file made for another
    /// scene is an error; truncated and corrupted files, other versions and other formats
    /// are errors naming the file.
    pub fn load(path: &Path, expected: Option<u64>) -> Result<Factorization> {
        let file = File::open(path).map_err(|e| io(path, e))?;
        let size = file.metadata().map_err(|e| io(path, e))?.len();
        let mut r = BufReader::with_capacity(1 << 20, file);
        let bad = |m: String| Error::Input(format!("{}: {m}", path.display()));
        let mut head = [0u8; 40];
        r.read_exact(&mut head).map_err(|e| io(path, e))?;
        if head[..8] != MAGIC {
            return Err(bad("not a low-rank radiosity factor file (wrong magic bytes)".into()));
        }
        let word = |a: usize| u32::from_le_bytes(head[a..a + 4].try_into().unwrap_or([0; 4]));
        let long = |a: usize| u64::from_le_bytes(head[a..a + 8].try_into().unwrap_or([0; 8]));
        let (version, flags) = (word(8), word(12));
        if version != VERSION {
            return Err(bad(format!("factor file version {version}; this build reads version {VERSION}")));
        }
        if flags > 1 {
            return Err(bad(format!("unknown flags {flags:#x}")));
        }
        let factored = flags == 1;
        let (n, k, fingerprint) = (long(16), long(24), long(32));
        if let Some(want) = expected
            && want != fingerprint
        {
            return Err(bad(format!(
                "made for another scene (fingerprint {fingerprint:016x}, this scene's is {want:016x})"
            )));
        }
        let values = if factored {
            n.checked_mul(k)
                .and_then(|nk| nk.checked_add(k.checked_mul(k)?.checked_mul(3)?)?.checked_add(n.checked_mul(3)?))
        } else {
            n.checked_mul(k).and_then(|nk| nk.checked_mul(3))
        };
        let expected_size = values
            .and_then(|v| v.checked_mul(4))
            .and_then(|y| y.checked_add(4 * (k + 1) + 48))
            .ok_or_else(|| bad(format!("n = {n} and k = {k} overflow a file size")))?;
        if size < expected_size {
            return Err(bad(format!("truncated factor file: {size} bytes, n = {n} and k = {k} need {expected_size}")));
        }
        if size > expected_size {
            return Err(bad(format!("{} bytes after the end of the factor data", size - expected_size)));
        }
        let (n, k) = (n as usize, k as usize);
        let mut hash = Hasher::default();
        hash.update(&head);
        let mut starts = vec![0u8; 4 * (k + 1)];
        r.read_exact(&mut starts).map_err(|e| io(path, e))?;
        hash.update(&starts);
        let patch_start: Vec<u32> =
            starts.chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().unwrap_or([0; 4]))).collect();
        check_patches(&patch_start, n).map_err(|e| bad(e.to_string()))?;
        let form = if factored {
            let f = take(&mut r, &mut hash, n * k).map_err(|e| io(path, e))?;
            let w = take(&mut r, &mut hash, 3 * k * k).map_err(|e| io(path, e))?;
            let rho = take(&mut r, &mut hash, 3 * n).map_err(|e| io(path, e))?;
            Form::Factored {
                f: Matrix { rows: n, cols: k, data: f },
                w,
                rho: rho.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect(),
            }
        } else {
            Form::Dense {
                y: Matrix { rows: n, cols: 3 * k, data: take(&mut r, &mut hash, 3 * n * k).map_err(|e| io(path, e))? },
            }
        };
        let mut sum = [0u8; 8];
        r.read_exact(&mut sum).map_err(|e| io(path, e))?;
        if u64::from_le_bytes(sum) != hash.finish() {
            return Err(bad("checksum mismatch: the file is corrupt".into()));
        }
        Ok(Factorization { n, k, patch_start, form, fingerprint })
    }
}

impl TwoMesh {
    /// A fingerprint of what a factorisation depends on in the scene: the elements' pieces
    /// and reflectances and the patch ranges (not the emission, which a solve takes anew).
    ///
    /// ```
    /// use lumbre_radiosity::TwoMesh;
    /// let a = TwoMesh::closed_box(4, 2).unwrap();
    /// assert_eq!(a.fingerprint(), TwoMesh::closed_box(4, 2).unwrap().fingerprint());
    /// assert_ne!(a.fingerprint(), TwoMesh::closed_box(4, 1).unwrap().fingerprint());
    /// ```
    pub fn fingerprint(&self) -> u64 {
        let mut h = Hasher::default();
        h.update(&(self.n() as u64).to_le_bytes());
        h.update(&(self.k() as u64).to_le_bytes());
        for s in &self.patch_start {
            h.update(&s.to_le_bytes());
        }
        for s in &self.piece_start {
            h.update(&s.to_le_bytes());
        }
        for v in self.pieces.iter().flat_map(|s| s.to_gpu()).flatten().chain(self.rho.iter().flatten().copied()) {
            h.update(&v.to_le_bytes());
        }
        h.finish()
    }
}

impl Factorization {
    /// This factorisation with the matrix the GPU stores in f16 (Y, or F; W stays f32)
    /// rounded through f16 as the GPU stores it ([`crate::twin::f16_scale`], [`crate::twin::f16_bits`]):
    /// the CPU twin of an f16 solve.
    pub fn rounded_to_f16(&self) -> Factorization {
        use rayon::prelude::*;
        let round = |data: &mut [f32]| {
            let scale = crate::layout::f16_scale(crate::layout::max_abs(data));
            data.par_iter_mut()
                .for_each(|v| *v = crate::layout::f16_value(crate::layout::f16_bits(*v * scale)) / scale);
        };
        let mut out = self.clone();
        match &mut out.form {
            Form::Dense { y } => round(&mut y.data),
            Form::Factored { f, .. } => round(&mut f.data),
        }
        out
    }
}
