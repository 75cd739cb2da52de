//! A two-slot (A/B) store for saving learner state on a device so that
//! power lost during a save never loses the previous state.
//!
//! The caller gives one byte region (a flash sector pair, an EEPROM page
//! range, a RAM buffer backed by a file); it is split into two equal
//! slots. Each slot holds a 16-byte header and a payload (for ranklet, a
//! `.rkl` file with its own checksum):
//!
//! | bytes | field | meaning |
//! |---|---|---|
//! | 0..4 | magic | `RKAB`, written last by a save |
//! | 4..8 | seq | `u32` sequence number, one more than the other slot's |
//! | 8..12 | len | `u32` payload length, ≤ slot length − 16 |
//! | 12..16 | crc | CRC-32 of bytes 4..12 and the payload |
//! | 16.. | payload | `len` bytes |
//!
//! [`load`] returns the valid slot with the newer sequence number
//! (compared modulo 2³², so the counter may wrap). [`save`] writes into
//! the *other* slot, in three steps, each in increasing address order:
//! (1) clear the magic, (2) write the payload and seq, len, crc, (3) write
//! the magic. Wherever the bytes stop (power loss after any byte of any
//! step), the slot being written either still holds its old, older state
//! (step 1 not begun) or has no valid magic (steps 1–3 incomplete), and
//! the slot with the newest state is never touched: [`load`] returns the
//! previous state or, once step 3 is complete, the new one. A single
//! flipped bit anywhere in a slot is caught deterministically (magic
//! compare, or CRC-32, which detects every 1-bit error), and that slot is
//! ignored. Tests cut a save at every byte and flip every bit.
//!
//! For real flash, where writes go through a driver and erased bytes read
//! `0xFF`, use [`save_with`], which hands the three steps' writes to the
//! caller's `write(offset, bytes)` in the same order; the region passed to
//! it is only read.

use core::convert::Infallible;

use crate::format::crc32::Crc32;

/// The magic bytes that mark a complete slot.
pub const SLOT_MAGIC: [u8; 4] = *b"RKAB";
/// Bytes of a slot's header.
pub const SLOT_HEADER_LEN: usize = 16;

/// Why a save failed: refused (nothing written), or the caller's `fill`
/// or `write` failed with its own error `E` (the store is then as after a
/// torn write: the previous state still loads). [`save`], which calls
/// nothing of the caller's, has `E = Infallible`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum StoreError<E = Infallible> {
    /// The payload does not fit a slot of this region.
    TooLarge {
        /// Payload bytes.
        len: usize,
        /// The most a slot of this region holds.
        capacity: usize,
    },
    /// The caller's fill or write function failed, with its error.
    Write(E),
}

impl<E: core::fmt::Display> core::fmt::Display for StoreError<E> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            StoreError::TooLarge { len, capacity } => {
                write!(f, "payload of {len} bytes does not fit a slot of {capacity} bytes")
            }
            StoreError::Write(e) => write!(f, "the write to the store failed: {e}"),
        }
    }
}

impl<E: core::fmt::Debug + core::fmt::Display> core::error::Error for StoreError<E> {}

/// Payload bytes a slot of a region of `region_len` bytes can hold.
pub const fn capacity(region_len: usize) -> usize {
    (region_len / 2).saturating_sub(SLOT_HEADER_LEN)
}

/// Whether a region of `region_len` bytes can save a payload of
/// `payload_len` bytes (each slot holds its 16-byte header and the
/// payload).
pub const fn fits(region_len: usize, payload_len: usize) -> bool {
    region_len / 2 >= SLOT_HEADER_LEN && payload_len <= capacity(region_len) && payload_len <= u32::MAX as usize
}

/// Bytes a region needs to hold payloads of up to `payload_len` bytes:
/// `2·(payload_len + 16)`, or `None` where that overflows `usize` (on a
/// 32-bit device, any payload over 2 GiB − 16).
pub const fn region_len_for(payload_len: usize) -> Option<usize> {
    match region_len_within(payload_len as u64, usize::MAX as u64) {
        Some(r) => Some(r as usize),
        None => None,
    }
}

/// [`region_len_for`] in an address space whose largest size is `max`
/// (`usize::MAX` of the target), in `u64`: so that a 64-bit host can test
/// a 32-bit device's arithmetic (`max = u32::MAX`).
pub const fn region_len_within(payload_len: u64, max: u64) -> Option<u64> {
    let Some(slot) = payload_len.checked_add(SLOT_HEADER_LEN as u64) else { return None };
    match slot.checked_mul(2) {
        Some(r) if r <= max => Some(r),
        _ => None,
    }
}

/// A state found by [`load`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Loaded<'a> {
    /// Sequence number of the save.
    pub seq: u32,
    /// Which slot (0 or 1) it is in.
    pub slot: usize,
    /// The saved bytes.
    pub payload: &'a [u8],
}

