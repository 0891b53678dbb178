//! Work on a thread of its own that the caller polls: [`Job`], one type for every long job
//! (opening a recording, a sweep, the window's fresh builds of the tree's health, its slow
//! steps). A job runs a closure under a shared control (its progress and its cancel flag,
//! whatever the work keeps there); the caller asks [`Job::is_finished`] each frame and then
//! [`Job::join`]s it, which turns a panic of the work into a message instead of passing it on.

use std::any::Any;
use std::sync::Arc;
use std::thread::JoinHandle;

/// Work running on a thread of its own under a control `C` (progress, cancel), ending with a
/// `T`.
#[derive(Debug)]
pub struct Job<C, T> {
    control: Arc<C>,
    thread: JoinHandle<T>,
}

impl<C: Send + Sync + 'static, T: Send + 'static> Job<C, T> {
    /// Starts `work` on a new thread named `name`, under `control` (shared with it). Fails
    /// only when the system cannot start a thread, saying why.
    pub fn spawn(
        name: &str,
        control: Arc<C>,
        work: impl FnOnce(&C) -> T + Send + 'static,
    ) -> Result<Job<C, T>, String> {
        let shared = Arc::clone(&control);
        let thread = std::thread::Builder::new()
            .name(name.to_owned())
            .spawn(move || work(&shared))
            .map_err(|e| format!("could not start a thread: {e}"))?;
        Ok(Job { control, thread })
    }
}

impl<C, T> Job<C, T> {
    /// The control it runs under (progress, cancel).
    #[must_use]
    pub fn control(&self) -> &Arc<C> {
        &self.control
    }

    /// True once the work has ended: [`Job::join`] then returns at once.
    #[must_use]
    pub fn is_finished(&self) -> bool {
        self.thread.is_finished()
    }

    /// Waits for the end: the work's result, or the message it panicked with.
    pub fn join(self) -> Result<T, String> {
        self.thread
            .join()
            .map_err(|payload| panic_message(payload.as_ref()))
    }
}

/// The message a panic carried (`&str` or `String`), else "no message".
#[must_use]
pub fn panic_message(payload: &(dyn Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

    #[derive(Default)]
    struct Control {
        done: AtomicU64,
        cancel: AtomicBool,
    }

    #[test]
    fn a_job_reports_progress_stops_when_cancelled_and_gives_its_result() {
        let control = Arc::new(Control::default());
        let job = Job::spawn("test", Arc::clone(&control), |c: &Control| {
            let mut n = 0u64;
            while !c.cancel.load(Ordering::Relaxed) {
                n += 1;
                c.done.store(n, Ordering::Relaxed);
                std::thread::yield_now();
            }
            n
        })
        .expect("a thread");
        while job.control().done.load(Ordering::Relaxed) < 3 {
            std::thread::yield_now();
        }
        job.control().cancel.store(true, Ordering::Relaxed);
        let n = job.join().expect("no panic");
        assert_eq!(n, control.done.load(Ordering::Relaxed));
        assert!(n >= 3);
    }

    #[test]
    fn a_panic_becomes_its_message() {
        let job = Job::spawn("test", Arc::new(()), |_: &()| -> u32 {
            panic!("the work broke at step {}", 7)
        })
        .expect("a thread");
        assert_eq!(job.join(), Err("the work broke at step 7".to_owned()));
        let job = Job::spawn("test", Arc::new(()), |_: &()| -> u32 {
            std::panic::panic_any(42_u8)
        })
        .expect("a thread");
        assert_eq!(job.join(), Err("no message".to_owned()));
    }
}
