//! `--shard I/N`: a run cut into N deterministic parts, of which this process does the I-th
//! (from 0) and writes a partial result for `lumbre merge`. `I` may be `auto`: the index a
//! job scheduler gives each task of an array.

use std::ops::Range;
use std::str::FromStr;

use crate::error::Result;

/// The variables a scheduler sets to a task's index, read in this order by `--shard auto/N`:
/// a Kubernetes Indexed Job's pods and a Slurm job array's tasks (its array from 0).
pub const INDEX_VARIABLES: [&str; 2] = ["JOB_COMPLETION_INDEX", "SLURM_ARRAY_TASK_ID"];

/// `--shard` as given: an index (or `auto`) and a count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShardSpec {
    index: Option<u32>,
    count: u32,
}

impl FromStr for ShardSpec {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Self, String> {
        let form = || format!("{s}: expected I/N (the I-th of N parts, I from 0) or auto/N");
        let (i, n) = s.split_once('/').ok_or_else(form)?;
        let count: u32 = n.trim().parse().map_err(|_| form())?;
        if count == 0 {
            return Err(format!("{s}: N must be at least 1"));
        }
        let index = match i.trim() {
            "auto" => None,
            i => Some(i.parse::<u32>().map_err(|_| form())?),
        };
        if let Some(i) = index
            && i >= count
        {
            return Err(format!("{s}: the index must be below N (parts are numbered from 0)"));
        }
        Ok(ShardSpec { index, count })
    }
}

/// The I-th of N parts of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// This part, from 0.
    pub index: u32,
    /// Parts in all.
    pub count: u32,
}

impl ShardSpec {
    /// The shard, `auto` read from the first of [`INDEX_VARIABLES`] that `var` finds.
    pub fn resolve(&self, var: impl Fn(&str) -> Option<String>) -> Result<Shard> {
        let count = self.count;
        let index = match self.index {
            Some(i) => i,
            None => {
                let (name, value) = INDEX_VARIABLES
                    .iter()
                    .find_map(|v| var(v).map(|x| (*v, x)))
                    .ok_or_else(|| format!("--shard auto/{count}: none of {} is set", INDEX_VARIABLES.join(", ")))?;
                let i: u32 = value
                    .trim()
                    .parse()
                    .map_err(|_| format!("--shard auto/{count}: {name}={value} is not a task index"))?;
                if i >= count {
                    let hint = if name.starts_with("SLURM") { " (the array must start at 0)" } else { "" };
                    return Err(format!("--shard auto/{count}: {name}={i} is not below {count}{hint}").into());
                }
                i
            }
        };
        Ok(Shard { index, count })
    }
}

impl ShardSpec {
    /// The shard, `auto` read from this process's environment.
    pub fn resolve_env(&self) -> Result<Shard> {
        self.resolve(|v| std::env::var(v).ok())
    }
}

impl Shard {
    /// This shard's part of `0..total`: `[total I / N, total (I + 1) / N)`, so the parts of
    /// every shard tile `0..total` in order.
    pub fn range(&self, total: u32) -> Range<u32> {
        let at = |i: u32| (total as u64 * i as u64 / self.count as u64) as u32;
        at(self.index)..at(self.index + 1)
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn shard_flags_parse_and_refuse() {
        assert_eq!("2/4".parse(), Ok(ShardSpec { index: Some(2), count: 4 }));
        assert_eq!("auto/3".parse(), Ok(ShardSpec { index: None, count: 3 }));
        for bad in ["4/4", "1/0", "2", "x/2", "-1/2", "1/two"] {
            assert!(bad.parse::<ShardSpec>().is_err(), "{bad}");
        }
    }

    #[test]
    fn auto_reads_the_schedulers_index() {
        let spec: ShardSpec = "auto/4".parse().unwrap();
        let k8s = |v: &str| (v == "JOB_COMPLETION_INDEX").then(|| "3".to_string());
        assert_eq!(spec.resolve(k8s).unwrap(), Shard { index: 3, count: 4 });
        let slurm = |v: &str| (v == "SLURM_ARRAY_TASK_ID").then(|| "1".to_string());
        assert_eq!(spec.resolve(slurm).unwrap(), Shard { index: 1, count: 4 });
        let past = |v: &str| (v == "SLURM_ARRAY_TASK_ID").then(|| "4".to_string());
        assert!(spec.resolve(past).unwrap_err().to_string().contains("start at 0"));
        let junk = |v: &str| (v == "JOB_COMPLETION_INDEX").then(|| "x".to_string());
        assert!(spec.resolve(junk).unwrap_err().to_string().contains("JOB_COMPLETION_INDEX=x"));
        assert!(spec.resolve(|_| None).unwrap_err().to_string().contains("JOB_COMPLETION_INDEX"));
    }

    proptest! {
        #[test]
        fn shards_tile_the_range(total in 0u32..100_000, count in 1u32..64) {
            let mut next = 0;
            for index in 0..count {
                let r = Shard { index, count }.range(total);
                prop_assert_eq!(r.start, next);
                prop_assert!(r.end - r.start <= total / count + 1);
                next = r.end;
            }
            prop_assert_eq!(next, total);
        }
    }
}
