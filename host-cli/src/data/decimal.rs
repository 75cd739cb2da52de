//! The fast path of the float parser for plain decimals, the numbers data
//! files are made of (`0.741565`, `-3`, `1.5e-3`).
//!
//! A decimal `±m·10^e` with at most 19 digits, `m ≤ 2⁵³` and `|e| ≤ 22` is
//! computed as one multiplication or division of two exactly representable
//! `f64` (`m`, and `10^|e|` since `5²² < 2⁵³`). IEEE 754 rounds that one
//! operation correctly, so the result is the correctly rounded value of the
//! decimal: Clinger's fast path (W. D. Clinger, "How to read floating point
//! numbers accurately", PLDI 1990, §5; the first step of Eisel–Lemire in
//! `fast_float2` and of the standard library's `dec2flt`). Everything else
//! (longer mantissas, large exponents, `inf`/`nan`, malformed tokens) is
//! left to [`parse_finite`](super::parse_finite), so the values are those
//! of `str::parse::<f64>` bit for bit (tests below, by brute force).

/// `10^k` for `k = 0..=22`, each exactly representable.
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20,
    1e21, 1e22,
];

/// Largest mantissa the fast path takes: every integer up to `2⁵³` is an
/// exact `f64`.
const MAX_MANTISSA: u64 = 1 << 53;

/// Parses the plain decimal `[+-]digits[.digits][(e|E)[+-]digits]` that
/// starts at `b[at]` (at least one mantissa digit, at most 19; exponent
/// digits at most 4) and returns its value and the index just past it, when
/// Clinger's fast path gives it exactly (see the module docs). `None`
/// means "not decided here": the token may still be a valid float (the
/// caller then parses it in full), or malformed.
///
/// The caller checks that the number ends the token (`b[end]` is a
/// delimiter): `1.5x` stops at `x`.
#[cfg(test)]
pub(crate) fn fast_decimal(b: &[u8], at: usize) -> Option<(f64, usize)> {
    fast_decimal_hinted(b, at, &mut 0)
}

/// [`fast_decimal`] with `hint`, the length of the last fraction read by the
/// caller's loop (0 at first; see [`frac_run`]). The hint changes how fast,
/// never what: the value and the end are those of `fast_decimal`.
#[inline(always)]
pub(crate) fn fast_decimal_hinted(b: &[u8], mut at: usize, hint: &mut usize) -> Option<(f64, usize)> {
    let neg = sign(b, &mut at);
    let mut m = 0u64;
    let int_digits = digit_run(b, &mut at, &mut m);
    let mut frac_digits = 0;
    if b.get(at) == Some(&b'.') {
        at += 1;
        frac_digits = frac_run(b, &mut at, &mut m, hint);
    }
    let digits = int_digits + frac_digits;
    // 19 digits fit in u64 without wrapping (10¹⁹ − 1 < 2⁶⁴).
    if digits == 0 || digits > 19 || m > MAX_MANTISSA {
        return None;
    }
    let mut e = -(frac_digits as i64);
    if let Some(b'e' | b'E') = b.get(at) {
        at += 1;
        let eneg = sign(b, &mut at);
        let mut x = 0u64;
        // 1 to 4 exponent digits (no wrapping); more are left to the caller.
        if !(1..=4).contains(&digit_run(b, &mut at, &mut x)) {
            return None;
        }
        let x = x as i64;
        e += if eneg { -x } else { x };
    }
    let v = m as f64;
    let v = if e >= 0 { v * *POW10.get(e as usize)? } else { v / *POW10.get(e.unsigned_abs() as usize)? };
    Some((if neg { -v } else { v }, at))
}

/// Steps over an optional sign at `b[*at]`; `true` for `-`.
#[inline(always)]
fn sign(b: &[u8], at: &mut usize) -> bool {
    match b.get(*at) {
        Some(b'-') => {
            *at += 1;
            true
        }
        Some(b'+') => {
            *at += 1;
            false
        }
        _ => false,
    }
}

/// `10^k` for `k = 0..=8` as integers.
const POW10_U64: [u64; 9] = [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000];

