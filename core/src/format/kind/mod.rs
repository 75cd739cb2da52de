//! Model kinds: one module per kind, and the registry that ties them to
//! the header's kind code, to [`Model`] (what the writer takes) and to the
//! parser's and scorer's dispatch.
//!
//! A kind's module holds everything about it: the layout of its sections,
//! its view (what [`ModelView`](super::ModelView) hands out), its writer
//! spec, and its scorer; it implements [`Kind`] for its view type. Adding a
//! kind is that module, one `pub mod` line and one line in the
//! `registry!` below (plus its section ids in `section_id`, where ids of
//! all kinds sit together so that they stay unique).

pub mod bilinear;
pub mod dual_pair;
pub mod kernel_expansion;
pub mod linear;
pub mod online;
pub mod pref_gp;
pub mod pref_inductive;
pub mod pref_lowrank;
pub mod quant;

use super::centring::FeatureCentring;
use super::header::{Header, Sections};
use super::input::Centred;
use super::sum::Arith;
use super::write::SectionSink;
use super::{ElementType, EmitError, ParseError, ScoreError, Version};
use bilinear::{BilinearModel, BilinearView};
use dual_pair::{DualPairModel, DualPairView};
use kernel_expansion::{KernelModel, KernelView};
use linear::{LinearModel, LinearView};
use online::{OnlineModel, OnlineView};
use pref_gp::{PrefGpModel, PrefGpView};
use pref_inductive::{PrefInductiveModel, PrefInductiveView};
use pref_lowrank::{PrefLowRankModel, PrefLowRankView};
use quant::{QuantModel, QuantView};

/// What a model kind provides, implemented by its view type.
pub(crate) trait Kind<'a>: Copy {
    /// The writer's description of a model of this kind.
    type Spec: Copy;

    /// The format version that introduced this kind: written as the file's
    /// format and minimum reader version; a file claiming an older version
    /// is rejected (`BadHeader`).
    const SINCE: Version;

    /// The section ids this kind may carry besides `META` and
    /// `FEATURE_CENTRING`; the parser rejects every other known id.
    const SECTIONS: &'static [u16];

    /// Whether this build parses (and so can hold) models of this kind:
    /// always for linear models; without the feature `all-kinds`, other
    /// kinds only where the build can score them. A kind that is not in the
    /// build is refused with [`ParseError::KindNotInBuild`], and its parser
    /// is not linked.
    const IN_BUILD: bool;

    /// Whether a non-finite input always makes the score non-finite, so
    /// that the `f32` dense entry point may scan the input only when the
    /// score overflows (see `ModelView::score_f32`).
    const LAZY_INPUT_CHECK: bool;

    /// Parses and validates this kind's sections.
    fn parse(sections: &Sections<'a>, header: &Header) -> Result<Self, ParseError>;

    /// The feature dimension d of a spec.
    fn dim(spec: &Self::Spec) -> usize;

    /// The spec's feature centring, if any.
    fn centring(spec: &Self::Spec) -> Option<FeatureCentring<'a>>;

    /// Checks everything the parser would check, on the spec.
    fn check(spec: &Self::Spec, et: ElementType) -> Result<(), EmitError>;

    /// Pushes the kind's sections (ascending id) for the writer.
    fn sections(spec: &Self::Spec, sink: &mut SectionSink<'_, 'a>);

    /// The score of a checked input, in the arithmetic type `R`.
    fn eval<R: Arith>(&self, x: Centred<'_, '_>, dim: usize) -> Result<R, ScoreError>;
}

