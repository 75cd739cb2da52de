//! Large zeroed `f64` workspaces on transparent huge pages.
//!
//! The kernel learners' workspace holds the n × n kernel matrix (128 MB at
//! n = 4000). From `vec![0.0; len]` it arrives as 4 KiB pages, each faulted
//! in (and zeroed) on first touch, and each pass of the top-k solver's
//! mat-vec then walks ~16 000 of them. On a kernel that hands out huge pages
//! only on request (`/sys/kernel/mm/transparent_hugepage/enabled` =
//! `madvise`, this machine's setting), an anonymous mapping advised
//! `MADV_HUGEPAGE` gets 2 MiB pages: 512× fewer faults and TLB entries
//! (numpy does the same for its large arrays). Where the mapping or the
//! advice fails, or for small lengths, a plain `Vec` is used.

use memmap2::{Advice, MmapMut, MmapOptions};

/// Below this many bytes a plain `Vec` is used.
const MIN_BYTES: usize = 4 << 20;
/// Huge-page size (x86-64); the slice starts on such a boundary.
const HUGE: usize = 2 << 20;

/// A zeroed `[f64]` of a fixed length.
pub struct ZeroedF64 {
    map: Option<(MmapMut, usize)>,
    vec: Vec<f64>,
    len: usize,
}

impl ZeroedF64 {
    /// `len` zeros, on huge pages when `len` is large and the system allows.
    ///
    /// # Errors
    /// Where neither the mapping nor a `Vec` can be had
    /// ([`crate::mem::try_zeros`]'s error), never an abort.
    pub fn new(len: usize) -> Result<Self, ranklet_core::LinalgError> {
        let bytes = len.saturating_mul(8);
        if bytes >= MIN_BYTES {
            if let Ok(map) = MmapOptions::new().len(bytes + HUGE).map_anon() {
                // Advice is a hint: without it the mapping still works.
                let _ = map.advise(Advice::HugePage);
                let off = (HUGE - (map.as_ptr() as usize) % HUGE) % HUGE;
                let ok = map
                    .get(off..off + bytes)
                    .is_some_and(|b| bytemuck::try_cast_slice::<u8, f64>(b).is_ok_and(|s| s.len() == len));
                if ok {
                    return Ok(Self { map: Some((map, off)), vec: Vec::new(), len });
                }
            }
        }
        Ok(Self { map: None, vec: crate::mem::try_zeros(len)?, len })
    }

    /// The buffer.
    pub fn as_mut_slice(&mut self) -> &mut [f64] {
        let len = self.len;
        match &mut self.map {
            Some((map, off)) => {
                let off = *off;
                map.get_mut(off..off + len * 8)
                    .and_then(|b| bytemuck::try_cast_slice_mut::<u8, f64>(b).ok())
                    .unwrap_or(&mut [])
            }
            None => &mut self.vec,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zeroed_of_every_size_has_its_length_and_is_zero() {
        for len in [0usize, 1, 1000, MIN_BYTES / 8 - 1, MIN_BYTES / 8, 3 * HUGE / 8 + 5] {
            let mut b = ZeroedF64::new(len).unwrap();
            let mapped = b.map.is_some();
            // Large buffers come from the huge-page mapping (anonymous maps
            // do not fail on Linux), small ones from a Vec.
            assert_eq!(mapped, cfg!(target_os = "linux") && len * 8 >= MIN_BYTES, "len {len}");
            let s = b.as_mut_slice();
            assert_eq!(s.len(), len);
            assert!(s.iter().all(|&v| v == 0.0));
            if mapped {
                assert_eq!(s.as_ptr() as usize % HUGE, 0, "len {len}: not on a huge-page boundary");
            }
            // Every element is its own storage: write all, read all back.
            s.iter_mut().enumerate().for_each(|(i, v)| *v = i as f64);
            let s = b.as_mut_slice();
            assert!(s.iter().enumerate().all(|(i, &v)| v == i as f64), "len {len}");
        }
    }
}