fn slot(region: &[u8], i: usize) -> &[u8] {
    let half = region.len() / 2;
    region.get(i * half..(i + 1) * half).unwrap_or(&[])
}

fn le_u32(b: &[u8], at: usize) -> u32 {
    b.get(at..at + 4).and_then(|s| s.try_into().ok()).map_or(0, u32::from_le_bytes)
}

fn slot_crc(seq: u32, len: u32, payload: &[u8]) -> u32 {
    let mut c = Crc32::new();
    c.update(&seq.to_le_bytes());
    c.update(&len.to_le_bytes());
    c.update(payload);
    c.finish()
}

/// The valid contents of slot `i`, if any.
fn read_slot(region: &[u8], i: usize) -> Option<Loaded<'_>> {
    let s = slot(region, i);
    if s.get(..4)? != SLOT_MAGIC {
        return None;
    }
    let (seq, len) = (le_u32(s, 4), le_u32(s, 8));
    let payload = s.get(SLOT_HEADER_LEN..SLOT_HEADER_LEN.checked_add(len as usize)?)?;
    (slot_crc(seq, len, payload) == le_u32(s, 12)).then_some(Loaded { seq, slot: i, payload })
}

/// Whether sequence number `a` is newer than `b` (modulo 2³²).
fn newer(a: u32, b: u32) -> bool {
    let d = a.wrapping_sub(b);
    d != 0 && d < 1 << 31
}

/// The newest valid state in the region, or `None` if neither slot holds
/// one (a fresh region, or one whose only save was torn).
pub fn load(region: &[u8]) -> Option<Loaded<'_>> {
    match (read_slot(region, 0), read_slot(region, 1)) {
        (Some(a), Some(b)) => Some(if newer(b.seq, a.seq) { b } else { a }),
        (a, b) => a.or(b),
    }
}

/// Saves `payload` into the slot that does not hold the newest state,
/// returning its sequence number. On error nothing is written.
///
/// # Errors
///
/// [`StoreError::TooLarge`] if the payload exceeds [`capacity`].
pub fn save(region: &mut [u8], payload: &[u8]) -> Result<u32, StoreError> {
    save_by(region, payload.len(), |dst| {
        dst.copy_from_slice(payload);
        Ok(())
    })
}

/// [`save`] of a payload of `len` bytes that `fill` writes straight into
/// the slot (so a device serialises its state without a second buffer).
/// The magic is cleared before `fill` runs and written after the header,
/// so a failing `fill` (or power lost inside it) leaves the previous state
/// loadable.
///
/// # Errors
///
/// [`StoreError::TooLarge`] (nothing written), [`StoreError::Write`]
/// with `fill`'s error if it failed.
pub fn save_by<E>(
    region: &mut [u8],
    len: usize,
    fill: impl FnOnce(&mut [u8]) -> Result<(), E>,
) -> Result<u32, StoreError<E>> {
    let (target, seq) = target_of(region, len)?;
    let half = region.len() / 2;
    // `target_of` checked that a slot holds its header and `len` bytes.
    let cap = capacity(region.len());
    let too_large = || StoreError::TooLarge { len, capacity: cap };
    let slot = region.get_mut(target * half..(target + 1) * half).ok_or_else(too_large)?;
    let (head, rest) = slot.split_at_mut(SLOT_HEADER_LEN);
    head[..4].fill(0);
    let payload = rest.get_mut(..len).ok_or_else(too_large)?;
    fill(payload).map_err(StoreError::Write)?;
    head[4..].copy_from_slice(&fields(seq, payload));
    head[..4].copy_from_slice(&SLOT_MAGIC);
    Ok(seq)
}

/// [`save`] through the caller's `write(offset, bytes)` (offsets from the
/// start of the region), for storage written through a driver; `region`
/// is the current contents, only read. The writes come in the order the
/// module doc gives; the first failing write stops the save.
///
/// # Errors
///
/// [`StoreError::TooLarge`], or [`StoreError::Write`] with `write`'s
/// error if it failed.
pub fn save_with<E>(
    region: &[u8],
    payload: &[u8],
    mut write: impl FnMut(usize, &[u8]) -> Result<(), E>,
) -> Result<u32, StoreError<E>> {
    let (offset, parts) = plan(region, payload)?;
    for (at, bytes) in parts.steps(payload) {
        write(offset + at, bytes).map_err(StoreError::Write)?;
    }
    Ok(parts.seq)
}

/// The header of a save.
struct Plan {
    seq: u32,
    fields: [u8; 12],
}