/// Generates [`ModelKind`] (through `codes!`), [`Model`], the parsed body
/// and their dispatch from one line per kind:
/// `doc, KindVariant = code => ModelVariant(SpecType, ViewType)`.
macro_rules! registry {
    ($($(#[$doc:meta])* $kind:ident = $code:literal => $model:ident($spec:ident, $view:ident),)+) => {
        codes! {
            /// What the parameters describe and how a score is computed.
            ///
            /// Code 4 (GP posterior) is reserved, and codes 8–9 (format
            /// 1.4) and 10 (format 1.5) are the preference GPs; a reader that does not
            /// know a kind rejects the file with [`ParseError::BadKind`]
            /// (files of newer kinds also carry a newer minimum reader
            /// version, so an old reader says `ReaderTooOld` first).
            #[non_exhaustive]
            pub enum ModelKind: u8 {
                $($(#[$doc])* $kind = $code,)+
            }
        }

        /// The model to write.
        #[derive(Clone, Copy, Debug)]
        pub enum Model<'a> {
            $($(#[$doc])* $model($spec<'a>),)+
        }

        /// The parameters of a parsed model, by kind.
        #[derive(Clone, Copy, Debug)]
        pub(crate) enum Body<'a> {
            $($kind($view<'a>),)+
        }

        impl<'a> Model<'a> {
            /// The kind code written to the header.
            pub(crate) fn kind(&self) -> ModelKind {
                match self {
                    $(Model::$model(_) => ModelKind::$kind,)+
                }
            }

            /// The format version that introduced the kind.
            pub(crate) fn since(&self) -> Version {
                match self {
                    $(Model::$model(_) => <$view<'a> as Kind<'a>>::SINCE,)+
                }
            }

            /// The feature dimension d.
            pub(crate) fn dim(&self) -> usize {
                match self {
                    $(Model::$model(m) => <$view<'a> as Kind<'a>>::dim(m),)+
                }
            }

            /// The feature centring, if any.
            pub(crate) fn centring(&self) -> Option<FeatureCentring<'a>> {
                match self {
                    $(Model::$model(m) => <$view<'a> as Kind<'a>>::centring(m),)+
                }
            }

            /// Checks the spec as the parser would check the file.
            pub(crate) fn check(&self, et: ElementType) -> Result<(), EmitError> {
                match self {
                    $(Model::$model(m) => <$view<'a> as Kind<'a>>::check(m, et),)+
                }
            }

            /// Pushes the kind's sections.
            pub(crate) fn sections(&self, sink: &mut SectionSink<'_, 'a>) {
                match self {
                    $(Model::$model(m) => <$view<'a> as Kind<'a>>::sections(m, sink),)+
                }
            }
        }

        impl<'a> Body<'a> {
            /// Parses the kind's sections, after rejecting the sections
            /// of other kinds.
            pub(crate) fn parse(sections: &Sections<'a>, header: &Header) -> Result<Self, ParseError> {
                match header.kind {
                    $(ModelKind::$kind => {
                        if !<$view<'a> as Kind<'a>>::IN_BUILD {
                            return Err(ParseError::KindNotInBuild { code: header.kind.code() });
                        }
                        if header.version < <$view<'a> as Kind<'a>>::SINCE {
                            return Err(ParseError::BadHeader);
                        }
                        sections.only(<$view<'a> as Kind<'a>>::SECTIONS)?;
                        Ok(Body::$kind(<$view<'a> as Kind<'a>>::parse(sections, header)?))
                    })+
                }
            }

            /// See [`Kind::LAZY_INPUT_CHECK`].
            pub(crate) fn lazy_input_check(&self) -> bool {
                match self {
                    $(Body::$kind(_) => <$view<'a> as Kind<'a>>::LAZY_INPUT_CHECK,)+
                }
            }

            /// The score of a checked input.
            pub(crate) fn eval<R: Arith>(&self, x: Centred<'_, '_>, dim: usize) -> Result<R, ScoreError> {
                match self {
                    $(Body::$kind(v) => v.eval(x, dim),)+
                }
            }
        }
    };
}

registry! {
    /// `score(x) = b + Σ_j w_j·x'_j`.
    Linear = 1 => Linear(LinearModel, LinearView),
    /// `score(x) = b + Σ_i a_i·k̃(x', x_i)` over stored basis rows.
    KernelExpansion = 2 => Kernel(KernelModel, KernelView),
    /// A pair model with linear node kernels:
    /// `score(u, v) = b + x_uᵀ·W·x_v` (scored by the `score_pair*`
    /// functions).
    Bilinear = 3 => Bilinear(BilinearModel, BilinearView),
    /// The state of an online RankRLS learner; scores as
    /// `b + Σ_j w_j·x_j`.
    OnlineRankRls = 5 => Online(OnlineModel, OnlineView),
    /// A pair model in dual form over stored node basis rows:
    /// `score(u, v) = b + k_uᵀ·A·k_v` (scored by the `score_pair*`
    /// functions).
    DualPair = 6 => DualPair(DualPairModel, DualPairView),
    /// A linear model with integer weights and inputs:
    /// `score(q) = B + Σ_j W_j·q_j` over inputs quantised per feature, `c·score`
    /// in the model's units (scored exactly by `score_dense_i16` and
    /// `score_dense_quant`).
    QuantLinear = 7 => Quant(QuantModel, QuantView),
    /// A preference-GP posterior `N(μ, Σ)` over a fixed set of N items
    /// (asked for `P(i ≻ j)`, rankings and the next pair by
    /// [`crate::learn::pref::device`], not scored by row).
    PrefGp = 8 => PrefGp(PrefGpModel, PrefGpView),
    /// An inductive preference GP: basis rows, `α` and `W` for the mean and
    /// variance of new items (`PrefInductiveView::predict`).
    PrefInductive = 9 => PrefInductive(PrefInductiveModel, PrefInductiveView),
    /// A preference-GP posterior over a fixed set of N items in low-rank
    /// form, `Σ = CCᵀ + diag(r)` (`PrefLowRankView::prob`; not scored by
    /// row).
    PrefLowRank = 10 => PrefLowRank(PrefLowRankModel, PrefLowRankView),
}
