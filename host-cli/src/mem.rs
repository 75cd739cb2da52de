//! Memory for the large buffers of a fit: their sizes computed with checked
//! arithmetic and refused before work starts when they exceed the memory
//! available ([`check`]), and allocation that reports a failure as an error
//! instead of aborting the process ([`try_zeros`]); pairs files read
//! against the limit as they stream in ([`read_pairs_checked`]).
//!
//! The limit ([`limit_bytes`]) is `MemAvailable + SwapFree` of
//! `/proc/meminfo`, or the value of `RANKLET_MEMORY_LIMIT` (bytes, with an
//! optional `K`, `M`, `G` or `T` suffix of powers of 1024, e.g. `512M`)
//! where set: a lower limit for a shared machine, or for tests that trigger
//! a refusal cheaply.

use std::path::Path;

use ranklet_core::LinalgError;

use crate::data::pairs::{read_pairs_capped, Pair};
use crate::error::CliError;

/// The variable that overrides the memory limit.
pub const LIMIT_ENV: &str = "RANKLET_MEMORY_LIMIT";

/// The bytes a run may allocate: [`LIMIT_ENV`] if set, else the available
/// memory and swap of `/proc/meminfo`, else unbounded.
///
/// # Errors
/// A malformed [`LIMIT_ENV`] (bad input).
pub fn limit_bytes() -> Result<u64, CliError> {
    if let Ok(v) = std::env::var(LIMIT_ENV) {
        return parse_size(&v).ok_or_else(|| {
            CliError::input(format!(
                "{LIMIT_ENV}={v:?}: expected a number of bytes with an optional K/M/G/T suffix, e.g. 512M"
            ))
        });
    }
    Ok(meminfo_available().unwrap_or(u64::MAX))
}

/// `123`, `64K`, `512M`, `2G`, `1T` (powers of 1024).
fn parse_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let (num, shift) = match s.char_indices().last()? {
        (i, 'k' | 'K') => (&s[..i], 10),
        (i, 'm' | 'M') => (&s[..i], 20),
        (i, 'g' | 'G') => (&s[..i], 30),
        (i, 't' | 'T') => (&s[..i], 40),
        _ => (s, 0),
    };
    num.trim().parse::<u64>().ok()?.checked_mul(1 << shift)
}

/// `MemAvailable + SwapFree` in bytes, where `/proc/meminfo` says.
fn meminfo_available() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let kib = |key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
    };
    Some(kib("MemAvailable:")?.saturating_add(kib("SwapFree:").unwrap_or(0)).saturating_mul(1024))
}

/// `n` with thousands separated by spaces (`32 000 000 000`).
pub fn grouped(n: u128) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(' ');
        }
        out.push(c);
    }
    out
}

/// Refuses a buffer of `elems` elements of `elem_bytes` bytes (`None`: the
/// count itself overflowed) that exceeds the memory limit: a resource error
/// (exit 1) naming `what`, the size in bytes, the limit and `way_out`.
///
/// # Errors
/// The refusal; a malformed [`LIMIT_ENV`].
pub fn check(what: &str, elems: Option<usize>, elem_bytes: usize, way_out: &str) -> Result<(), CliError> {
    check_len(what, elems, elem_bytes, way_out).map(drop)
}

/// [`check`], returning the element count it let through: the length to
/// allocate, where the count came as an `Option` from checked arithmetic.
///
/// # Errors
/// As [`check`].
pub fn check_len(what: &str, elems: Option<usize>, elem_bytes: usize, way_out: &str) -> Result<usize, CliError> {
    let limit = limit_bytes()?;
    let bytes = elems.and_then(|e| e.checked_mul(elem_bytes));
    match (elems, bytes) {
        (Some(e), Some(b)) if b as u64 <= limit => Ok(e),
        _ => Err(refusal(what, bytes, limit, way_out)),
    }
}

/// The refusal of [`check`] for a size (`None`: over 2^64) found beyond
/// `limit` (of [`limit_bytes`], read once by a caller that checks a
/// growing count against it): a resource error (exit 1) naming `what`,
/// the bytes, the limit and `way_out`.
pub fn refusal(what: &str, bytes: Option<usize>, limit: u64, way_out: &str) -> CliError {
    CliError::failure(format!(
        "{what} needs {} bytes, more than the {} bytes of memory available ({LIMIT_ENV} overrides); {way_out}",
        bytes.map_or_else(|| "over 2^64".to_string(), |b| grouped(b as u128)),
        grouped(limit as u128),
    ))
}

