//! Locking that survives a poisoned mutex: a panic in one block (or a user
//! tool) must not make every later block fail.

use std::sync::{Mutex, MutexGuard};

/// `m`'s guard, taking over a poisoned lock.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
