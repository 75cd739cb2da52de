//! Caller scratch memory: one declaration says both how much a routine
//! needs and how it is sliced, so the two cannot drift apart.
//!
//! Core never allocates; a routine that needs scratch takes `work: &mut [T]`
//! and publishes a `*_workspace_len` companion. Written by hand, the length
//! and the slicing are two pieces of code that must agree. Here a routine
//! declares its scratch once with [`scratch!`](crate::scratch): the macro
//! generates a struct of named slices with `len(..)` (the exact size) and
//! `split(work, ..)` (the slices, taken in declaration order from the
//! caller's buffer by [`Workspace::take`]). A field may hold another
//! routine's whole requirement (`inner: other_workspace_len(n)`), which is
//! how requirements compose — the sum of the parts, as faer's `StackReq`
//! composes.
//!
//! ```
//! use ranklet_core::scratch;
//!
//! scratch! {
//!     /// Scratch of a routine on an `n × d` problem.
//!     pub struct Demo(n: usize, d: usize) {
//!         /// The `d × d` Gram matrix.
//!         gram: d * d,
//!         /// One column.
//!         col: n,
//!     }
//! }
//! assert_eq!(Demo::len(10, 3), 19);
//! let mut buf = [0.0f64; 20];
//! let (s, rest) = Demo::split(&mut buf, 10, 3).unwrap();
//! assert_eq!((s.gram.len(), s.col.len(), rest.len()), (9, 10, 1));
//! assert!(Demo::split(&mut buf[..18], 10, 3).is_err());
//! ```

use crate::LinalgError;

/// A caller's scratch buffer, handed out front to back.
#[derive(Debug)]
pub struct Workspace<'w, T> {
    rest: &'w mut [T],
}

impl<'w, T> Workspace<'w, T> {
    /// Wraps the caller's buffer.
    pub fn new(buf: &'w mut [T]) -> Self {
        Workspace { rest: buf }
    }

    /// The next `len` elements.
    ///
    /// # Errors
    /// [`LinalgError::WorkspaceTooSmall`] if fewer than `len` remain
    /// (`needed` is `len`, `got` what remained).
    pub fn take(&mut self, len: usize) -> Result<&'w mut [T], LinalgError> {
        if self.rest.len() < len {
            return Err(LinalgError::WorkspaceTooSmall { needed: len, got: self.rest.len() });
        }
        let (a, b) = core::mem::take(&mut self.rest).split_at_mut(len);
        self.rest = b;
        Ok(a)
    }

    /// Elements not yet handed out.
    pub fn remaining(&self) -> usize {
        self.rest.len()
    }

    /// What has not been handed out.
    pub fn into_rest(self) -> &'w mut [T] {
        self.rest
    }
}