/// seq, len and crc as stored in bytes 4..16 of a slot.
fn fields(seq: u32, payload: &[u8]) -> [u8; 12] {
    let len = payload.len() as u32;
    let mut f = [0u8; 12];
    f[..4].copy_from_slice(&seq.to_le_bytes());
    f[4..8].copy_from_slice(&len.to_le_bytes());
    f[8..].copy_from_slice(&slot_crc(seq, len, payload).to_le_bytes());
    f
}

/// The slot a save of `len` bytes goes to and its sequence number.
fn target_of<E>(region: &[u8], len: usize) -> Result<(usize, u32), StoreError<E>> {
    let cap = capacity(region.len());
    // A slot must hold its header even for an empty payload (capacity()
    // saturates at 0 for slots shorter than the header).
    if !fits(region.len(), len) {
        return Err(StoreError::TooLarge { len, capacity: cap });
    }
    Ok(match load(region) {
        Some(l) => (1 - l.slot, l.seq.wrapping_add(1)),
        None => (0, 1),
    })
}

impl Plan {
    /// The three steps as `(offset in slot, bytes)`.
    fn steps<'p>(&'p self, payload: &'p [u8]) -> [(usize, &'p [u8]); 4] {
        [(0, &[0u8; 4]), (4, &self.fields), (SLOT_HEADER_LEN, payload), (0, &SLOT_MAGIC)]
    }
}

fn plan<E>(region: &[u8], payload: &[u8]) -> Result<(usize, Plan), StoreError<E>> {
    let (target, seq) = target_of(region, payload.len())?;
    Ok((target * (region.len() / 2), Plan { seq, fields: fields(seq, payload) }))
}

#[cfg(test)]
mod tests {
    use super::*;

    const REGION: usize = 2 * (SLOT_HEADER_LEN + 24);

    fn payload(tag: u8, len: usize) -> [u8; 24] {
        let mut p = [0u8; 24];
        for (i, b) in p.iter_mut().enumerate().take(len) {
            *b = tag.wrapping_mul(31).wrapping_add(i as u8);
        }
        p
    }

    #[test]
    fn fresh_region_loads_nothing_and_saves_alternate() {
        let mut r = [0u8; REGION];
        assert_eq!(load(&r), None);
        let p1 = payload(1, 24);
        assert_eq!(save(&mut r, &p1), Ok(1));
        assert_eq!(load(&r), Some(Loaded { seq: 1, slot: 0, payload: &p1[..] }));
        let p2 = payload(2, 10);
        assert_eq!(save(&mut r, &p2[..10]), Ok(2));
        assert_eq!(load(&r), Some(Loaded { seq: 2, slot: 1, payload: &p2[..10] }));
        let p3 = payload(3, 24);
        assert_eq!(save(&mut r, &p3), Ok(3));
        assert_eq!(load(&r).map(|l| (l.seq, l.slot)), Some((3, 0)));
    }

    #[test]
    fn too_large_writes_nothing() {
        let mut r = [7u8; REGION];
        let big = [1u8; 25];
        assert_eq!(save(&mut r, &big), Err(StoreError::TooLarge { len: 25, capacity: 24 }));
        assert_eq!(r, [7u8; REGION]);
    }

    #[test]
    fn a_region_too_small_for_a_slot_header_is_refused() {
        // Found by the ab_store fuzz target: an empty payload "fitted" a
        // region whose slots were shorter than their header.
        for n in [0usize, 1, 20, 31] {
            let mut r = [0x5Au8; 31];
            let r = &mut r[..n];
            assert!(matches!(save(r, &[]), Err(StoreError::TooLarge { len: 0, capacity: 0 })), "{n}");
            assert!(matches!(save_by(r, 0, |_| Ok::<(), ()>(())), Err(StoreError::TooLarge { .. })), "{n}");
            assert!(save_with(r, &[], |_, _| Ok::<(), ()>(())).is_err(), "{n}");
            assert!(r.iter().all(|&b| b == 0x5A) && load(r).is_none());
        }
        let mut r = [0u8; 32];
        assert_eq!(save(&mut r, &[]), Ok(1));
        assert_eq!(load(&r).map(|l| l.payload.len()), Some(0));
    }

    /// The region size is `2·(len + 16)` while that fits the target's
    /// `usize`, `None` beyond, never a wrapped number: with a 32-bit
    /// device's `usize` (`u32` arithmetic) and this target's.
    #[test]
    fn region_len_is_checked_for_32_and_64_bit_targets() {
        let max32 = u64::from(u32::MAX);
        let last = max32 / 2 - SLOT_HEADER_LEN as u64; // 2·(last + 16) = 2³² − 2
        assert_eq!(region_len_within(last, max32), Some(max32 - 1));
        assert_eq!(region_len_within(last + 1, max32), None);
        assert_eq!(region_len_within(max32, max32), None);
        assert_eq!(region_len_within(u64::MAX, u64::MAX), None);
        assert_eq!(region_len_for(24), Some(80));
        assert_eq!(region_len_for(usize::MAX), None);
        assert_eq!(region_len_for(usize::MAX / 2 - SLOT_HEADER_LEN), Some(usize::MAX - 1));
        assert_eq!(region_len_for(usize::MAX / 2 - SLOT_HEADER_LEN + 1), None);
    }

