//! Runs one execution with panics caught: a quiet panic hook records the panic's message and
//! location (no backtrace) for the thread that panicked, and [`guarded`] turns the unwind into
//! an `Err` carrying them.
//!
//! Invariants: once [`install_quiet_hook`] ran, a panic inside [`guarded`] prints nothing; a
//! panic anywhere else still reaches the previous hook (a harness bug must stay visible).

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;

thread_local! {
    /// Whether this thread is inside [`guarded`].
    static GUARDED: Cell<bool> = const { Cell::new(false) };
    /// The last panic caught on this thread: message and `file:line:col`.
    static LAST: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Installs the hook (once per process).
pub fn install_quiet_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if GUARDED.with(Cell::get) {
                let place = info.location().map_or_else(String::new, |l| {
                    format!(" at {}:{}:{}", l.file(), l.line(), l.column())
                });
                let message = payload_text(info.payload());
                LAST.with(|last| *last.borrow_mut() = Some(format!("{message}{place}")));
            } else {
                previous(info);
            }
        }));
    });
}

/// Runs `f`; a panic becomes `Err("panicked: <message> at <file:line:col>")`.
///
/// # Errors
/// When `f` panics.
pub fn guarded<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    GUARDED.with(|g| g.set(true));
    LAST.with(|last| *last.borrow_mut() = None);
    let result = panic::catch_unwind(AssertUnwindSafe(f));
    GUARDED.with(|g| g.set(false));
    result.map_err(|payload| {
        let recorded = LAST.with(|last| last.borrow_mut().take());
        format!(
            "panicked: {}",
            recorded.unwrap_or_else(|| payload_text(payload.as_ref()))
        )
    })
}

/// A panic payload's text.
fn payload_text(payload: &(dyn Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic with a non-text payload".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_is_caught_with_its_place() {
        install_quiet_hook();
        let caught = guarded(|| -> u8 { panic!("boom {}", 7) }).expect_err("caught");
        assert!(caught.starts_with("panicked: boom 7 at "), "{caught}");
        assert!(caught.contains("guard.rs:"), "{caught}");
        assert_eq!(guarded(|| 3), Ok(3));
    }
}
