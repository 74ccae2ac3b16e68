//! Many short byte strings kept one after another in one buffer, each
//! found by its number: a list of them costs their bytes and one end each,
//! where a `String` or `PathBuf` each would add an allocation each. The
//! build's list of every input path ([`PathArena`]: 206,819 paths at
//! 100,000 packages) and a directory index's names (about as many) are kept
//! so; each gives its pieces back as its own type. A [`PathArena`] also
//! keeps the bytes all its paths start with (the content root's path, for
//! the build's inputs) once, not once per path.

/// How many bytes `a` and `b` share at their start: what a list of sorted
/// strings, each written as the rest after its predecessor, leaves out.
pub(crate) fn shared_len(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).take_while(|(a, b)| a == b).count()
}

/// Byte strings one after another in one buffer (see the module doc).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Arena {
    bytes: Vec<u8>,
    /// Where each piece ends in `bytes`.
    ends: Vec<usize>,
}

impl Arena {
    /// An arena with room for the ends of `count` pieces.
    pub(crate) fn with_capacity(count: usize) -> Arena {
        Arena {
            bytes: Vec::new(),
            ends: Vec::with_capacity(count),
        }
    }

    /// How many pieces it holds.
    pub(crate) fn len(&self) -> usize {
        self.ends.len()
    }

    /// Adds `piece` after the others.
    pub(crate) fn push(&mut self, piece: &[u8]) {
        self.bytes.extend_from_slice(piece);
        self.ends.push(self.bytes.len());
    }

    /// Piece `i`, if there is one.
    pub(crate) fn get(&self, i: usize) -> Option<&[u8]> {
        let end = *self.ends.get(i)?;
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        Some(&self.bytes[start..end])
    }

    /// Empties it, keeping its room.
    pub(crate) fn clear(&mut self) {
        self.bytes.clear();
        self.ends.clear();
    }

    /// Gives back the buffer's room beyond its bytes.
    pub(crate) fn shrink_to_fit(&mut self) {
        self.bytes.shrink_to_fit();
    }
}

/// Paths kept one after another in one buffer, less the bytes all of them
/// start with (kept once): the build's list of every input path. A path
/// comes back whole as bytes ([`PathArena::write`]) or as a `PathBuf`
/// ([`PathArena::path`]), made when it is needed.
#[derive(Debug, Clone, Default)]
pub(crate) struct PathArena {
    /// The bytes every path starts with.
    prefix: Vec<u8>,
    /// Each path's bytes after `prefix`.
    rests: Arena,
}

impl PathArena {
    /// The list of `paths` (about `count` of them), in that order. The
    /// bytes kept once are those of the first path, cut to what each later
    /// one shares with them (the rests kept so far then get the bytes cut
    /// off in front: a few short ones at the start of a folder's files).
    pub(crate) fn of<P: AsRef<std::path::Path>>(
        paths: impl IntoIterator<Item = P>,
        count: usize,
    ) -> PathArena {
        Self::starting_with(None, paths, count)
    }

    /// [`PathArena::of`] for paths that are all expected under `root` (the
    /// content root), which is the bytes kept once: nothing is cut unless a
    /// path lies elsewhere.
    pub(crate) fn under<P: AsRef<std::path::Path>>(
        root: &std::path::Path,
        paths: impl IntoIterator<Item = P>,
        count: usize,
    ) -> PathArena {
        let root = root.as_os_str().as_encoded_bytes().to_vec();
        Self::starting_with(Some(root), paths, count)
    }

    fn starting_with<P: AsRef<std::path::Path>>(
        prefix: Option<Vec<u8>>,
        paths: impl IntoIterator<Item = P>,
        count: usize,
    ) -> PathArena {
        let mut arena = PathArena {
            prefix: prefix.clone().unwrap_or_default(),
            rests: Arena::with_capacity(count),
        };
        for path in paths {
            let path = path.as_ref().as_os_str().as_encoded_bytes();
            if arena.rests.len() == 0 && prefix.is_none() {
                arena.prefix = path.to_vec();
            } else if !path.starts_with(&arena.prefix) {
                let shared = shared_len(&arena.prefix, path);
                arena.cut_prefix(shared);
            }
            arena.rests.push(&path[arena.prefix.len()..]);
        }
        arena.rests.shrink_to_fit();
        arena
    }

    /// Keeps only the first `len` bytes of the prefix: the rest of it goes
    /// before each path's rest.
    fn cut_prefix(&mut self, len: usize) {
        let cut = self.prefix.split_off(len);
        let mut rests = Arena::with_capacity(self.rests.len());
        let mut piece = Vec::new();
        for i in 0..self.rests.len() {
            piece.clear();
            piece.extend_from_slice(&cut);
            piece.extend_from_slice(self.rests.get(i).expect("a path of the arena"));
            rests.push(&piece);
        }
        self.rests = rests;
    }

    /// An empty list of room for `count` paths, that [`PathArena::push_text`]
    /// fills (no prefix is taken out).
    pub(crate) fn with_capacity(count: usize) -> PathArena {
        PathArena {
            prefix: Vec::new(),
            rests: Arena::with_capacity(count),
        }
    }

