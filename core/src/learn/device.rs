//! The shape every learner that lives on a device shares: started from a
//! host-trained model, its whole state in one caller slice of `R`,
//! written as a `.rkl` model, and saved to / restored from the two-slot
//! store ([`crate::store`]) so that power lost during a save never loses
//! the previous state.
//!
//! A learner implements [`DeviceLearner`] (how much storage a size needs,
//! which part of a parsed model it starts from and restores from, what
//! model its state is); the sizes and the save are written once here, for
//! every learner: [`store_len`] and [`store_len_within`] (the store region
//! a state needs, checked, with `u64` arithmetic so a 64-bit host can test
//! a 32-bit device's sizes) and [`save`] (the state's own checks before
//! the store is touched, then one A/B save). A load is
//! [`store::load`], the parse, then the learner's
//! [`saved`](DeviceLearner::saved) and [`restore`](DeviceLearner::restore).
//! The online RankRLS ([`super::online`]) and the device preference GP
//! ([`super::pref::device`]) are the two learners; the C ABI wraps this
//! trait once for both (`ffi/src/device.rs`).

use crate::format::{ElementType, EmitError, Model, ModelSpec, ModelView, ValuesReal};
use crate::learn::LearnError;
use crate::store::{self, StoreError};

/// A learner whose state lives in one caller slice (see the
/// [module documentation](self)).
///
/// "Size" is the one number that fixes the state's shape: the dimension
/// `d` of the online learner, the number of items N of the preference GP.
pub trait DeviceLearner<'s>: Sized {
    /// The element type of the state.
    type Real: ValuesReal;
    /// What the learner carries beside its state, handed back to
    /// [`state`](Self::state): the online learner's prior offset, `()`
    /// for the GP.
    type Extra: Copy;
    /// What [`init`](Self::init) needs beside the prior: the online
    /// learner's ridge and prior id, `()` for the GP.
    type Params: Copy;

    /// Elements of storage for a learner of this size; `None` where the
    /// size is 0 or the count overflows `usize`.
    fn storage_len(size: usize) -> Option<usize>;

    /// Bytes of the state's `.rkl` file written as `et` without metadata;
    /// `None` where it overflows or exceeds the format's 4 GiB.
    fn state_file_len(size: usize, et: ElementType) -> Option<usize>;

    /// The part of a parsed model this learner starts from (the online
    /// learner's linear model with its linear view, extracted once; the
    /// GP's kind-8 view).
    type Prior<'v>;
    /// The part of a parsed model that holds this learner's saved state.
    type Saved<'v>;

    /// The prior in a parsed model; `None` if the model is not of the
    /// kind this learner starts from.
    fn prior<'v>(model: &'v ModelView<'v>) -> Option<Self::Prior<'v>>;

    /// The size of the learner `prior` starts.
    fn prior_size(prior: &Self::Prior<'_>) -> usize;

    /// Starts the learner from `prior` in `storage`.
    ///
    /// # Errors
    /// The learner's own (storage too short, a value `R` cannot hold, a
    /// parameter outside its domain).
    fn init(
        storage: &'s mut [Self::Real],
        prior: &Self::Prior<'_>,
        params: Self::Params,
    ) -> Result<(Self, Self::Extra), LearnError>;

    /// The saved state in a parsed model; `None` if the model is not this
    /// learner's state.
    fn saved<'v>(model: &ModelView<'v>) -> Option<Self::Saved<'v>>;

    /// The size of the learner `saved` restores.
    fn saved_size(saved: &Self::Saved<'_>) -> usize;

    /// Restores a saved state into `storage`.
    ///
    /// # Errors
    /// The learner's own, as [`init`](Self::init)'s.
    fn restore(storage: &'s mut [Self::Real], saved: &Self::Saved<'_>) -> Result<(Self, Self::Extra), LearnError>;

    /// The state as a model to write.
    fn state(&self, extra: Self::Extra) -> Model<'_>;
}

/// Bytes of a store region that holds a state of this size written as
/// `et`: [`store_len_within`] in this target's address space.
pub fn store_len<'s, L: DeviceLearner<'s>>(size: usize, et: ElementType) -> Option<usize> {
    // The file's length is a `usize` already, so `store::region_len_for`
    // is `store_len_within` at `usize::MAX` without its `u64` round trip.
    L::state_file_len(size, et).and_then(store::region_len_for)
}

/// Bytes of a store region that holds a state of this size written as
/// `et`, in an address space whose largest size is `max` (`usize::MAX` of
/// the target; `u32::MAX` tests a 32-bit device on a 64-bit host): `None`
/// where the file or the region would not fit.
pub fn store_len_within<'s, L: DeviceLearner<'s>>(size: usize, et: ElementType, max: u64) -> Option<u64> {
    let file = L::state_file_len(size, et)? as u64;
    if file > max {
        return None;
    }
    store::region_len_within(file, max)
}

/// Saves the learner's state, written as `et`, into the store `region`
/// (the slot that does not hold the newest state); returns the save's
/// sequence number. The state's own checks run before the store is
/// touched, so a state the format refuses leaves both slots as they were.
///
/// # Errors
/// [`StoreError::Write`] with the format's refusal,
/// [`StoreError::TooLarge`] if the region is too small.
pub fn save<'s, L: DeviceLearner<'s>>(
    learner: &L,
    extra: L::Extra,
    et: ElementType,
    region: &mut [u8],
) -> Result<u32, StoreError<EmitError>> {
    let spec = ModelSpec::new(learner.state(extra), et);
    spec.check().map_err(StoreError::Write)?;
    store::save_by(region, spec.buffer_len(), |dst| spec.emit(dst).map(|_| ()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::learn::online::OnlineRankRls;
    use crate::learn::pref::device::DevicePrefGp;

    /// The store sizes of both learners in a 32-bit address space: the
    /// largest size whose region fits is found by bisection on the
    /// learner's own file length, and one more is refused (`None`, the 0
    /// of `rk_*_store_size`), never a wrapped value; in 64 bits the same
    /// sizes fit where the format allows the file.
    #[test]
    fn store_len_is_checked_in_32_bits() {
        fn check<'s, L: DeviceLearner<'s>>() {
            let max32 = u64::from(u32::MAX);
            let fits = |n: usize| store_len_within::<L>(n, ElementType::F32, max32).is_some();
            let (mut lo, mut hi) = (1usize, 1usize << 20);
            assert!(fits(lo) && !fits(hi));
            while hi - lo > 1 {
                let mid = lo + (hi - lo) / 2;
                if fits(mid) {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            // The boundary is where 2·(file + 16) passes 2³² − 1.
            let file = |n| L::state_file_len(n, ElementType::F32).map(|f| f as u64);
            let region = |n| file(n).map(|f| 2 * (f + store::SLOT_HEADER_LEN as u64));
            assert!(region(lo).unwrap() <= max32, "{lo}");
            assert!(region(hi).is_none_or(|r| r > max32), "{hi}");
            for n in [hi, hi + 1, 1 << 20, usize::MAX / 2, usize::MAX] {
                assert_eq!(store_len_within::<L>(n, ElementType::F32, max32), None, "{n}");
            }
            assert_eq!(store_len::<L>(usize::MAX, ElementType::F32), None);
            assert_eq!(store_len::<L>(lo, ElementType::F32).map(|r| r as u64), region(lo));
        }
        check::<OnlineRankRls<'static, f32>>();
        check::<DevicePrefGp<'static, f32>>();
    }
}
