//! Grouping pieces: which corners they share (exactly, by scene vertex and grid position),
//! the adjacency that follows, region growing to an area target within a cone of normals,
//! and median splits.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use glam::Vec3;
use rayon::slice::ParallelSliceMut;

use crate::shape::{Cell, Shape};
use crate::surfaces::Face;

/// Where a grid point of a face lies: on a scene vertex, on an edge between two (at a
/// reduced fraction from the smaller), or inside the face. Points that coincide on
/// neighbouring faces get the same key, whatever the faces' subdivisions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum CornerKey {
    Vertex([u32; 3]),
    Edge([u32; 3], [u32; 3], u32, u32),
    Inner(u32, u32, u32),
}

fn gcd(a: u32, b: u32) -> u32 {
    if b == 0 { a } else { gcd(b, a % b) }
}

fn bits(p: Vec3) -> [u32; 3] {
    p.to_array().map(f32::to_bits)
}

/// The key of grid point `(i, j)` of face `f` cut `m x m`.
fn grid_key(face: &Face, f: u32, m: u32, i: u32, j: u32) -> CornerKey {
    let c = &face.vertices;
    let edge = |a: usize, b: usize, t: u32| {
        if t == 0 {
            return CornerKey::Vertex(bits(c[a]));
        }
        if t == m {
            return CornerKey::Vertex(bits(c[b]));
        }
        let (pa, pb) = (bits(c[a]), bits(c[b]));
        let (pa, pb, t) = if pa <= pb { (pa, pb, t) } else { (pb, pa, m - t) };
        let g = gcd(t, m);
        CornerKey::Edge(pa, pb, t / g, m / g)
    };
    if face.shape.triangle {
        if j == 0 {
            return edge(0, 1, i);
        }
        if i == 0 {
            return edge(0, 2, j);
        }
        if i + j == m {
            return edge(1, 2, j);
        }
    } else {
        if j == 0 {
            return edge(0, 1, i);
        }
        if j == m {
            return edge(3, 2, i);
        }
        if i == 0 {
            return edge(0, 3, j);
        }
        if i == m {
            return edge(1, 2, j);
        }
    }
    CornerKey::Inner(f, i, j)
}

/// The grid points at the corners of a cell, in [`Shape::corners`] order.
pub(crate) fn cell_corners(c: Cell, triangle: bool) -> ([(u32, u32); 4], usize) {
    let (i, j) = (c.i, c.j);
    if !triangle {
        ([(i, j), (i + 1, j), (i + 1, j + 1), (i, j + 1)], 4)
    } else if c.flip {
        ([(i + 1, j + 1), (i, j + 1), (i + 1, j), (0, 0)], 3)
    } else {
        ([(i, j), (i + 1, j), (i, j + 1), (0, 0)], 3)
    }
}

/// Ids of the corners of every cell of every face (face `f` cut `fine[f] x fine[f]`, its
/// cells from `first[f]`, in [`Cell::local`] order): equal ids for coinciding corners, and
/// `u32::MAX` for a triangle's fourth.
pub(crate) fn corner_ids(faces: &[Face], fine: &[u32], first: &[u32]) -> Vec<[u32; 4]> {
    let mut ids: HashMap<CornerKey, u32> = HashMap::new();
    let mut out = vec![[u32::MAX; 4]; *first.last().unwrap_or(&0) as usize];
    for (f, face) in faces.iter().enumerate() {
        let (m, tri) = (fine[f], face.shape.triangle);
        for l in 0..m * m {
            let (pts, count) = cell_corners(Cell::from_local(l, m, tri), tri);
            let slot = &mut out[(first[f] + l) as usize];
            for (k, &(i, j)) in pts[..count].iter().enumerate() {
                let next = ids.len() as u32;
                slot[k] = *ids.entry(grid_key(face, f as u32, m, i, j)).or_insert(next);
            }
        }
    }
    out
}

/// An undirected graph in compressed rows.
#[derive(Clone, Debug, Default)]
pub(crate) struct Graph {
    start: Vec<u32>,
    adj: Vec<u32>,
}

