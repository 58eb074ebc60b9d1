//! Level-prefixed node keys: the key <-> array index mapping and navigation.

use lumbre_morton::*;
use proptest::prelude::*;

#[test]
fn thesis_index_examples_from_the_formula() {
    // Level-2 key 001 000 -> 1 + 8 + 8 = 17.
    assert_eq!(NodeKey32::new(2, 0b001_000).unwrap().index(), 17);
    // Triplets 000 010 010 000 000: ancestors at 0, 1, 11, 91, 729, 5833.
    let leaf = NodeKey32::new(5, 0b000_010_010_000_000).unwrap();
    let idx: Vec<u64> = (0..=5).map(|l| leaf.ancestor(l).unwrap().index()).collect();
    assert_eq!(idx, vec![0, 1, 11, 91, 729, 5833]);
    // Index 200 -> level 3, position 127 (the thesis prints 126; its formula gives 127).
    let k = NodeKey32::from_index(200).unwrap();
    assert_eq!((k.level(), k.value()), (3, 127));
    // Index 72 is the last node of level 2; the log8 shortcut gets this wrong.
    let k = NodeKey32::from_index(72).unwrap();
    assert_eq!((k.level(), k.value()), (2, 63));
    let k = NodeKey32::from_index(73).unwrap();
    assert_eq!((k.level(), k.value()), (3, 0));
}

#[test]
fn index_round_trips_at_every_level_boundary() {
    for level in 0..=NodeKey64::MAX_LEVEL {
        let first = level_offset(level);
        let last = level_offset(level + 1) - 1;
        for i in [first, (first + 1).min(last), last.saturating_sub(1).max(first), last] {
            let k = NodeKey64::from_index(i).unwrap();
            assert_eq!(k.level(), level, "index {i}");
            assert_eq!(k.index(), i);
            assert!(k.is_valid());
        }
        if level <= NodeKey32::MAX_LEVEL {
            let k = NodeKey32::from_index(last).unwrap();
            assert_eq!((k.level(), k.index()), (level, last));
        }
    }
    assert_eq!(NodeKey32::from_index(level_offset(11)), None);
    assert_eq!(NodeKey64::from_index(level_offset(22)), None);
}

#[test]
fn key_navigation() {
    let root = NodeKey32::ROOT;
    assert_eq!(root.level(), 0);
    assert_eq!(root.parent(), None);
    let c = root.child(5).unwrap().child(2).unwrap();
    assert_eq!((c.level(), c.value(), c.octant()), (2, 0b101_010, 2));
    assert_eq!(c.parent().unwrap().parent(), Some(root));
    assert!(root.contains(c) && c.parent().unwrap().contains(c) && c.contains(c));
    assert!(!c.contains(c.parent().unwrap()));
    assert!(!root.child(4).unwrap().contains(c));
    let deepest = NodeKey32::new(10, 0).unwrap();
    assert_eq!(deepest.child(0), None);
    assert_eq!(NodeKey32::new(3, 1 << 9), None, "value too wide for the level");
    // Bounds: child 7 of the root is the upper octant.
    let (lo, hi) = root.child(7).unwrap().bounds([0.0; 3], 2.0);
    assert_eq!((lo, hi), ([1.0; 3], [2.0; 3]));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn key_index_round_trips(level in 0u32..=21, value in any::<u64>()) {
        let value = if level == 0 { 0 } else { value >> (64 - 3 * level) };
        let k = NodeKey64::new(level, value).unwrap();
        prop_assert_eq!(NodeKey64::from_index(k.index()), Some(k));
        prop_assert_eq!(k.level(), level);
        for l in 0..=level {
            let a = k.ancestor(l).unwrap();
            prop_assert!(a.contains(k));
            prop_assert_eq!(a.level(), l);
        }
        if level <= 10 {
            let k32 = NodeKey32::new(level, value as u32).unwrap();
            prop_assert_eq!(k32.index(), k.index());
            prop_assert_eq!(NodeKey32::from_index(k.index()), Some(k32));
        }
    }
}