/// [`digit_run`] for the run after a decimal point, eight bytes at a time
/// where eight bytes remain: the run's length from a mask of the non-digit
/// bytes, its value by three multiplications (the SWAR method of
/// `fast_float`'s `parse_eight_digits_unrolled`, D. Lemire, "Number parsing
/// at a gigabyte per second", Softw. Pract. Exp. 51(8), 2021, §5). Runs of
/// eight digits or more go on byte by byte.
///
/// When the run is as long as the last one (`hint`, the fractions of a
/// data file's row have one width), the position moves by `hint` on a
/// predicted branch, so the next token's loads need not wait for this
/// word's mask; any other length takes [`frac_run_other`], which updates
/// `hint`.
#[inline(always)]
fn frac_run(b: &[u8], at: &mut usize, acc: &mut u64, hint: &mut usize) -> usize {
    let Some(word) = b.get(*at..*at + 8) else {
        return digit_run(b, at, acc);
    };
    let (_, x, non_digit) = digit_word(word);
    let h = *hint;
    // The run as long as the last one: the position moves by `h`, known
    // before this word is loaded, so the next token can start at once.
    if h > 0 && h < 8 && (non_digit >> (8 * h)) & 0x80 != 0 && non_digit & (u64::MAX >> (64 - 8 * h)) == 0 {
        *acc = acc.wrapping_mul(POW10_U64[h]).wrapping_add(word_digits(x, h));
        *at += h;
        return h;
    }
    frac_run_other(b, at, acc, hint, x, non_digit)
}

/// [`frac_run`] for a run of another length than the last: reads it from
/// the word's mask and keeps its length as the next hint.
#[cold]
#[inline(never)]
fn frac_run_other(b: &[u8], at: &mut usize, acc: &mut u64, hint: &mut usize, x: u64, non_digit: u64) -> usize {
    let n = (non_digit.trailing_zeros() / 8) as usize;
    *hint = n;
    if n == 8 {
        return digit_run(b, at, acc);
    }
    if n > 0 {
        *acc = acc.wrapping_mul(POW10_U64[n]).wrapping_add(word_digits(x, n));
        *at += n;
    }
    n
}

/// The layout of a plain decimal token: `int` integer digits (1 to 7),
/// then, when `frac > 0`, a point and `frac` fraction digits, the whole at
/// most eight bytes (`0.741565`, `12.5`, `3`). The features of a data
/// file's rows mostly share one layout, so [`shaped`] checks the next value
/// against the last one's and reads it with one word's load.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Shape {
    int: u8,
    frac: u8,
}

impl Shape {
    /// Whether a layout was learnt ([`shaped`] declines otherwise).
    pub(crate) fn is_set(self) -> bool {
        self.int > 0
    }

    /// The layout of the token `b[at..end]` after an optional `-`; the
    /// default (no layout: [`shaped`] declines) for anything else.
    pub(crate) fn of(b: &[u8], at: usize, end: usize) -> Shape {
        let t = b.get(at..end).unwrap_or_default();
        let t = t.strip_prefix(b"-").unwrap_or(t);
        let digits = |s: &[u8]| !s.is_empty() && s.iter().all(u8::is_ascii_digit);
        match t.iter().position(|&c| c == b'.') {
            None if t.len() <= 7 && digits(t) => Shape { int: t.len() as u8, frac: 0 },
            Some(p) if t.len() <= 8 && digits(&t[..p]) && digits(&t[p + 1..]) => {
                Shape { int: p as u8, frac: (t.len() - p - 1) as u8 }
            }
            _ => Shape::default(),
        }
    }
}

/// The value at `b[at]` when it has the layout `shape` (after an optional
/// `-`) and the byte after it satisfies `ends` (a token's end, so no
/// exponent follows): the value and the index just past it, the bits of
/// [`fast_decimal_hinted`] (the same digits to the same integer `m`, the
/// same `m / 10^frac` correctly rounded, the same sign). `None` otherwise.
///
/// A `-` takes an out-of-line path: were the sign an offset added to the
/// position, every value's loads would wait for the load of its first byte.
#[inline(always)]
pub(crate) fn shaped(b: &[u8], at: usize, shape: Shape, ends: fn(u8) -> bool) -> Option<(f64, usize)> {
    if shape.int == 0 {
        return None;
    }
    if b.get(at) == Some(&b'-') {
        return shaped_negative(b, at + 1, shape, ends);
    }
    shaped_unsigned(b, at, shape, ends)
}

