//! Little-endian reader and writer over byte slices.
//!
//! Every read knows its absolute file offset (`base + pos`), so errors can
//! name it. Every count taken from a file goes through [`Reader::count_i32`]
//! (or its siblings),
//! which checks it against the bytes that remain before anything is
//! allocated: a hostile length field can never make us allocate more than
//! the file itself holds.

use crate::error::{Context, Error, Result};

/// A bounds-checked little-endian cursor over a byte slice.
#[derive(Clone)]
pub struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
    /// Absolute file offset of `data[0]`, for error messages.
    base: u64,
}

impl<'a> Reader<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Reader {
            data,
            pos: 0,
            base: 0,
        }
    }

    /// A reader whose offsets are reported relative to `base` (the slice's position in its file).
    pub fn with_base(data: &'a [u8], base: u64) -> Self {
        Reader { data, pos: 0, base }
    }

    /// Position within the slice.
    pub fn pos(&self) -> usize {
        self.pos
    }

    /// Absolute offset in the file.
    pub(crate) fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    pub(crate) fn len(&self) -> usize {
        self.data.len()
    }

    pub(crate) fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }

    pub fn at_end(&self) -> bool {
        self.pos >= self.data.len()
    }

    /// The whole underlying slice.
    pub(crate) fn data(&self) -> &'a [u8] {
        self.data
    }

    /// The bytes not yet read.
    pub(crate) fn rest(&self) -> &'a [u8] {
        &self.data[self.pos..]
    }

    /// An error at the current offset.
    pub(crate) fn error(&self, message: impl Into<String>) -> Error {
        Error::format(self.offset(), message)
    }

    /// An error at a given position of the slice.
    pub(crate) fn error_at(&self, pos: usize, message: impl Into<String>) -> Error {
        Error::format(self.base + pos as u64, message)
    }

    /// Moves to `pos` (a position within the slice); `pos == len` is allowed.
    pub fn seek(&mut self, pos: usize) -> Result<()> {
        if pos > self.data.len() {
            return Err(self.error(format!(
                "offset {} (0x{:x}) is past the end of the data ({} bytes)",
                self.base + pos as u64,
                self.base + pos as u64,
                self.data.len()
            )));
        }
        self.pos = pos;
        Ok(())
    }

    pub(crate) fn skip(&mut self, n: usize) -> Result<()> {
        self.bytes(n).map(|_| ())
    }

    /// A sub-reader over the next `n` bytes (offsets stay absolute); advances past them.
    pub(crate) fn sub(&mut self, n: usize) -> Result<Reader<'a>> {
        let base = self.offset();
        let bytes = self.bytes(n)?;
        Ok(Reader::with_base(bytes, base))
    }

    pub(crate) fn bytes(&mut self, n: usize) -> Result<&'a [u8]> {
        if n > self.remaining() {
            return Err(self.error(format!(
                "needs {n} bytes but only {} remain (file truncated?)",
                self.remaining()
            )));
        }
        let out = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(out)
    }

    pub(crate) fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        let b = self.bytes(N)?;
        let mut out = [0u8; N];
        out.copy_from_slice(b);
        Ok(out)
    }

    pub(crate) fn peek_u32(&self) -> Option<u32> {
        self.data
            .get(self.pos..self.pos + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    pub fn u8(&mut self) -> Result<u8> {
        Ok(self.array::<1>()?[0])
    }
    pub(crate) fn i8(&mut self) -> Result<i8> {
        Ok(self.u8()? as i8)
    }
    pub fn u16(&mut self) -> Result<u16> {
        Ok(u16::from_le_bytes(self.array()?))
    }
    pub(crate) fn i16(&mut self) -> Result<i16> {
        Ok(i16::from_le_bytes(self.array()?))
    }
    pub fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_le_bytes(self.array()?))
    }
    pub fn i32(&mut self) -> Result<i32> {
        Ok(i32::from_le_bytes(self.array()?))
    }
    pub(crate) fn u64(&mut self) -> Result<u64> {
        Ok(u64::from_le_bytes(self.array()?))
    }
    pub(crate) fn i64(&mut self) -> Result<i64> {
        Ok(i64::from_le_bytes(self.array()?))
    }
    pub(crate) fn f32(&mut self) -> Result<f32> {
        Ok(f32::from_le_bytes(self.array()?))
    }
    pub(crate) fn f64(&mut self) -> Result<f64> {
        Ok(f64::from_le_bytes(self.array()?))
    }
    /// A 32-bit bool as the engine serializes it (0 or 1; anything else is an error).
    pub fn bool32(&mut self) -> Result<bool> {
        let at = self.pos;
        match self.u32()? {
            0 => Ok(false),
            1 => Ok(true),
            v => Err(self.error_at(at, format!("expected a bool (0 or 1), found {v}"))),
        }
    }
    pub(crate) fn guid(&mut self) -> Result<[u8; 16]> {
        self.array()
    }

    /// Reads an element count and checks that `count * min_element_size`
    /// bytes remain. Negative counts are errors.
    pub(crate) fn count_i32(&mut self, min_element_size: usize) -> Result<usize> {
        let at = self.pos;
        let n = self.i32()?;
        self.check_count_at(at, n as i64, min_element_size)
    }

    /// Like [`count_i32`](Self::count_i32) for an unsigned 32-bit count.
    pub(crate) fn count_u32(&mut self, min_element_size: usize) -> Result<usize> {
        let at = self.pos;
        let n = self.u32()?;
        self.check_count_at(at, n as i64, min_element_size)
    }

    /// Checks a count taken from the file (read at slice position `at`)
    /// against the bytes that remain.
    pub(crate) fn check_count_at(
        &self,
        at: usize,
        n: i64,
        min_element_size: usize,
    ) -> Result<usize> {
        if n < 0 {
            return Err(self.error_at(at, format!("negative count {n}")));
        }
        let need = (n as u128) * (min_element_size.max(1) as u128);
        if need > self.remaining() as u128 {
            return Err(self.error_at(
                at,
                format!(
                    "count {n} needs at least {need} bytes but only {} remain",
                    self.remaining()
                ),
            ));
        }
        Ok(n as usize)
    }

    /// Checks a count that is not stored right here (e.g. from a header) against the bytes remaining.
    pub(crate) fn check_count(&self, n: i64, min_element_size: usize) -> Result<usize> {
        self.check_count_at(self.pos, n, min_element_size)
    }

    /// `count` records (a checked count), each read with `read`; an error
    /// names the record as `<what> <index>`.
    pub(crate) fn records<T>(
        &mut self,
        count: usize,
        what: &str,
        mut read: impl FnMut(&mut Self) -> Result<T>,
    ) -> Result<Vec<T>> {
        let mut out = Vec::with_capacity(count.min(self.remaining()));
        for i in 0..count {
            out.push(read(self).with_context(|| format!("{what} {i}"))?);
        }
        Ok(out)
    }

    /// An engine `FString`: i32 length including the terminator; negative
    /// means UTF-16 with `-length` code units. Returns the string and whether it was UTF-16.
    pub(crate) fn fstring_ext(&mut self) -> Result<(String, bool)> {
        let at = self.pos;
        let len = self.i32()?;
        if len == 0 {
            return Ok((String::new(), false));
        }
        if len > 0 {
            let n = self.check_count_at(at, len as i64, 1)?;
            let bytes = self.bytes(n)?;
            if bytes[n - 1] != 0 {
                return Err(self.error_at(at, "string is not zero-terminated"));
            }
            let text = &bytes[..n - 1];
            if text.is_ascii() {
                // ASCII is valid UTF-8 as it is: copied whole, no decoding.
                let text = std::str::from_utf8(text)
                    .map_err(|_| self.error_at(at, "string is not text"))?;
                return Ok((text.to_owned(), false));
            }
            // Latin-1: each byte is one code point.
            Ok((text.iter().map(|&b| b as char).collect(), false))
        } else {
            if len == i32::MIN {
                return Err(self.error_at(at, "string length is out of range"));
            }
            let n = self.check_count_at(at, -(len as i64), 2)?;
            let bytes = self.bytes(n * 2)?;
            let units: Vec<u16> = bytes
                .chunks_exact(2)
                .map(|c| u16::from_le_bytes([c[0], c[1]]))
                .collect();
            if units[n - 1] != 0 {
                return Err(self.error_at(at, "UTF-16 string is not zero-terminated"));
            }
            let s = String::from_utf16(&units[..n - 1])
                .map_err(|_| self.error_at(at, "string is not valid UTF-16"))?;
            Ok((s, true))
        }
    }

    pub fn fstring(&mut self) -> Result<String> {
        Ok(self.fstring_ext()?.0)
    }

    /// An engine `FUtf8String`: i32 length including the terminator, then
    /// UTF-8 bytes. A missing terminator and a negative (UTF-16) length are
    /// read too, as `FString`s are.
    pub(crate) fn utf8_string(&mut self) -> Result<String> {
        let at = self.pos;
        let len = self.i32()?;
        if len <= 0 {
            self.seek(at)?;
            return self.fstring();
        }
        let n = self.check_count_at(at, len as i64, 1)?;
        let bytes = self.bytes(n)?;
        let text = bytes.strip_suffix(&[0]).unwrap_or(bytes);
        std::str::from_utf8(text)
            .map(str::to_string)
            .map_err(|e| self.error_at(at + 4 + e.valid_up_to(), "string is not valid UTF-8"))
    }
}

