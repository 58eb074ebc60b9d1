//! The light tree by Morton order, as real-time lightcuts build it: the lights sorted by the
//! Morton code of their position (optionally interleaved with bits of their normal's direction),
//! Karras's radix tree (2012) over the sorted codes, and the clusters' bounds bottom-up.
//! CPU here, stage by stage as on the GPU (`gpu/morton_tree.rs`:
//! `lightcuts/morton_tree_keys.wgsl`, the sort and the radix tree of `lumbre_compact` and
//! `lumbre_morton`, `lightcuts/morton_tree_bounds.wgsl`), with the same topology bit for bit.

use glam::Vec3;
use lumbre_compact::radix_sort_cpu;
use lumbre_gpu::{Error, Result};
use lumbre_morton::{Quantizer, RadixNode, RadixTree, encode_u32};
use rayon::prelude::*;

use crate::tree::{LightNode, LightTree};
use crate::vpls::{Vpl, validate_vpls};

/// Largest number of direction bits per octahedral coordinate.
pub const MAX_DIRECTION_BITS: u32 = 5;

/// The Morton-order builder.
///
/// The key of a light is a Morton code of at most 30 bits: `p` bits per axis of its position
/// in the quantisation box (10 without direction bits) and `q` bits per coordinate of its
/// normal's octahedral map (`q` = [`direction_bits`](MortonTree::direction_bits),
/// `3p + 2q <= 30`), the direction's levels interleaved evenly with the position's, so
/// lights facing apart are split at every scale of the tree. Equal keys are ordered
/// by the lights' indices (a stable sort) and split by index bits in the radix tree, as
/// Karras does.
///
/// ```
/// use glam::Vec3;
/// use lumbre_lightcuts::{MortonTree, Vpl};
/// let vpls: Vec<Vpl> = (0..64)
///     .map(|i| Vpl { position: Vec3::new((i % 8) as f32, (i / 8) as f32, 0.0), normal: Vec3::Z, intensity: Vec3::ONE })
///     .collect();
/// let tree = MortonTree::default().build(&vpls).unwrap();
/// tree.validate().unwrap();
/// assert_eq!(tree.depth(), 6); // a full grid gives a balanced tree
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MortonTree {
    /// Direction bits per octahedral coordinate, 0 to [`MAX_DIRECTION_BITS`] (default 3:
    /// lights facing apart are split early, which makes cuts smaller; see the results).
    pub direction_bits: u32,
    /// Seed of the representatives' draws.
    pub seed: u32,
    /// The quantisation box; `None`: the lights' box. Lights outside it are clamped in.
    pub bounds: Option<(Vec3, Vec3)>,
}

impl Default for MortonTree {
    fn default() -> Self {
        MortonTree { direction_bits: 3, seed: 0, bounds: None }
    }
}

/// The constants of the key computation (mirrored by the GPU's parameters).
#[derive(Clone, Copy, Debug)]
pub(crate) struct KeyParams {
    pub quantizer: Quantizer,
    pub direction_bits: u32,
}

/// Position bits per axis for `q` direction bits per coordinate.
fn position_bits(q: u32) -> u32 {
    (30 - 2 * q) / 3
}

/// The octahedral map of a unit vector to `[0, 1]^2`.
pub(crate) fn octahedral(n: Vec3) -> (f32, f32) {
    let l1 = n.x.abs() + n.y.abs() + n.z.abs();
    let (mut u, mut v) = (n.x / l1, n.y / l1);
    if n.z < 0.0 {
        let (su, sv) = (if u >= 0.0 { 1.0 } else { -1.0 }, if v >= 0.0 { 1.0 } else { -1.0 });
        (u, v) = ((1.0 - v.abs()) * su, (1.0 - u.abs()) * sv);
    }
    ((u + 1.0) * 0.5, (v + 1.0) * 0.5)
}

/// `floor(x * 2^bits)` clamped to `[0, 2^bits - 1]`.
fn quantize_unit(x: f32, bits: u32) -> u32 {
    let cells = (1u32 << bits) as f32;
    (x * cells).floor().clamp(0.0, cells - 1.0) as u32
}

/// The key of one light (the CPU twin of `morton_tree_keys.wgsl`'s `light_key`): a 5-D Morton
/// code, most significant first, of `p` levels of position (3 bits each: z, y, x) with the
/// `q` levels of direction (2 bits each: u, w) spread evenly among them, direction level `j`
/// after position level `j p / q`. Below the position bits, direction bits would only
/// break ties between lights in the same cell and never shape the tree.
pub(crate) fn light_key(p: &KeyParams, v: &Vpl) -> u32 {
    let cell = p.quantizer.cell_clamped(v.position.to_array());
    let q = p.direction_bits;
    if q == 0 {
        return encode_u32(cell);
    }
    let bits = position_bits(q);
    let (u, w) = octahedral(v.normal);
    let (qu, qw) = (quantize_unit(u, q), quantize_unit(w, q));
    let mut key = 0u32;
    let mut j = 0;
    for level in 0..bits {
        let b = bits - 1 - level;
        key = key << 3 | ((cell[2] >> b) & 1) << 2 | ((cell[1] >> b) & 1) << 1 | ((cell[0] >> b) & 1);
        if j < q && j * bits / q == level {
            let d = q - 1 - j;
            key = key << 2 | ((qu >> d) & 1) << 1 | ((qw >> d) & 1);
            j += 1;
        }
    }
    key
}

