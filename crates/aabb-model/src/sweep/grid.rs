//! The grid of a sweep: a margin range `FROM:TO:STEP`, a list of look-ahead values, and the
//! bounds every grid must keep (points, steps), each refused with a message naming the field.

use super::SweepError;

/// The most points (margins x look-ahead values x tree configurations) one sweep may hold.
pub const MAX_POINTS: usize = 10_000;

/// The most steps a sweep point may take.
pub const MAX_STEPS: u64 = 1_000_000;

/// The most steps a whole sweep may take (points x steps): about 1.4 hours at 0.05 ms a
/// step (1,000 spheres) on one core.
pub const MAX_TOTAL_STEPS: u64 = 100_000_000;

/// A margin range as written on the command line, `FROM:TO:STEP`: the values
/// `FROM, FROM + STEP, ...` up to `TO` (included when the steps land on it, to within a
/// millionth of a step).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MarginRange {
    /// The first margin (>= 0).
    pub from: f64,
    /// The last margin at most (>= `from`).
    pub to: f64,
    /// The distance between two margins (> 0).
    pub step: f64,
}

/// A [`SweepError::Grid`] for `field`.
fn grid_error(field: &'static str, message: String) -> SweepError {
    SweepError::Grid { field, message }
}

impl MarginRange {
    /// Parses `FROM:TO:STEP` (three numbers; the message names the part that is wrong).
    pub fn parse(text: &str) -> Result<MarginRange, SweepError> {
        let err = |message: String| grid_error("margin", message);
        let parts: Vec<&str> = text.split(':').collect();
        let [from, to, step] = parts.as_slice() else {
            return Err(err(format!(
                "expected FROM:TO:STEP (three numbers separated by ':'), got {}",
                quoted(text)
            )));
        };
        let number = |name: &str, s: &str| -> Result<f64, SweepError> {
            s.trim()
                .parse::<f64>()
                .map_err(|_| err(format!("{name} must be a number, got {}", quoted(s))))
        };
        let range = MarginRange {
            from: number("FROM", from)?,
            to: number("TO", to)?,
            step: number("STEP", step)?,
        };
        range.values()?;
        Ok(range)
    }

    /// The margins of the range, each the nearest `f32` to `from + i * step` (computed in
    /// f64, so no error builds up). An error, naming the field `margin`, when a number is not
    /// finite, `from` is negative or past `to`, `step` is not positive, or the range holds
    /// more than [`MAX_POINTS`] values.
    pub fn values(&self) -> Result<Vec<f32>, SweepError> {
        let err = |message: String| grid_error("margin", message);
        let MarginRange { from, to, step } = *self;
        for (name, v) in [("FROM", from), ("TO", to), ("STEP", step)] {
            if !v.is_finite() {
                return Err(err(format!("{name} must be finite, got {v}")));
            }
        }
        if from < 0.0 {
            return Err(err(format!("FROM must be >= 0, got {from}")));
        }
        if from > to {
            return Err(err(format!("FROM ({from}) is greater than TO ({to})")));
        }
        if step <= 0.0 {
            return Err(err(format!("STEP must be > 0, got {step}")));
        }
        if to > f64::from(f32::MAX) {
            return Err(err(format!("TO must be at most {:e}, got {to}", f32::MAX)));
        }
        let intervals = ((to - from) / step + 1e-6).floor();
        if intervals >= MAX_POINTS as f64 {
            return Err(err(format!(
                "{from}:{to}:{step} holds more than {MAX_POINTS} margins; use a larger STEP"
            )));
        }
        let count = intervals as usize + 1;
        let mut values: Vec<f32> = (0..count)
            .map(|i| (from + i as f64 * step) as f32)
            .collect();
        // A step below f32's spacing would repeat a margin: refuse rather than run it twice.
        values.dedup();
        if values.len() < count {
            return Err(err(format!(
                "STEP {step} is finer than f32 can tell apart between {from} and {to}"
            )));
        }
        Ok(values)
    }
}

