//! Zero-copy views of little-endian arrays inside a model file.

use super::ElementType;

pub(crate) fn le_u16(b: &[u8], at: usize) -> Option<u16> {
    let s = b.get(at..at.checked_add(2)?)?;
    Some(u16::from_le_bytes(s.try_into().ok()?))
}

pub(crate) fn le_u32(b: &[u8], at: usize) -> Option<u32> {
    let s = b.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes(s.try_into().ok()?))
}

pub(crate) fn le_u64(b: &[u8], at: usize) -> Option<u64> {
    let s = b.get(at..at.checked_add(8)?)?;
    Some(u64::from_le_bytes(s.try_into().ok()?))
}

pub(crate) fn le_f64(b: &[u8], at: usize) -> Option<f64> {
    let s = b.get(at..at.checked_add(8)?)?;
    Some(f64::from_le_bytes(s.try_into().ok()?))
}

/// A read-only array of `f32` or `f64` parameters, decoded on access from
/// little-endian bytes of any alignment.
///
/// Arrays handed out by a [`ModelView`](super::ModelView) hold only finite
/// values and have a whole number of elements.
#[derive(Clone, Copy, Debug)]
pub struct Array<'a> {
    bytes: &'a [u8],
    elem: ElementType,
}

impl<'a> Array<'a> {
    /// Wraps raw bytes. Trailing bytes that do not make a whole element are
    /// ignored.
    pub const fn new(bytes: &'a [u8], elem: ElementType) -> Self {
        Array { bytes, elem }
    }

    /// Element type.
    pub const fn element_type(&self) -> ElementType {
        self.elem
    }

    /// The raw little-endian bytes.
    pub const fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// Number of elements.
    pub const fn len(&self) -> usize {
        self.bytes.len() / self.elem.size()
    }

    /// Whether the array has no elements.
    pub const fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Element `i`, widened to `f64`; `None` if `i >= len()`.
    #[inline]
    pub fn get(&self, i: usize) -> Option<f64> {
        let at = i.checked_mul(self.elem.size())?;
        match self.elem {
            ElementType::F32 => {
                let s = self.bytes.get(at..at.checked_add(4)?)?;
                Some(f32::from_le_bytes(s.try_into().ok()?) as f64)
            }
            ElementType::F64 => le_f64(self.bytes, at),
        }
    }

    /// Element `i`, or 0 if out of range (used after validation, where the
    /// range is already known to be good).
    #[inline]
    pub(crate) fn at(&self, i: usize) -> f64 {
        self.get(i).unwrap_or(0.0)
    }

    /// The sub-array of elements `start..start + len` (empty if out of
    /// range).
    pub fn slice(&self, start: usize, len: usize) -> Array<'a> {
        let es = self.elem.size();
        let range = start
            .checked_mul(es)
            .and_then(|a| Some((a, a.checked_add(len.checked_mul(es)?)?)))
            .and_then(|(a, b)| self.bytes.get(a..b));
        Array { bytes: range.unwrap_or(&[]), elem: self.elem }
    }

    /// The elements in order, widened to `f64`.
    pub fn iter(&self) -> ArrayIter<'a> {
        ArrayIter { bytes: self.bytes, elem: self.elem }
    }
}

impl<'a> IntoIterator for Array<'a> {
    type Item = f64;
    type IntoIter = ArrayIter<'a>;
    fn into_iter(self) -> ArrayIter<'a> {
        self.iter()
    }
}

/// Iterator over an [`Array`].
#[derive(Clone, Debug)]
pub struct ArrayIter<'a> {
    bytes: &'a [u8],
    elem: ElementType,
}

impl Iterator for ArrayIter<'_> {
    type Item = f64;

    #[inline]
    fn next(&mut self) -> Option<f64> {
        match self.elem {
            ElementType::F32 => {
                let (head, rest) = self.bytes.split_first_chunk::<4>()?;
                self.bytes = rest;
                Some(f32::from_le_bytes(*head) as f64)
            }
            ElementType::F64 => {
                let (head, rest) = self.bytes.split_first_chunk::<8>()?;
                self.bytes = rest;
                Some(f64::from_le_bytes(*head))
            }
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.bytes.len() / self.elem.size();
        (n, Some(n))
    }
}

impl ExactSizeIterator for ArrayIter<'_> {}

/// A read-only array of little-endian `u32` (sparse row pointers and column
/// indices).
#[derive(Clone, Copy, Debug)]
pub struct U32Array<'a> {
    bytes: &'a [u8],
}

impl<'a> U32Array<'a> {
    /// Wraps raw bytes; a trailing partial element is ignored.
    pub const fn new(bytes: &'a [u8]) -> Self {
        U32Array { bytes }
    }

    /// Number of elements.
    pub const fn len(&self) -> usize {
        self.bytes.len() / 4
    }

    /// Whether the array has no elements.
    pub const fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Element `i`; `None` if out of range.
    #[inline]
    pub fn get(&self, i: usize) -> Option<u32> {
        le_u32(self.bytes, i.checked_mul(4)?)
    }

    /// The sub-array of elements `start..start + len` (empty if out of
    /// range).
    pub fn slice(&self, start: usize, len: usize) -> U32Array<'a> {
        let range = start
            .checked_mul(4)
            .and_then(|a| Some((a, a.checked_add(len.checked_mul(4)?)?)))
            .and_then(|(a, b)| self.bytes.get(a..b));
        U32Array { bytes: range.unwrap_or(&[]) }
    }

    /// The elements in order.
    pub fn iter(&self) -> U32Iter<'a> {
        U32Iter { bytes: self.bytes }
    }
}

/// Iterator over a [`U32Array`].
#[derive(Clone, Debug)]
pub struct U32Iter<'a> {
    bytes: &'a [u8],
}

impl Iterator for U32Iter<'_> {
    type Item = u32;

    #[inline]
    fn next(&mut self) -> Option<u32> {
        let (head, rest) = self.bytes.split_first_chunk::<4>()?;
        self.bytes = rest;
        Some(u32::from_le_bytes(*head))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.bytes.len() / 4;
        (n, Some(n))
    }
}

impl ExactSizeIterator for U32Iter<'_> {}
