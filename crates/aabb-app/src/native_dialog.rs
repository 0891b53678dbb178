//! The desktop's own file dialog (rfd: the XDG desktop portal on Linux, found through
//! libdbus at run time, then zenity; the system dialogs on Windows and macOS), without
//! blocking the UI thread: rfd's async dialog is polled once a frame.
//!
//! rfd answers `None` both when the user cancels and when there is no dialog to show (no
//! D-Bus session, no portal and no zenity). The two are told apart by time: no person
//! cancels a dialog within [`UNAVAILABLE_WITHIN`] of asking for it, while a missing portal
//! answers at once. Before asking, a Linux desktop with neither a D-Bus session bus nor
//! zenity is known to have no dialog.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use super::files::{FilePurpose, start_folder};

/// An answer of "no file" sooner than this after asking means there was no dialog.
pub const UNAVAILABLE_WITHIN: Duration = Duration::from_millis(700);

/// A native dialog's answer, polled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NativeAnswer {
    /// Still open.
    Pending,
    /// The file picked (for a save, with the purpose's extension).
    Picked(PathBuf),
    /// Closed without a file.
    Cancelled,
    /// There was no dialog to show: use the in-app one.
    Unavailable,
}

type Pick = Pin<Box<dyn Future<Output = Option<rfd::FileHandle>>>>;

/// A native dialog while it is open.
pub struct NativeDialog {
    /// What it is for.
    pub purpose: FilePurpose,
    asked: Instant,
    pick: Pick,
}

impl NativeDialog {
    /// Asks the desktop for a dialog for `purpose`, starting in the folder of `current` with
    /// the purpose's suggested name; `None` when this desktop is known to have none.
    #[must_use]
    pub fn open(purpose: FilePurpose, current: Option<&Path>) -> Option<Self> {
        if !may_have_dialog() {
            return None;
        }
        let dialog = rfd::AsyncFileDialog::new()
            .set_title(purpose.title())
            .set_directory(start_folder(current))
            .add_filter(purpose.filter_name(), purpose.extensions());
        let pick: Pick = if purpose.saves() {
            Box::pin(
                dialog
                    .set_file_name(purpose.default_name(current))
                    .save_file(),
            )
        } else {
            Box::pin(dialog.pick_file())
        };
        Some(Self {
            purpose,
            asked: Instant::now(),
            pick,
        })
    }

    /// Its answer so far (never waits).
    pub fn poll(&mut self) -> NativeAnswer {
        let mut cx = Context::from_waker(Waker::noop());
        match self.pick.as_mut().poll(&mut cx) {
            Poll::Pending => NativeAnswer::Pending,
            Poll::Ready(Some(file)) => {
                NativeAnswer::Picked(self.purpose.with_extension(file.path().to_path_buf()))
            }
            Poll::Ready(None) => none_means(self.asked.elapsed()),
        }
    }
}

/// What "no file", `after` asking, means.
#[must_use]
pub fn none_means(after: Duration) -> NativeAnswer {
    if after < UNAVAILABLE_WITHIN {
        NativeAnswer::Unavailable
    } else {
        NativeAnswer::Cancelled
    }
}

/// False when this desktop certainly has no native dialog: on Linux and the BSDs, no D-Bus
/// session bus (so no portal) and no `zenity` on the `PATH`.
fn may_have_dialog() -> bool {
    #[cfg(all(unix, not(target_os = "macos")))]
    {
        let bus = std::env::var_os("DBUS_SESSION_BUS_ADDRESS").is_some_and(|a| !a.is_empty())
            || std::env::var_os("XDG_RUNTIME_DIR")
                .is_some_and(|d| Path::new(&d).join("bus").exists());
        let zenity = std::env::var_os("PATH")
            .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join("zenity").is_file()));
        bus || zenity
    }
    #[cfg(not(all(unix, not(target_os = "macos"))))]
    {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quick_none_is_no_dialog_a_slow_one_a_cancel() {
        assert_eq!(
            none_means(Duration::from_millis(5)),
            NativeAnswer::Unavailable
        );
        assert_eq!(
            none_means(UNAVAILABLE_WITHIN - Duration::from_millis(1)),
            NativeAnswer::Unavailable
        );
        assert_eq!(none_means(UNAVAILABLE_WITHIN), NativeAnswer::Cancelled);
        assert_eq!(none_means(Duration::from_secs(8)), NativeAnswer::Cancelled);
    }
}
