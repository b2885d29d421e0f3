//! Typed prompts: rendering, overrides, validation and structured
//! output, tested through `north-prompt`'s public interface.
//!
//! One test binary for the crate (modules, not files, are the unit), so
//! the suite links once; helpers are the modules the tests `use`.

mod cloning;
mod conformance;
mod custom_sections;
mod disclosure;
mod overrides;
mod properties;
mod render;
mod resources;
mod structured_output;
mod validation;
