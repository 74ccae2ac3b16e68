//! A new `.ucas` as it is written: the builder fills aligned buffers, a
//! thread of the file's own hashes each one (BLAKE3, recorded by a release
//! build; a development build asks for none) and another writes it, while
//! the builder fills the next.
//!
//! On Linux the file is written with direct I/O (`O_DIRECT`): the bytes go
//! from the buffer to the disk without being copied into the page cache
//! first, which is what a buffered write of a GiB spends most of its time
//! on (and the kernel then writes them out again before the sync). A
//! filesystem that refuses direct I/O gets buffered writes, as every other
//! system does; the bytes written are the same either way.

use std::fs::File;
use std::io::Write;
use std::path::PathBuf;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread::JoinHandle;

use crate::error::{Error, Result};
use crate::publish::{Staged, TempFile};

/// Size of one buffer, a multiple of any disk's block size.
const BUFFER: usize = 1 << 20;
/// Buffers in flight: one being filled, the others waiting to be written.
const BUFFERS: usize = 4;
/// Direct I/O writes whole blocks from block-aligned memory; 4 KiB covers
/// the 512-byte and 4 KiB sectors of disks in use.
const ALIGN: usize = 4096;
/// Buffered writes: how much may wait in the page cache before the kernel
/// is asked to start writing it out, so the sync before publishing waits
/// for the last stretch only.
const WRITE_BEHIND: u64 = 32 << 20;

/// `BUFFER` bytes at an address aligned to `ALIGN`.
struct AlignedBuffer {
    raw: Vec<u8>,
    start: usize,
}

impl AlignedBuffer {
    fn new() -> Self {
        let raw = vec![0u8; BUFFER + ALIGN];
        let start = raw.as_ptr().align_offset(ALIGN).min(ALIGN);
        AlignedBuffer { raw, start }
    }

    fn bytes(&self) -> &[u8] {
        &self.raw[self.start..self.start + BUFFER]
    }

    fn bytes_mut(&mut self) -> &mut [u8] {
        &mut self.raw[self.start..self.start + BUFFER]
    }
}

/// A filled buffer for the writing thread: its first `len` bytes are data.
struct Filled {
    buffer: AlignedBuffer,
    len: usize,
}

/// What the writing thread hands back when the channel closes.
type Outcome = (TempFile, std::io::Result<Option<[u8; 32]>>);

/// The `.ucas` being written (see the module documentation).
pub(super) struct FreshUcas {
    path: PathBuf,
    current: Option<AlignedBuffer>,
    filled: usize,
    to_writer: Option<SyncSender<Filled>>,
    free: Receiver<AlignedBuffer>,
    writer: Option<JoinHandle<Outcome>>,
}

impl FreshUcas {
    /// Starts writing `file`; `direct` asks for direct I/O where the
    /// system has it, `hash` for the BLAKE3 of the bytes.
    pub(super) fn new(file: TempFile, direct: bool, hash: bool) -> Result<Self> {
        let path = file.path().to_path_buf();
        let (to_writer, filled) = sync_channel::<Filled>(BUFFERS - 1);
        let (give_back, free) = sync_channel::<AlignedBuffer>(BUFFERS);
        for _ in 1..BUFFERS {
            give_back
                .send(AlignedBuffer::new())
                .expect("the receiver is here");
        }
        let writer = std::thread::Builder::new()
            .name("ucas writer".into())
            .spawn(move || write_buffers(file, direct, hash, filled, give_back))
            .map_err(|e| Error::io(&path, e))?;
        Ok(FreshUcas {
            path,
            current: Some(AlignedBuffer::new()),
            filled: 0,
            to_writer: Some(to_writer),
            free,
            writer: Some(writer),
        })
    }

    /// Hands the current buffer (its first `filled` bytes) to the writing
    /// thread and takes a free one.
    fn ship(&mut self) -> std::io::Result<()> {
        let buffer = self.current.take().expect("a buffer is being filled");
        let len = std::mem::take(&mut self.filled);
        let sent = self
            .to_writer
            .as_ref()
            .map(|to| to.send(Filled { buffer, len }).is_ok());
        // A closed channel means the thread stopped on an error: `finish`
        // reports it.
        match (sent, self.free.recv()) {
            (Some(true), Ok(buffer)) => {
                self.current = Some(buffer);
                Ok(())
            }
            _ => Err(self.stopped()),
        }
    }

    /// The writing thread's error, once it has stopped.
    fn stopped(&mut self) -> std::io::Error {
        self.to_writer = None;
        match self.writer.take().map(JoinHandle::join) {
            Some(Ok((_, Err(e)))) => e,
            _ => std::io::Error::other("the .ucas writing thread stopped"),
        }
    }

