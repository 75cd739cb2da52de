//! File reads cut into line-aligned chunks for parallel parsing.
//!
//! A file is read whole ([`read_bytes`], the CSV reader), or in chunks of
//! whole lines for the SVMlight reader: a regular file chunk by chunk at
//! the chunks' offsets ([`ChunksAt`], each chunk read by the task that
//! parses it), anything else (a pipe) in blocks read in sequence into reused
//! buffers ([`LineBlocks`]) and cut at `\n` bytes into chunks of about
//! [`CHUNK_BYTES`] ([`split_lines`]). Plain reads, no memory map: the host
//! CLI forbids `unsafe`, and a file truncated under a map is a `SIGBUS`. A
//! `\n` never occurs inside a multi-byte UTF-8 sequence,
//! so every chunk is valid UTF-8 exactly when the file is (the CSV reader
//! checks the chunks in parallel, [`utf8_chunks`]; the SVMlight parser
//! checks its chunk as it parses it), and the lines of
//! the file are the lines of its chunks in order: chunk `k` starts at line
//! `1 + Σ_{j<k} (lines of chunk j)`, each earlier chunk ending in `\n`. Readers
//! parse the chunks in parallel (rayon) with chunk-local line numbers and
//! shift them when they join the parts, so every error names the same line
//! as a one-pass parse would.

use std::{fs, io, path::Path};

use rayon::prelude::*;

use super::{DataError, ErrorKind, NOT_UTF8};

/// Target chunk size: large enough that the per-chunk set-up and the join
/// are negligible, small enough to balance two to sixteen threads on files
/// of tens of megabytes.
pub(crate) const CHUNK_BYTES: usize = 1 << 20;

/// The error of a file that cannot be opened or read, by kind.
fn read_error(path: &Path, e: &io::Error) -> DataError {
    let kind = match e.kind() {
        io::ErrorKind::NotFound => ErrorKind::NotFound,
        io::ErrorKind::PermissionDenied | io::ErrorKind::IsADirectory => ErrorKind::Unreadable,
        _ => ErrorKind::Io,
    };
    DataError::file(&path.display().to_string(), kind, format!("cannot read: {e}"))
}

/// Reads a whole file; the error kinds of a missing or unreadable file.
pub(crate) fn read_bytes(path: &Path) -> Result<Vec<u8>, DataError> {
    fs::read(path).map_err(|e| read_error(path, &e))
}

/// A file read in blocks of whole lines into a buffer the caller reuses, so
/// that a large file costs no fresh memory beyond what its parse keeps
/// (reading it whole into a fresh buffer costs a page fault and the zeroing
/// of every 4 KiB page, about a tenth of the parse). Plain `read`s rather
/// than a memory map: the host CLI has no `unsafe`, and the copy out of the
/// page cache runs while the previous block is parsed.
pub(crate) struct LineBlocks<'p> {
    path: &'p Path,
    file: fs::File,
    /// About this many bytes per block (more when a line is longer).
    target: usize,
    /// The size of the next block: from `first` up to `target`, doubling,
    /// so that the first block (read before any parsing can start) is
    /// short.
    next: usize,
    /// The partial line after the last `\n` of the previous block.
    carry: Vec<u8>,
    eof: bool,
    /// The first block is still to come (its byte-order mark is dropped).
    first: bool,
}

impl<'p> LineBlocks<'p> {
    /// Opens `path` for blocks of about `target` bytes.
    #[cfg(test)]
    pub(crate) fn open(path: &'p Path, target: usize) -> Result<Self, DataError> {
        Self::open_ramp(path, target, target)
    }

    /// Opens `path` for blocks of about `first` bytes, then twice as many
    /// each block up to `target`. The cuts depend on the sizes only.
    #[cfg(test)]
    pub(crate) fn open_ramp(path: &'p Path, first: usize, target: usize) -> Result<Self, DataError> {
        let file = fs::File::open(path).map_err(|e| read_error(path, &e))?;
        Ok(Self::ramp(path, file, first, target))
    }

