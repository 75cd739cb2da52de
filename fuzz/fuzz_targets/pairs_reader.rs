//! `parse_pairs_str` on arbitrary text. The first two bytes give `n_rows`
//! (little-endian `u16`); the rest is the file (invalid UTF-8 replaced by
//! U+FFFD).
//!
//! Contract under test: no panic; every pair returned names two different
//! existing rows with a finite magnitude `>= 0`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ranklet::data::parse_pairs_str;

fuzz_target!(|data: &[u8]| {
    let (n_rows, rest) = match data {
        [a, b, rest @ ..] => (usize::from(u16::from_le_bytes([*a, *b])), rest),
        _ => (0, data),
    };
    let text = String::from_utf8_lossy(rest);
    for n in [n_rows, usize::MAX] {
        if let Ok(pairs) = parse_pairs_str(&text, "fuzz.pairs", n) {
            assert!(!pairs.is_empty());
            for p in &pairs {
                assert!(p.winner < n && p.loser < n && p.winner != p.loser, "{p:?} with n_rows = {n}");
                assert!(p.magnitude.is_finite() && p.magnitude >= 0.0, "{p:?}");
                assert!(p.magnitude.is_sign_positive(), "negative zero magnitude");
            }
        }
    }
});