    /// Writes what is left, waits for the thread and syncs the file:
    /// returns it staged, with the BLAKE3 hash of all its bytes when asked.
    pub(super) fn finish(mut self) -> Result<(Staged, Option<[u8; 32]>)> {
        if self.filled > 0 {
            self.ship().map_err(|e| Error::io(&self.path, e))?;
        }
        self.to_writer = None;
        let Some(Ok((file, hash))) = self.writer.take().map(JoinHandle::join) else {
            return Err(Error::internal("the .ucas writing thread stopped"));
        };
        let hash = hash.map_err(|e| Error::io(&self.path, e))?;
        Ok((file.stage()?, hash))
    }
}

impl FreshUcas {
    /// Appends `len` bytes that `fill` writes into the buffers in place,
    /// one stretch at a time in file order (a buffer that fills goes to
    /// the writing thread, whose error `shipped` turns into `E`); `fill`'s
    /// error stops it.
    pub(super) fn fill_in_place<E>(
        &mut self,
        mut len: usize,
        mut fill: impl FnMut(&mut [u8]) -> std::result::Result<(), E>,
        shipped: impl Fn(&std::path::Path, std::io::Error) -> E,
    ) -> std::result::Result<(), E> {
        while len > 0 {
            if self.filled == BUFFER {
                self.ship().map_err(|e| shipped(&self.path, e))?;
            }
            let buffer = self.current.as_mut().expect("a buffer is being filled");
            let take = len.min(BUFFER - self.filled);
            fill(&mut buffer.bytes_mut()[self.filled..self.filled + take])?;
            self.filled += take;
            len -= take;
        }
        Ok(())
    }
}

impl Write for FreshUcas {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        let mut rest = bytes;
        let copy = |into: &mut [u8]| {
            let (now, later) = rest.split_at(into.len());
            into.copy_from_slice(now);
            rest = later;
            Ok(())
        };
        self.fill_in_place(bytes.len(), copy, |_, e| e)?;
        Ok(bytes.len())
    }

    /// Buffers go out when full or at [`FreshUcas::finish`].
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for FreshUcas {
    /// An unfinished `.ucas` (a failed build): the thread stops, and its
    /// temporary file is removed before the builder's drop returns.
    fn drop(&mut self) {
        self.to_writer = None;
        if let Some(writer) = self.writer.take() {
            let _ = writer.join();
        }
    }
}

/// The writing thread: writes each buffer in order and gives it back; with
/// `hash`, a thread of its own hashes each buffer first (the hash of one
/// buffer and the disk's write of another overlap). At the end (the
/// channel closed) it trims the file to the bytes written (direct I/O
/// writes the last block whole).
fn write_buffers(
    mut file: TempFile,
    direct: bool,
    hash: bool,
    filled: Receiver<Filled>,
    give_back: SyncSender<AlignedBuffer>,
) -> Outcome {
    let result = if hash {
        let (to_write, hashed) = sync_channel::<Filled>(BUFFERS - 1);
        std::thread::scope(|scope| -> std::io::Result<Option<[u8; 32]>> {
            let hasher = std::thread::Builder::new()
                .name("ucas hasher".into())
                .spawn_scoped(scope, move || {
                    let mut hasher = blake3::Hasher::new();
                    for filled in filled {
                        hasher.update(&filled.buffer.bytes()[..filled.len]);
                        // A closed channel: the writing stopped on an error.
                        if to_write.send(filled).is_err() {
                            break;
                        }
                    }
                    *hasher.finalize().as_bytes()
                })?;
            let written = write_in_order(&mut file, direct, hashed, give_back);
            let hash = hasher
                .join()
                .map_err(|_| std::io::Error::other("the .ucas hashing thread stopped"))?;
            file.file().set_len(written?)?;
            Ok(Some(hash))
        })
    } else {
        write_in_order(&mut file, direct, filled, give_back)
            .and_then(|written| file.file().set_len(written))
            .map(|()| None)
    };
    (file, result)
}

/// [`write_buffers`]' writing: each buffer written, then given back to be
/// filled again; the bytes written. An error stops it (the channels close,
/// which stops the hashing thread, if any, and the builder).
fn write_in_order(
    file: &mut TempFile,
    direct: bool,
    buffers: Receiver<Filled>,
    give_back: SyncSender<AlignedBuffer>,
) -> std::io::Result<u64> {
    let mut direct = direct && set_direct(file.file(), true);
    let mut written = 0u64;
    let mut not_yet_flushed = 0u64;
    for Filled { mut buffer, len } in buffers {
        // Only the last buffer is short; direct I/O writes it padded to
        // whole blocks, and the padding is cut off at the end.
        let padded = if direct {
            let padded = len.next_multiple_of(ALIGN);
            buffer.bytes_mut()[len..padded].fill(0);
            padded
        } else {
            len
        };
        write_all(file.file(), &buffer.bytes()[..padded], &mut direct)?;
        written += len as u64;
        not_yet_flushed += padded as u64;
        if !direct && not_yet_flushed >= WRITE_BEHIND {
            not_yet_flushed = 0;
            file.start_writeback();
        }
        let _ = give_back.send(buffer);
    }
    Ok(written)
}