/// True when a string can be written as a one-byte-per-character engine string.
pub(crate) fn is_latin1(s: &str) -> bool {
    s.chars().all(|c| (c as u32) < 0x100)
}

/// A little-endian byte writer; the mirror of [`Reader`].
#[derive(Default, Clone)]
pub struct Writer {
    buf: Vec<u8>,
}

impl Writer {
    pub fn new() -> Self {
        Writer { buf: Vec::new() }
    }
    pub(crate) fn with_capacity(n: usize) -> Self {
        Writer {
            buf: Vec::with_capacity(n),
        }
    }
    pub fn pos(&self) -> usize {
        self.buf.len()
    }
    pub fn into_inner(self) -> Vec<u8> {
        self.buf
    }
    pub fn as_slice(&self) -> &[u8] {
        &self.buf
    }
    pub fn bytes(&mut self, b: &[u8]) {
        self.buf.extend_from_slice(b);
    }
    pub(crate) fn zeros(&mut self, n: usize) {
        self.buf.resize(self.buf.len() + n, 0);
    }
    /// Pads with zeros up to a multiple of `align`.
    pub(crate) fn align(&mut self, align: usize) {
        let rem = self.buf.len() % align;
        if rem != 0 {
            self.zeros(align - rem);
        }
    }
    pub fn u8(&mut self, v: u8) {
        self.buf.push(v);
    }
    pub fn u16(&mut self, v: u16) {
        self.bytes(&v.to_le_bytes());
    }
    pub fn u32(&mut self, v: u32) {
        self.bytes(&v.to_le_bytes());
    }
    pub fn i32(&mut self, v: i32) {
        self.bytes(&v.to_le_bytes());
    }
    pub fn u64(&mut self, v: u64) {
        self.bytes(&v.to_le_bytes());
    }
    pub fn i64(&mut self, v: i64) {
        self.bytes(&v.to_le_bytes());
    }
    pub fn f32(&mut self, v: f32) {
        self.bytes(&v.to_le_bytes());
    }
    pub fn bool32(&mut self, v: bool) {
        self.u32(v as u32);
    }
    pub fn guid(&mut self, g: &[u8; 16]) {
        self.bytes(g);
    }
    /// Writes what is buffered to `out` once it holds `at_least` bytes,
    /// and empties the buffer (its capacity stays, for the next batch):
    /// how a large structure is streamed through one small buffer.
    pub(crate) fn drain_to(
        &mut self,
        out: &mut impl std::io::Write,
        at_least: usize,
    ) -> std::io::Result<()> {
        if self.buf.len() >= at_least {
            out.write_all(&self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }
    pub(crate) fn patch_i32(&mut self, pos: usize, v: i32) {
        self.buf[pos..pos + 4].copy_from_slice(&v.to_le_bytes());
    }
    pub(crate) fn patch_i64(&mut self, pos: usize, v: i64) {
        self.buf[pos..pos + 8].copy_from_slice(&v.to_le_bytes());
    }

    /// Writes an `FString`; `utf16` forces the wide form (as the file had it).
    pub(crate) fn fstring_ext(&mut self, s: &str, utf16: bool) {
        if s.is_empty() && !utf16 {
            self.i32(0);
            return;
        }
        if !utf16 && s.is_ascii() {
            // One byte per character, as it is.
            self.i32(s.len() as i32 + 1);
            self.bytes(s.as_bytes());
            self.u8(0);
        } else if !utf16 && is_latin1(s) {
            self.i32(s.chars().count() as i32 + 1);
            for c in s.chars() {
                self.u8(c as u32 as u8);
            }
            self.u8(0);
        } else {
            let units: Vec<u16> = s.encode_utf16().collect();
            self.i32(-(units.len() as i32 + 1));
            for u in units {
                self.u16(u);
            }
            self.u16(0);
        }
    }

    /// Writes an `FString`, wide only when the text needs it.
    pub fn fstring(&mut self, s: &str) {
        self.fstring_ext(s, false);
    }

    /// Writes an `FUtf8String`: length with terminator, UTF-8, terminator
    /// (nothing but the zero length when empty).
    pub(crate) fn utf8_string(&mut self, s: &str) {
        if s.is_empty() {
            self.i32(0);
            return;
        }
        self.i32(s.len() as i32 + 1);
        self.bytes(s.as_bytes());
        self.u8(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fstring_round_trip() {
        for (s, wide) in [
            ("", false),
            ("abc", false),
            ("Größe", false),
            ("日本", true),
        ] {
            let mut w = Writer::new();
            w.fstring_ext(s, wide);
            let bytes = w.into_inner();
            let mut r = Reader::new(&bytes);
            assert_eq!(r.fstring_ext().unwrap(), (s.to_string(), wide));
            assert!(r.at_end());
        }
    }

    #[test]
    fn hostile_count_is_an_error_not_an_allocation() {
        let bytes = [0xff, 0xff, 0xff, 0x7f, 0, 0];
        let mut r = Reader::new(&bytes);
        let e = r.count_i32(8).unwrap_err();
        assert!(e.to_string().contains("count 2147483647"), "{e}");
        let mut r = Reader::new(&bytes);
        assert!(r.fstring().is_err());
    }

    #[test]
    fn errors_carry_absolute_offsets() {
        let bytes = [1, 2, 3];
        let mut r = Reader::with_base(&bytes, 100);
        r.u16().unwrap();
        let e = r.u32().unwrap_err();
        assert_eq!(e.offset(), Some(102));
    }
}
