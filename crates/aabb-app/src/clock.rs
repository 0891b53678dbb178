//! The window's own clock: how long a whole frame takes (from the start of one frame to the
//! start of the next, so painting is included), how many frames and steps a second the window
//! makes, and whether a playing scene keeps real time. The statistics and the status line
//! read it, so the app never hides how slow it is.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// How far back the step rate looks.
pub const WINDOW: Duration = Duration::from_secs(2);
/// How far back the frame time looks.
pub const FRAME_WINDOW: Duration = Duration::from_secs(1);
/// An interval longer than this after a frame that asked for no next frame is the window
/// waiting for input, not a frame's cost.
const IDLE: Duration = Duration::from_millis(250);
/// Steps a second of real time at speed 1 (the clock runs 60 steps a second).
pub const STEPS_PER_SEC: f64 = 60.0;
/// Below this share of real time, the status line says the run falls behind.
pub const BEHIND: f64 = 0.9;

/// One frame's start, the step then and whether the scene was playing.
#[derive(Clone, Copy, Debug)]
struct Mark {
    at: Instant,
    step: u64,
    playing: bool,
}

/// The recent frames, and what they say.
#[derive(Clone, Debug, Default)]
pub struct FrameClock {
    marks: VecDeque<Mark>,
    /// Frame intervals (seconds) of the recent frames that count (not idle waits).
    intervals: VecDeque<(Instant, f64)>,
    /// Wall-clock milliseconds of a whole step (motion, broad phase, recording), averaged
    /// over the recent steps.
    step_ms: Option<f64>,
}

/// What the clock says of the recent frames.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FrameRates {
    /// Mean whole-frame time over the last second, ms (`None` before two frames in a row
    /// were drawn).
    pub frame_ms: Option<f64>,
    /// Frames a second (from the frame time).
    pub fps: Option<f64>,
    /// Steps a second over the recent frames while playing (`None` when not playing or too
    /// early to tell).
    pub steps_per_sec: Option<f64>,
}

impl FrameClock {
    /// Notes a frame's start at `now`, at step `step`, `playing` or not; `asked` is true when
    /// the frame before asked for this one at once (playing, an animation, a drag), so the
    /// wait between them is a frame's cost, not the window idling until input came.
    pub fn frame_started(&mut self, now: Instant, step: u64, playing: bool, asked: bool) {
        if let Some(prev) = self.marks.back() {
            let dt = now.saturating_duration_since(prev.at);
            if asked || dt <= IDLE {
                self.intervals.push_back((now, dt.as_secs_f64()));
            }
        }
        self.marks.push_back(Mark {
            at: now,
            step,
            playing,
        });
        while self
            .marks
            .front()
            .is_some_and(|m| now.saturating_duration_since(m.at) > WINDOW)
            && self.marks.len() > 2
        {
            self.marks.pop_front();
        }
        while self
            .intervals
            .front()
            .is_some_and(|(t, _)| now.saturating_duration_since(*t) > WINDOW)
            && self.intervals.len() > 1
        {
            self.intervals.pop_front();
        }
    }

    /// Notes that `steps` steps took `took` of wall-clock time in one frame.
    pub fn stepped(&mut self, steps: u32, took: Duration) {
        if steps == 0 {
            return;
        }
        let ms = took.as_secs_f64() * 1e3 / f64::from(steps);
        self.step_ms = Some(match self.step_ms {
            Some(old) => 0.8 * old + 0.2 * ms,
            None => ms,
        });
    }

    /// A whole step's wall-clock milliseconds, averaged over the recent steps.
    #[must_use]
    pub fn step_ms(&self) -> Option<f64> {
        self.step_ms
    }