    /// [`LineBlocks::open_ramp`] on a file already open.
    pub(crate) fn ramp(path: &'p Path, file: fs::File, first: usize, target: usize) -> Self {
        let target = target.max(1);
        let next = first.clamp(1, target);
        LineBlocks { path, file, target, next, carry: Vec::new(), eof: false, first: true }
    }

    /// Fills `buf` with the next lines of the file: at least `target` bytes
    /// cut after a `\n`, or the rest of the file; empty at the end. The
    /// blocks in order are the file's bytes less a leading UTF-8
    /// byte-order mark.
    pub(crate) fn next_into(&mut self, buf: &mut Vec<u8>) -> Result<(), DataError> {
        buf.clear();
        buf.append(&mut self.carry);
        // The first block holds at least the 3 bytes of a byte-order mark.
        let mut want = if self.first { self.next.max(3) } else { self.next };
        self.next = self.next.saturating_mul(2).min(self.target);
        loop {
            while buf.len() < want && !self.eof {
                // Into the buffer's spare capacity, without zeroing it
                // first (`read_to_end` through `Take` reads into
                // uninitialised capacity: the memset of every block would
                // cost about a tenth of the read).
                let len = buf.len();
                buf.reserve(want - len);
                let limit = (want - len) as u64;
                let got = io::Read::read_to_end(&mut io::Read::take(&mut self.file, limit), buf)
                    .map_err(|e| read_error(self.path, &e))?;
                debug_assert_eq!(buf.len(), len + got);
                self.eof = got == 0;
            }
            if self.first {
                self.first = false;
                if buf.starts_with(b"\xEF\xBB\xBF") {
                    buf.drain(..3);
                }
            }
            if self.eof {
                return Ok(());
            }
            match buf.iter().rposition(|&b| b == b'\n') {
                Some(p) => {
                    self.carry.extend_from_slice(&buf[p + 1..]);
                    buf.truncate(p + 1);
                    return Ok(());
                }
                // A line longer than the block: read on.
                None => want = want.saturating_mul(2),
            }
        }
    }
}

/// A regular file read chunk by chunk at the chunks' offsets
/// (`pread`), so that each chunk is copied out of the page cache by the
/// task that parses it, on its thread and just before the parse, instead of
/// block by block on one thread. The cuts depend on the chunk size only:
/// chunk `k` holds the lines that start in bytes `[k·c, (k + 1)·c)` of the
/// file (the first line, a leading byte-order mark dropped, in chunk 0), so
/// the chunks in order are the file's lines; a chunk in which no line
/// starts is empty.
pub(crate) struct ChunksAt<'p> {
    path: &'p Path,
    file: fs::File,
    /// The file's length when opened; the last chunk reads on to the end
    /// of its last line.
    len: u64,
    /// The chunk size `c` (at least 1).
    chunk: u64,
    /// Bytes read past a chunk's end at first ([`LINE_SLACK`]).
    slack: usize,
}

/// A read at an offset that leaves the file's own position alone (unix) or
/// moves it (windows; the chunks never read at the position).
#[cfg(unix)]
fn read_at(file: &fs::File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    std::os::unix::fs::FileExt::read_at(file, buf, offset)
}

#[cfg(windows)]
fn read_at(file: &fs::File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    std::os::windows::fs::FileExt::seek_read(file, buf, offset)
}

#[cfg(not(any(unix, windows)))]
fn read_at(_: &fs::File, _: &mut [u8], _: u64) -> io::Result<usize> {
    Err(io::Error::from(io::ErrorKind::Unsupported))
}

/// Bytes read past a chunk's end for the end of its last line (doubled
/// while the line goes on).
const LINE_SLACK: usize = 4096;

