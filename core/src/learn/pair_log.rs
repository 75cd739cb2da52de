//! A bounded log of the last preferences a device learner absorbed: the
//! pairs it asked and was answered, newest overwriting oldest once the
//! log is full, without a heap.
//!
//! The device preference GP absorbs each answer by one ADF step and
//! keeps no sites ([`super::pref::device`]), so its posterior drifts from
//! what host EP would fit on the same answers; the last answers, sent back
//! to the host, let it refit them all (`ranklet` trains from pairs), and
//! tell a device which of its pairs it has already asked.
//!
//! Two containers behind one trait, [`PairRecord`]:
//!
//! - [`PairLog`], a ring over a caller slice `&mut [Pair]` whose state is
//!   two numbers ([`PairLog::parts`], [`PairLog::from_parts`]) that the
//!   caller may keep beside the slice between calls: the form a C caller
//!   holds (an array of `{uint32_t winner, loser}` and two counters), and
//!   the one with a capacity chosen at run time;
//! - with the feature `heapless`, `heapless::HistoryBuffer<Pair, N>`, a
//!   value that holds its own `N` pairs (a capacity fixed at compile
//!   time, for Rust firmware that keeps the log in a struct or a static).
//!
//! The functions over a log ([`asked`], [`copy_oldest_first`]) are written
//! once, on the log's two ordered slices, for both.

/// One answered preference: item `winner` was preferred to item `loser`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pair {
    /// The preferred item.
    pub winner: u32,
    /// The other item.
    pub loser: u32,
}

/// A bounded log of pairs: record one, and read them oldest first as two
/// slices (the older part, then the newer).
pub trait PairRecord {
    /// Records `p`, dropping the oldest pair if the log is full.
    fn record(&mut self, p: Pair);
    /// The pairs, oldest first: every pair of the first slice is older
    /// than every pair of the second.
    fn ordered(&self) -> (&[Pair], &[Pair]);
}

/// The log in caller storage: a ring over `buf` (see the
/// [module documentation](self)).
#[derive(Debug)]
pub struct PairLog<'s> {
    buf: &'s mut [Pair],
    /// Where the next pair goes.
    next: usize,
    /// Pairs held, at most `buf.len()`.
    len: usize,
}

impl<'s> PairLog<'s> {
    /// An empty log holding up to `buf.len()` pairs (0: it keeps none).
    pub fn new(buf: &'s mut [Pair]) -> Self {
        PairLog { buf, next: 0, len: 0 }
    }

    /// A log over `buf` in the state [`parts`](Self::parts) returned;
    /// `None` if the state does not fit `buf` (`next` and `len` above its
    /// length, or `len` short of a full log while `next` is not `len`).
    pub fn from_parts(buf: &'s mut [Pair], next: usize, len: usize) -> Option<Self> {
        let cap = buf.len();
        let valid = len <= cap && (next < cap || (cap == 0 && next == 0)) && (len == cap || next == len);
        valid.then_some(PairLog { buf, next, len })
    }

    /// The state to keep beside the slice: `(next, len)`.
    pub fn parts(&self) -> (usize, usize) {
        (self.next, self.len)
    }

    /// Pairs held.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the log holds no pair.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The most pairs the log holds.
    pub fn capacity(&self) -> usize {
        self.buf.len()
    }
}

impl PairRecord for PairLog<'_> {
    fn record(&mut self, p: Pair) {
        let cap = self.buf.len();
        if let Some(slot) = self.buf.get_mut(self.next) {
            *slot = p;
            self.next = (self.next + 1) % cap;
            self.len = (self.len + 1).min(cap);
        }
    }

    fn ordered(&self) -> (&[Pair], &[Pair]) {
        if self.len < self.buf.len() {
            (&self.buf[..self.len], &[])
        } else {
            let (newer, older) = self.buf.split_at(self.next);
            (older, newer)
        }
    }
}

#[cfg(feature = "heapless")]
impl<const N: usize> PairRecord for heapless::HistoryBuffer<Pair, N> {
    fn record(&mut self, p: Pair) {
        self.write(p);
    }

