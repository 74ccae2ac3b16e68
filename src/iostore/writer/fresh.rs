//! A new `.ucas` as it is written: the builder fills buffers, a thread of
//! the file's own hashes each one (BLAKE3, recorded by a release build; a
//! development build asks for none) and another writes it, while the
//! builder fills the next. Every `WRITE_BEHIND` bytes the system is asked
//! to start writing them to disk, so the sync before publishing waits for
//! the last stretch only.
//!
//! The writes go through the page cache, on every system, not around it
//! (`O_DIRECT`): a direct write waits for the disk, so with one in flight
//! at a time the disk idles between them, while the kernel's write-out
//! keeps several in flight.

use std::io::Write;
use std::path::PathBuf;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread::JoinHandle;

use crate::error::{Error, Result};
use crate::publish::temporary::{Staged, TempFile};

/// Size of one buffer.
const BUFFER: usize = 1 << 20;
/// Buffers in flight: one being filled, the others waiting to be written.
const BUFFERS: usize = 4;
/// How much may wait in the page cache before the kernel is asked to start
/// writing it out.
const WRITE_BEHIND: u64 = 32 << 20;

/// A buffer of `BUFFER` bytes.
type Buffer = Vec<u8>;

fn new_buffer() -> Buffer {
    vec![0u8; BUFFER]
}

/// A filled buffer for the writing thread: its first `len` bytes are data.
struct Filled {
    buffer: Buffer,
    len: usize,
}

/// What the writing thread hands back when the channel closes.
type Outcome = (TempFile, std::io::Result<Option<[u8; 32]>>);

/// The `.ucas` being written (see the module documentation).
pub(super) struct FreshUcas {
    path: PathBuf,
    current: Option<Buffer>,
    filled: usize,
    to_writer: Option<SyncSender<Filled>>,
    free: Receiver<Buffer>,
    writer: Option<JoinHandle<Outcome>>,
}

impl FreshUcas {
    /// Starts writing `file`; `hash` asks for the BLAKE3 of the bytes.
    pub(super) fn new(file: TempFile, hash: bool) -> Result<Self> {
        let path = file.path().to_path_buf();
        let (to_writer, filled) = sync_channel::<Filled>(BUFFERS - 1);
        let (give_back, free) = sync_channel::<Buffer>(BUFFERS);
        for _ in 1..BUFFERS {
            give_back.send(new_buffer()).expect("the receiver is here");
        }
        let writer = std::thread::Builder::new()
            .name("ucas writer".into())
            .spawn(move || write_buffers(file, hash, filled, give_back))
            .map_err(|e| Error::io(&path, e))?;
        Ok(FreshUcas {
            path,
            current: Some(new_buffer()),
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
            fill(&mut buffer[self.filled..self.filled + take])?;
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
/// buffer and the write of another overlap).
fn write_buffers(
    mut file: TempFile,
    hash: bool,
    filled: Receiver<Filled>,
    give_back: SyncSender<Buffer>,
) -> Outcome {
    let result = if hash {
        let (to_write, hashed) = sync_channel::<Filled>(BUFFERS - 1);
        std::thread::scope(|scope| -> std::io::Result<Option<[u8; 32]>> {
            let hasher = std::thread::Builder::new()
                .name("ucas hasher".into())
                .spawn_scoped(scope, move || {
                    let mut hasher = blake3::Hasher::new();
                    for filled in filled {
                        hasher.update(&filled.buffer[..filled.len]);
                        // A closed channel: the writing stopped on an error.
                        if to_write.send(filled).is_err() {
                            break;
                        }
                    }
                    *hasher.finalize().as_bytes()
                })?;
            let written = write_in_order(&mut file, hashed, give_back);
            let hash = hasher
                .join()
                .map_err(|_| std::io::Error::other("the .ucas hashing thread stopped"))?;
            written?;
            Ok(Some(hash))
        })
    } else {
        write_in_order(&mut file, filled, give_back).map(|()| None)
    };
    (file, result)
}

/// [`write_buffers`]' writing: each buffer written, then given back to be
/// filled again. An error stops it (the channels close, which stops the
/// hashing thread, if any, and the builder).
fn write_in_order(
    file: &mut TempFile,
    buffers: Receiver<Filled>,
    give_back: SyncSender<Buffer>,
) -> std::io::Result<()> {
    let mut not_yet_flushed = 0u64;
    for Filled { buffer, len } in buffers {
        file.file().write_all(&buffer[..len])?;
        not_yet_flushed += len as u64;
        if not_yet_flushed >= WRITE_BEHIND {
            not_yet_flushed = 0;
            file.start_writeback();
        }
        let _ = give_back.send(buffer);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The file holds exactly the bytes written or filled in place,
    /// whatever their lengths (buffer boundaries, a last block cut short),
    /// and the hash is theirs (none when none is asked for).
    #[test]
    fn writes_exactly_the_bytes_and_their_hash() {
        let dir = tempfile::tempdir().unwrap();
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
        for hashed in [true, false] {
            for (n, &total) in lengths.iter().enumerate() {
                let data: Vec<u8> = (0..total).map(|i| (i * 31 + i / 7 + n) as u8).collect();
                let final_path = dir.path().join(format!("out-{hashed}-{n}.ucas"));
                let temp = TempFile::create(&final_path).unwrap();
                let mut out = FreshUcas::new(temp, hashed).unwrap();
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
                assert_eq!(std::fs::read(&final_path).unwrap(), data, "{total} bytes");
                assert_eq!(hash, hashed.then(|| *blake3::hash(&data).as_bytes()));
            }
        }
    }

    /// A builder dropped unfinished leaves no temporary behind.
    #[test]
    fn an_unfinished_file_is_removed() {
        let dir = tempfile::tempdir().unwrap();
        let temp = TempFile::create(&dir.path().join("x.ucas")).unwrap();
        let temp_path = temp.path().to_path_buf();
        let mut out = FreshUcas::new(temp, true).unwrap();
        out.write_all(&vec![7u8; BUFFER + 10]).unwrap();
        drop(out);
        assert!(!temp_path.exists());
    }
}