impl Graph {
    /// Items that share a corner are neighbours: `corners(i)` lists item i's corner ids.
    /// (Items at a corner shared by many are chained rather than all joined.)
    pub(crate) fn sharing<'a>(items: usize, corners: impl Fn(usize) -> &'a [u32]) -> Graph {
        let mut pairs: Vec<(u32, u32)> = Vec::new();
        for i in 0..items {
            pairs.extend(corners(i).iter().filter(|&&c| c != u32::MAX).map(|&c| (c, i as u32)));
        }
        pairs.par_sort_unstable();
        pairs.dedup();
        let mut edges: Vec<(u32, u32)> = Vec::new();
        let mut a = 0;
        while a < pairs.len() {
            let mut b = a;
            while b < pairs.len() && pairs[b].0 == pairs[a].0 {
                b += 1;
            }
            let at = &pairs[a..b];
            if at.len() <= 12 {
                for x in 0..at.len() {
                    for y in x + 1..at.len() {
                        edges.push((at[x].1, at[y].1));
                    }
                }
            } else {
                for w in at.windows(2) {
                    edges.push((w[0].1, w[1].1));
                }
            }
            a = b;
        }
        let mut adj: Vec<(u32, u32)> = edges.iter().flat_map(|&(x, y)| [(x, y), (y, x)]).collect();
        adj.par_sort_unstable();
        adj.dedup();
        let mut start = vec![0u32; items + 1];
        for &(x, _) in &adj {
            start[x as usize + 1] += 1;
        }
        for i in 0..items {
            start[i + 1] += start[i];
        }
        Graph { start, adj: adj.into_iter().map(|(_, y)| y).collect() }
    }

    /// The neighbours of item `i`.
    pub(crate) fn of(&self, i: usize) -> &[u32] {
        &self.adj[self.start[i] as usize..self.start[i + 1] as usize]
    }

    /// Reorders `set` by its connected components (through items of `set` only) and
    /// returns the components' boundaries (`[0, .., set.len()]`).
    pub(crate) fn components(&self, set: &mut [u32]) -> Vec<usize> {
        let inside: std::collections::HashSet<u32> = set.iter().copied().collect();
        let mut seen = std::collections::HashSet::new();
        let mut order = Vec::with_capacity(set.len());
        let mut cuts = vec![0];
        for &s in set.iter() {
            if !seen.insert(s) {
                continue;
            }
            let mut stack = vec![s];
            while let Some(i) = stack.pop() {
                order.push(i);
                for &j in self.of(i as usize) {
                    if inside.contains(&j) && seen.insert(j) {
                        stack.push(j);
                    }
                }
            }
            cuts.push(order.len());
        }
        set.copy_from_slice(&order);
        cuts
    }
}

/// What region growing needs of each item.
pub(crate) struct Items<'a> {
    pub area: &'a [f64],
    pub normal: &'a [Vec3],
    pub centroid: &'a [Vec3],
    /// Items of different groups never share a cluster.
    pub group: &'a [u32],
    /// The order seeds are taken in, when known ([`morton_order`] otherwise).
    pub order: Option<&'a [u32]>,
}

/// Items in Morton order of their centroids (seeds taken in this order grow into
/// compact, spatially coherent clusters).
pub(crate) fn morton_order(centroid: &[Vec3]) -> Vec<u32> {
    let (lo, hi) = centroid.iter().fold((Vec3::INFINITY, Vec3::NEG_INFINITY), |(a, b), &c| (a.min(c), b.max(c)));
    let scale = ((1u32 << lumbre_morton::BITS_64) - 1) as f32 / (hi - lo).max_element().max(1e-30);
    let mut keyed: Vec<(u64, u32)> = centroid
        .iter()
        .enumerate()
        .map(|(i, &c)| {
            let q = ((c - lo) * scale)
                .to_array()
                .map(|v| v.clamp(0.0, ((1u32 << lumbre_morton::BITS_64) - 1) as f32) as u32);
            (lumbre_morton::encode_u64(q), i as u32)
        })
        .collect();
    keyed.sort_unstable();
    keyed.into_iter().map(|(_, i)| i).collect()
}

