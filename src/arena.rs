//! Many short byte strings kept one after another in one buffer, each
//! found by its number: a list of them costs their bytes and one end each,
//! where a `String` or `PathBuf` each would add an allocation each. The
//! build's list of every input path (`build::discover::PathArena`: 206,819
//! paths at 100,000 packages) and a directory index's names (about as many)
//! are kept so; each gives its pieces back as its own type.

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

    /// Gives back the buffer's room beyond its bytes.
    pub(crate) fn shrink_to_fit(&mut self) {
        self.bytes.shrink_to_fit();
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
}
