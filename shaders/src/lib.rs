//! Every WGSL shader of [Lumbre](https://github.com/lumbre-rs/lumbre), composed from the
//! files under `wgsl/` and validated by naga when this crate builds.
//!
//! Each shader is a [`Shader`] constant in a module named after its folder:
//!
//! ```
//! let copy = lumbre_shaders::runtime::COPY_VEC4;
//! assert_eq!(copy.name, "runtime/copy:vec4"); // the vec4 variant of wgsl/runtime/copy.wgsl
//! assert!(copy.entry_points.contains(&"main"));
//! assert!(copy.source.contains("fn flat_index")); // spliced in from wgsl/shared/dispatch.wgsl
//! assert!(copy.source.contains("alias Elem = vec4<u32>;")); // its `define vec4:` line
//! ```
//!
//! Each folder is a cargo feature of the same name (`runtime`, `compact`, `morton`, ...),
//! all on by default (`all`); a crate that needs only some groups turns the default off and
//! names them, and only those are composed and validated. [`ALL`] lists what was built.
//!
//! With the `validate` feature, [`compose`] exposes the composer and validator that the
//! build script uses (this is what `cargo xtask validate-shaders` runs).

#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(feature = "validate")]
pub mod compose;

mod requirement;
pub use requirement::Requirement;

/// A composed, validated WGSL compute shader.
///
/// ```
/// for shader in lumbre_shaders::ALL {
///     assert!(!shader.source.is_empty());
/// }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Shader {
    /// Name relative to `wgsl/` without extension, e.g. `runtime/copy`.
    pub name: &'static str,
    /// Composed WGSL source.
    pub source: &'static str,
    /// Compute entry points.
    pub entry_points: &'static [&'static str],
    /// For each entry point, the `@group(0)` binding numbers it uses (ascending).
    pub bindings: &'static [(&'static str, &'static [u32])],
    /// Features the device must have to run it.
    pub requires: &'static [Requirement],
}

impl Shader {
    /// The `@group(0)` bindings `entry` uses, or `None` if there is no such entry point.
    ///
    /// ```
    /// assert_eq!(lumbre_shaders::runtime::COPY_VEC4.bindings_of("main"), Some(&[0u32, 1][..]));
    /// ```
    pub fn bindings_of(&self, entry: &str) -> Option<&'static [u32]> {
        self.bindings.iter().find(|(e, _)| *e == entry).map(|(_, b)| *b)
    }
}

include!(concat!(env!("OUT_DIR"), "/shaders.rs"));