/// Clusters items by region growing: seeds in Morton order; a cluster takes the nearest
/// (to its seed) unclaimed neighbour of its own group whose normal is within `cos_max` of
/// the cluster's mean normal, until its area reaches its target (a neighbour that would overshoot more
/// than it fills is left). Targets diffuse the error: each cluster's target is `target`
/// plus what the clusters before fell short of it (within one target either way), so the
/// count follows the total area however the items' sizes round. Clusters under a third of
/// the target then join the smallest compatible neighbouring cluster. Every cluster is
/// connected in `graph`. Returns each item's cluster and the number of clusters.
pub(crate) fn grow(graph: &Graph, items: &Items<'_>, target: f64, cos_max: f32) -> (Vec<u32>, usize) {
    const NONE: u32 = u32::MAX;
    let n = items.area.len();
    let mut cluster = vec![NONE; n];
    // The cluster that last queued each item: an item is queued once per cluster.
    let mut queued = vec![NONE; n];
    let mut seeds: Vec<u32> = Vec::new();
    let mut heap: BinaryHeap<(Reverse<u32>, u32)> = BinaryHeap::new();
    let mut carry = 0.0f64;
    let order = match items.order {
        Some(o) => std::borrow::Cow::Borrowed(o),
        None => std::borrow::Cow::Owned(morton_order(items.centroid)),
    };
    for &s in order.iter() {
        let s = s as usize;
        if cluster[s] != NONE {
            continue;
        }
        let c = seeds.len() as u32;
        seeds.push(s as u32);
        cluster[s] = c;
        let (origin, group) = (items.centroid[s], items.group[s]);
        let goal = target + carry;
        let mut area = items.area[s];
        // The cluster's mean normal (area-weighted), against which candidates are measured.
        let mut sum = items.normal[s].as_dvec3() * area;
        heap.clear();
        let push = |heap: &mut BinaryHeap<_>, cluster: &[u32], queued: &mut [u32], i: usize| {
            for &j in graph.of(i) {
                if cluster[j as usize] == NONE && queued[j as usize] != c {
                    queued[j as usize] = c;
                    // Distances as ordered bits of a non-negative f32.
                    heap.push((Reverse((items.centroid[j as usize] - origin).length().to_bits()), j));
                }
            }
        };
        push(&mut heap, &cluster, &mut queued, s);
        while area < goal {
            let Some((_, j)) = heap.pop() else { break };
            let j = j as usize;
            let axis = sum.normalize_or_zero().as_vec3();
            if cluster[j] != NONE || items.group[j] != group || items.normal[j].dot(axis) < cos_max {
                continue;
            }
            if area + items.area[j] - goal > goal - area {
                continue;
            }
            cluster[j] = c;
            area += items.area[j];
            sum += items.normal[j].as_dvec3() * items.area[j];
            push(&mut heap, &cluster, &mut queued, j);
        }
        carry = (goal - area).clamp(-target, target);
    }
    merge_small(graph, items, &mut cluster, seeds.len(), target / 3.0, cos_max)
}

/// Joins clusters under `small` in area to their smallest neighbour of the same group with
/// a compatible mean normal (or, failing one, the neighbour of the same group whose normal
/// is nearest), smallest first; renumbers the clusters densely.
fn merge_small(
    graph: &Graph,
    items: &Items<'_>,
    cluster: &mut [u32],
    count: usize,
    small: f64,
    cos_max: f32,
) -> (Vec<u32>, usize) {
    let mut area = vec![0.0f64; count];
    let mut normal = vec![glam::DVec3::ZERO; count];
    let mut group = vec![0u32; count];
    for (i, &c) in cluster.iter().enumerate() {
        let c = c as usize;
        area[c] += items.area[i];
        normal[c] += items.normal[i].as_dvec3() * items.area[i];
        group[c] = items.group[i];
    }
    let mut members: Vec<Vec<u32>> = vec![Vec::new(); count];
    for (i, &c) in cluster.iter().enumerate() {
        members[c as usize].push(i as u32);
    }
    // Union-find over clusters.
    let mut parent: Vec<u32> = (0..count as u32).collect();
    fn root(parent: &mut [u32], mut c: u32) -> u32 {
        while parent[c as usize] != c {
            parent[c as usize] = parent[parent[c as usize] as usize];
            c = parent[c as usize];
        }
        c
    }
    let mut order: Vec<usize> = (0..count).filter(|&c| area[c] < small).collect();
    order.sort_by(|&a, &b| area[a].total_cmp(&area[b]));
    for c in order {
        let rc = root(&mut parent, c as u32) as usize;
        if area[rc] >= small {
            continue;
        }
        let n_c = normal[rc].normalize_or_zero();
        // The smallest neighbour of the same group within the cone, else (a fragment the
        // cone left alone) the one whose normal is nearest.
        let mut best: Option<(bool, f64, usize)> = None;
        for &i in &members[c] {
            for &j in graph.of(i as usize) {
                let rj = root(&mut parent, cluster[j as usize]) as usize;
                if rj == rc || group[rj] != group[rc] {
                    continue;
                }
                let cos = normal[rj].normalize_or_zero().dot(n_c);
                let key = if cos as f32 >= cos_max { (true, -area[rj], rj) } else { (false, cos, rj) };
                if best.is_none_or(|b| (key.0, key.1) > (b.0, b.1)) {
                    best = Some(key);
                }
            }
        }
        let best = best.map(|b| b.2);
        if let Some(b) = best {
            parent[rc] = b as u32;
            area[b] += area[rc];
            let moved = normal[rc];
            normal[b] += moved;
        }
    }
    let mut dense = vec![u32::MAX; count];
    let mut next = 0u32;
    let mut out = vec![0u32; cluster.len()];
    for (i, &c) in cluster.iter().enumerate() {
        let r = root(&mut parent, c) as usize;
        if dense[r] == u32::MAX {
            dense[r] = next;
            next += 1;
        }
        out[i] = dense[r];
    }
    (out, next as usize)
}

