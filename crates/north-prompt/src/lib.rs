//! Typed prompt templates (spec/prompt-system.md). Implementation in progress.
