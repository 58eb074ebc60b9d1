//! `--gpus all|N|#I|I,J,..`: the adapters a run spreads its work over, one device each.

use std::str::FromStr;

use lumbre_gpu::wgpu::DeviceType;
use lumbre_gpu::{Backend, Gpu, GpuOptions};

use crate::error::Result;

/// `--gpus` as given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GpuList {
    /// Every adapter of `lumbre info` that is a GPU (CPU adapters only if there is no other).
    All,
    /// The first N adapters.
    First(usize),
    /// These adapters, by index: `I,J,..` or `#I` (one listed twice: two devices on it).
    Indices(Vec<usize>),
}

impl FromStr for GpuList {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Self, String> {
        let form = || format!("{s}: expected all, a count N, or adapter indices I,J,.. as `lumbre info` lists them");
        if s == "all" {
            return Ok(GpuList::All);
        }
        if s.contains(',') || s.starts_with('#') {
            let mut list = Vec::new();
            for i in s.split(',') {
                // An adapter listed twice gets two devices (two queues on one GPU).
                list.push(i.trim().trim_start_matches('#').parse().map_err(|_| form())?);
            }
            return Ok(GpuList::Indices(list));
        }
        match s.trim().parse::<usize>() {
            Ok(0) => Err(format!("{s}: at least one GPU (adapter 0 alone: '#0')")),
            Ok(n) => Ok(GpuList::First(n)),
            Err(_) => Err(form()),
        }
    }
}

impl GpuList {
    /// The adapter indices among `kinds` (each adapter's type, in `lumbre info`'s order).
    pub fn indices(&self, kinds: &[DeviceType]) -> Result<Vec<usize>> {
        let n = kinds.len();
        let gpus: Vec<usize> = (0..n).filter(|&i| kinds[i] != DeviceType::Cpu).collect();
        let list = match self {
            GpuList::All if gpus.is_empty() => (0..n).collect(),
            GpuList::All => gpus,
            GpuList::First(k) if *k > n => {
                return Err(format!("--gpus {k}: this machine has {n} adapters (`lumbre info`)").into());
            }
            GpuList::First(k) => (0..*k).collect(),
            GpuList::Indices(list) => {
                if let Some(i) = list.iter().find(|&&i| i >= n) {
                    return Err(
                        format!("--gpus: adapter {i} does not exist; this machine has {n} (`lumbre info`)").into()
                    );
                }
                list.clone()
            }
        };
        if list.is_empty() {
            return Err("--gpus: no adapter found".to_string().into());
        }
        Ok(list)
    }

    /// Opens the listed adapters, one device each; `primary` (the backend already open) is
    /// reused for its own adapter.
    pub fn open(&self, primary: &Backend) -> Result<Vec<Backend>> {
        let Backend::Gpu(first) = primary else {
            return Err("--gpus needs --backend gpu".to_string().into());
        };
        let kinds: Vec<_> = lumbre_gpu::adapters().iter().map(|a| a.device_type).collect();
        let list = self.indices(&kinds)?;
        // The primary device serves its adapter's first listing; the others open in parallel.
        let reuse = list.iter().position(|&i| first.adapter_index() == Some(i));
        let opened: Vec<Result<Backend>> = std::thread::scope(|scope| {
            let handles: Vec<_> = list
                .iter()
                .enumerate()
                .map(|(k, &i)| {
                    scope.spawn(move || -> Result<Backend> {
                        if Some(k) == reuse {
                            return Ok(primary.clone());
                        }
                        let opts = GpuOptions { adapter: Some(format!("#{i}")), ..GpuOptions::from_env() };
                        Ok(Backend::Gpu(Gpu::with_options(&opts)?))
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|_| Err("opening a GPU failed".to_string().into())))
                .collect()
        });
        let out = opened.into_iter().collect::<Result<Vec<_>>>()?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpu_lists_parse_and_pick_adapters() {
        let kinds = [DeviceType::DiscreteGpu, DeviceType::Cpu, DeviceType::DiscreteGpu];
        assert_eq!("all".parse::<GpuList>().unwrap().indices(&kinds).unwrap(), vec![0, 2]);
        assert_eq!("2".parse::<GpuList>().unwrap().indices(&kinds).unwrap(), vec![0, 1]);
        assert_eq!("2,#0".parse::<GpuList>().unwrap().indices(&kinds).unwrap(), vec![2, 0]);
        assert_eq!("all".parse::<GpuList>().unwrap().indices(&[DeviceType::Cpu]).unwrap(), vec![0]);
        assert!("4".parse::<GpuList>().unwrap().indices(&kinds).unwrap_err().to_string().contains("has 3"));
        assert!("0,5".parse::<GpuList>().unwrap().indices(&kinds).is_err());
        assert_eq!("1,1".parse::<GpuList>().unwrap().indices(&kinds).unwrap(), vec![1, 1]);
        assert_eq!("#2".parse::<GpuList>().unwrap().indices(&kinds).unwrap(), vec![2]);
        assert!("0".parse::<GpuList>().unwrap_err().contains("'#0'"));
        for bad in ["0", "x", "1,,2", "all,1"] {
            assert!(bad.parse::<GpuList>().is_err(), "{bad}");
        }
    }
}