/// What each pair costs the command that reads it, for the memory check of
/// [`read_pairs_checked`].
#[derive(Clone, Copy, Debug)]
pub struct PairCost<'a> {
    /// Bytes per pair: an upper bound of what the command holds for each
    /// pair at its peak, the pair itself included (at least
    /// `size_of::<Pair>()`).
    pub bytes: usize,
    /// What those bytes hold, for the message ("the pairs and the index of
    /// their rows").
    pub holds: &'a str,
    /// The way out, for the message.
    pub way_out: &'a str,
}

/// Reads a pairs file (`data::pairs`' format and errors) over `n_rows`
/// rows, refusing it while it is read once its pairs so far times
/// `cost.bytes` exceed the memory limit ([`limit_bytes`], read once): the
/// vector of pairs never grows past the limit's number of pairs, and is
/// returned without spare capacity.
///
/// # Errors
///
/// The reader's errors (exit 2, or 1 for an I/O failure); the refusal
/// (exit 1, as [`check`]'s), naming the file, the line reached, the pairs
/// so far and their bytes, the limit and `cost.way_out`; a malformed
/// `RANKLET_MEMORY_LIMIT`.
pub fn read_pairs_checked(path: &Path, n_rows: usize, cost: &PairCost<'_>) -> Result<Vec<Pair>, CliError> {
    let name = path.display().to_string();
    let limit = limit_bytes()?;
    let per_pair = cost.bytes.max(1);
    let max_pairs = usize::try_from(limit / per_pair as u64).unwrap_or(usize::MAX);
    read_pairs_capped(path, n_rows, max_pairs, |line, count| {
        refusal(
            &format!(
                "{name}: holding the first {} pairs (read up to line {line}) at ~{per_pair} bytes each for {}",
                grouped(count as u128),
                cost.holds
            ),
            count.checked_mul(per_pair),
            limit,
            cost.way_out,
        )
    })
}

/// `len` zeros, or an error where the allocation fails (never an abort):
/// `WorkspaceTooSmall { needed: len, got: 0 }`, the workspace that could
/// not be had, which [`alloc_failure`] turns into the CLI's message.
pub fn try_zeros<T: Copy + Default>(len: usize) -> Result<Vec<T>, LinalgError> {
    let mut v = Vec::new();
    v.try_reserve_exact(len).map_err(|_| LinalgError::WorkspaceTooSmall { needed: len, got: 0 })?;
    v.resize(len, T::default());
    Ok(v)
}

/// `len` zeros, or the CLI's error where the allocation fails: the bytes
/// that could not be had and `way_out`, the caller's advice (a smaller
/// `--basis`, fewer items…). [`check`] has refused sizes beyond the
/// memory limit before; this catches what the system still cannot give.
pub fn zeros<T: Copy + Default>(len: usize, way_out: &str) -> Result<Vec<T>, CliError> {
    try_zeros(len).map_err(|_| {
        CliError::failure(format!(
            "could not allocate {} bytes of workspace; {way_out}",
            grouped(len as u128 * core::mem::size_of::<T>() as u128)
        ))
    })
}

/// The message of a failed [`try_zeros`] of `f64`s, if `e` is one.
pub fn alloc_failure(e: &LinalgError) -> Option<CliError> {
    match *e {
        LinalgError::WorkspaceTooSmall { needed, got: 0 } => Some(CliError::failure(format!(
            "could not allocate {} bytes of workspace; use --basis M (a reduced basis), --kernel linear, or fewer rows",
            grouped(needed as u128 * 8)
        ))),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_binary_suffixes() {
        assert_eq!(parse_size("123"), Some(123));
        assert_eq!(parse_size("64K"), Some(64 << 10));
        assert_eq!(parse_size(" 512m "), Some(512 << 20));
        assert_eq!(parse_size("2G"), Some(2 << 30));
        assert_eq!(parse_size("1T"), Some(1 << 40));
        assert_eq!(parse_size("x"), None);
        assert_eq!(parse_size("-1"), None);
        assert_eq!(parse_size("99999999999T"), None);
    }

    #[test]
    fn grouping_and_refusal() {
        assert_eq!(grouped(32_000_000_120), "32 000 000 120");
        assert_eq!(grouped(7), "7");
        assert!(check("a tiny buffer", Some(1), 8, "").is_ok());
        let e = check("the kernel matrix", None, 8, "use --basis M").unwrap_err();
        assert_eq!(e.code, 1);
        assert!(e.msg.contains("over 2^64") && e.msg.contains("--basis M"), "{}", e.msg);
        assert!(try_zeros::<f64>(usize::MAX / 8).is_err());
        assert_eq!(try_zeros::<f64>(3).unwrap(), vec![0.0; 3]);
    }
}