    /// What the recent frames say.
    #[must_use]
    pub fn rates(&self) -> FrameRates {
        // The mean frame over the last second (at least the last frame): a slow frame shows at
        // once, and a steady rate reads steadily.
        let frame_ms = self.intervals.back().map(|&(last, _)| {
            let recent: Vec<f64> = self
                .intervals
                .iter()
                .filter(|&&(t, _)| last.saturating_duration_since(t) < FRAME_WINDOW)
                .map(|&(_, s)| s)
                .collect();
            recent.iter().sum::<f64>() / recent.len().max(1) as f64 * 1e3
        });
        let fps = frame_ms.filter(|&ms| ms > 0.0).map(|ms| 1e3 / ms);
        // Steps a second over the longest run of playing frames at the end.
        let steps_per_sec = {
            let last = self.marks.back();
            let first = self.marks.iter().rev().take_while(|m| m.playing).last();
            match (first, last) {
                (Some(a), Some(b)) if b.playing => {
                    let secs = b.at.saturating_duration_since(a.at).as_secs_f64();
                    (secs >= 0.5 && b.step >= a.step).then(|| (b.step - a.step) as f64 / secs)
                }
                _ => None,
            }
        };
        FrameRates {
            frame_ms,
            fps,
            steps_per_sec,
        }
    }
}

impl FrameRates {
    /// The share of real time a run at `speed` keeps (1 = real time), when playing.
    #[must_use]
    pub fn real_time_share(&self, speed: f32) -> Option<f64> {
        let want = STEPS_PER_SEC * f64::from(speed);
        self.steps_per_sec
            .filter(|_| want > 0.0)
            .map(|s| (s / want).min(1.0))
    }

    /// The status line's note when a run at `speed` falls behind real time, naming what takes
    /// the time: `step_ms` (a step's broad phase and motion) or the frame.
    #[must_use]
    pub fn behind_note(&self, speed: f32, step_ms: f64) -> Option<String> {
        let share = self.real_time_share(speed)?;
        if share >= BEHIND {
            return None;
        }
        let frame = self.frame_ms.unwrap_or(0.0);
        let steps_a_frame = self.steps_per_sec.unwrap_or(0.0) * frame / 1e3;
        let why = if step_ms * steps_a_frame.max(1.0) >= 0.5 * frame {
            format!("the step takes {step_ms:.0} ms")
        } else {
            format!("a frame takes {frame:.0} ms to draw")
        };
        Some(format!("running at {share:.2}x real time: {why}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn frame_time_and_steps_of_a_steady_run() {
        let t0 = Instant::now();
        let mut c = FrameClock::default();
        // 32 frames 62.5 ms apart, 2 steps a frame, playing.
        for i in 0..32u64 {
            c.frame_started(t0 + Duration::from_micros(62_500 * i), 2 * i, true, true);
        }
        let r = c.rates();
        assert_eq!(r.frame_ms, Some(62.5));
        assert_eq!(r.fps, Some(16.0));
        // 62 steps over 1.9375 s.
        assert_eq!(r.steps_per_sec, Some(32.0));
        assert_eq!(r.real_time_share(1.0), Some(32.0 / 60.0));
        assert_eq!(
            r.behind_note(1.0, 40.0).as_deref(),
            Some("running at 0.53x real time: the step takes 40 ms")
        );
        assert_eq!(
            r.behind_note(1.0, 1.0).as_deref(),
            Some("running at 0.53x real time: a frame takes 62 ms to draw")
        );
        // At half the speed the run keeps up.
        assert_eq!(r.behind_note(0.5, 40.0), None);
    }

    #[test]
    fn idle_waits_are_not_frames_and_a_slow_frame_shows() {
        let t0 = Instant::now();
        let mut c = FrameClock::default();
        c.frame_started(t0, 0, false, false);
        // Five seconds idle, then frames 10 ms apart on input.
        for i in 0..5u64 {
            c.frame_started(t0 + ms(5000 + 10 * i), 0, false, false);
        }
        assert_eq!(c.rates().frame_ms, Some(10.0));
        assert_eq!(c.rates().steps_per_sec, None);
        // Frames that ask for the next one at once and take 300 ms are counted.
        let mut slow = FrameClock::default();
        for i in 0..5u64 {
            slow.frame_started(t0 + ms(300 * i), 0, false, true);
        }
        assert_eq!(slow.rates().frame_ms, Some(300.0));
    }
}
