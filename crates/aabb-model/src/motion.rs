//! The step rule every moving thing here follows, written once: move by `velocity * dt`,
//! then bounce off the walls (clamped to the wall, the velocity component reversed). The
//! scene's spheres use it in `f64`, the benchmark workload's circles in `f32`.

use std::ops::{Add, Mul};

/// One coordinate advanced by `velocity * dt` and kept in `[lo, hi]`: the new coordinate,
/// and whether it hit a wall (then the caller reverses that velocity component). Below `lo`
/// it is clamped to `lo`, above `hi` to `hi`, checked in that order (so when `lo > hi`, a
/// sphere wider than the world, it sits at `lo` or `hi` and bounces every step).
#[must_use]
#[inline]
pub fn advance_and_bounce<T>(x: T, velocity: T, dt: T, lo: T, hi: T) -> (T, bool)
where
    T: Copy + PartialOrd + Add<Output = T> + Mul<Output = T>,
{
    let x = x + velocity * dt;
    if x < lo {
        (lo, true)
    } else if x > hi {
        (hi, true)
    } else {
        (x, false)
    }
}

#[cfg(test)]
mod tests {
    use super::advance_and_bounce;

    #[test]
    fn moves_inside_and_bounces_at_either_wall() {
        assert_eq!(advance_and_bounce(5.0f32, 2.0, 0.5, 1.0, 9.0), (6.0, false));
        assert_eq!(advance_and_bounce(1.5f32, -2.0, 0.5, 1.0, 9.0), (1.0, true));
        assert_eq!(advance_and_bounce(8.5f64, 2.0, 0.5, 1.0, 9.0), (9.0, true));
        // On the wall exactly: inside (the comparisons are strict).
        assert_eq!(advance_and_bounce(8.0f64, 2.0, 0.5, 1.0, 9.0), (9.0, false));
        // Wider than the world (lo > hi): the low wall wins.
        assert_eq!(advance_and_bounce(5.0f64, 0.0, 0.5, 6.0, 4.0), (6.0, true));
    }
}
