//! module
// Node keys of up to 21 levels in two words, low then high (lumbre_morton::NodeKey64), for
// the octree build. The includer declares `codes` (sorted leaf codes, two words each) and
// `put` and `child_word` (word planes).
alias Key = vec2<u32>;
const KEY_WORDS: u32 = 2u;

fn load_code(i: u32) -> Key {
    return vec2<u32>(codes[2u * i], codes[2u * i + 1u]);
}

// The leaf key of `code` at `depth`: the marker bit above the code's triplets.
fn leaf_key(code: Key, depth: u32) -> Key {
    let bit = 3u * depth;
    if bit < 32u {
        return vec2<u32>(code.x | (1u << bit), code.y);
    }
    return vec2<u32>(code.x, code.y | (1u << (bit - 32u)));
}

fn parent_key(k: Key) -> Key {
    return vec2<u32>((k.x >> 3u) | (k.y << 29u), k.y >> 3u);
}

fn key_octant(k: Key) -> u32 {
    return k.x & 7u;
}

fn same_key(a: Key, b: Key) -> bool {
    return all(a == b);
}

fn put_key(j: u32, k: Key) {
    put(j, 0u, k.x);
    put(j, 1u, k.y);
}

fn child_key(j: u32) -> Key {
    return vec2<u32>(child_word(j, 0u), child_word(j, 1u));
}