impl<'p> ChunksAt<'p> {
    /// `Ok(None)` for a file that is not a regular file (a pipe, a
    /// terminal), which can only be read in sequence ([`LineBlocks`]).
    pub(crate) fn open(path: &'p Path, chunk: usize) -> Result<Result<Self, fs::File>, DataError> {
        let file = fs::File::open(path).map_err(|e| read_error(path, &e))?;
        let meta = file.metadata().map_err(|e| read_error(path, &e))?;
        if !meta.is_file() || !cfg!(any(unix, windows)) {
            return Ok(Err(file));
        }
        let chunk = u64::try_from(chunk.max(1)).unwrap_or(u64::MAX);
        Ok(Ok(ChunksAt { path, file, len: meta.len(), chunk, slack: LINE_SLACK }))
    }

    /// The file, for a read in sequence.
    pub(crate) fn into_file(self) -> fs::File {
        self.file
    }

    /// The number of chunks.
    pub(crate) fn count(&self) -> usize {
        usize::try_from(self.len.div_ceil(self.chunk)).unwrap_or(usize::MAX)
    }

    /// Reads chunk `k` into `buf` (reused: grown, never cleared, so its
    /// bytes are not zeroed again) and returns where its lines are in it.
    pub(crate) fn read(&self, k: usize, buf: &mut Vec<u8>) -> Result<std::ops::Range<usize>, DataError> {
        let s = (k as u64).saturating_mul(self.chunk);
        let e = s.saturating_add(self.chunk).min(self.len);
        if s >= e {
            return Ok(0..0);
        }
        // From the byte before the chunk, whose `\n` would start a line at
        // the chunk's first byte.
        let from = s.saturating_sub(1);
        let span = usize::try_from(e - from).unwrap_or(usize::MAX);
        // Chunk 0 holds at least the 3 bytes of a byte-order mark.
        let mut want = span.saturating_add(self.slack).max(3);
        let mut filled = self.fill(from, buf, 0, want)?;
        let start = if k == 0 {
            if buf[..filled].starts_with(b"\xEF\xBB\xBF") {
                3
            } else {
                0
            }
        } else {
            // The first `\n` in `[s − 1, e − 1)` ends the line that began
            // in an earlier chunk.
            match buf[..(span - 1).min(filled)].iter().position(|&b| b == b'\n') {
                Some(i) => i + 1,
                None => return Ok(0..0),
            }
        };
        // The chunk's last line ends at the first `\n` at `e − 1` or after.
        let mut from_ix = (span - 1).max(start);
        loop {
            if let Some(j) = buf[from_ix.min(filled)..filled].iter().position(|&b| b == b'\n') {
                return Ok(start..from_ix.min(filled) + j + 1);
            }
            if filled < want {
                // The end of the file.
                return Ok(start..filled.max(start));
            }
            from_ix = filled;
            want = want.saturating_mul(2);
            filled = self.fill(from, buf, filled, want)?;
        }
    }

    /// Reads bytes `from + filled ..` into `buf[filled..want]` until it is
    /// full or the file ends; returns the bytes filled.
    fn fill(&self, from: u64, buf: &mut Vec<u8>, mut filled: usize, want: usize) -> Result<usize, DataError> {
        if buf.len() < want {
            buf.resize(want, 0);
        }
        while filled < want {
            match read_at(&self.file, &mut buf[filled..want], from + filled as u64) {
                Ok(0) => break,
                Ok(got) => filled += got,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(read_error(self.path, &e)),
            }
        }
        Ok(filled)
    }
}

/// Cuts `bytes` after `\n` bytes into chunks of about `target` bytes (at
/// least one line each; one chunk for an empty input).
pub(crate) fn split_lines(bytes: &[u8], target: usize) -> Vec<&[u8]> {
    let mut out = Vec::with_capacity(bytes.len() / target.max(1) + 1);
    let mut rest = bytes;
    while rest.len() > target {
        let cut = match rest[target..].iter().position(|&b| b == b'\n') {
            Some(p) => target + p + 1,
            None => rest.len(),
        };
        let (a, b) = rest.split_at(cut);
        out.push(a);
        rest = b;
    }
    if !rest.is_empty() || out.is_empty() {
        out.push(rest);
    }
    out
}

