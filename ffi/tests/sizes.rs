//! The size queries (`rk_*_size`) return 0 where the size does not fit,
//! never a wrapped number and never a panic: for every dimension up to
//! `usize::MAX` on this target, and with a 32-bit device's arithmetic.

use ranklet_core::format::{ElementType, OnlineModel, PrefGpModel};
use ranklet_core::store::{region_len_for, region_len_within};
use ranklet_ffi::{
    rk_online_next_pair_work_size, rk_online_storage_size, rk_online_store_size, rk_pref_storage_size,
    rk_pref_store_size,
};

#[test]
fn huge_dimensions_give_zero_not_a_panic() {
    for n in [usize::MAX, usize::MAX - 1, usize::MAX / 2, usize::MAX / 4 + 1, 1 << 32, 1 << 33, 3_037_000_500] {
        assert_eq!(rk_online_store_size(n), 0, "d = {n}");
        assert_eq!(rk_pref_store_size(n), 0, "n = {n}");
        assert_eq!(rk_online_storage_size(n), 0, "d = {n}");
        assert_eq!(rk_pref_storage_size(n), 0, "n = {n}");
        assert_eq!(rk_online_next_pair_work_size(n, n), 0, "n = d = {n}");
    }
    // Ordinary sizes are 2·(file + 16).
    let file = PrefGpModel::file_len(64, ElementType::F32).unwrap();
    assert_eq!(rk_pref_store_size(64), 2 * (file + 16));
    let file = OnlineModel::file_len(136, ElementType::F32).unwrap();
    assert_eq!(rk_online_store_size(136), 2 * (file + 16));
}

/// On a 32-bit device `file_len` is the same number (it is capped at
/// `u32::MAX`, and the products before the cap fit `u32` for every `n`
/// that passes it), so `region_len_within(file_len, u32::MAX)` is what
/// `rk_*_store_size` computes there: `2·(file + 16)` overflows `u32` for the
/// largest models that still have a file length, and the size is then 0
/// (the unchecked `2 * (len + 16)` wrapped to a small wrong size).
#[test]
fn store_sizes_with_32_bit_arithmetic() {
    let max32 = u64::from(u32::MAX);
    for (name, file_len) in [
        ("pref", (|n| PrefGpModel::file_len(n, ElementType::F32)) as fn(usize) -> Option<usize>),
        ("online", |d| OnlineModel::file_len(d, ElementType::F32)),
    ] {
        // The first dimension whose file is over 2 GiB − 16 bytes.
        let first = (1..70_000usize).find(|&n| file_len(n).is_some_and(|f| f as u64 > max32 / 2 - 16)).unwrap();
        let f = file_len(first).unwrap() as u64;
        assert!(f <= max32, "{name}: a file length on a 32-bit target");
        assert_eq!(region_len_within(f, max32), None, "{name}: d = {first}");
        assert!(2 * (f + 16) % (1 << 32) < f, "{name}: the unchecked size wrapped");
        // One below still fits, exactly.
        let g = file_len(first - 1).unwrap() as u64;
        assert_eq!(region_len_within(g, max32), Some(2 * (g + 16)), "{name}");
        // On this (64-bit) target both fit.
        assert_eq!(region_len_for(f as usize), Some(2 * (f as usize + 16)));
    }
}
