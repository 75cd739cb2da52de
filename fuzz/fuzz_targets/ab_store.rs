//! The two-slot store (`ranklet_core::store`) on arbitrary region contents.
//!
//! Contract under test (core/src/store.rs): `load` never panics and returns
//! a payload inside the region; a complete `save` is what `load` returns
//! next; a save cut after any number of its byte writes loads either the
//! state that loaded before it or the new one, never anything else.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ranklet_core::store::{capacity, fits, load, save, save_with};

fuzz_target!(|data: &[u8]| {
    let [cut_byte, plen, rest @ ..] = data else {
        return;
    };
    let cut_byte = *cut_byte;
    let (payload, region0) = rest.split_at(*plen as usize % (rest.len() + 1));
    let before = load(region0).map(|l| (l.seq, l.payload.to_vec()));
    if let Some((_, p)) = &before {
        assert!(p.len() <= capacity(region0.len()));
    }
    if !fits(region0.len(), payload.len()) {
        let mut r = region0.to_vec();
        assert!(save(&mut r, payload).is_err());
        assert_eq!(r, region0, "a refused save wrote");
        return;
    }
    // Every byte write of the save, in order.
    let mut writes = Vec::new();
    let seq = save_with(region0, payload, |at, bytes: &[u8]| {
        writes.extend(bytes.iter().enumerate().map(|(k, &b)| (at + k, b)));
        Ok::<(), ()>(())
    })
    .expect("a fitting save succeeds");
    let cut = cut_byte as usize * writes.len() / 255;
    let mut r = region0.to_vec();
    for &(at, b) in &writes[..cut] {
        r[at] = b;
    }
    let after = load(&r).map(|l| (l.seq, l.payload.to_vec()));
    if cut == writes.len() {
        assert_eq!(after, Some((seq, payload.to_vec())));
    } else {
        assert_eq!(after, before, "a torn save changed what loads");
    }
});
