//! The full paths of a container's chunks, kept until the TOC is written:
//! each stored as the length it shares with the path before it and the
//! bytes that differ (chunks are added in path order, so a path mostly
//! repeats its folder). At 100,000 packages that is about a third of the
//! paths' bytes. Every [`RESTART`]-th path is stored whole, so that one
//! path is found by decoding at most that many.

/// A path stored whole every this many paths.
const RESTART: usize = 16;

/// Paths one after the other, prefix-coded (see the module doc).
#[derive(Debug, Default)]
pub(super) struct ChunkPaths {
    /// Per path: the shared length and the rest's length (LEB128), then the rest.
    bytes: Vec<u8>,
    /// Where every [`RESTART`]-th path starts in `bytes`.
    restarts: Vec<usize>,
    len: usize,
    /// The last path added, to share its prefix with the next.
    last: String,
}

impl ChunkPaths {
    /// Adds `path`; returns its number.
    pub(super) fn push(&mut self, path: &str) -> usize {
        let shared = if self.len.is_multiple_of(RESTART) {
            self.restarts.push(self.bytes.len());
            0
        } else {
            let mut shared = crate::arena::shared_len(self.last.as_bytes(), path.as_bytes());
            // Cut at a character, so that every prefix decoded is text.
            while !path.is_char_boundary(shared) {
                shared -= 1;
            }
            shared
        };
        let rest = &path[shared..];
        put_len(&mut self.bytes, shared);
        put_len(&mut self.bytes, rest.len());
        self.bytes.extend_from_slice(rest.as_bytes());
        self.last.truncate(shared);
        self.last.push_str(rest);
        self.len += 1;
        self.len - 1
    }

    /// Path number `i` into `out` (replacing what it held).
    pub(super) fn get(&self, i: usize, out: &mut String) {
        out.clear();
        let mut at = self.restarts[i / RESTART];
        for _ in 0..=i % RESTART {
            at = self.decode_next(at, out);
        }
    }

    /// Every path in order.
    pub(super) fn for_each(&self, mut each: impl FnMut(usize, &str)) {
        let (mut at, mut path) = (0, String::new());
        for i in 0..self.len {
            at = self.decode_next(at, &mut path);
            each(i, &path);
        }
    }

    /// Turns `path` (the path before the one at `at`) into the one at
    /// `at`; returns where the next starts.
    fn decode_next(&self, at: usize, path: &mut String) -> usize {
        let (shared, at) = get_len(&self.bytes, at);
        let (len, at) = get_len(&self.bytes, at);
        let rest = &self.bytes[at..at + len];
        path.truncate(shared);
        // The bytes are those of a `&str` cut at a character (see `push`).
        path.push_str(std::str::from_utf8(rest).expect("stored from a str"));
        at + len
    }
}

fn put_len(bytes: &mut Vec<u8>, mut n: usize) {
    while n >= 0x80 {
        bytes.push(n as u8 | 0x80);
        n >>= 7;
    }
    bytes.push(n as u8);
}

fn get_len(bytes: &[u8], mut at: usize) -> (usize, usize) {
    let (mut n, mut shift) = (0usize, 0);
    loop {
        let b = bytes[at];
        at += 1;
        n |= ((b & 0x7f) as usize) << shift;
        if b < 0x80 {
            return (n, at);
        }
        shift += 7;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_path_comes_back_as_added_by_number_and_in_order() {
        let mut paths: Vec<String> = (0..100)
            .map(|i| format!("../../../Game/Content/F{}/Päth_{i:03}.uasset", i / 7))
            .collect();
        // Shared prefixes that end inside a character, an empty path, a long one.
        paths.extend(["é", "ê", "", "ééé", "éé"].map(String::from));
        paths.push("x".repeat(300));
        let mut table = ChunkPaths::default();
        for (i, p) in paths.iter().enumerate() {
            assert_eq!(table.push(p), i);
        }
        let mut out = String::new();
        for i in (0..paths.len()).rev() {
            table.get(i, &mut out);
            assert_eq!(out, paths[i], "path {i}");
        }
        let mut seen = Vec::new();
        table.for_each(|i, p| seen.push((i, p.to_string())));
        assert_eq!(seen, paths.into_iter().enumerate().collect::<Vec<_>>());
        assert!(table.bytes.len() < 2400, "{} bytes", table.bytes.len());
    }
}
