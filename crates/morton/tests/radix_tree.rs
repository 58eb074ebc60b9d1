//! Karras's radix tree: Karras's own example, the structure of the tree over any sorted codes,
//! and the GPU against the CPU, bit for bit.

use lumbre_gpu::testing::test_gpu;
use lumbre_gpu::{Compute, Tolerance, conformance};
use lumbre_morton::*;
use proptest::prelude::*;

#[test]
fn radix_tree_of_distinct_keys_is_karras_example() {
    // Karras 2012, figure 3: eight keys 00001 00010 00100 00101 10011 11000 11001 11110.
    let keys = [0b00001u32, 0b00010, 0b00100, 0b00101, 0b10011, 0b11000, 0b11001, 0b11110];
    let children: Vec<[u32; 2]> = RadixTree::build(&keys).nodes.iter().map(|t| [t.left, t.right]).collect();
    let leaf = |k: u32| 7 + k;
    assert_eq!(
        children,
        [[3, 4], [leaf(0), leaf(1)], [leaf(2), leaf(3)], [1, 2], [leaf(4), 5], [6, leaf(7)], [leaf(5), leaf(6)]]
    );
    // Equal keys are split by their indices' bits.
    let same = RadixTree::build(&[5, 5, 5, 5]).nodes;
    assert_eq!(same.iter().map(|t| [t.left, t.right]).collect::<Vec<_>>(), [[1, 2], [3, 4], [5, 6]]);
    assert_eq!(same[0].prefix, 32 + 30);
}

#[test]
fn trees_of_no_one_and_two_codes() {
    assert_eq!(RadixTree::build(&[]), RadixTree::default());
    assert_eq!(RadixTree::build(&[7]), RadixTree { nodes: vec![], leaf_parents: vec![NO_PARENT] });
    let two = RadixTree::build(&[3, 3]);
    assert_eq!(two.nodes, [RadixNode { left: 1, right: 2, prefix: 32 + 31, parent: NO_PARENT }]);
    assert_eq!(two.leaf_parents, [0, 0]);
}

/// The common prefix of positions `i` and `j` as the tree defines it.
fn delta(codes: &[u32], i: usize, j: usize) -> u32 {
    let (a, b) = (codes[i], codes[j]);
    if a != b { (a ^ b).leading_zeros() } else { 32 + ((i ^ j) as u32).leading_zeros() }
}

/// The run of sorted positions under `child`, checking the subtree on the way: every internal
/// node has itself at one end of its run (Karras's numbering), its children tile its run and
/// split it where the run's common prefix ends, its prefix is its run's, and each child names
/// it as parent.
fn run(codes: &[u32], tree: &RadixTree, child: u32, parent: u32, seen: &mut [bool]) -> (usize, usize) {
    if let Some(k) = tree.leaf(child) {
        assert_eq!(tree.leaf_parents[k], parent, "the parent of leaf {k}");
        return (k, k);
    }
    let i = child as usize;
    assert!(!seen[i], "node {i} reached twice");
    seen[i] = true;
    let node = tree.nodes[i];
    assert_eq!(node.parent, parent, "the parent of node {i}");
    let (lo, m) = run(codes, tree, node.left, child, seen);
    let (m1, hi) = run(codes, tree, node.right, child, seen);
    assert_eq!(m + 1, m1, "node {i}: its children's runs {lo}..={m} and {m1}..={hi} do not meet");
    assert!(lo == i || hi == i, "node {i} is not at an end of its run {lo}..={hi}");
    assert_eq!(node.prefix, delta(codes, lo, hi), "the prefix of node {i} over {lo}..={hi}");
    assert_eq!(delta(codes, m, m1), node.prefix, "node {i} splits its run {lo}..={hi} after {m}");
    (lo, hi)
}

/// Checks the tree over sorted `codes` against what a radix tree is ([`run`]), from the root.
fn check(codes: &[u32], tree: &RadixTree) {
    let n = codes.len();
    assert_eq!(tree.leaf_parents.len(), n);
    assert_eq!(tree.nodes.len(), n.saturating_sub(1));
    if n == 1 {
        assert_eq!(tree.leaf_parents, [NO_PARENT]);
    }
    if n < 2 {
        return;
    }
    let mut seen = vec![false; n - 1];
    assert_eq!(run(codes, tree, 0, NO_PARENT, &mut seen), (0, n - 1));
    assert!(seen.iter().all(|&s| s), "every internal node is reached from the root");
}

/// Sorted codes: distinct-ish ones over 30 bits, or few distinct values, many times each.
fn codes() -> impl Strategy<Value = Vec<u32>> {
    let wide = proptest::collection::vec(0u32..1 << 30, 0..600);
    let dupes = proptest::collection::vec(
        prop_oneof![Just(0u32), Just(1), Just(7), Just(1 << 29), Just((1 << 30) - 1)],
        0..600,
    );
    prop_oneof![wide, dupes, proptest::collection::vec(0u32..1 << 30, 0..3)].prop_map(|mut v| {
        v.sort_unstable();
        v
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn cpu_tree_is_a_radix_tree(codes in codes()) {
        check(&codes, &RadixTree::build(&codes));
    }

    #[test]
    fn gpu_tree_is_bit_exact(codes in codes()) {
        let Some(gpu) = test_gpu(lumbre_gpu::wgpu::Features::empty()) else { return Ok(()) };
        conformance(&RadixTreeBuild, &gpu, &codes, Tolerance::EXACT).map_err(|e| TestCaseError::fail(e.to_string()))?;
    }
}

#[test]
fn gpu_trees_of_few_codes_and_of_many() {
    let Some(gpu) = test_gpu(lumbre_gpu::wgpu::Features::empty()) else { return };
    for codes in [vec![], vec![9], vec![4, 9], vec![9, 9], vec![0, 0, 0]] {
        conformance(&RadixTreeBuild, &gpu, &codes, Tolerance::EXACT).unwrap_or_else(|e| panic!("{codes:?}: {e}"));
    }
    // Many workgroups, runs of equal codes among distinct ones.
    let mut many: Vec<u32> = (0..100_000u32).map(|i| i.wrapping_mul(2_654_435_761) >> 4 & !7).collect();
    many.sort_unstable();
    conformance(&RadixTreeBuild, &gpu, &many, Tolerance::EXACT).unwrap();
}

#[test]
fn unsorted_codes_are_errors_on_both_paths() {
    assert!(RadixTreeBuild.cpu(&[3, 1]).is_err());
    let Some(gpu) = test_gpu(lumbre_gpu::wgpu::Features::empty()) else { return };
    assert!(RadixTreeBuild.gpu(&gpu, &[3, 1]).is_err());
}
