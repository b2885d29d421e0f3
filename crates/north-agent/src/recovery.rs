//! Panics North recovers from. A tool that panics (a bug) fails its call
//! instead of ending the session; while such a call is being polled,
//! [`recovering`] is true on that thread, so a process-wide panic hook can
//! tell a recovered panic from a fatal one.

use std::any::Any;
use std::cell::Cell;
use std::future::Future;
use std::panic::AssertUnwindSafe;

use futures::FutureExt;

thread_local! {
    static RECOVERING: Cell<u32> = const { Cell::new(0) };
}

/// Whether a panic on this thread, now, will be caught and recovered from.
pub fn recovering() -> bool {
    RECOVERING.with(|r| r.get() > 0)
}

/// The text of a panic's payload (`panic!("…")` gives `&str` or `String`).
pub fn panic_message(payload: &(dyn Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".into())
}

/// Marks this thread as recovering while it lives.
struct Mark;

impl Mark {
    fn enter() -> Mark {
        RECOVERING.with(|r| r.set(r.get() + 1));
        Mark
    }
}

impl Drop for Mark {
    fn drop(&mut self) {
        RECOVERING.with(|r| r.set(r.get().saturating_sub(1)));
    }
}

/// Runs `future`, catching a panic in any of its polls; every poll is
/// marked as [`recovering`] (a future may move between threads, so the mark
/// is set per poll, not once).
pub async fn guarded<F: Future>(future: F) -> std::thread::Result<F::Output> {
    let mut future = std::pin::pin!(AssertUnwindSafe(future).catch_unwind());
    std::future::poll_fn(move |cx| {
        let _mark = Mark::enter();
        future.as_mut().poll(cx)
    })
    .await
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::{guarded, panic_message, recovering};

    #[tokio::test]
    async fn a_panic_in_a_guarded_future_is_caught_and_marked_while_it_runs() {
        assert!(!recovering());
        let seen = guarded(async { recovering() }).await.unwrap();
        assert!(seen, "a poll of the guarded future is marked");
        assert!(!recovering(), "the mark ends with the poll");
        let before = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let caught = guarded(async { panic!("tool bug") }).await;
        std::panic::set_hook(before);
        assert_eq!(panic_message(&*caught.unwrap_err()), "tool bug");
        assert!(!recovering());
    }
}