/// The chunks as text, validated in parallel. A byte that is not UTF-8 is
/// reported with its line in the whole file (the first such byte), the
/// chunks following `lines_before` lines of the file.
pub(crate) fn utf8_chunks<'a>(chunks: &[&'a [u8]], name: &str, lines_before: usize) -> Result<Vec<&'a str>, DataError> {
    let checked: Vec<Result<&'a str, usize>> =
        chunks.par_iter().map(|c| std::str::from_utf8(c).map_err(|e| e.valid_up_to())).collect();
    let newlines = |b: &[u8]| b.iter().filter(|&&b| b == b'\n').count();
    let mut out = Vec::with_capacity(chunks.len());
    for (k, r) in checked.into_iter().enumerate() {
        match r {
            Ok(s) => out.push(s),
            Err(bad) => {
                let before: usize = chunks[..k].iter().map(|c| newlines(c)).sum();
                let line = 1 + lines_before + before + newlines(&chunks[k][..bad]);
                return Err(DataError::at(name, line, ErrorKind::Encoding, NOT_UTF8.to_owned()));
            }
        }
    }
    Ok(out)
}

/// Cuts `text` into line-aligned chunks of about `target` bytes.
pub(crate) fn split_str(text: &str, target: usize) -> Vec<&str> {
    // Cut points follow `\n` bytes, which are char boundaries.
    split_lines(text.as_bytes(), target)
        .into_iter()
        .scan(0usize, |at, c| {
            let s = &text[*at..*at + c.len()];
            *at += c.len();
            Some(s)
        })
        .collect()
}

