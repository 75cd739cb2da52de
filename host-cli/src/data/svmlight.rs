//! SVMlight / LETOR reader.
//!
//! One data row per line:
//!
//! ```text
//! <label> [qid:<id>] <index>:<value> <index>:<value> ... [# comment]
//! ```
//!
//! - Tokens are separated by spaces or tabs; `\r\n` line ends are accepted.
//! - Everything from the first `#` to the end of the line is a comment; a line
//!   that is blank after removing it is skipped (it is not a data row).
//! - `<label>` and `<value>` are finite `f64` (NaN, infinities and numbers
//!   that overflow `f64` are errors).
//! - `qid:<id>` comes right after the label; `<id>` is an unsigned 64-bit
//!   integer (so `qid:07` and `qid:7` are the same query). Either every data
//!   row has a qid or none has: a file without qids is one query, a file
//!   with qids on some lines only is an error that names the first line of
//!   each kind.
//! - `<index>` is 1-based (index 0 is an error) and at most `u32::MAX`;
//!   indices must be **strictly increasing** within a line. A decreasing or
//!   repeated index is an error: the reader does not sort, so a file with a
//!   repeated index cannot silently mean either the first or the last value.
//!   LETOR files are increasing.
//! - The dimension is the largest index in the file, or
//!   [`SvmlightOptions::num_features`] when given, in which case an index
//!   beyond it is an error (test data scored against a model trained on
//!   `d` features).
//! - Explicit zeros (`3:0`) are stored as entries.
//! - With [`SvmlightOptions::optional_label`] (rows to score) a line may
//!   leave the label out, `[qid:<id>] <index>:<value> …`: a first token
//!   holding `:` is then a `qid:` or an entry (so `1:7.4 2:0.7` is an
//!   unlabelled row, `0 qid:3 1:2` a labelled one) and the row's label is
//!   0. Without it such a line is an error saying a label is needed.

use std::{collections::HashMap, ops::ControlFlow, ops::Range, path::Path};

use rayon::prelude::*;

pub(crate) use super::chunks::CHUNK_BYTES;
use super::chunks::{split_lines, split_str, utf8_chunks, ChunksAt, LineBlocks};
use super::decimal::{digit_run, fast_decimal_hinted, shaped, Shape};
use super::{parse_finite, quote, strip_bom, DataError, Dataset, ErrorKind, Qids, NOT_UTF8};

/// Options of the SVMlight reader.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SvmlightOptions {
    /// The dimension `d` to use instead of the largest index in the file;
    /// any index above it is an error.
    pub num_features: Option<usize>,
    /// Rows may leave the label out (scoring): it is read as 0.
    pub optional_label: bool,
}

/// Reads an SVMlight / LETOR file. See the [module docs](self) for the format.
///
/// The file is read in line-aligned chunks into reused buffers and parsed
/// a block of chunks at a time in parallel (see
/// [`chunks`](super::chunks)): a regular file's chunks each read at its
/// offset by the task that parses it, a pipe's blocks in sequence, the next
/// while this one is parsed. The result and every error are those of a
/// one-pass parse (an encoding error anywhere in the file first, as when
/// the file was checked whole before parsing).
///
/// # Errors
///
/// A [`DataError`] naming the file (and line) for a missing or non-UTF-8
/// file, a file without data rows, or any malformed line.
pub fn read_svmlight(path: impl AsRef<Path>, opts: &SvmlightOptions) -> Result<Dataset, DataError> {
    let block = BLOCK_BYTES_PER_THREAD * rayon::current_num_threads().max(1);
    read_blocks(path.as_ref(), opts, block, CHUNK_BYTES, false)
}

/// Bytes per thread in a block: 4 chunks, enough to balance the threads,
/// few enough that the reused buffers stay small (a few MB per thread).
pub(crate) const BLOCK_BYTES_PER_THREAD: usize = 4 * CHUNK_BYTES;

/// [`read_svmlight`] with blocks of about `block` bytes cut into chunks of
/// about `chunk` bytes, read in sequence even from a regular file when
/// `sequential` (tests: both reads give the same result).
fn read_blocks(
    path: &Path,
    opts: &SvmlightOptions,
    block: usize,
    chunk: usize,
    sequential: bool,
) -> Result<Dataset, DataError> {
    let name = path.display().to_string();
    match read_blocks_with(path, opts, block, chunk, true, sequential, |_| ControlFlow::Continue(()))? {
        Some(join) => join.finish(&name),
        None => Err(DataError::file(&name, ErrorKind::Io, "read stopped".to_owned())), // the sink never stops
    }
}

/// One block of rows of a streamed read ([`stream_svmlight`]), in file
/// order.
pub struct RowBlock<'a> {
    parts: &'a [Part],
    /// The query of each row (interned in order of first appearance), if
    /// the rows carry query ids.
    groups: Option<&'a [usize]>,
    /// The query ids, by query number.
    keys: &'a [u64],
}

/// One row of a [`RowBlock`].
pub struct StreamRow<'a> {
    /// 0-based columns, strictly increasing.
    pub cols: &'a [u32],
    /// The values of the columns.
    pub vals: &'a [f64],
    /// The label.
    pub label: f64,
    /// The query (numbered in order of first appearance in the file), if
    /// the rows carry query ids.
    pub query: Option<usize>,
}

impl RowBlock<'_> {
    /// The rows of the block.
    pub fn n_rows(&self) -> usize {
        self.parts.iter().map(|p| p.labels.len()).sum()
    }

    /// The largest 1-based feature index in the block (0 if none).
    pub fn max_index(&self) -> usize {
        self.parts.iter().map(|p| p.max_index).max().unwrap_or(0)
    }

    /// The query id (the number after `qid:`) of query number `query` of
    /// [`StreamRow::query`].
    pub fn qid(&self, query: usize) -> Option<u64> {
        self.keys.get(query).copied()
    }

    /// The block cut into the chunks it was parsed in (blocks of whole
    /// rows, in file order), for work spread over threads. The cuts depend
    /// on the read's block and chunk sizes only, never on the number of
    /// threads.
    pub fn pieces(&self) -> Vec<RowBlock<'_>> {
        let mut at = 0;
        (0..self.parts.len())
            .map(|k| {
                let n = self.parts[k].labels.len();
                let groups = self.groups.map(|g| &g[at.min(g.len())..(at + n).min(g.len())]);
                at += n;
                RowBlock { parts: &self.parts[k..k + 1], groups, keys: self.keys }
            })
            .collect()
    }

    /// The rows in file order.
    pub fn rows(&self) -> impl Iterator<Item = StreamRow<'_>> + '_ {
        self.parts
            .iter()
            .flat_map(|p| {
                (0..p.labels.len()).map(move |i| {
                    let r = p.row_ptr[i]..p.row_ptr[i + 1];
                    (&p.col[r.clone()], &p.val[r], p.labels[i])
                })
            })
            .enumerate()
            .map(|(k, (cols, vals, label))| StreamRow {
                cols,
                vals,
                label,
                query: self.groups.and_then(|g| g.get(k).copied()),
            })
    }
}

/// What a completed [`stream_svmlight`] read saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamSummary {
    /// Data rows.
    pub rows: usize,
    /// The dimension, as [`Dataset::n_features`].
    pub d: usize,
    /// Distinct query ids (`None` without qids).
    pub queries: Option<usize>,
}