/// Splits `set` into up to four parts by two rounds of median cuts of the centroids along
/// their longest extent; the parts are consecutive in the reordered `set`. Returns the
/// part boundaries (`[0, .., set.len()]`).
pub(crate) fn split4(set: &mut [u32], centroid: &[Vec3]) -> Vec<usize> {
    fn halve(set: &mut [u32], centroid: &[Vec3]) -> usize {
        let (lo, hi) = set.iter().fold((Vec3::INFINITY, Vec3::NEG_INFINITY), |(a, b), &i| {
            (a.min(centroid[i as usize]), b.max(centroid[i as usize]))
        });
        let ext = hi - lo;
        let axis = if ext.x >= ext.y && ext.x >= ext.z {
            0
        } else if ext.y >= ext.z {
            1
        } else {
            2
        };
        let mid = set.len() / 2;
        set.select_nth_unstable_by(mid, |&a, &b| {
            centroid[a as usize][axis].total_cmp(&centroid[b as usize][axis]).then(a.cmp(&b))
        });
        mid
    }
    if set.len() < 2 {
        return vec![0, set.len()];
    }
    let m = halve(set, centroid);
    let (a, b) = set.split_at_mut(m);
    let ma = if a.len() >= 2 { halve(a, centroid) } else { 0 };
    let mb = if b.len() >= 2 { halve(b, centroid) } else { 0 };
    let mut cuts = vec![0, ma, m, m + mb, set.len()];
    cuts.dedup();
    cuts
}

/// The shapes' areas, normals and centroids.
pub(crate) fn shape_stats(shapes: &[Shape]) -> (Vec<f64>, Vec<Vec3>, Vec<Vec3>) {
    (
        shapes.iter().map(|s| s.area() as f64).collect(),
        shapes.iter().map(Shape::normal).collect(),
        shapes.iter().map(Shape::centroid).collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn growing_fills_the_target_and_keeps_groups_apart() {
        // A strip of 40 unit squares along x, two groups.
        let n = 40;
        let area = vec![1.0; n];
        let normal = vec![Vec3::Z; n];
        let centroid: Vec<Vec3> = (0..n).map(|i| Vec3::new(i as f32 + 0.5, 0.5, 0.0)).collect();
        let group: Vec<u32> = (0..n).map(|i| (i >= 20) as u32).collect();
        let corners: Vec<[u32; 2]> = (0..n as u32).map(|i| [i, i + 1]).collect();
        let graph = Graph::sharing(n, |i| &corners[i]);
        let items = Items { area: &area, normal: &normal, centroid: &centroid, group: &group, order: None };
        let (c, count) = grow(&graph, &items, 5.0, 0.9);
        assert_eq!(count, 8);
        for k in 0..count as u32 {
            let set: Vec<u32> = (0..n as u32).filter(|&i| c[i as usize] == k).collect();
            assert_eq!(set.len(), 5);
            let mut set = set;
            assert_eq!(graph.components(&mut set), vec![0, 5], "connected");
            assert!(set.iter().all(|&i| group[i as usize] == group[set[0] as usize]));
        }
    }

    #[test]
    fn median_splits_make_four_even_parts() {
        let centroid: Vec<Vec3> = (0..16).map(|i| Vec3::new((i % 4) as f32, (i / 4) as f32, 0.0)).collect();
        let mut set: Vec<u32> = (0..16).collect();
        let cuts = split4(&mut set, &centroid);
        assert_eq!(cuts, vec![0, 4, 8, 12, 16]);
        for w in cuts.windows(2) {
            let part = &set[w[0]..w[1]];
            let (xs, ys): (Vec<f32>, Vec<f32>) =
                part.iter().map(|&i| (centroid[i as usize].x, centroid[i as usize].y)).unzip();
            let span =
                |v: &[f32]| v.iter().cloned().fold(f32::MIN, f32::max) - v.iter().cloned().fold(f32::MAX, f32::min);
            assert!(span(&xs) <= 1.0 && span(&ys) <= 1.0, "a quadrant: {part:?}");
        }
    }
}