/// Drops a leading UTF-8 byte-order mark from raw bytes.
pub(crate) fn strip_bom_bytes(bytes: &[u8]) -> &[u8] {
    bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_cover_the_input_at_line_ends() {
        let text = b"ab\ncd\n\nefg\nh";
        for target in 0..=text.len() + 1 {
            let c = split_lines(text, target);
            assert_eq!(c.concat(), text, "target {target}");
            for part in &c[..c.len() - 1] {
                assert_eq!(part.last(), Some(&b'\n'), "target {target}");
            }
        }
        assert_eq!(split_lines(b"", 4), vec![&b""[..]]);
    }

    /// The blocks are the file less its byte-order mark, each but the last
    /// ending in `\n`, for every block size (lines longer than a block
    /// included).
    #[test]
    fn line_blocks_cover_the_file() {
        let dir = std::env::temp_dir().join(format!("ranklet-blocks-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let texts: [&[u8]; 5] =
            [b"ab\ncd\n\nefg\nh", b"\xEF\xBB\xBFx\ny\n", b"", b"\xEF\xBB", b"a very long line\n\n\nb\n"];
        for (i, text) in texts.iter().enumerate() {
            let path = dir.join(format!("t{i}"));
            fs::write(&path, text).unwrap();
            let want = strip_bom_bytes(text);
            for target in 0..=text.len() + 2 {
                let mut blocks = LineBlocks::open(&path, target).unwrap();
                let (mut all, mut buf) = (Vec::new(), Vec::new());
                loop {
                    blocks.next_into(&mut buf).unwrap();
                    if buf.is_empty() {
                        break;
                    }
                    all.extend_from_slice(&buf);
                    if all.len() < want.len() {
                        assert_eq!(buf.last(), Some(&b'\n'), "{text:?} target {target}");
                    }
                }
                assert_eq!(all, want, "{text:?} target {target}");
            }
        }
        // Growing blocks cover the file too.
        let path = dir.join("ramp");
        let text: Vec<u8> = (0..200).flat_map(|i| format!("{i}\n").into_bytes()).collect();
        fs::write(&path, &text).unwrap();
        for (first, target) in [(1, 64), (5, 7), (64, 8)] {
            let mut blocks = LineBlocks::open_ramp(&path, first, target).unwrap();
            let (mut all, mut buf, mut sizes) = (Vec::new(), Vec::new(), Vec::new());
            loop {
                blocks.next_into(&mut buf).unwrap();
                if buf.is_empty() {
                    break;
                }
                sizes.push(buf.len());
                all.extend_from_slice(&buf);
            }
            assert_eq!(all, text, "{first} {target}");
            assert!(sizes[0] < first.min(target) + 4, "{sizes:?}");
        }
        let e = LineBlocks::open(&dir.join("missing"), 4).err().unwrap();
        assert_eq!(e.kind(), ErrorKind::NotFound);
        let mut blocks = LineBlocks::open(&dir, 4).unwrap();
        let e = blocks.next_into(&mut Vec::new()).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Unreadable);
        fs::remove_dir_all(&dir).unwrap();
    }

    /// The chunks read at offsets are the file's lines less its byte-order
    /// mark, in order, each ending in `\n` but maybe the last, each line in
    /// the chunk where it starts, for every chunk size and a read past the
    /// end short or long (lines longer than a chunk and than the slack).
    #[test]
    fn chunks_at_offsets_cover_the_file() {
        let dir = std::env::temp_dir().join(format!("ranklet-chunks-at-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let texts: [&[u8]; 7] = [
            b"ab\ncd\n\nefg\nh",
            b"\xEF\xBB\xBFx\ny\n",
            b"",
            b"\xEF\xBB",
            b"a very long line\n\n\nb\n",
            b"\n\n\n",
            b"no newline at all",
        ];
        for (i, text) in texts.iter().enumerate() {
            let path = dir.join(format!("t{i}"));
            fs::write(&path, text).unwrap();
            let want = strip_bom_bytes(text);
            for chunk in 0..=text.len() + 2 {
                for slack in [1, 3, LINE_SLACK] {
                    let mut at = ChunksAt::open(&path, chunk).unwrap().unwrap();
                    at.slack = slack;
                    let (mut all, mut buf) = (Vec::new(), Vec::new());
                    let c = chunk.max(1);
                    assert_eq!(at.count(), text.len().div_ceil(c));
                    for k in 0..at.count() {
                        let r = at.read(k, &mut buf).unwrap();
                        let got = &buf[r];
                        if !got.is_empty() {
                            // Its first line starts in [k·c, (k + 1)·c).
                            let start = text.len() - want.len() + all.len();
                            let first = if start == text.len() - want.len() { 0 } else { start };
                            assert!(first >= k * c && first < (k + 1) * c, "{text:?} chunk {chunk} k {k}");
                        }
                        all.extend_from_slice(got);
                        if all.len() < want.len() && !got.is_empty() {
                            assert_eq!(got.last(), Some(&b'\n'), "{text:?} chunk {chunk} k {k}");
                        }
                    }
                    assert_eq!(all, want, "{text:?} chunk {chunk} slack {slack}");
                }
            }
        }
        // Not a regular file: read in sequence.
        assert!(ChunksAt::open(&dir, 4).unwrap().is_err());
        let e = ChunksAt::open(&dir.join("missing"), 4).err().unwrap();
        assert_eq!(e.kind(), ErrorKind::NotFound);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn encoding_error_names_its_line_across_chunks() {
        let mut bytes = b"1 1:1\n0 1:2\n1 1:3\n".to_vec();
        bytes.extend_from_slice(b"0 1:\xff\n1 1:4\n");
        for target in 0..bytes.len() {
            let e = utf8_chunks(&split_lines(&bytes, target), "f", 0).unwrap_err();
            assert_eq!((e.kind(), e.line()), (ErrorKind::Encoding, Some(4)), "target {target}");
        }
    }
}
