/// A GPU feature a shader needs beyond core WebGPU, declared with `//! requires ...`.
///
/// ```
/// use lumbre_shaders::Requirement;
/// assert_eq!(Requirement::parse("subgroups"), Some(Requirement::Subgroups));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Requirement {
    /// Subgroup operations (`enable subgroups;`).
    Subgroups,
    /// 64-bit integer types (`u64`, `i64`).
    Int64,
    /// `subgroupBarrier()` (with [`Subgroups`](Requirement::Subgroups)).
    SubgroupBarrier,
}

impl Requirement {
    /// Parses a directive word (`subgroups`, `int64`, `subgroup_barrier`).
    pub fn parse(word: &str) -> Option<Self> {
        match word {
            "subgroups" => Some(Self::Subgroups),
            "int64" => Some(Self::Int64),
            "subgroup_barrier" => Some(Self::SubgroupBarrier),
            _ => None,
        }
    }

    /// The path of this value in generated code.
    #[doc(hidden)]
    pub fn rust_name(self) -> &'static str {
        match self {
            Self::Subgroups => "crate::Requirement::Subgroups",
            Self::Int64 => "crate::Requirement::Int64",
            Self::SubgroupBarrier => "crate::Requirement::SubgroupBarrier",
        }
    }
}