#[cold]
#[inline(never)]
fn shaped_negative(b: &[u8], at: usize, shape: Shape, ends: fn(u8) -> bool) -> Option<(f64, usize)> {
    shaped_unsigned(b, at, shape, ends).map(|(v, end)| (-v, end))
}

#[inline(always)]
fn shaped_unsigned(b: &[u8], v: usize, shape: Shape, ends: fn(u8) -> bool) -> Option<(f64, usize)> {
    let (i, f) = (usize::from(shape.int), usize::from(shape.frac));
    let n = if f == 0 { i } else { i + 1 + f };
    let word = b.get(v..v + 8)?;
    if !ends(*b.get(v + n)?) {
        return None;
    }
    let (w, x, non_digit) = digit_word(word);
    let first_n = u64::MAX >> (64 - 8 * n);
    if f == 0 {
        // `i` digits.
        if non_digit & first_n != 0 {
            return None;
        }
        return Some((word_digits(x, i) as f64, v + n));
    }
    // Digits but the point at byte `i`, which is a point.
    if non_digit & first_n != 0x80 << (8 * i) || (w >> (8 * i)) as u8 != b'.' {
        return None;
    }
    // The point taken out: the fraction's digits move down one byte.
    let int_bytes = u64::MAX >> (64 - 8 * i);
    let digits = (x & int_bytes) | ((x >> 8) & !int_bytes);
    Some((word_digits(digits, i + f) as f64 / POW10[f], v + n))
}

/// An eight-byte word of text (`word`, at least 8 bytes, in memory order):
/// the word, its bytes minus `'0'`, and the mask with the top bit of each
/// byte that is not an ASCII digit (SWAR: no carry crosses a byte, as each
/// masked byte plus `0x76` stays below `0x100`).
#[inline(always)]
fn digit_word(word: &[u8]) -> (u64, u64, u64) {
    let mut bytes = [0u8; 8];
    bytes.copy_from_slice(&word[..8]);
    let w = u64::from_le_bytes(bytes);
    let x = w ^ 0x3030_3030_3030_3030;
    let non_digit = ((x & 0x7f7f_7f7f_7f7f_7f7f).wrapping_add(0x7676_7676_7676_7676) | x) & 0x8080_8080_8080_8080;
    (w, x, non_digit)
}

/// The value of the first `n` digits (`1 ≤ n ≤ 7`) of the word `x` (bytes
/// in memory order, each minus `'0'`): the run moved to the top bytes (the
/// bytes below it become leading zero digits), then pairs, quads and the
/// eight digits combined by three multiplications (`fast_float`'s
/// `parse_eight_digits_unrolled`).
#[inline(always)]
fn word_digits(x: u64, n: usize) -> u64 {
    let v = x << (64 - 8 * n);
    let v = v.wrapping_mul(10).wrapping_add(v >> 8);
    ((v & 0x0000_00ff_0000_00ff)
        .wrapping_mul(0x000f_4240_0000_0064)
        .wrapping_add(((v >> 16) & 0x0000_00ff_0000_00ff).wrapping_mul(0x0000_2710_0000_0001)))
        >> 32
}

