//! The standard benchmark workload of DESIGN.md: deterministic 2D circles (splitmix64, seed
//! 42), the step rule, and the pair hash. Owned by the benchmark work; see `cli::bench`.

/// splitmix64's finaliser.
#[must_use]
#[inline]
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}
