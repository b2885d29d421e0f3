//! Model backends. Implementation in progress.