/// Steps over the run of decimal digits at `b[*at]`, appending them to
/// `acc` (wrapping: the caller bounds the count), and returns its length.
///
/// Byte by byte: integer parts and indices are short runs (one to three
/// digits), where an eight-bytes-at-a-time (SWAR) read measured 10–15 %
/// more CPU time on the LETOR benchmark file (the next load then waits on
/// the word's mask instead of a predicted branch); fractions, six digits
/// and more, take [`frac_run`].
#[inline(always)]
pub(crate) fn digit_run(b: &[u8], at: &mut usize, acc: &mut u64) -> usize {
    let start = *at;
    while let Some(&c) = b.get(*at) {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        *acc = acc.wrapping_mul(10).wrapping_add(u64::from(d));
        *at += 1;
    }
    *at - start
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Brute-force agreement with `str::parse::<f64>` on every token the
    /// fast path decides: the same bits, and the whole token consumed; and
    /// the same answer when the token is followed by the rest of a line.
    fn check(token: &str) -> bool {
        let b = token.as_bytes();
        let alone = fast_decimal(b, 0).map(|(v, e)| (v.to_bits(), e));
        // The token's own layout, and others it may be checked against.
        let own = Shape::of(b, 0, b.len());
        let shapes = [own, Shape { int: 1, frac: 6 }, Shape { int: 2, frac: 1 }, Shape { int: 1, frac: 0 }]
            .into_iter()
            .chain([Shape { int: 3, frac: 0 }, Shape { int: 7, frac: 0 }, Shape { int: 1, frac: 5 }]);
        for pad in [" ", "\n", " 12:0.345678 13:0.9\n", "#é comment 0123456789", ":7", "x"] {
            let line = format!("{token}{pad}");
            let padded = fast_decimal(line.as_bytes(), 0).map(|(v, e)| (v.to_bits(), e));
            assert_eq!(padded, alone, "{token:?} followed by {pad:?}");
            // A layout read is the fast path's value and end, bit for bit,
            // and only where the token ends there.
            let ends: fn(u8) -> bool = |c| matches!(c, b' ' | b'\t' | b'\r' | b'\x0c' | b'\n' | b'#');
            for shape in shapes.clone() {
                if let Some((v, end)) = shaped(line.as_bytes(), 0, shape, ends) {
                    assert_eq!(Some((v.to_bits(), end)), padded, "{token:?} {pad:?} as {shape:?}");
                    assert!(end == b.len() && ends(pad.as_bytes()[0]), "{token:?} {pad:?} as {shape:?}");
                }
            }
            // (It reads a whole word: eight bytes after the sign.)
            let word = line.len() >= 8 + usize::from(b.first() == Some(&b'-'));
            if own.is_set() && ends(pad.as_bytes()[0]) && word {
                assert!(shaped(line.as_bytes(), 0, own, ends).is_some(), "{token:?} {pad:?} as its own {own:?}");
            }
        }
        match fast_decimal(b, 0) {
            Some((v, end)) if end == b.len() => {
                let want = token.parse::<f64>();
                assert_eq!(want.map(f64::to_bits), Ok(v.to_bits()), "{token:?}");
                true
            }
            _ => false,
        }
    }

    #[test]
    fn edge_cases_agree_with_std() {
        let decided = [
            "0",
            "-0",
            "+0",
            "-0.0",
            "0.000000",
            "1",
            "-1",
            "5.",
            ".5",
            "+.5",
            "-.5e1",
            "1.e5",
            "1e5",
            "1E-05",
            "1e+22",
            "1e-22",
            "9007199254740992",
            "900719925474099.2",
            "0.9007199254740992",
            "9007199254740992e22",
            "9007199254740992e-22",
            "0.741565",
            "0.1",
            "0.2",
            "0.3",
            "123456.789e-3",
            "0000000000000000001",
            "1.5e0003",
        ];
        for t in decided {
            assert!(check(t), "{t:?} should take the fast path");
        }
        // Left to the full parser: 2⁵³ + 1, 20 digits, exponents beyond 22,
        // five exponent digits, no digits, specials, malformed.
        let left = [
            "9007199254740993",
            "12345678901234567890",
            "0.00000000000000000001",
            "1e23",
            "1e-23",
            "1e00001",
            "",
            "-",
            ".",
            ".e5",
            "e5",
            "1e",
            "1e+",
            "inf",
            "nan",
            "-inf",
        ];
        for t in left {
            assert!(!check(t), "{t:?} should be left to the full parser");
        }
        // Stops at the first byte that is not part of a number.
        assert_eq!(fast_decimal(b"1.5x", 0), Some((1.5, 3)));
        assert_eq!(fast_decimal(b"2:0.5 ", 2), Some((0.5, 5)));
    }

    /// Random decimals as data files write them (fixed and scientific, up
    /// to 20 digits, signs, exponents around the fast path's bounds), and
    /// random strings of number characters.
    #[test]
    fn random_tokens_agree_with_std() {
        let mut rng = crate::rng::SplitMix64(42);
        let mut decided = 0usize;
        let total = 200_000;
        for k in 0..total {
            let token = if k % 2 == 0 {
                let digits = 1 + (rng.next_u64() % 20) as usize;
                let mut s = String::new();
                match rng.next_u64() % 3 {
                    0 => s.push('-'),
                    1 if rng.next_u64() % 4 == 0 => s.push('+'),
                    _ => {}
                }
                let point = (rng.next_u64() % (digits as u64 + 2)) as usize;
                for i in 0..digits {
                    if i == point {
                        s.push('.');
                    }
                    s.push(char::from(b'0' + (rng.next_u64() % 10) as u8));
                }
                if rng.next_u64() % 3 == 0 {
                    s.push(if rng.next_u64() % 2 == 0 { 'e' } else { 'E' });
                    let e = rng.next_u64() % 60;
                    let sign = ["", "+", "-"][(rng.next_u64() % 3) as usize];
                    s.push_str(&format!("{sign}{e}"));
                }
                s
            } else {
                let alphabet = b"0123456789012345678901234567890123456789..eE+-";
                let len = 1 + (rng.next_u64() % 24) as usize;
                (0..len).map(|_| alphabet[(rng.next_u64() % alphabet.len() as u64) as usize] as char).collect()
            };
            decided += usize::from(check(&token));
        }
        // The generator does reach the fast path (and leaves some out).
        assert!(decided > total / 4 && decided < total, "{decided} of {total}");
    }

    /// The eight-byte fraction reader against the byte loop: every run of
    /// 0 to 9 fraction digits, with every hint, followed by every byte that is neither a
    /// digit nor an exponent mark and then enough bytes that a whole word is
    /// read, gives the value and
    /// end of the same token read alone (byte by byte) and of
    /// `str::parse`.
    #[test]
    fn fraction_words_agree_with_the_byte_loop() {
        let mut rng = crate::rng::SplitMix64(3);
        for k in 0..=9 {
            for _ in 0..20 {
                let digits: String = (0..k).map(|_| char::from(b'0' + (rng.next_u64() % 10) as u8)).collect();
                let token = format!("{}.{digits}", rng.next_u64() % 1000);
                let alone = fast_decimal(token.as_bytes(), 0).map(|(v, e)| (v.to_bits(), e));
                assert_eq!(alone.map(|(v, _)| v), Some(token.parse::<f64>().unwrap().to_bits()), "{token:?}");
                for c in (0u8..=255).filter(|c| !c.is_ascii_digit() && !matches!(c, b'e' | b'E')) {
                    for rest in [&b"0123456789"[..], b" 2:0.5 3:1", b"\xff\xfe\x80////////"] {
                        let mut line = token.clone().into_bytes();
                        line.push(c);
                        line.extend_from_slice(rest);
                        for hint in 0..=9 {
                            let got = fast_decimal_hinted(&line, 0, &mut { hint }).map(|(v, e)| (v.to_bits(), e));
                            assert_eq!(got, alone, "{token:?} then byte {c:#04x}, hint {hint}");
                        }
                    }
                }
            }
        }
    }

    /// Every value printed with 6 decimals, as the LETOR files hold them,
    /// over a grid of magnitudes: the common case must take the fast path.
    #[test]
    fn six_decimal_values_agree_with_std() {
        let mut rng = crate::rng::SplitMix64(7);
        for _ in 0..100_000 {
            let x = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64 * 10f64.powi((rng.next_u64() % 8) as i32);
            let t = format!("{:.6}", if rng.next_u64() % 2 == 0 { x } else { -x });
            assert!(check(&t), "{t:?}");
        }
    }
}
