//! The event recorder: what the tree did (insert, remove, reinsert, rotation, rebuild), kept
//! only while recording is on, for the debugger to show and replay.

use super::{DynamicTree, TreeEvent, Vector};

impl<V: Vector, T: Copy> DynamicTree<V, T> {
    /// Turns the event recorder on or off (off by default); turning it off clears it.
    pub fn set_recording(&mut self, on: bool) {
        self.recording = on;
        if !on {
            self.events = Vec::new();
        }
    }

    /// True while events are recorded.
    pub fn is_recording(&self) -> bool {
        self.recording
    }

    /// Events recorded since the last call, oldest first.
    pub fn take_events(&mut self) -> Vec<TreeEvent> {
        std::mem::take(&mut self.events)
    }

    /// Records an event when recording is on.
    #[inline]
    pub(crate) fn record(&mut self, event: TreeEvent) {
        if self.recording {
            self.events.push(event);
        }
    }
}