    /// Empties it (its prefix too), keeping its room.
    pub(crate) fn clear(&mut self) {
        self.prefix.clear();
        self.rests.clear();
    }

    /// Adds a path given as text after the others.
    pub(crate) fn push_text(&mut self, path: &str) {
        self.rests.push(path.as_bytes());
    }

    /// How many paths it holds.
    pub(crate) fn len(&self) -> usize {
        self.rests.len()
    }

    /// Whether it holds no path.
    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes every path starts with, and the rest of path `i`.
    pub(crate) fn parts(&self, i: usize) -> (&[u8], &[u8]) {
        let rest = self.rests.get(i).expect("a path of the arena");
        (&self.prefix, rest)
    }

    /// Path `i`'s bytes (as `OsStr::as_encoded_bytes` gives them) in place
    /// of what `into` held.
    pub(crate) fn write(&self, i: usize, into: &mut Vec<u8>) {
        let (prefix, rest) = self.parts(i);
        into.clear();
        into.extend_from_slice(prefix);
        into.extend_from_slice(rest);
    }

    /// Path `i`.
    pub(crate) fn path(&self, i: usize) -> std::path::PathBuf {
        let mut bytes = Vec::new();
        self.write(i, &mut bytes);
        // SAFETY: `bytes` are exactly the bytes `as_encoded_bytes` gave for
        // one path (in `of`) or a `str`'s (in `push_text`), unchanged.
        let os = unsafe { std::ffi::OsString::from_encoded_bytes_unchecked(bytes) };
        std::path::PathBuf::from(os)
    }

    /// Keeps the paths for which `keep` says so, in order.
    pub(crate) fn retain(&mut self, keep: &[bool]) {
        let mut kept = Arena::default();
        for i in (0..self.len()).filter(|&i| keep.get(i).copied().unwrap_or(true)) {
            kept.push(self.parts(i).1);
        }
        self.rests = kept;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_come_back_by_number_empty_ones_too() {
        let mut arena = Arena::with_capacity(3);
        for piece in [&b"ab"[..], b"", b"cde"] {
            arena.push(piece);
        }
        assert_eq!(arena.len(), 3);
        let pieces: Vec<_> = (0..4).map(|i| arena.get(i)).collect();
        assert_eq!(pieces, [Some(&b"ab"[..]), Some(b""), Some(b"cde"), None]);
    }

    #[test]
    fn paths_keep_what_they_share_once_and_come_back_whole() {
        use std::path::{Path, PathBuf};
        let given = [
            "/m/Cooked/A.uasset",
            "/m/Cooked/A.uexp",
            "/m/Cooked/Bé/C.uasset",
        ];
        let paths = PathArena::of(given.iter().map(Path::new), given.len());
        assert_eq!(paths.parts(0), (&b"/m/Cooked/"[..], &b"A.uasset"[..]));
        let back: Vec<PathBuf> = (0..paths.len()).map(|i| paths.path(i)).collect();
        assert_eq!(back, given.map(PathBuf::from));
        // One path the start of another; a list of one; none.
        let nested = PathArena::of(["/m/a", "/m/a/b"], 2);
        assert_eq!(nested.parts(0), (&b"/m/a"[..], &b""[..]));
        assert_eq!(nested.path(1), Path::new("/m/a/b"));
        let one = PathArena::of(["/m/x"], 1);
        assert_eq!(one.path(0), Path::new("/m/x"));
        assert!(PathArena::of(std::iter::empty::<&str>(), 0).is_empty());
        // A shared start that splits a character still gives whole paths.
        let split = PathArena::of(["/m/é", "/m/è"], 2);
        assert_eq!(split.path(1), Path::new("/m/è"));
        // A later path that shares less cuts the prefix: earlier ones stay whole.
        let later = PathArena::of(["/m/a/b/1", "/m/a/b/2", "/m/a/c", "/n"], 4);
        assert_eq!(later.parts(3), (&b"/"[..], &b"n"[..]));
        let back: Vec<PathBuf> = (0..4).map(|i| later.path(i)).collect();
        assert_eq!(
            back,
            ["/m/a/b/1", "/m/a/b/2", "/m/a/c", "/n"].map(PathBuf::from)
        );
        // Under a root: the root is kept once, unless a path lies elsewhere.
        let mixed = ["/m/a/b/1", "/m/a/b/2", "/m/a/c", "/n"];
        let rooted = PathArena::under(Path::new("/m/a"), &mixed[..3], 3);
        assert_eq!(rooted.parts(2), (&b"/m/a"[..], &b"/c"[..]));
        let outside = PathArena::under(Path::new("/m/a"), mixed, 4);
        assert_eq!(outside.parts(3).0, b"/");
        let back: Vec<PathBuf> = (0..4).map(|i| outside.path(i)).collect();
        assert_eq!(back, mixed.map(PathBuf::from));
        let mut kept = paths.clone();
        kept.retain(&[true, false, true]);
        assert_eq!(kept.path(1), Path::new(given[2]));
    }
}