    fn ordered(&self) -> (&[Pair], &[Pair]) {
        self.as_slices()
    }
}

/// Whether the log holds the pair `{i, j}` in either order (asked before).
pub fn asked(log: &impl PairRecord, i: u32, j: u32) -> bool {
    let (a, b) = log.ordered();
    a.iter().chain(b).any(|p| (p.winner, p.loser) == (i, j) || (p.winner, p.loser) == (j, i))
}

/// Copies the newest `out.len()` pairs (or all, if fewer) into `out`,
/// oldest first; returns how many it wrote.
pub fn copy_oldest_first(log: &impl PairRecord, out: &mut [Pair]) -> usize {
    let (a, b) = log.ordered();
    let skip = (a.len() + b.len()).saturating_sub(out.len());
    let mut n = 0;
    for (o, p) in out.iter_mut().zip(a.iter().chain(b).skip(skip)) {
        *o = *p;
        n += 1;
    }
    n
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::collections::VecDeque;
    use std::vec::Vec;

    fn pair(k: u32) -> Pair {
        Pair { winner: k, loser: k + 100 }
    }

    fn contents(log: &impl PairRecord) -> Vec<Pair> {
        let (a, b) = log.ordered();
        a.iter().chain(b).copied().collect()
    }

    /// Against a `VecDeque` that keeps the last `cap` pairs, for every
    /// capacity up to 5 and every number of records up to 13 (wrapping
    /// the ring more than twice); the state survives `parts`/`from_parts`
    /// at every step.
    #[test]
    fn slice_log_keeps_the_last_pairs_in_order() {
        for cap in 0..=5 {
            let mut buf = [Pair::default(); 5];
            let mut want = VecDeque::new();
            let mut parts = (0, 0);
            for k in 0..13 {
                let mut log = PairLog::from_parts(&mut buf[..cap], parts.0, parts.1).unwrap();
                log.record(pair(k));
                if cap > 0 {
                    if want.len() == cap {
                        want.pop_front();
                    }
                    want.push_back(pair(k));
                }
                assert_eq!(contents(&log), Vec::from(want.clone()), "cap {cap}, k {k}");
                assert_eq!(log.len(), want.len());
                assert!(asked(&log, k + 100, k) == (cap > 0));
                assert!(!asked(&log, k, k));
                let mut out = [Pair::default(); 2];
                let n = copy_oldest_first(&log, &mut out);
                let tail: Vec<Pair> = want.iter().skip(want.len().saturating_sub(2)).copied().collect();
                assert_eq!(&out[..n], &tail[..]);
                parts = log.parts();
            }
        }
    }

    #[test]
    fn from_parts_refuses_a_state_that_does_not_fit() {
        let mut buf = [Pair::default(); 4];
        assert!(PairLog::from_parts(&mut buf, 4, 4).is_none());
        assert!(PairLog::from_parts(&mut buf, 0, 5).is_none());
        assert!(PairLog::from_parts(&mut buf, 1, 3).is_none());
        assert!(PairLog::from_parts(&mut buf, 2, 4).is_some());
        assert!(PairLog::from_parts(&mut buf, 3, 3).is_some());
        assert!(PairLog::from_parts(&mut [], 0, 0).is_some());
        assert!(PairLog::from_parts(&mut [], 1, 0).is_none());
    }

    /// The heapless log and the slice log of the same capacity hold the
    /// same pairs in the same order after every record.
    #[cfg(feature = "heapless")]
    #[test]
    fn heapless_log_equals_the_slice_log() {
        let mut buf = [Pair::default(); 3];
        let mut slice = PairLog::new(&mut buf);
        let mut hist = heapless::HistoryBuffer::<Pair, 3>::new();
        for k in 0..8 {
            slice.record(pair(k));
            hist.record(pair(k));
            assert_eq!(contents(&hist), contents(&slice), "k {k}");
            assert_eq!(asked(&hist, k, k + 100), asked(&slice, k, k + 100));
        }
    }
}
