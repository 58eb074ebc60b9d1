//! A radiosity shard's part (`kind radiosity`): the form factors of the element rows of whole
//! patches, with the mesh's patch ranges and the rows' reflectances; `lumbre merge` puts the
//! rows together and makes the precompute on its backend, the factorisation (`.lrr`) that
//! `lumbre radiosity --load` solves and renders.

use std::collections::BTreeMap;
use std::path::Path;

use lumbre_gpu::{Backend, Compute};
use lumbre_radiosity::{Factorization, LowRank, Matrix, Precompute, Resources, Storage, TwoMesh, rows_in_parts};

use crate::error::Result;
use crate::limits::{available_memory, human};
use crate::part::{Part, run_hash};
use crate::shard::Shard;

/// The part of `shard`: the form factors `f` of its element rows of `mesh`.
pub fn radiosity_part(mesh: &TwoMesh, f: &Matrix, factored: bool, shard: Shard, description: &str) -> Part {
    let rows = &rows_in_parts(&mesh.patch_start, shard.count as usize)[shard.index as usize];
    let mut fields = BTreeMap::new();
    for (k, v) in [
        ("n", mesh.n().to_string()),
        ("k", mesh.k().to_string()),
        ("first", rows.start.to_string()),
        ("rows", rows.len().to_string()),
        ("fingerprint", format!("{:016x}", mesh.fingerprint())),
        ("factored", (factored as u8).to_string()),
    ] {
        fields.insert(k.to_string(), v);
    }
    let bits = |v: &f32| v.to_bits() as u64;
    let data = mesh
        .patch_start
        .iter()
        .map(|&s| s as u64)
        .chain(mesh.rho[rows.clone()].iter().flatten().map(bits))
        .chain(f.data.iter().map(bits))
        .collect();
    Part { kind: "radiosity".into(), run: run_hash(description.as_bytes()), shard, fields, data }
}

/// The factorisation of a radiosity run's parts: their rows checked to be the run's, in
/// order, once each; the precompute (dense Y, or F and W as the run asked) made on `backend`.
pub fn merge_radiosity(parts: &[(&Path, Part)], backend: &Backend) -> Result<Factorization> {
    let (path0, first) = &parts[0];
    let (n, k): (usize, usize) = (first.field(path0, "n")?, first.field(path0, "k")?);
    let factored = first.field::<u8>(path0, "factored")? == 1;
    let fingerprint_text: String = first.field(path0, "fingerprint")?;
    let fingerprint = u64::from_str_radix(&fingerprint_text, 16)
        .map_err(|_| format!("{}: fingerprint {fingerprint_text}: not a hex number", path0.display()))?;
    let starts = first.data.get(..k.saturating_add(1)).ok_or_else(|| format!("{}: cut short", path0.display()))?;
    let patch_start: Vec<u32> = starts.iter().map(|&s| s.min(u32::MAX as u64) as u32).collect();
    if patch_start.first() != Some(&0)
        || patch_start.last().map(|&l| l as usize) != Some(n)
        || patch_start.windows(2).any(|w| w[1] <= w[0])
    {
        return Err(
            format!("{}: its patch ranges are not k = {k} rising ranges from 0 to n = {n}", path0.display()).into()
        );
    }
    // What the precompute holds, checked before it starts (the parts themselves bound n k).
    let needs = Resources::estimate(n, k, 0, 0, 1, factored, Storage::F32).cpu_host;
    if needs > available_memory() {
        return Err(format!(
            "{}: n = {n}, k = {k}: the precompute needs about {} of memory, more than the {} available",
            path0.display(),
            human(needs),
            human(available_memory())
        )
        .into());
    }
    let expected = rows_in_parts(&patch_start, first.shard.count as usize);
    let mut ordered: Vec<&(&Path, Part)> = parts.iter().collect();
    ordered.sort_by_key(|(_, p)| p.shard.index);
    // Grown from the parts' values (already read), not from the header's sizes.
    let (mut rho, mut f) = (Vec::new(), Vec::new());
    for (path, part) in ordered {
        let rows = &expected[part.shard.index as usize];
        let same = |key: &str| part.fields.get(key) == first.fields.get(key);
        let (at, count): (usize, usize) = (part.field(path, "first")?, part.field(path, "rows")?);
        if !["n", "k", "fingerprint", "factored"].iter().all(|key| same(key)) || part.data.get(..k + 1) != Some(starts)
        {
            return Err(format!("{}: another mesh or form than {}", path.display(), path0.display()).into());
        }
        if (at, count) != (rows.start, rows.len()) {
            return Err(format!(
                "{}: rows {at}..{} where shard {} holds {rows:?}",
                path.display(),
                at + count,
                part.shard
            )
            .into());
        }
        let want = (k as u128 + 1) + count as u128 * (3 + k as u128);
        if part.data.len() as u128 != want {
            return Err(format!("{}: {} values where {count} rows need {want}", path.display(), part.data.len()).into());
        }
        let value = |v: &u64| f32::from_bits(*v as u32);
        let (head, tail) = part.data[k + 1..].split_at(3 * count);
        rho.extend(head.chunks_exact(3).map(|c| [value(&c[0]), value(&c[1]), value(&c[2])]));
        f.extend(tail.iter().map(value));
    }
    let lr = LowRank::new(patch_start, rho, Matrix::new(n, k, f)?)?;
    let pc = Precompute { factored, ..Precompute::default() };
    let made = match backend {
        Backend::Gpu(gpu) => pc.gpu(gpu, &lr)?,
        Backend::Cpu => pc.cpu(&lr)?,
    };
    Ok(made.factor.with_fingerprint(fingerprint))
}
