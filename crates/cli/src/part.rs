//! The partial result of one shard (`.lpart`), which `lumbre merge` combines: a text header
//! of `key value` lines, then integers that add exactly. The format is documented in
//! docs/sharding.md.

use std::collections::BTreeMap;
use std::path::Path;

use lumbre_raytrace::{LoadError, read_input, write_file};

use crate::error::Result;
use crate::shard::Shard;

/// The first line of every part file, with the format's version.
const MAGIC: &str = "lumbre-part 1";

/// One shard's result: what it is (`kind`), which run it belongs to, its fields, and the
/// values that merging adds.
#[derive(Clone, Debug, PartialEq)]
pub struct Part {
    /// What was computed: `path` (sample sums) or `density` (photon sums).
    pub kind: String,
    /// The run: a hash of everything that decides the result except the shard.
    pub run: u64,
    /// Which part of the run.
    pub shard: Shard,
    /// The kind's own fields (image size, samples, units), by name.
    pub fields: BTreeMap<String, String>,
    /// The values, little-endian u64 on disk.
    pub data: Vec<u64>,
}

impl Part {
    /// Writes the part to `path` whole or not at all.
    pub fn save(&self, path: &Path) -> Result<()> {
        let mut bytes = format!("{MAGIC}\nkind {}\nrun {:016x}\nshard {}\n", self.kind, self.run, self.shard);
        for (k, v) in &self.fields {
            bytes += &format!("{k} {v}\n");
        }
        bytes += &format!("data u64le {}\n", self.data.len());
        let mut bytes = bytes.into_bytes();
        bytes.extend(self.data.iter().flat_map(|v| v.to_le_bytes()));
        Ok(write_file(path, &bytes)?)
    }

    /// Reads a part; an error names the file and the line for anything out of form.
    pub fn load(path: &Path) -> Result<Part> {
        let bytes = read_input(path)?;
        let bad = |line: usize, why: String| LoadError::at_line(path, line, why);
        let mut at = 0;
        let mut line_no = 0;
        let mut next_line = || -> std::result::Result<(usize, &str), LoadError> {
            line_no += 1;
            let end = bytes[at..]
                .iter()
                .position(|&b| b == b'\n')
                .ok_or_else(|| bad(line_no, "the header ends before its `data` line".into()))?;
            let text = std::str::from_utf8(&bytes[at..at + end])
                .map_err(|_| bad(line_no, "not a lumbre part file (the header is not text)".into()))?;
            at += end + 1;
            Ok((line_no, text))
        };
        let (_, first) = next_line()?;
        if first != MAGIC {
            return Err(bad(1, format!("not a lumbre part file: the first line is not `{MAGIC}`")).into());
        }
        let mut fields = BTreeMap::new();
        let count = loop {
            let (n, text) = next_line()?;
            let (key, value) = text.split_once(' ').ok_or_else(|| bad(n, format!("`{text}`: expected `key value`")))?;
            if key == "data" {
                let count = value
                    .strip_prefix("u64le ")
                    .and_then(|c| c.parse::<usize>().ok())
                    .ok_or_else(|| bad(n, format!("`{text}`: expected `data u64le COUNT`")))?;
                break (n, count);
            }
            if fields.insert(key.to_string(), value.to_string()).is_some() {
                return Err(bad(n, format!("`{key}` given twice")).into());
            }
        };
        let (data_line, count) = count;
        let rest = &bytes[at..];
        if Some(rest.len() as u64) != (count as u64).checked_mul(8) {
            return Err(bad(
                data_line,
                format!(
                    "{count} values announced, {} bytes follow (expected {}): a cut or damaged file",
                    rest.len(),
                    count as u128 * 8
                ),
            )
            .into());
        }
        let data = rest.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().unwrap_or_default())).collect();
        let mut take = |key: &str| fields.remove(key).ok_or_else(|| LoadError::new(path, format!("no `{key}` line")));
        let kind = take("kind")?;
        let run_text = take("run")?;
        let run = u64::from_str_radix(&run_text, 16)
            .map_err(|_| LoadError::new(path, format!("run {run_text}: not a run hash")))?;
        let shard_text = take("shard")?;
        let spec: crate::shard::ShardSpec =
            shard_text.parse().map_err(|e| LoadError::new(path, format!("shard {e}")))?;
        let shard =
            spec.resolve(|_| None).map_err(|_| LoadError::new(path, format!("shard {shard_text}: no index")))?;
        Ok(Part { kind, run, shard, fields, data })
    }

    /// Checks that the values are `per_pixel` for each of `width x height` pixels, before any
    /// pixel is allocated; an error names the file.
    pub fn expect_pixels(&self, path: &Path, per_pixel: u64, width: u32, height: u32) -> Result<()> {
        if self.data.len() as u64 != per_pixel * width as u64 * height as u64 {
            return Err(format!(
                "{}: {} values for {width}x{height} pixels (expected {per_pixel} per pixel)",
                path.display(),
                self.data.len()
            )
            .into());
        }
        Ok(())
    }

    /// The field `key` parsed as `T`; an error naming the file and the field.
    pub fn field<T: std::str::FromStr>(&self, path: &Path, key: &str) -> Result<T> {
        let v = self.fields.get(key).ok_or_else(|| LoadError::new(path, format!("no `{key}` line")))?;
        Ok(v.parse().map_err(|_| LoadError::new(path, format!("{key} {v}: not a valid value")))?)
    }
}

/// How a run's description names its scene: `set:NAME` for a scene of the set, else the hash
/// of the file's bytes (so that the same file under another path is the same run).
pub fn scene_id(scene: &Path) -> Result<String> {
    Ok(match crate::scenes::set_name(scene) {
        Some(name) => format!("set:{name}"),
        None => format!("file {:016x}", run_hash(&read_input(scene)?)),
    })
}

/// FNV-1a, 64 bits: the run hash of a description or a file (stable across builds and
/// machines).
pub fn run_hash(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ *b as u64).wrapping_mul(0x0000_0100_0000_01b3))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part() -> Part {
        let mut fields = BTreeMap::new();
        fields.insert("width".to_string(), "3".to_string());
        Part {
            kind: "path".into(),
            run: run_hash(b"a run"),
            shard: Shard { index: 1, count: 3 },
            fields,
            data: vec![1, u64::MAX, 0],
        }
    }

    #[test]
    fn parts_round_trip_and_damage_is_named() {
        let dir = std::env::temp_dir().join(format!("lumbre-part-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("a.lpart");
        part().save(&path).unwrap();
        let back = Part::load(&path).unwrap();
        assert_eq!(back, part());
        assert_eq!(back.field::<u32>(&path, "width").unwrap(), 3);
        assert!(back.field::<u32>(&path, "height").is_err());
        let bytes = std::fs::read(&path).unwrap();
        std::fs::write(&path, &bytes[..bytes.len() - 3]).unwrap();
        let e = Part::load(&path).unwrap_err().to_string();
        assert!(e.contains("a.lpart:6:") && e.contains("cut or damaged"), "{e}");
        std::fs::write(&path, b"P6\n3 2\n").unwrap();
        assert!(Part::load(&path).unwrap_err().to_string().contains("not a lumbre part file"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn run_hashes_differ() {
        assert_ne!(run_hash(b"spp 16"), run_hash(b"spp 17"));
        assert_eq!(run_hash(b""), 0xcbf2_9ce4_8422_2325);
    }
}
