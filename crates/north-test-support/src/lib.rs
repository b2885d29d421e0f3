//! Test support. Implementation in progress.