/// Writes all of `bytes`; a refusal of direct I/O (`EINVAL`: this
/// filesystem, or this buffer's alignment) turns it off and writes the
/// same bytes buffered.
fn write_all(file: &mut File, mut bytes: &[u8], direct: &mut bool) -> std::io::Result<()> {
    while !bytes.is_empty() {
        match file.write(bytes) {
            Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
            Ok(n) => bytes = &bytes[n..],
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) if *direct && e.kind() == std::io::ErrorKind::InvalidInput => {
                set_direct(file, false);
                *direct = false;
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Turns direct I/O on or off for `file`; whether it is now on.
#[cfg(target_os = "linux")]
fn set_direct(file: &File, on: bool) -> bool {
    use std::os::fd::AsRawFd;
    let fd = file.as_raw_fd();
    // SAFETY: `fd` is `file`'s open descriptor; F_GETFL/F_SETFL read and
    // change only its status flags.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags < 0 {
            return false;
        }
        let flags = if on {
            flags | libc::O_DIRECT
        } else {
            flags & !libc::O_DIRECT
        };
        libc::fcntl(fd, libc::F_SETFL, flags) == 0 && on
    }
}

#[cfg(not(target_os = "linux"))]
fn set_direct(_file: &File, _on: bool) -> bool {
    false
}

/// Whether `path`'s folder takes direct I/O (for the tests).
#[cfg(test)]
fn direct_io_works(dir: &std::path::Path) -> bool {
    let path = dir.join("direct-probe");
    let Ok(mut file) = File::create(&path) else {
        return false;
    };
    let mut direct = set_direct(&file, true);
    let buffer = AlignedBuffer::new();
    let ok = direct && write_all(&mut file, &buffer.bytes()[..ALIGN], &mut direct).is_ok();
    let _ = std::fs::remove_file(&path);
    ok && direct
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The file holds exactly the bytes written or filled in place,
    /// whatever their lengths (buffer boundaries, a last block cut short),
    /// and the hash is theirs (none when none is asked for);
    /// direct and buffered writes give the same file.
    #[test]
    fn writes_exactly_the_bytes_and_their_hash() {
        // Under target/: a disk filesystem (a tmpfs /tmp may refuse direct I/O).
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target");
        std::fs::create_dir_all(&root).unwrap();
        let dir = tempfile::tempdir_in(&root).unwrap();
        let direct_here = direct_io_works(dir.path());
        let lengths = [
            0usize,
            1,
            4095,
            4096,
            5000,
            BUFFER - 3,
            BUFFER,
            3 * BUFFER + 17,
        ];
        for (direct, hashed) in [(false, true), (true, true), (false, false), (true, false)] {
            for (n, &total) in lengths.iter().enumerate() {
                let data: Vec<u8> = (0..total).map(|i| (i * 31 + i / 7 + n) as u8).collect();
                let final_path = dir.path().join(format!("out-{direct}-{hashed}-{n}.ucas"));
                let temp = TempFile::create(&final_path).unwrap();
                let mut out = FreshUcas::new(temp, direct, hashed).unwrap();
                // Uneven pieces, as chunks arrive: copied in, or filled in
                // place (stretch after stretch, across buffers).
                for (p, piece) in data.chunks(70_001).enumerate() {
                    if p % 2 == 0 {
                        out.write_all(piece).unwrap();
                        continue;
                    }
                    let mut rest = piece;
                    let fill = |into: &mut [u8]| -> Result<()> {
                        let (now, later) = rest.split_at(into.len());
                        into.copy_from_slice(now);
                        rest = later;
                        Ok(())
                    };
                    out.fill_in_place(piece.len(), fill, |path, e| Error::io(path, e))
                        .unwrap();
                    assert!(rest.is_empty());
                }
                let (staged, hash) = out.finish().unwrap();
                crate::publish::publish(Vec::new(), vec![staged]).unwrap();
                assert_eq!(
                    std::fs::read(&final_path).unwrap(),
                    data,
                    "{total} bytes, direct {direct}"
                );
                assert_eq!(hash, hashed.then(|| *blake3::hash(&data).as_bytes()));
            }
        }
        // Say which path the test took (both are correct, only one is fast).
        eprintln!("direct I/O available under target/: {direct_here}");
    }

    /// A builder dropped unfinished leaves no temporary behind.
    #[test]
    fn an_unfinished_file_is_removed() {
        let dir = tempfile::tempdir().unwrap();
        let temp = TempFile::create(&dir.path().join("x.ucas")).unwrap();
        let temp_path = temp.path().to_path_buf();
        let mut out = FreshUcas::new(temp, true, true).unwrap();
        out.write_all(&vec![7u8; BUFFER + 10]).unwrap();
        drop(out);
        assert!(!temp_path.exists());
    }
}