/// Parses a look-ahead list, `0,0.05,0.1`: numbers (seconds) separated by commas, each
/// finite and >= 0, none twice. The message names the field `lookahead` and the value.
pub fn parse_lookaheads(text: &str) -> Result<Vec<f32>, SweepError> {
    let err = |message: String| grid_error("lookahead", message);
    let mut values: Vec<f32> = Vec::new();
    for part in text.split(',') {
        let part = part.trim();
        if part.is_empty() {
            return Err(err(format!(
                "expected numbers separated by commas, got {}",
                quoted(text)
            )));
        }
        let v: f32 = part
            .parse()
            .map_err(|_| err(format!("{} is not a number", quoted(part))))?;
        if !(v.is_finite() && v >= 0.0) {
            return Err(err(format!(
                "each value must be finite and >= 0 seconds, got {}",
                quoted(part)
            )));
        }
        if values.contains(&v) {
            return Err(err(format!("{v} is listed twice")));
        }
        if values.len() == MAX_POINTS {
            return Err(err(format!("more than {MAX_POINTS} values")));
        }
        values.push(v);
    }
    Ok(values)
}

/// `text` in quotes, shortened and with control characters escaped (it is the user's).
fn quoted(text: &str) -> String {
    format!("\"{}\"", crate::text::excerpt(text, 40))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(r: Result<impl std::fmt::Debug, SweepError>) -> String {
        match r {
            Ok(v) => panic!("expected an error, got {v:?}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn a_range_gives_its_margins_without_drift() {
        let r = MarginRange::parse("0:0.3:0.1").expect("valid");
        assert_eq!(r.values().expect("valid"), vec![0.0, 0.1, 0.2, 0.3]);
        let r = MarginRange::parse("0:0.98:0.02").expect("valid");
        let v = r.values().expect("valid");
        assert_eq!(v.len(), 50);
        assert_eq!(v[49], 0.98);
        // TO not on a step: the last value below it.
        let v = MarginRange::parse("0.1:0.45:0.1").expect("valid").values();
        assert_eq!(v.expect("valid"), vec![0.1, 0.2, 0.3, 0.4]);
        // FROM == TO: one margin.
        let v = MarginRange::parse("0.2:0.2:1").expect("valid").values();
        assert_eq!(v.expect("valid"), vec![0.2]);
    }

    #[test]
    fn bad_ranges_are_refused_naming_the_field_and_the_part() {
        assert_eq!(
            message(MarginRange::parse("0.5:0.1:0.1")),
            "margin: FROM (0.5) is greater than TO (0.1)"
        );
        assert_eq!(
            message(MarginRange::parse("0:1:0")),
            "margin: STEP must be > 0, got 0"
        );
        assert_eq!(
            message(MarginRange::parse("0:1:-0.1")),
            "margin: STEP must be > 0, got -0.1"
        );
        assert_eq!(
            message(MarginRange::parse("0:inf:1")),
            "margin: TO must be finite, got inf"
        );
        assert_eq!(
            message(MarginRange::parse("NaN:1:1")),
            "margin: FROM must be finite, got NaN"
        );
        assert_eq!(
            message(MarginRange::parse("-1:1:1")),
            "margin: FROM must be >= 0, got -1"
        );
        assert_eq!(
            message(MarginRange::parse("0:1")),
            "margin: expected FROM:TO:STEP (three numbers separated by ':'), got \"0:1\""
        );
        assert_eq!(
            message(MarginRange::parse("0:x:1")),
            "margin: TO must be a number, got \"x\""
        );
        assert_eq!(
            message(MarginRange::parse("0:10:0.001")),
            "margin: 0:10:0.001 holds more than 10000 margins; use a larger STEP"
        );
        assert_eq!(
            message(MarginRange::parse("1:1.0000001:0.00000001")),
            "margin: STEP 0.00000001 is finer than f32 can tell apart between 1 and 1.0000001"
        );
    }

    #[test]
    fn lookahead_lists_are_checked() {
        assert_eq!(
            parse_lookaheads("0, 0.05,0.1").expect("valid"),
            vec![0.0, 0.05, 0.1]
        );
        assert_eq!(
            message(parse_lookaheads("0,,1")),
            "lookahead: expected numbers separated by commas, got \"0,,1\""
        );
        assert_eq!(
            message(parse_lookaheads("0,-1")),
            "lookahead: each value must be finite and >= 0 seconds, got \"-1\""
        );
        assert_eq!(
            message(parse_lookaheads("nan")),
            "lookahead: each value must be finite and >= 0 seconds, got \"nan\""
        );
        assert_eq!(
            message(parse_lookaheads("0.1,0.1")),
            "lookahead: 0.1 is listed twice"
        );
        assert_eq!(
            message(parse_lookaheads("a")),
            "lookahead: \"a\" is not a number"
        );
    }
}