/// Declares a routine's scratch layout: a struct of `&mut [f64]` fields
/// (`[U]` with `of U` after the parameter list; `struct Name<T: Bound>(..)`
/// for a routine generic over its element type) with `len(params)` and
/// `split(work, params)` generated from the same field list.
/// See [the module documentation](crate::workspace).
#[macro_export]
macro_rules! scratch {
    // The one expansion every form below forwards to.
    (@emit [$(#[$m:meta])*] [$vis:vis] $name:ident [$($decl:tt)*] [$($args:tt)*] [$t:ty]
        ( $($p:ident : $pt:ty),* ) { $( $(#[$fm:meta])* $f:ident : $len:expr ),* $(,)? }
    ) => {
        $(#[$m])*
        #[derive(Debug)]
        $vis struct $name $($decl)* {
            $( $(#[$fm])* pub $f: &'w mut [$t], )*
        }

        impl $($decl)* $name $($args)* {
            /// Elements the layout needs: the sum of its fields. The sum
            /// saturates; a field expression's own products do not unless
            /// written with `saturating_mul` (layouts sized from untrusted
            /// input must do so).
            #[allow(unused_variables, dead_code)]
            pub fn len($($p: $pt),*) -> usize {
                0usize $( .saturating_add($len) )*
            }

            /// Slices the fields from the front of `work` and returns them
            /// with the remainder.
            ///
            /// # Errors
            /// `LinalgError::WorkspaceTooSmall` if `work` is shorter than
            /// [`Self::len`].
            #[allow(unused_variables, dead_code)]
            pub fn split(work: &'w mut [$t], $($p: $pt),*) -> Result<(Self, &'w mut [$t]), $crate::LinalgError> {
                let need = Self::len($($p),*);
                if work.len() < need {
                    return Err($crate::LinalgError::WorkspaceTooSmall { needed: need, got: work.len() });
                }
                let mut ws = $crate::workspace::Workspace::new(work);
                $( let $f = ws.take($len)?; )*
                Ok(($name { $($f,)* }, ws.into_rest()))
            }
        }
    };
    // Generic over the element type: `struct Name<T: Real>(..) { .. }`.
    (
        $(#[$m:meta])*
        $vis:vis struct $name:ident < $g:ident : $bound:path > ( $($p:ident : $pt:ty),* $(,)? ) { $($body:tt)* }
    ) => {
        $crate::scratch! { @emit [$(#[$m])*] [$vis] $name [<'w, $g: $bound>] [<'w, $g>] [$g] ( $($p: $pt),* ) { $($body)* } }
    };
    // A fixed element type: `struct Name(..) of usize { .. }`.
    (
        $(#[$m:meta])*
        $vis:vis struct $name:ident ( $($p:ident : $pt:ty),* $(,)? ) of $t:ty { $($body:tt)* }
    ) => {
        $crate::scratch! { @emit [$(#[$m])*] [$vis] $name [<'w>] [<'w>] [$t] ( $($p: $pt),* ) { $($body)* } }
    };
    // `f64`, the default.
    (
        $(#[$m:meta])*
        $vis:vis struct $name:ident ( $($p:ident : $pt:ty),* $(,)? ) { $($body:tt)* }
    ) => {
        $crate::scratch! { @emit [$(#[$m])*] [$vis] $name [<'w>] [<'w>] [f64] ( $($p: $pt),* ) { $($body)* } }
    };
}

#[cfg(test)]
mod tests {
    use super::Workspace;
    use crate::LinalgError;

    crate::scratch! {
        struct Nested(n: usize) {
            a: n,
            b: 2 * n,
        }
    }

    crate::scratch! {
        struct Outer(n: usize) of usize {
            head: 1,
            inner: Nested::len(n),
        }
    }

    #[test]
    fn take_hands_out_front_to_back_and_reports_shortfall() {
        let mut buf = [1.0, 2.0, 3.0];
        let mut ws = Workspace::new(&mut buf);
        assert_eq!(ws.take(2).unwrap(), &[1.0, 2.0]);
        assert_eq!(ws.remaining(), 1);
        assert_eq!(ws.take(2).unwrap_err(), LinalgError::WorkspaceTooSmall { needed: 2, got: 1 });
        assert_eq!(ws.take(1).unwrap(), &[3.0]);
    }

    #[test]
    fn layouts_compose_and_len_matches_split() {
        assert_eq!(Nested::len(4), 12);
        assert_eq!(Outer::len(4), 13);
        let mut ibuf = [0usize; 13];
        let (o, rest) = Outer::split(&mut ibuf, 4).unwrap();
        assert_eq!((o.head.len(), o.inner.len(), rest.len()), (1, 12, 0));
        let mut buf = [0.0; 12];
        let (s, _) = Nested::split(&mut buf, 4).unwrap();
        assert_eq!((s.a.len(), s.b.len()), (4, 8));
        let mut short = [0.0; 11];
        assert_eq!(Nested::split(&mut short, 4).unwrap_err(), LinalgError::WorkspaceTooSmall { needed: 12, got: 11 });
    }
}