/// Reads an SVMlight file as [`read_svmlight`] does (the same checks, the
/// same errors) without keeping its entries: each block of rows goes to
/// `sink` once parsed and checked, in file order. `Ok(None)` when the sink
/// stopped the read (the rest of the file is then neither read nor
/// checked).
///
/// # Errors
///
/// As [`read_svmlight`], for the part of the file read.
pub fn stream_svmlight(
    path: impl AsRef<Path>,
    opts: &SvmlightOptions,
    sink: impl FnMut(&RowBlock<'_>) -> ControlFlow<()> + Send,
) -> Result<Option<StreamSummary>, DataError> {
    let block = BLOCK_BYTES_PER_THREAD * rayon::current_num_threads().max(1);
    stream_blocks(path.as_ref(), opts, block, CHUNK_BYTES, sink)
}

/// [`stream_svmlight`] with blocks of about `block` bytes cut into chunks
/// of about `chunk` bytes (tests: every cut gives the same result).
pub(crate) fn stream_blocks(
    path: &Path,
    opts: &SvmlightOptions,
    block: usize,
    chunk: usize,
    sink: impl FnMut(&RowBlock<'_>) -> ControlFlow<()> + Send,
) -> Result<Option<StreamSummary>, DataError> {
    let Some(join) = read_blocks_with(path, opts, block, chunk, false, false, sink)? else {
        return Ok(None);
    };
    if join.labels.is_empty() {
        return Err(DataError::file(&path.display().to_string(), ErrorKind::Empty, "no data rows".to_owned()));
    }
    Ok(Some(StreamSummary {
        rows: join.labels.len(),
        d: opts.num_features.unwrap_or(join.max_index),
        queries: join.first_with.map(|_| join.qid_names.len()),
    }))
}

/// The block loop of [`read_blocks`] and [`stream_svmlight`]: entries kept
/// in the joiner when `keep`; `sink` sees every block once joined.
#[allow(clippy::too_many_arguments)]
fn read_blocks_with<'o>(
    path: &Path,
    opts: &'o SvmlightOptions,
    block: usize,
    chunk: usize,
    keep: bool,
    sequential: bool,
    mut sink: impl FnMut(&RowBlock<'_>) -> ControlFlow<()> + Send,
) -> Result<Option<Joiner<'o>>, DataError> {
    let name = path.display().to_string();
    let mut source = Blocks::open(path, block, chunk, sequential)?;
    let mut join = Joiner::new(opts, keep);
    // Two sets of parts: block k is read and parsed into one while block
    // k − 1 is joined and given to the sink from the other.
    let mut sets: [Vec<Part>; 2] = [Vec::new(), Vec::new()];
    // The block parsed last and not yet joined: its set and number of
    // parts. The join (qid numbering, line offsets, the copy of the entries
    // when they are kept) runs beside the next block's parse, not between
    // the two.
    let mut pending: Option<(usize, usize)> = None;
    let mut k = 0usize;
    // The first parse error (or qid clash); the rest of the file is then
    // only checked to be UTF-8.
    let mut failed: Option<DataError> = None;
    let mut stopped = false;
    let mut lines_before = 0usize;
    let newlines = |b: &[u8]| b.iter().filter(|&&c| c == b'\n').count();
    while !stopped {
        let [first, second] = &mut sets;
        let (mine, theirs) = if k == 0 { (first, &*second) } else { (second, &*first) };
        let joined = &mut join;
        let sink = &mut sink;
        let name = &name;
        let skip = failed.is_some();
        let (got, took) = rayon::join(
            // The parse checks the text is UTF-8 as it goes (see
            // `parse_part_into`), so no separate pass.
            || {
                source.next(mine, |c, p| {
                    if !skip {
                        parse_part_into(c, opts, p)
                    }
                })
            },
            || pending.map(|(_, n)| join_and_sink(joined, &theirs[..n], name, sink)),
        );
        pending = None;
        match took {
            Some(Ok((lines, stop))) => {
                lines_before += lines;
                stopped |= stop;
            }
            Some(Err((e, lines))) => {
                failed = Some(e);
                lines_before += lines;
            }
            None => {}
        }
        let Some(chunks) = got? else { break };
        let n = chunks.len();
        if skip {
            utf8_chunks(&chunks, name, lines_before)?;
            lines_before += chunks.iter().map(|c| newlines(c)).sum::<usize>();
        } else if let Some((i, bad)) = mine[..n].iter().enumerate().find_map(|(i, p)| Some((i, p.bad_utf8?))) {
            // The first encoding error in the block is the first in the
            // file: every byte before it was checked.
            let before: usize = chunks[..i].iter().map(|c| newlines(c)).sum();
            let line = lines_before + before + bad;
            return Err(DataError::at(name, line, ErrorKind::Encoding, NOT_UTF8.to_owned()));
        } else if failed.is_some() {
            // The block before failed to join beside this one's parse: this
            // block only counts as checked text, as the rest of the file.
            lines_before += chunks.iter().map(|c| newlines(c)).sum::<usize>();
        } else {
            pending = Some((k, n));
        }
        k ^= 1;
    }
    if let Some((set, n)) = pending.filter(|_| failed.is_none() && !stopped) {
        match join_and_sink(&mut join, &sets[set][..n], &name, &mut sink) {
            Ok((_, stop)) => stopped = stop,
            Err((e, _)) => failed = Some(e),
        }
    }
    match failed {
        Some(e) => Err(e),
        None if stopped => Ok(None),
        None => Ok(Some(join)),
    }
}

/// Joins one parsed block and gives it to the sink: the lines it held and
/// whether the sink stopped, or the join's error and the block's lines
/// (its text may be gone by then: the parts count them).
fn join_and_sink(
    join: &mut Joiner<'_>,
    parts: &[Part],
    name: &str,
    sink: &mut impl FnMut(&RowBlock<'_>) -> ControlFlow<()>,
) -> Result<(usize, bool), (DataError, usize)> {
    let rows_before = join.labels.len();
    match join.append(parts, name) {
        Ok(()) => {
            let lines = parts.iter().map(|p| p.lines).sum();
            let stop =
                sink(&RowBlock { parts, groups: join.groups_from(rows_before), keys: &join.qid_keys }).is_break();
            Ok((lines, stop))
        }
        Err(e) => Err((e, parts.iter().map(|p| p.newlines).sum())),
    }
}

/// Where the blocks of [`read_blocks_with`] come from.
enum Blocks<'p> {
    /// A regular file: `per_block` chunks at a time, each read at its
    /// offset by the task that parses it, so the copies out of the page
    /// cache are spread over the threads and each chunk is parsed while it
    /// is in cache.
    At { chunks: ChunksAt<'p>, per_block: usize, next: usize, bufs: Vec<Vec<u8>> },
    /// Anything else (a pipe): blocks read in sequence, the next while this
    /// one is parsed, cut into chunks.
    Seq { blocks: LineBlocks<'p>, chunk: usize, cur: Vec<u8>, next: Vec<u8> },
}

impl<'p> Blocks<'p> {
    /// Blocks of about `block` bytes in chunks of about `chunk` bytes (read
    /// in sequence when `sequential`, whatever the file).
    fn open(path: &'p Path, block: usize, chunk: usize, sequential: bool) -> Result<Self, DataError> {
        Ok(match ChunksAt::open(path, chunk)? {
            Ok(chunks) if !sequential => {
                Blocks::At { chunks, per_block: (block / chunk.max(1)).max(1), next: 0, bufs: Vec::new() }
            }
            at => {
                let file = match at {
                    Ok(chunks) => chunks.into_file(),
                    Err(file) => file,
                };
                // The first blocks short (one chunk, then doubling), so
                // that the threads start parsing soon.
                let mut blocks = LineBlocks::ramp(path, file, chunk.min(block), block);
                let mut cur = Vec::new();
                blocks.next_into(&mut cur)?;
                Blocks::Seq { blocks, chunk, cur, next: Vec::new() }
            }
        })
    }

    /// The next block's chunks (`None` at the end of the file), each given
    /// to `each` with its part of `parts` on its own task.
    fn next(
        &mut self,
        parts: &mut Vec<Part>,
        each: impl Fn(&[u8], &mut Part) + Sync,
    ) -> Result<Option<Vec<&[u8]>>, DataError> {
        let each = &each;
        match self {
            Blocks::At { chunks, per_block, next, bufs } => {
                let first = *next;
                let n = (*per_block).min(chunks.count().saturating_sub(first));
                if n == 0 {
                    return Ok(None);
                }
                *next += n;
                if parts.len() < n {
                    parts.resize_with(n, Part::default);
                }
                bufs.resize_with(bufs.len().max(n), Vec::new);
                let chunks = &*chunks;
                let spans: Vec<Result<Range<usize>, DataError>> = parts[..n]
                    .par_iter_mut()
                    .zip(&mut bufs[..n])
                    .enumerate()
                    .map(|(i, (p, buf))| {
                        let span = chunks.read(first + i, buf)?;
                        each(&buf[span.clone()], p);
                        Ok(span)
                    })
                    .collect();
                let mut out = Vec::with_capacity(n);
                for (buf, span) in bufs.iter().zip(spans) {
                    out.push(&buf[span?]);
                }
                Ok(Some(out))
            }
            Blocks::Seq { blocks, chunk, cur, next } => {
                if cur.is_empty() {
                    return Ok(None);
                }
                let (read, ()) = rayon::join(
                    || blocks.next_into(next),
                    || {
                        let chunks = split_lines(cur, *chunk);
                        if parts.len() < chunks.len() {
                            parts.resize_with(chunks.len(), Part::default);
                        }
                        parts.par_iter_mut().zip(&chunks).for_each(|(p, c)| each(c, p));
                    },
                );
                read?;
                std::mem::swap(cur, next);
                Ok(Some(split_lines(next, *chunk)))
            }
        }
    }
}

/// Parses SVMlight text; `name` is the file name printed in errors.
///
/// # Errors
///
/// As [`read_svmlight`].
pub fn parse_svmlight_str(text: &str, name: &str, opts: &SvmlightOptions) -> Result<Dataset, DataError> {
    parse_chunks(&split_str(strip_bom(text), CHUNK_BYTES), name, opts)
}

/// [`parse_svmlight_str`] with chunks of about `chunk_bytes` (tests: every
/// cut gives the one-chunk result).
#[cfg(test)]
fn parse_chunked(text: &str, opts: &SvmlightOptions, chunk_bytes: usize) -> Result<Dataset, DataError> {
    parse_chunks(&split_str(strip_bom(text), chunk_bytes), "t.light", opts)
}

/// One chunk's rows, with chunk-local 1-based line numbers, up to its first
/// error. Query-id consistency is a property of the whole file: the chunk
/// records the first line with and without a qid, and the join checks it.
#[derive(Default)]
struct Part {
    /// Lines read (all of the chunk's lines unless it stopped at `error`).
    lines: usize,
    /// The chunk's `\n` bytes, whether or not it stopped at `error`.
    newlines: usize,
    row_ptr: Vec<usize>,
    col: Vec<u32>,
    val: Vec<f64>,
    labels: Vec<f64>,
    row_lines: Vec<usize>,
    /// The qid of every row that has one, in row order.
    qids: Vec<u64>,
    first_with_qid: Option<usize>,
    first_without_qid: Option<usize>,
    max_index: usize,
    error: Option<(usize, ErrorKind, String)>,
    /// The chunk-local line of the chunk's first byte that is not UTF-8
    /// (then also `error`).
    bad_utf8: Option<usize>,
    /// [`shaped_run`]'s batch, and the rows left before runs are tried
    /// again after a short one.
    batch: Box<Batch>,
    rows_without_runs: u32,
}

/// Parses the chunks in parallel and joins them in order.
fn parse_chunks(chunks: &[&str], name: &str, opts: &SvmlightOptions) -> Result<Dataset, DataError> {
    let mut parts: Vec<Part> = chunks.iter().map(|_| Part::default()).collect();
    parts.par_iter_mut().zip(chunks).for_each(|(p, t)| parse_part_into(t.as_bytes(), opts, p));
    let mut join = Joiner::new(opts, true);
    join.append(&parts, name)?;
    join.finish(name)
}

/// Parses one chunk into `p`, which is cleared first (its buffers are
/// reused from block to block), and checks that it is UTF-8 text: the fast
/// path accepts ASCII bytes only (comments checked as it skips them), a line
/// it refuses is checked whole, and the rest of the chunk after a line in
/// error too, so `bad_utf8` names the chunk's first invalid byte (if any)
/// whether or not a parse error comes before it.
fn parse_part_into(b: &[u8], opts: &SvmlightOptions, p: &mut Part) {
    p.lines = 0;
    p.newlines = 0;
    p.row_ptr.clear();
    p.row_ptr.push(0);
    p.col.clear();
    p.val.clear();
    p.labels.clear();
    p.row_lines.clear();
    p.qids.clear();
    p.first_with_qid = None;
    p.first_without_qid = None;
    p.max_index = 0;
    p.error = None;
    p.bad_utf8 = None;
    p.rows_without_runs = 0;
    // Rows of LETOR files hold tens to hundreds of entries: reserve by the
    // chunk's size (an entry takes at least 4 bytes, `1:0 `).
    p.col.reserve(b.len() / 8);
    p.val.reserve(b.len() / 8);
    // The lines of `str::lines`: cut after each `\n`, no empty line after
    // a final `\n` (a `\r` before it is whitespace to both parsers).
    let (mut at, mut line_no) = (0usize, 0usize);
    while at < b.len() {
        line_no += 1;
        p.lines = line_no;
        let (cols, qids) = (p.col.len(), p.qids.len());
        if let Some(next) = parse_line_fast(b, at, line_no, opts, p) {
            at = next;
            continue;
        }
        // Anything unusual (an error, most likely): the line again through
        // the general parser, which words the error.
        p.col.truncate(cols);
        p.val.truncate(cols);
        p.qids.truncate(qids);
        let end = b[at..].iter().position(|&c| c == b'\n').map_or(b.len(), |k| at + k);
        let res = match std::str::from_utf8(&b[at..end]) {
            Ok(raw) => parse_line(raw.strip_suffix('\r').unwrap_or(raw), line_no, opts, p),
            Err(_) => {
                p.bad_utf8 = Some(line_no);
                Err((ErrorKind::Encoding, NOT_UTF8.to_owned()))
            }
        };
        at = end + 1;
        if let Err((kind, msg)) = res {
            // Roll back the partial row: the join needs whole rows only.
            let keep = *p.row_ptr.last().unwrap_or(&0);
            p.col.truncate(keep);
            p.val.truncate(keep);
            p.error = Some((line_no, kind, msg));
            // The rest of the chunk is still checked: an encoding error
            // anywhere is reported before a parse error.
            let rest = b.get(at..).unwrap_or_default();
            if let (None, Err(e)) = (p.bad_utf8, std::str::from_utf8(rest)) {
                let lines = rest[..e.valid_up_to()].iter().filter(|&&c| c == b'\n').count();
                p.bad_utf8 = Some(line_no + 1 + lines);
            }
            p.newlines = b.iter().filter(|&&c| c == b'\n').count();
            return;
        }
    }
    // Every line read ends in `\n` but perhaps the last.
    p.newlines = line_no - usize::from(b.last().is_some_and(|&c| c != b'\n'));
}

/// Whitespace inside a line, as `split_ascii_whitespace` sees it (`\n`
/// ends the line).
#[inline]
fn is_blank(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\r' | b'\x0c')
}

/// Where a token ends: whitespace, the end of the line or a comment.
#[inline]
fn ends_token(c: u8) -> bool {
    is_blank(c) || c == b'\n' || c == b'#'
}

/// The index just past the `\n` that ends the line holding `b[at]` (or the
/// end of the text).
#[inline]
fn next_line(b: &[u8], at: usize) -> usize {
    b[at..].iter().position(|&c| c == b'\n').map_or(b.len(), |k| at + k + 1)
}

/// The index just past the comment that starts at `b[at]` (its line's
/// end), or `None` when the comment is not UTF-8 text (the general parser
/// then reports it).
#[inline]
fn comment_end(b: &[u8], at: usize) -> Option<usize> {
    let end = next_line(b, at);
    std::str::from_utf8(&b[at..end]).ok().map(|_| end)
}

/// The finite number token at `b[at]` and the index just past it: the plain
/// decimals of data files by [`fast_decimal_hinted`], any other token through
/// [`parse_finite`] (the same value, bit for bit). `None` for a malformed
/// or non-finite token (or one that is not UTF-8).
#[inline(always)]
fn number_at(b: &[u8], at: usize, what: &str) -> Option<(f64, usize)> {
    number_at_hinted(b, at, what, &mut 0)
}

/// [`number_at`] with the fraction-length hint of
/// [`fast_decimal_hinted`].
#[inline(always)]
fn number_at_hinted(b: &[u8], at: usize, what: &str, hint: &mut usize) -> Option<(f64, usize)> {
    if let Some((v, end)) = fast_decimal_hinted(b, at, hint) {
        if b.get(end).is_none_or(|&c| ends_token(c)) {
            return Some((v, end));
        }
    }
    let end = b[at..].iter().position(|&c| ends_token(c)).map_or(b.len(), |k| at + k);
    let v = parse_finite(std::str::from_utf8(&b[at..end]).ok()?, what).ok()?;
    Some((v, end))
}

/// The common case of [`parse_line`] in one pass over the bytes of the line
/// that starts at `b[start]`: a label, an optional `qid:` right after
/// it, and well-formed entries, each byte looked at once (index digits
/// accumulated as they are scanned, values by [`number_at`]). Returns the
/// start of the next line, or `None` (leaving partial entries for the
/// caller to drop) at anything else, which [`parse_line`] then parses or
/// words as an error; when it returns `Some`, `p` holds what [`parse_line`]
/// would have added.
#[inline]
fn parse_line_fast(b: &[u8], start: usize, line_no: usize, opts: &SvmlightOptions, p: &mut Part) -> Option<usize> {
    let skip = |mut at: usize| {
        while at < b.len() && is_blank(b[at]) {
            at += 1;
        }
        at
    };
    let at = skip(start);
    match b.get(at) {
        None => return Some(b.len()),
        Some(b'\n') => return Some(at + 1),
        Some(b'#') => return comment_end(b, at), // blank or comment line
        Some(_) => {}
    }
    let (label, mut at) =
        if opts.optional_label && first_token_has_colon(b, at) { (0.0, at) } else { number_at(b, at, "label")? };
    let mut prev = 0u64;
    let mut has_qid = false;
    let mut first = true;
    let next = loop {
        at = skip(at);
        let Some(&c) = b.get(at) else {
            break b.len();
        };
        match c {
            b'\n' => break at + 1,
            b'#' => break comment_end(b, at)?,
            b'q' if first && b[at..].starts_with(b"qid:") => {
                // `u64::from_str`: an optional `+`, then digits; 1 to 19
                // digits always fit in u64, more go through `parse`.
                at += 4;
                let id_start = at;
                at += usize::from(b.get(at) == Some(&b'+'));
                let (mut q, digits) = (0u64, at);
                digit_run(b, &mut at, &mut q);
                if at == digits || !b.get(at).is_none_or(|&c| ends_token(c)) {
                    return None;
                }
                if at - digits > 19 {
                    q = std::str::from_utf8(&b[id_start..at]).ok()?.parse().ok()?;
                }
                p.qids.push(q);
                has_qid = true;
            }
            _ => {
                // `<index>:<value>` entries one after another (the common
                // case of one space between two stays in this loop); index
                // 0, a repeated or decreasing index and the bounds go to the
                // general parser, which words the error.
                let limit = opts.num_features.map_or(u64::from(u32::MAX), |d| (d as u64).min(u64::from(u32::MAX)));
                // The fractions' width, as `fast_decimal_hinted` learns it.
                let mut hint = 0usize;
                // The last value's layout: a run of consecutive entries of
                // that layout is read by `shaped_run`.
                let mut shape = Shape::default();
                // After a short run, the next rows of the chunk stay in this
                // loop for a while, without learning layouts (the rows of a
                // sparse file, or of one whose values change layout from
                // feature to feature, are alike).
                let mut runs = p.rows_without_runs == 0;
                p.rows_without_runs = p.rows_without_runs.saturating_sub(1);
                loop {
                    // The run's first index is checked here, so that rows
                    // with gaps do not pay for the call.
                    if runs && shape.is_set() && next_index_at(b, at, prev + 1).is_some() {
                        let (next, last, ended) = shaped_run(b, at, prev, limit, shape, p);
                        runs = last - prev >= MIN_RUN;
                        if !runs {
                            p.rows_without_runs = ROWS_WITHOUT_RUNS;
                        }
                        (at, prev) = (next, last);
                        if ended {
                            break;
                        }
                    }
                    let (index, v, end) = match next_index_at(b, at, prev + 1) {
                        Some(value_at) => {
                            let (v, end) = number_at_hinted(b, value_at, "feature value", &mut hint)?;
                            if runs {
                                shape = Shape::of(b, value_at, end);
                            }
                            (prev + 1, v, end)
                        }
                        None => entry_bytes(b, at)?,
                    };
                    if index <= prev || index > limit {
                        return None; // also index 0 (prev starts at 0)
                    }
                    at = end;
                    p.col.push((index - 1) as u32);
                    p.val.push(v);
                    prev = index;
                    match b.get(at..at + 2) {
                        Some(&[b' ', c]) if c.is_ascii_digit() => at += 1,
                        _ => break,
                    }
                }
            }
        }
        first = false;
    };
    if has_qid {
        p.first_with_qid.get_or_insert(line_no);
    } else {
        p.first_without_qid.get_or_insert(line_no);
    }
    p.max_index = p.max_index.max(prev as usize);
    p.labels.push(label);
    p.row_ptr.push(p.col.len());
    p.row_lines.push(line_no);
    Some(next)
}

/// The common run of a data file's row from the entry at `b[at]`: entries
/// `k:v`, `k` the next index written plainly (at most `limit`) and `v` of
/// the layout `shape` ([`shaped`]), one space apart, each pushed to `col`
/// and `val` as [`parse_line_fast`]'s loop would. Returns the position,
/// the last index and whether the row's entries ended: `false` at the
/// first entry of another form, whose start is returned for the caller to
/// read; `true` after an entry not followed by a space and a digit, the
/// position then past that entry. Out of line, with few live values, so
/// that its state stays in registers.
#[inline(never)]
fn shaped_run(b: &[u8], mut at: usize, mut prev: u64, limit: u64, shape: Shape, p: &mut Part) -> (usize, u64, bool) {
    // Entries gather in the part's batch and join its vectors a batch at a
    // time: no vector length to load and store, and no growth call that
    // would send the value through memory, per entry.
    let Part { col, val, batch, .. } = p;
    let Batch { col: cb, val: vb } = &mut **batch;
    let mut n = 0usize;
    let (at, prev, ended) = loop {
        let k = prev + 1;
        if k > limit {
            break (at, prev, false);
        }
        let Some(value_at) = next_index_at(b, at, k) else {
            break (at, prev, false);
        };
        let Some((v, end)) = shaped(b, value_at, shape, ends_token) else {
            break (at, prev, false);
        };
        if n == BATCH {
            col.extend_from_slice(cb);
            val.extend_from_slice(vb);
            n = 0;
        }
        // `k ≤ limit ≤ u32::MAX`.
        (cb[n], vb[n]) = ((k - 1) as u32, v);
        n += 1;
        prev = k;
        match b.get(end..end + 2) {
            Some(&[b' ', c]) if c.is_ascii_digit() => at = end + 1,
            _ => break (end, prev, true),
        }
    };
    col.extend_from_slice(&cb[..n]);
    val.extend_from_slice(&vb[..n]);
    (at, prev, ended)
}

/// Entries of [`shaped_run`] on their way to a part's vectors.
const BATCH: usize = 64;

/// The shortest run after which a row's next run is read by [`shaped_run`].
const MIN_RUN: u64 = 8;

/// The rows of a chunk that do not try [`shaped_run`] after a short run.
const ROWS_WITHOUT_RUNS: u32 = 64;

/// [`shaped_run`]'s batch, one per part (set up once, not per row).
struct Batch {
    col: [u32; BATCH],
    val: [f64; BATCH],
}

impl Default for Batch {
    fn default() -> Self {
        Batch { col: [0; BATCH], val: [0.0; BATCH] }
    }
}

/// `"<k>:"` for `k < 1000` as little-endian bytes, and its length.
const INDEX_PATTERNS: [(u64, u8); 1000] = {
    let mut t = [(0u64, 0u8); 1000];
    let mut k = 1;
    while k < 1000 {
        let (mut digits, mut n, mut rest) = ([0u8; 3], 0, k);
        while rest > 0 {
            digits[n] = b'0' + (rest % 10) as u8;
            rest /= 10;
            n += 1;
        }
        let (mut pat, mut i) = (0u64, 0);
        while i < n {
            pat |= (digits[n - 1 - i] as u64) << (8 * i);
            i += 1;
        }
        pat |= (b':' as u64) << (8 * n);
        t[k] = (pat, n as u8 + 1);
        k += 1;
    }
    t
};

/// Where the value starts when the entry at `b[at]` has index `k` written
/// plainly (`k:`, no sign, no leading zero): the next index of a row whose
/// indices run 1, 2, 3, … is checked with one comparison of a word. `None`
/// otherwise (the entry is then read by [`entry_bytes`]).
#[inline(always)]
fn next_index_at(b: &[u8], at: usize, k: u64) -> Option<usize> {
    let &(pat, len) = INDEX_PATTERNS.get(usize::try_from(k).ok()?)?;
    if len == 0 {
        return None;
    }
    let word = b.get(at..at + 8)?;
    let mut bytes = [0u8; 8];
    bytes.copy_from_slice(word);
    let mask = u64::MAX >> (64 - 8 * u32::from(len));
    (u64::from_le_bytes(bytes) & mask == pat).then_some(at + usize::from(len))
}

/// The entry `<index>:<value>` at `b[at]` byte by byte: the index as
/// `parse_index` reads it (an optional `+`, digits; more than 10 digits,
/// beyond u32::MAX unless they are leading zeros, through `parse_index`),
/// the value by [`number_at`]. The index, the value and the end of the
/// token; `None` for anything else.
#[inline(always)]
fn entry_bytes(b: &[u8], mut at: usize) -> Option<(u64, f64, usize)> {
    let key_start = at;
    at += usize::from(b.get(at) == Some(&b'+'));
    let (mut index, digits) = (0u64, at);
    digit_run(b, &mut at, &mut index);
    if at == digits || b.get(at) != Some(&b':') {
        return None;
    }
    if at - digits > 10 {
        index = parse_index(std::str::from_utf8(&b[key_start..at]).ok()?)? as u64;
    }
    let (v, end) = number_at(b, at + 1, "feature value")?;
    Some((index, v, end))
}

/// Whether the token at `b[at]` holds a `:` (an entry or `qid:`, not a
/// label).
#[inline]
fn first_token_has_colon(b: &[u8], at: usize) -> bool {
    b[at..].iter().take_while(|&&c| !ends_token(c)).any(|&c| c == b':')
}

/// Parses one line into `p` (a data row, or nothing for a blank or comment
/// line).
fn parse_line(raw: &str, line_no: usize, opts: &SvmlightOptions, p: &mut Part) -> Result<(), (ErrorKind, String)> {
    let line = match raw.find('#') {
        Some(at) => &raw[..at],
        None => raw,
    };
    let mut tokens = line.split_ascii_whitespace().peekable();
    let Some(&label_tok) = tokens.peek() else {
        return Ok(());
    };
    let label = if label_tok.contains(':') {
        if !opts.optional_label {
            return Err((
                ErrorKind::Malformed,
                format!(
                    "no label: the line starts with {}; labelled rows are `label [qid:q] i:v …`, e.g. `2 qid:1 1:0.5` \
                     (score reads rows without labels)",
                    quote(label_tok)
                ),
            ));
        }
        0.0
    } else {
        tokens.next();
        parse_finite(label_tok, "label")?
    };
    let qids_before = p.qids.len();

    let mut prev = 0usize; // last 1-based index on this line; 0 = none yet
    let mut has_qid = false;
    for (t, tok) in tokens.enumerate() {
        let Some((key, value)) = tok.split_once(':') else {
            p.qids.truncate(qids_before);
            return Err((ErrorKind::Malformed, format!("expected <index>:<value> or qid:<id>, found {}", quote(tok))));
        };
        if key == "qid" {
            if t != 0 {
                p.qids.truncate(qids_before);
                return Err((ErrorKind::Malformed, format!("{} must come right after the label", quote(tok))));
            }
            let q: u64 = value.parse().map_err(|_| {
                (ErrorKind::Malformed, format!("malformed query id {} (an unsigned integer)", quote(tok)))
            })?;
            p.qids.push(q);
            has_qid = true;
            continue;
        }
        let res = parse_entry(tok, key, value, prev, opts);
        let (index, v) = match res {
            Ok(e) => e,
            Err(e) => {
                p.qids.truncate(qids_before);
                return Err(e);
            }
        };
        p.col.push((index - 1) as u32);
        p.val.push(v);
        prev = index;
    }
    if has_qid {
        p.first_with_qid.get_or_insert(line_no);
    } else {
        p.first_without_qid.get_or_insert(line_no);
    }
    p.max_index = p.max_index.max(prev);
    p.labels.push(label);
    p.row_ptr.push(p.col.len());
    p.row_lines.push(line_no);
    Ok(())
}

/// One `<index>:<value>` token after `prev` (the last index on the line).
#[inline]
fn parse_entry(
    tok: &str,
    key: &str,
    value: &str,
    prev: usize,
    opts: &SvmlightOptions,
) -> Result<(usize, f64), (ErrorKind, String)> {
    let index =
        parse_index(key).ok_or_else(|| (ErrorKind::Malformed, format!("malformed feature index in {}", quote(tok))))?;
    if index == 0 {
        return Err((ErrorKind::FeatureIndex, format!("feature index 0 in {}: indices are 1-based", quote(tok))));
    }
    if index <= prev {
        return Err((
            ErrorKind::FeatureIndex,
            format!("feature index {index} after index {prev}: indices must be strictly increasing within a line"),
        ));
    }
    if let Some(d) = opts.num_features {
        if index > d {
            return Err((
                ErrorKind::FeatureIndex,
                format!("feature index {index} is beyond the {d} features expected"),
            ));
        }
    }
    if index > u32::MAX as usize {
        return Err((ErrorKind::FeatureIndex, format!("feature index {index} is too large (at most {})", u32::MAX)));
    }
    let v = parse_finite(value, "feature value").map_err(|(kind, msg)| (kind, format!("{msg} in {}", quote(tok))))?;
    Ok((index, v))
}

/// `key.parse::<usize>()` (an optional `+`, then ASCII digits, no overflow)
/// without the generic machinery: the index of every entry goes through it.
#[inline]
fn parse_index(key: &str) -> Option<usize> {
    let digits = key.strip_prefix('+').unwrap_or(key).as_bytes();
    if digits.is_empty() {
        return None;
    }
    let mut n = 0usize;
    for &b in digits {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        n = n.checked_mul(10)?.checked_add(usize::from(d))?;
    }
    Some(n)
}

/// Joins the parts in file order, as they come: shifts their line numbers,
/// interns the query ids in order of first appearance, and reports the
/// first error in file order, whether a part's own or a qid inconsistency
/// across parts.
struct Joiner<'o> {
    opts: &'o SvmlightOptions,
    /// Keep the entries (`false`: a streamed read, the sink has them).
    keep: bool,
    row_ptr: Vec<usize>,
    col: Vec<u32>,
    val: Vec<f64>,
    labels: Vec<f64>,
    row_lines: Vec<usize>,
    qid_index: HashMap<u64, usize>,
    qid_names: Vec<String>,
    /// The query ids, by query number (`qid_names` as numbers).
    qid_keys: Vec<u64>,
    qid_of_row: Vec<usize>,
    last_qid: Option<(u64, usize)>,
    first_with: Option<usize>,
    first_without: Option<usize>,
    max_index: usize,
    /// Lines of the parts joined so far.
    offset: usize,
}

impl<'o> Joiner<'o> {
    fn new(opts: &'o SvmlightOptions, keep: bool) -> Self {
        Joiner {
            opts,
            keep,
            row_ptr: vec![0],
            col: Vec::new(),
            val: Vec::new(),
            labels: Vec::new(),
            row_lines: Vec::new(),
            qid_index: HashMap::new(),
            qid_names: Vec::new(),
            qid_keys: Vec::new(),
            qid_of_row: Vec::new(),
            last_qid: None,
            first_with: None,
            first_without: None,
            max_index: 0,
            offset: 0,
        }
    }

    /// Appends the parts that follow the ones joined so far.
    fn append(&mut self, parts: &[Part], name: &str) -> Result<(), DataError> {
        let at = |line: usize, kind: ErrorKind, msg: String| DataError::at(name, line, kind, msg);
        for p in parts {
            let with = p.first_with_qid.map(|l| l + self.offset);
            let without = p.first_without_qid.map(|l| l + self.offset);
            // The first line whose qid state differs from the file's so far.
            let clash = match (self.first_with.or(with), self.first_without.or(without)) {
                (Some(w), Some(wo)) if w < wo => Some((wo, false, w)),
                (Some(w), Some(wo)) => Some((w, true, wo)),
                _ => None,
            };
            if let Some((line, has, other)) = clash {
                let msg = if has {
                    format!(
                        "this line has a qid but line {other} has none: either every data line has a qid or none does"
                    )
                } else {
                    format!(
                        "this line has no qid but line {other} has one: either every data line has a qid or none does"
                    )
                };
                return Err(at(line, ErrorKind::Inconsistent, msg));
            }
            if let Some((line, kind, msg)) = &p.error {
                return Err(at(line + self.offset, *kind, msg.clone()));
            }
            self.first_with = self.first_with.or(with);
            self.first_without = self.first_without.or(without);
            for &q in &p.qids {
                let g = match self.last_qid {
                    Some((lq, lg)) if lq == q => lg,
                    _ => {
                        let next = self.qid_names.len();
                        let g = *self.qid_index.entry(q).or_insert(next);
                        if g == next {
                            self.qid_names.push(q.to_string());
                            self.qid_keys.push(q);
                        }
                        g
                    }
                };
                self.last_qid = Some((q, g));
                self.qid_of_row.push(g);
            }
            self.labels.extend_from_slice(&p.labels);
            let offset = self.offset;
            self.row_lines.extend(p.row_lines.iter().map(|&l| l + offset));
            self.max_index = self.max_index.max(p.max_index);
            self.offset += p.lines;
            if self.keep {
                // The entries, copied in parallel into the growing arrays
                // (their fresh pages faulted in by the threads that fill
                // them).
                let nnz = self.col.len();
                self.row_ptr.extend(p.row_ptr[1..].iter().map(|&e| e + nnz));
                self.col.par_extend(p.col.par_iter().copied());
                self.val.par_extend(p.val.par_iter().copied());
            }
        }
        Ok(())
    }

    /// The query of each row from row `rows_before` on, if the rows carry
    /// query ids.
    fn groups_from(&self, rows_before: usize) -> Option<&[usize]> {
        self.first_with.and_then(|_| self.qid_of_row.get(rows_before..))
    }

    /// The data set (an error if it has no rows).
    fn finish(self, name: &str) -> Result<Dataset, DataError> {
        if self.labels.is_empty() {
            return Err(DataError::file(name, ErrorKind::Empty, "no data rows".to_owned()));
        }
        let qids = self.first_with.map(|_| Qids { names: self.qid_names, of_row: self.qid_of_row });
        Ok(Dataset {
            d: self.opts.num_features.unwrap_or(self.max_index),
            row_ptr: self.row_ptr,
            col: self.col,
            val: self.val,
            labels: self.labels,
            qids,
            row_lines: self.row_lines,
            feature_names: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Dataset, DataError> {
        parse_svmlight_str(text, "t.light", &SvmlightOptions::default())
    }

    #[test]
    fn basic_rows_comments_and_blank_lines() {
        let ds = parse("# header\n\n1 qid:3 1:0.5 4:2 # tail\n\t0 qid:3 2:-1\r\n2 qid:1\n").unwrap();
        assert_eq!(ds.n_rows(), 3);
        assert_eq!(ds.n_features(), 4);
        assert_eq!(ds.labels(), &[1.0, 0.0, 2.0]);
        assert_eq!(ds.row(0), (&[0u32, 3][..], &[0.5, 2.0][..]));
        assert_eq!(ds.row(1), (&[1u32][..], &[-1.0][..]));
        assert_eq!(ds.row(2).0.len(), 0);
        assert_eq!(ds.query_ids().unwrap(), &["3".to_owned(), "1".to_owned()]);
        assert_eq!(ds.source_line(0), 3);
        assert_eq!(ds.source_line(2), 5);
    }

    #[test]
    fn qid_is_canonical_integer() {
        let ds = parse("1 qid:007 1:1\n0 qid:7 1:2\n").unwrap();
        assert_eq!(ds.query_groups().len(), 1);
        assert_eq!(ds.qid_of_row(1), Some("7"));
        assert!(parse("1 qid:abc 1:1\n").is_err());
    }

    #[test]
    fn num_features_sets_and_bounds_d() {
        let opts = SvmlightOptions { num_features: Some(10), ..Default::default() };
        let ds = parse_svmlight_str("1 3:1\n", "t", &opts).unwrap();
        assert_eq!(ds.n_features(), 10);
        let e = parse_svmlight_str("1 3:1\n0 11:1\n", "t", &opts).unwrap_err();
        assert_eq!((e.kind(), e.line()), (ErrorKind::FeatureIndex, Some(2)));
    }

    /// Every cut into chunks gives the one-chunk result: the data set, or the
    /// same error at the same line (qid clashes across chunks included).
    #[test]
    fn chunked_parse_equals_one_pass() {
        let texts = [
            "# c\n1 qid:3 1:0.5 4:2 # t\n\n0 qid:3 2:-1\r\n2 qid:1\n1 qid:9 3:1e-3 7:+.5\n0 qid:3 1:1\n",
            "1 1:1\n0 2:1\n\n1 3:1",
            "1 qid:1 1:1\n0 qid:1 2:1\n# x\n1 3:1\n",
            "1 1:1\n0 2:1\n\n1 qid:4 3:1\n",
            "1 qid:1 1:1\n0 qid:2 2:1\n1 qid:2 2:1 1:1\n",
            "1 qid:1 1:1\n0 qid:2 2:x\n1 3:1\n",
            "1 qid:1 1:1\n0 qid:2 2:1\n1 3:1\n1 qid:2 1:nan\n",
            "1 1:1\n0 1:inf\n",
            "\n\n# only comments\n",
            "1 qid:1 1:1\n1 qid:2 1:1 5:1\n1 qid:1 0:1\n",
        ];
        for text in texts {
            for opts in [SvmlightOptions::default(), SvmlightOptions { num_features: Some(4), ..Default::default() }] {
                let one = parse_chunked(text, &opts, usize::MAX);
                assert_eq!(one, parse_svmlight_str(text, "t.light", &opts));
                for chunk in 0..=text.len() {
                    assert_eq!(parse_chunked(text, &opts, chunk), one, "{text:?} cut at {chunk}");
                }
            }
        }
    }

    /// Reading the file in blocks gives the one-pass result for every block
    /// and chunk size: the data set, or the same error at the same line; an
    /// encoding error anywhere wins over a parse error before it.
    #[test]
    fn block_reads_equal_one_pass() {
        let dir = std::env::temp_dir().join(format!("ranklet-svmlight-blocks-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let texts: [&[u8]; 17] = [
            b"# c\n1 qid:3 1:0.5 4:2 # t\n\n0 qid:3 2:-1\r\n2 qid:1\n1 qid:9 3:1e-3 7:+.5\n0 qid:3 1:1\n",
            b"\xEF\xBB\xBF1 1:1\n0 2:1\n\n1 3:1",
            b"1 qid:1 1:1\n0 qid:1 2:1\n# x\n1 3:1\n",
            b"1 qid:1 1:1\n0 qid:2 2:x\n1 3:1\n",
            b"1 1:1\n0 1:inf\n1 1:\xff\n",
            b"1 1:1\n0 1:2\n\n1 1:\xff\n",
            b"\n\n# only comments\n",
            b"",
            // Non-ASCII: valid in comments, invalid in a comment, in a
            // comment line, in a token, before and after a parse error.
            "1 1:1 # \u{e9}t\u{e9}\n# \u{2603}\n0 1:2\n".as_bytes(),
            b"1 1:1 # \xff\n0 1:2\n",
            b"1 1:1\n# \xc3\n0 1:2\n",
            b"1 1:1\n0 1:2\xe9\n1 1:x\n",
            b"1 1:x\n0 1:2\n1 1:2 # \xff\n",
            b"1 1:x\n\xff\n",
            "1 qid:1 1:1\n0 1:\u{e9}\n".as_bytes(),
            // A qid clash (found when the block joins, beside the next
            // block's parse), then an encoding error or the end of the file.
            b"1 qid:1 1:1\n0 1:2\n1 1:1\n\n1 1:\xff\n",
            b"1 qid:1 1:1\n0 qid:1 1:2\n1 1:1\n\n1 qid:2 1:1",
        ];
        for (i, text) in texts.iter().enumerate() {
            let path = dir.join(format!("t{i}.light"));
            std::fs::write(&path, text).unwrap();
            let name = path.display().to_string();
            let one = match std::str::from_utf8(text) {
                Ok(t) => parse_svmlight_str(t, &name, &SvmlightOptions::default()),
                // The encoding error of the whole-file check.
                Err(_) => Err(utf8_chunks(&[&text[..]], &name, 0).unwrap_err()),
            };
            for block in 0..=text.len() + 1 {
                for chunk in [0, 2, 3, 5, usize::MAX] {
                    for sequential in [false, true] {
                        let got = read_blocks(&path, &SvmlightOptions::default(), block, chunk, sequential);
                        assert_eq!(got, one, "{text:?} block {block} chunk {chunk} sequential {sequential}");
                    }
                }
            }
            assert_eq!(read_svmlight(&path, &SvmlightOptions::default()), one);
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A pipe (`--data <(zcat f.gz)`) cannot be read at offsets: it is
    /// read in sequence, to the same data set as the file.
    #[cfg(unix)]
    #[test]
    fn a_pipe_is_read_in_sequence() {
        let dir = std::env::temp_dir().join(format!("ranklet-svmlight-fifo-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let text: String = (0..20_000).map(|i| format!("{} qid:{} 1:{i} 3:0.5\n", i % 3, i / 7)).collect();
        let want = parse_svmlight_str(&text, "f", &SvmlightOptions::default()).unwrap();
        let fifo = dir.join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
        assert!(made.success(), "mkfifo");
        let writer = {
            let (fifo, text) = (fifo.clone(), text.clone());
            std::thread::spawn(move || std::fs::write(fifo, text).unwrap())
        };
        let got = read_svmlight(&fifo, &SvmlightOptions::default()).unwrap();
        writer.join().unwrap();
        assert_eq!(got.n_rows(), 20_000);
        assert_eq!(got, want);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// The word check of the next index: `k:` exactly, nothing else.
    #[test]
    fn next_index_patterns() {
        for (k, &(pat, len)) in INDEX_PATTERNS.iter().enumerate().skip(1) {
            let want = format!("{k}:");
            assert_eq!(usize::from(len), want.len(), "{k}");
            assert_eq!(&pat.to_le_bytes()[..want.len()], want.as_bytes(), "{k}");
            let line = format!("{want}0.5 {}:1\n", k + 1);
            assert_eq!(next_index_at(line.as_bytes(), 0, k as u64), Some(want.len()), "{k}");
        }
        let at = |text: &str, k| next_index_at(text.as_bytes(), 0, k);
        for (text, k) in [
            ("12:0.5 13:1", 11),
            ("012:0.5 13:1", 12),
            ("+12:0.5 13:1", 12),
            ("12 0.5 13:1", 12),
            ("12:0.5 13:1", 1),
            ("1:0.5 2:1", 0),
            ("1000:0.5 1001:1", 1000),
            ("7:0.5", 7),
        ] {
            assert_eq!(at(text, k), None, "{text:?} {k}");
        }
        assert_eq!(at("12:0.5 13:1", 12), Some(3));
    }

    /// Where the fast path takes a line, it adds what the general parser
    /// adds; it hands every error to the general parser.
    #[test]
    fn fast_path_equals_general_parser() {
        let lines = [
            "1 qid:3 1:0.5 4:2 # tail",
            "\t0 qid:3 2:-1\r",
            "2 qid:1",
            "",
            "   ",
            "# c",
            "1 1:1e-3 7:+.5 9:.25",
            "1 1:1 1:2",
            "1 2:1 1:2",
            "1 0:1",
            "1 1:x",
            "1 1:nan",
            "1 1:inf",
            "x 1:1",
            "nan 1:1",
            "1 1:1 qid:2",
            "1 qid:2 qid:3",
            "1 qid:-1 1:1",
            "1 qid:x",
            "1 1",
            "1 :1",
            "1 a:1",
            "1 +3:1",
            "1 5:1",
            "1 4294967296:1",
            "1 1::1",
            "1 1:1:1",
            "1 1:1\x0b2:2",
            "é 1:1",
            "1 1:1é",
            "1 qid:1 1:1\x0c2:2",
            "-0 1:-0 2:1e308 3:4.9e-324",
            "0.582951 qid:1 1:0.741565 2:0.159910 3:0.278601",
            "1 qid:18446744073709551615 1:1",
            "1 qid:18446744073709551616 1:1",
            "1 qid:1234567890123456789 1:1",
            "1 qid:+5 1:1",
            "1 qid: 1:1",
            "1 qid:5:3 1:1",
            "1 qid:5#c",
            "1#c 1:1",
            "1 1:0.5#c",
            "1 1#:2",
            "1 4294967295:1",
            "1 04294967295:1",
            "1 12345678901:1",
            "1 1:12345678901234567890 2:0.00000000000000000001 3:9007199254740993",
            "1 1:1e23 2:1e-23 3:1e00001 4:+.5e-1",
            "1 1:1.5x",
            "1 1:",
            "1 1:.",
            "1 1:1e",
            "1 1:-",
            "+1 1:+1",
            "1 1:1\r",
            "1\t1:1\x0c 2:2 \r",
            "1 1:1.e5 2:5. 3:.5",
            "1 1:Infinity",
            "1 1:1e400",
            "1:7.4 2:0.7",
            "qid:3 1:2",
            "qid:3",
            " \tqid:3 2:1 # c",
            "1:1 qid:2",
            "1:x 2:1",
            "a:1 2:1",
            "0:1",
            "2:1 1:1",
            "qid:x 1:1",
            "1:1#c",
        ];
        let unlabelled = SvmlightOptions { optional_label: true, ..Default::default() };
        let bounded = SvmlightOptions { num_features: Some(4), optional_label: true };
        for opts in [
            SvmlightOptions::default(),
            SvmlightOptions { num_features: Some(4), ..Default::default() },
            unlabelled,
            bounded,
        ] {
            for line in lines {
                let mut fast = Part { row_ptr: vec![0], ..Part::default() };
                let mut general = Part { row_ptr: vec![0], ..Part::default() };
                let next = parse_line_fast(line.as_bytes(), 0, 1, &opts, &mut fast);
                let res = parse_line(line, 1, &opts, &mut general);
                if let Some(next) = next {
                    assert_eq!(next, line.len(), "{line:?}");
                    assert!(res.is_ok(), "{line:?}");
                    assert_eq!(
                        (&fast.row_ptr, &fast.col, &fast.labels, &fast.row_lines, &fast.qids, fast.max_index),
                        (
                            &general.row_ptr,
                            &general.col,
                            &general.labels,
                            &general.row_lines,
                            &general.qids,
                            general.max_index
                        ),
                        "{line:?}"
                    );
                    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                    assert_eq!(bits(&fast.val), bits(&general.val), "{line:?}");
                    assert_eq!(
                        (fast.first_with_qid, fast.first_without_qid),
                        (general.first_with_qid, general.first_without_qid)
                    );
                } else {
                    assert!(res.is_err(), "the fast path refused a good line {line:?}");
                }
            }
        }
    }

    /// Random lines from pieces of good and bad tokens: wherever the fast
    /// path takes a line it adds what the general parser adds (bits of the
    /// values included), and it never refuses a line the general parser
    /// takes.
    #[test]
    fn fast_path_equals_general_parser_on_random_lines() {
        let numbers = [
            "0",
            "-0",
            "1",
            "+1",
            "0.741565",
            "-3.25",
            ".5",
            "5.",
            "1e-3",
            "1E+22",
            "1e23",
            "9007199254740993",
            "12345678901234567890",
            "0.00000000000000000001",
            "inf",
            "nan",
            "x",
            "",
            "1.5x",
            "1e",
            "-",
            "12.5",
            "-0.5",
            "-7",
            "1234567.1234567",
            "12345678.5",
            "1.12345678",
            "-1234567",
            "+0.5",
            "5.",
            "-.5",
            "0.5.5",
            "1.5e3",
            "1e-3",
        ];
        let seps = [" ", "\t", "  ", " \r", "\x0c"];
        let mut rng = crate::rng::SplitMix64(99);
        let mut pick = |n: usize| (rng.next_u64() % n as u64) as usize;
        let mut taken = 0usize;
        for _ in 0..20_000 {
            let mut line = String::new();
            if pick(10) == 0 {
                line.push_str(seps[pick(seps.len())]);
            }
            // Without a label one line in five (an error unless the label is
            // optional).
            if pick(5) != 0 {
                line.push_str(numbers[pick(numbers.len())]);
            }
            match pick(6) {
                0 => {}
                1 => line.push_str(" qid:+7"),
                2 => line.push_str(" qid:18446744073709551615"),
                3 => line.push_str(" qid:x"),
                _ => line.push_str(&format!(" qid:{}", pick(5))),
            }
            let mut index = 0usize;
            for _ in 0..pick(6) {
                line.push_str(seps[pick(seps.len())]);
                index = match pick(12) {
                    0 => index,
                    1 => 0,
                    _ => index + 1 + pick(3),
                };
                let key = match pick(10) {
                    0 => format!("+{index}"),
                    1 => format!("000000000000{index}"),
                    _ => index.to_string(),
                };
                line.push_str(&format!("{key}:{}", numbers[pick(numbers.len())]));
                if pick(15) == 0 {
                    line.push_str("#c 1:x");
                }
            }
            if pick(8) == 0 {
                line.push_str(" # tail");
            }
            // As it is, followed by a comment, and followed by another
            // line.
            let padded = format!("{line}\t# a comment after the last entry");
            for (line, opts) in [line.clone(), padded, format!("{line}\n0 1:1")].iter().flat_map(|l| {
                [
                    SvmlightOptions::default(),
                    SvmlightOptions { num_features: Some(6), ..Default::default() },
                    SvmlightOptions { num_features: Some(6), optional_label: true },
                ]
                .map(|o| (l.clone(), o))
            }) {
                let mut fast = Part { row_ptr: vec![0], ..Part::default() };
                let mut general = Part { row_ptr: vec![0], ..Part::default() };
                let next = parse_line_fast(line.as_bytes(), 0, 1, &opts, &mut fast);
                // The first line, and where the next starts.
                let (line, want_next) = match line.split_once('\n') {
                    Some((first, _)) => (first.to_owned(), first.len() + 1),
                    None => (line.clone(), line.len()),
                };
                let res = parse_line(&line, 1, &opts, &mut general);
                match next {
                    Some(next) => {
                        taken += 1;
                        assert_eq!(next, want_next, "{line:?}");
                        assert!(res.is_ok(), "{line:?}");
                        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                        assert_eq!(
                            (&fast.row_ptr, &fast.col, bits(&fast.val), bits(&fast.labels), &fast.qids, fast.max_index),
                            (
                                &general.row_ptr,
                                &general.col,
                                bits(&general.val),
                                bits(&general.labels),
                                &general.qids,
                                general.max_index
                            ),
                            "{line:?}"
                        );
                        assert_eq!(
                            (fast.first_with_qid, fast.first_without_qid),
                            (general.first_with_qid, general.first_without_qid)
                        );
                    }
                    None => assert!(res.is_err(), "the fast path refused a good line {line:?}"),
                }
            }
        }
        assert!(taken > 2_000, "{taken}");
    }

    /// Rows as LETOR files hold them (long runs of consecutive indices whose
    /// values share one layout, read by `shaped_run`), with a run broken
    /// here and there: another layout, a sign, an exponent, a gap in the
    /// indices, a repeated index, two spaces or a tab, a comment, the
    /// feature limit, the end of the text inside a word. The fast path gives
    /// the general parser's rows bit for bit, or refuses the line.
    #[test]
    fn long_runs_of_one_layout_equal_the_general_parser() {
        let breaks = ["7", "-0.5", "12.25", "1e-3", "0.1234567", "x", "-", "1.5.5", "00.5", "123456.7"];
        let mut rng = crate::rng::SplitMix64(7);
        let mut pick = |n: u64| rng.next_u64() % n;
        let mut taken = 0usize;
        for _ in 0..3_000 {
            let digits = 1 + pick(3) as usize;
            let mut line = format!("{} qid:{}", pick(3), pick(9));
            let mut index = 0u64;
            for _ in 0..pick(60) {
                let sep = match pick(40) {
                    0 => "  ",
                    1 => "\t",
                    _ => " ",
                };
                index = match pick(40) {
                    0 => index + 2,
                    1 => index,
                    _ => index + 1,
                };
                let value = if pick(25) == 0 {
                    breaks[pick(breaks.len() as u64) as usize].to_owned()
                } else {
                    format!("{:.*}", digits + pick(2) as usize * 3, pick(1_000_000) as f64 / 1e5)
                };
                line.push_str(&format!("{sep}{index}:{value}"));
            }
            if pick(10) == 0 {
                line.push_str(" # c");
            }
            for text in [line.clone(), format!("{line}\n1 1:0.5"), line[..line.len().saturating_sub(3)].to_owned()] {
                for opts in
                    [SvmlightOptions::default(), SvmlightOptions { num_features: Some(30), ..Default::default() }]
                {
                    let mut fast = Part { row_ptr: vec![0], ..Part::default() };
                    let mut general = Part { row_ptr: vec![0], ..Part::default() };
                    let first = text.split('\n').next().unwrap_or_default();
                    let res = parse_line(first, 1, &opts, &mut general);
                    match parse_line_fast(text.as_bytes(), 0, 1, &opts, &mut fast) {
                        Some(next) => {
                            taken += 1;
                            assert!(res.is_ok(), "{text:?}");
                            assert_eq!(next, (first.len() + 1).min(text.len()), "{text:?}");
                            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                            assert_eq!(
                                (&fast.row_ptr, &fast.col, bits(&fast.val), fast.max_index),
                                (&general.row_ptr, &general.col, bits(&general.val), general.max_index),
                                "{text:?}"
                            );
                        }
                        None => assert!(res.is_err(), "the fast path refused a good line {text:?}"),
                    }
                }
            }
        }
        assert!(taken > 3_000, "{taken}");
    }

    /// With an optional label, `1:7.4 2:0.7` is an unlabelled row (label 0)
    /// and `0 qid:3 1:2` a labelled one; without it the unlabelled line is
    /// an error that says a label is needed and shows a labelled line.
    #[test]
    fn rows_without_labels_when_the_label_is_optional() {
        let text = "1:7.4 2:0.7\n0.5 4:1\n";
        let opts = SvmlightOptions { optional_label: true, ..Default::default() };
        let ds = parse_svmlight_str(text, "u", &opts).unwrap();
        assert_eq!((ds.n_rows(), ds.n_features(), ds.labels()), (2, 4, &[0.0, 0.5][..]));
        assert_eq!((ds.row(0).0, ds.row(0).1), (&[0u32, 1][..], &[7.4, 0.7][..]));
        let q = parse_svmlight_str("qid:3 1:2\n0 qid:3 1:2\n", "q", &opts).unwrap();
        assert_eq!((q.labels(), q.query_groups().len()), (&[0.0, 0.0][..], 1));
        let e = parse_svmlight_str(text, "u", &SvmlightOptions::default()).unwrap_err();
        assert_eq!((e.line(), e.kind()), (Some(1), ErrorKind::Malformed));
        assert!(e.message().contains("no label") && e.message().contains("e.g. `2 qid:1 1:0.5`"), "{e}");
    }

    #[test]
    fn parse_index_is_usize_from_str() {
        for k in ["0", "1", "+7", "007", "18446744073709551615", "18446744073709551616", "", "+", "-1", "1a", " 1", "١"]
        {
            assert_eq!(parse_index(k), k.parse::<usize>().ok(), "{k:?}");
        }
    }

    #[test]
    fn qid_must_follow_label() {
        let e = parse("1 1:1 qid:2\n").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Malformed);
        let e = parse("1 qid:1 qid:2 1:1\n").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Malformed);
    }
}