    #[test]
    fn sequence_numbers_wrap() {
        assert!(newer(0, u32::MAX));
        assert!(newer(5, 4));
        assert!(!newer(4, 5));
        assert!(!newer(4, 4));
    }

    /// Every byte write of a save, in order, as `(offset, byte)`.
    fn byte_writes(region: &[u8], p: &[u8]) -> ([(usize, u8); 64], usize) {
        let mut out = [(0usize, 0u8); 64];
        let mut n = 0;
        save_with(region, p, |at, bytes: &[u8]| {
            for (k, &b) in bytes.iter().enumerate() {
                out[n] = (at + k, b);
                n += 1;
            }
            Ok::<(), ()>(())
        })
        .unwrap();
        (out, n)
    }

    #[test]
    fn a_save_torn_at_any_byte_loads_the_previous_or_the_new_state() {
        // Two saves, so that the slot being overwritten holds an older,
        // valid state (the harder case: a torn write must not revive it).
        for new_len in [0usize, 1, 7, 24] {
            let mut base = [0u8; REGION];
            save(&mut base, &payload(1, 24)).unwrap();
            let prev = payload(2, 24);
            save(&mut base, &prev).unwrap();
            let new = payload(3, new_len);
            let new = &new[..new_len];
            let (writes, n) = byte_writes(&base, new);
            for cut in 0..=n {
                let mut r = base;
                for &(at, b) in &writes[..cut] {
                    r[at] = b;
                }
                let l = load(&r).expect("a state always loads");
                if cut == n {
                    assert_eq!((l.seq, l.payload), (3, new));
                } else {
                    assert_eq!((l.seq, l.payload), (2, &prev[..]), "cut at byte {cut} of {n}");
                }
            }
        }
    }

    #[test]
    fn a_flipped_bit_in_the_newest_slot_loads_the_previous_state() {
        let mut base = [0u8; REGION];
        let prev = payload(1, 24);
        save(&mut base, &prev).unwrap();
        save(&mut base, &payload(2, 20)[..20]).unwrap();
        let newest = load(&base).unwrap().slot;
        let half = REGION / 2;
        // Every bit of the header and payload (bytes past the payload are
        // not part of the state).
        for byte in 0..SLOT_HEADER_LEN + 20 {
            for bit in 0..8 {
                let mut r = base;
                r[newest * half + byte] ^= 1 << bit;
                let l = load(&r).expect("the previous state loads");
                assert_eq!((l.seq, l.payload), (1, &prev[..]), "byte {byte} bit {bit}");
            }
        }
    }

    #[test]
    fn save_by_writes_what_save_writes_and_a_failing_fill_keeps_the_previous_state() {
        let mut a = [0u8; REGION];
        let mut b = [0u8; REGION];
        for (tag, len) in [(1u8, 24usize), (2, 3), (3, 24)] {
            let p = payload(tag, len);
            let sa = save(&mut a, &p[..len]).unwrap();
            let sb = save_with(&b.clone(), &p[..len], |at, bytes: &[u8]| {
                b[at..at + bytes.len()].copy_from_slice(bytes);
                Ok::<(), ()>(())
            })
            .unwrap();
            assert_eq!((sa, a), (sb, b));
        }
        let before = a;
        // The caller's error comes back as it was given.
        let res = save_by(&mut a, 10, |dst| {
            dst[0] = 9;
            Err("value does not fit")
        });
        assert_eq!(res, Err(StoreError::Write("value does not fit")));
        assert_eq!(load(&a), load(&before));
        assert_eq!(save_by(&mut a, 25, |_| Ok::<(), ()>(())), Err(StoreError::TooLarge { len: 25, capacity: 24 }));
    }

    #[test]
    fn a_failed_write_reports_and_keeps_the_previous_state() {
        let mut r = [0u8; REGION];
        save(&mut r, &payload(1, 24)).unwrap();
        let mut copy = r;
        let mut calls = 0;
        let res = save_with(&r, &payload(2, 24), |at, bytes: &[u8]| {
            calls += 1;
            if calls == 3 {
                return Err(calls);
            }
            copy[at..at + bytes.len()].copy_from_slice(bytes);
            Ok(())
        });
        assert_eq!(res, Err(StoreError::Write(3)));
        assert_eq!(load(&copy).map(|l| l.seq), Some(1));
    }
}
