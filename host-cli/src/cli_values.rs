//! The binary's closed sets of flag values: one clap `ValueEnum` per
//! library enum a flag takes (`--precision`, `--backend`, `--ties`, …), and
//! the one conversion of each to the library's enum. A flag takes the
//! library's type directly through [`lib_enum`]'s value parser, so the
//! commands see only the library's enums; clap lists these variants (with
//! their doc comments) in `--help`, and refuses any other value (exit 2).

use clap::builder::{EnumValueParser, MapValueParser, TypedValueParser};
use clap::ValueEnum;

/// A flag's closed set of values that stands for a library enum.
pub trait LibEnum: ValueEnum + Clone + Send + Sync + 'static {
    /// The library's enum.
    type Lib: Clone + Send + Sync + 'static;
    /// The library's value.
    fn lib(self) -> Self::Lib;
}

/// [`lib_enum`]'s parser: `E`'s values, mapped to the library's.
pub type LibEnumParser<E> = MapValueParser<EnumValueParser<E>, fn(E) -> <E as LibEnum>::Lib>;

/// The value parser of a flag of the library's type `E::Lib`, read as `E`:
/// `#[arg(long, value_parser = lib_enum::<Backend>())]`.
pub fn lib_enum<E: LibEnum>() -> LibEnumParser<E> {
    EnumValueParser::<E>::new().map(E::lib as fn(E) -> E::Lib)
}

/// Defines a clap-facing enum with the library enum's variants (and their
/// doc comments, which `--help` shows) and its [`LibEnum`] conversion.
macro_rules! lib_enums {
    ($(
        $(#[$doc:meta])*
        $name:ident => $lib:path { $($(#[$vdoc:meta])* $v:ident),+ $(,)? }
    )+) => {$(
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
        pub enum $name {
            $($(#[$vdoc])* $v,)+
        }

        impl LibEnum for $name {
            type Lib = $lib;
            fn lib(self) -> $lib {
                use $lib as L;
                match self {
                    $($name::$v => L::$v,)+
                }
            }
        }
    )+};
}

lib_enums! {
    /// `--precision` ([`ranklet::args::Precision`]).
    Precision => ranklet::args::Precision {
        /// Single precision (devices).
        F32,
        /// Double precision.
        F64,
    }

    /// `--query-weight` ([`ranklet::args::QueryWeightArg`]).
    QueryWeight => ranklet::args::QueryWeightArg {
        /// Each query counts equally: `L_q = I − 11ᵀ/l_q`.
        Equal,
        /// Each pair counts equally: the plain Laplacian.
        Pairs,
    }

    /// `--relation-residual` ([`ranklet::family::pref::RelationResidual`]).
    RelationResidual => ranklet::family::pref::RelationResidual {
        /// Dropped: the plain truncation to the K eigenpairs.
        None,
        /// Kept as one constant per relation (one feature per judged item).
        Constant,
    }

    /// `--format` ([`ranklet::args::DataFormat`]).
    DataFormat => ranklet::args::DataFormat {
        /// SVMlight / LETOR lines `label [qid:q] i:v …`.
        Svmlight,
        /// CSV with a header.
        Csv,
    }

    /// `reduce --method` ([`ranklet::ordering::ReduceMethod`]).
    ReduceMethod => ranklet::ordering::ReduceMethod {
        /// Kendall RCDR (003 §3, Fig. 3 with τ).
        RcdrKendall,
        /// Spearman RCDR (Fig. 3 with ρ).
        RcdrSpearman,
        /// PCA of the attributes of the objects in the orders.
        Pca,
    }

    /// `--backend` ([`ranklet::hostbackend::BackendChoice`]).
    Backend => ranklet::hostbackend::BackendChoice {
        /// faer, multi-threaded.
        Faer,
        /// ranklet-core's allocation-free single-threaded implementation.
        Portable,
    }

    /// `--ties` ([`ranklet::data::prefs::Ties`]).
    Ties => ranklet::data::prefs::Ties {
        /// Leave ties out.
        Drop,
        /// A tie `a b` becomes `a ≻ b` and `b ≻ a`.
        Both,
    }

    /// `--pair-kernel` ([`ranklet::family::kron::PairArg`]).
    PairKernel => ranklet::family::kron::PairArg {
        /// Ordinary Kronecker kernel `k(u,ū)·k(v,v̄)` (004 eq. 7).
        Kron,
        /// Symmetric Kronecker kernel (004 eq. 8), one node set only.
        Sym,
        /// Reciprocal Kronecker kernel (004 eq. 9), one node set only.
        Recip,
    }

    /// `bench train --algo` ([`ranklet::family::Algo`]).
    Algo => ranklet::family::Algo {
        /// Regularised least squares on the scores (ridge regression).
        Rls,
        /// Least squares on score differences within queries / pairs.
        Rankrls,
        /// Regression on the top-p kernel principal components.
        Kpcr,
        /// RankRLS on the top-p kernel principal components (000 §4).
        Kpcrank,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every value reads as the library's variant of the same name: the
    /// names clap accepts are the library's (`name()` where it has one).
    #[test]
    fn each_value_converts_to_the_library_variant_of_its_name() {
        use ranklet::family::kron::PairArg as P;
        use ranklet::hostbackend::BackendChoice as B;
        use ranklet::ordering::ReduceMethod as R;
        for v in Backend::value_variants() {
            let name = v.to_possible_value().map(|p| p.get_name().to_string());
            assert_eq!(name.as_deref(), Some(v.lib().name()), "{v:?}");
        }
        for v in ReduceMethod::value_variants() {
            let name = v.to_possible_value().map(|p| p.get_name().to_string());
            assert_eq!(name.as_deref(), Some(v.lib().name()), "{v:?}");
        }
        for v in QueryWeight::value_variants() {
            let name = v.to_possible_value().map(|p| p.get_name().to_string());
            assert_eq!(name.as_deref(), Some(v.lib().name()), "{v:?}");
        }
        for v in RelationResidual::value_variants() {
            let name = v.to_possible_value().map(|p| p.get_name().to_string());
            assert_eq!(name.as_deref(), Some(v.lib().name()), "{v:?}");
        }
        for v in Algo::value_variants() {
            let name = v.to_possible_value().map(|p| p.get_name().to_string());
            assert_eq!(name.as_deref(), Some(v.lib().name()), "{v:?}");
        }
        for v in PairKernel::value_variants() {
            let name = v.to_possible_value().map(|p| p.get_name().to_string());
            assert_eq!(name.as_deref(), Some(v.lib().name()), "{v:?}");
        }
        let parse = |s: &str| lib_enum::<Backend>().parse_ref(&clap::Command::new("t"), None, std::ffi::OsStr::new(s));
        assert_eq!(parse("portable").ok(), Some(B::Portable));
        assert!(parse("gpu").is_err());
        assert_eq!(ReduceMethod::Pca.lib(), R::Pca);
        assert_eq!(PairKernel::Recip.lib(), P::Recip);
    }
}