/// Stage 1: each light's key and index (the pairs the sort orders).
pub(crate) fn morton_keys(p: &KeyParams, vpls: &[Vpl]) -> (Vec<u32>, Vec<u32>) {
    let keys = vpls.par_iter().map(|v| light_key(p, v)).collect();
    (keys, (0..vpls.len() as u32).collect())
}

/// Stage 4 (after the radix tree of the sorted keys, stage 3): the leaves from the sorted
/// lights, then every cluster from its children, deepest common prefix first (a node's
/// children have longer prefixes than it has).
pub(crate) fn tree_bounds(vpls: &[Vpl], order: &[u32], topology: &[RadixNode], seed: u32) -> Vec<LightNode> {
    let n = vpls.len();
    let mut nodes = vec![LightNode::default(); 2 * n - 1];
    nodes[n - 1..]
        .par_iter_mut()
        .zip(order.par_iter())
        .for_each(|(node, &k)| *node = LightNode::leaf(&vpls[k as usize], k));
    let mut by_level: Vec<Vec<u32>> = vec![Vec::new(); 65];
    for (i, t) in topology.iter().enumerate() {
        by_level[t.prefix as usize].push(i as u32);
    }
    for level in by_level.iter().rev().filter(|l| !l.is_empty()) {
        let done: Vec<LightNode> = level
            .par_iter()
            .map(|&i| {
                let RadixNode { left: a, right: b, .. } = topology[i as usize];
                LightNode::merge(&nodes[a as usize], a, &nodes[b as usize], b, i, seed)
            })
            .collect();
        for (&i, node) in level.iter().zip(done) {
            nodes[i as usize] = node;
        }
    }
    nodes
}

impl MortonTree {
    /// The key parameters for `vpls`, checked.
    pub(crate) fn key_params(&self, vpls: &[Vpl]) -> Result<KeyParams> {
        if self.direction_bits > MAX_DIRECTION_BITS {
            return Err(Error::Input(format!(
                "Morton light tree: {} direction bits, at most {MAX_DIRECTION_BITS}",
                self.direction_bits
            )));
        }
        let (lo, hi) = match self.bounds {
            Some(b) => b,
            None => vpls
                .iter()
                .fold((vpls[0].position, vpls[0].position), |(lo, hi), v| (lo.min(v.position), hi.max(v.position))),
        };
        let quantizer = Quantizer::new(lo.to_array(), hi.to_array(), position_bits(self.direction_bits))
            .map_err(|e| Error::Input(format!("Morton light tree: bounds {lo}..{hi}: {e}")))?;
        Ok(KeyParams { quantizer, direction_bits: self.direction_bits })
    }

    /// Builds the tree over `vpls` on the CPU: the light tree's plain CPU path, which its
    /// [`Compute`](lumbre_gpu::Compute) impl runs.
    pub fn build(&self, vpls: &[Vpl]) -> Result<LightTree> {
        validate_vpls(vpls)?;
        if vpls.len() == 1 {
            return LightTree::single(vpls.to_vec());
        }
        let params = self.key_params(vpls)?;
        let (mut keys, mut order) = morton_keys(&params, vpls);
        radix_sort_cpu(&mut keys, Some(&mut order));
        let topology = RadixTree::build(&keys).nodes;
        let nodes = tree_bounds(vpls, &order, &topology, self.seed);
        Ok(LightTree { nodes, vpls: vpls.to_vec() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn octahedral_map_covers_the_square() {
        let dirs = [Vec3::X, -Vec3::X, Vec3::Y, -Vec3::Y, Vec3::Z, -Vec3::Z, Vec3::new(1.0, -2.0, -3.0).normalize()];
        for d in dirs {
            let (u, v) = octahedral(d);
            assert!((0.0..=1.0).contains(&u) && (0.0..=1.0).contains(&v), "{d}: {u} {v}");
        }
        assert_eq!(octahedral(Vec3::Z), (0.5, 0.5));
        assert_ne!(octahedral(Vec3::Z), octahedral(-Vec3::Z));
    }

    #[test]
    fn keys_interleave_direction_with_position() {
        // q = 3, p = 8: from the top, position level 0 (bits 29..27), direction level 0 (26..25).
        let q = Quantizer::new([0.0; 3], [1.0; 3], position_bits(3)).unwrap();
        let p = KeyParams { quantizer: q, direction_bits: 3 };
        let v = |x: f32, n: Vec3| Vpl { position: Vec3::new(x, 0.5, 0.5), normal: n, intensity: Vec3::ONE };
        let a = light_key(&p, &v(0.2, Vec3::X));
        assert_eq!((a ^ light_key(&p, &v(0.2, -Vec3::X))).leading_zeros(), 5, "u's top bit");
        assert_eq!((a ^ light_key(&p, &v(0.9, Vec3::X))).leading_zeros(), 4, "x's top bit");
        assert!(light_key(&p, &v(0.2, Vec3::Z)) != a);
        // Without direction bits the key is the position's Morton code.
        let plain = KeyParams { quantizer: Quantizer::new([0.0; 3], [1.0; 3], 10).unwrap(), direction_bits: 0 };
        assert_eq!(light_key(&plain, &v(0.2, Vec3::X)), encode_u32(plain.quantizer.cell_clamped([0.2, 0.5, 0.5])));
        for q in 0..=MAX_DIRECTION_BITS {
            assert!(3 * position_bits(q) + 2 * q <= 30);
        }
    }
}
