//! module
// Node keys of up to 10 levels in one word (lumbre_morton::NodeKey32), for the octree
// build. The includer declares `codes` (sorted leaf codes, one word each) and `put` and
// `child_word` (word planes).
alias Key = u32;
const KEY_WORDS: u32 = 1u;

fn load_code(i: u32) -> Key {
    return codes[i];
}

// The leaf key of `code` at `depth`: the marker bit above the code's triplets.
fn leaf_key(code: Key, depth: u32) -> Key {
    return (1u << (3u * depth)) | code;
}

fn parent_key(k: Key) -> Key {
    return k >> 3u;
}

fn key_octant(k: Key) -> u32 {
    return k & 7u;
}

fn same_key(a: Key, b: Key) -> bool {
    return a == b;
}

fn put_key(j: u32, k: Key) {
    put(j, 0u, k);
}

fn child_key(j: u32) -> Key {
    return child_word(j, 0u);
}
