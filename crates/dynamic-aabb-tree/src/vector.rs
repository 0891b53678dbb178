//! The vector trait that lets one tree serve 2D (`glam::Vec2`) and 3D (`glam::Vec3`) boxes.

use glam::{Vec2, Vec3};
use std::fmt::Debug;
use std::ops::{Add, Mul, Sub};

/// A 2D or 3D `f32` vector the tree can bound: implemented for [`Vec2`] and [`Vec3`].
pub trait Vector:
    Copy
    + PartialEq
    + Debug
    + Default
    + Send
    + Sync
    + 'static
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<f32, Output = Self>
{
    /// Number of components: 2 or 3.
    const DIM: usize;
    /// All components set to `v`.
    fn splat(v: f32) -> Self;
    /// Component-wise minimum.
    #[must_use]
    fn min_by_component(self, other: Self) -> Self;
    /// Component-wise maximum.
    #[must_use]
    fn max_by_component(self, other: Self) -> Self;
    /// Component `axis` (0 = x, 1 = y, 2 = z).
    fn axis(self, axis: usize) -> f32;
    /// Sets component `axis`.
    fn set_axis(&mut self, axis: usize, value: f32);
    /// True when every component is finite.
    fn all_finite(self) -> bool;
    /// True when every component of `self` is `<=` the matching one of `other` (every
    /// comparison made, combined without branches; false when either side has a NaN).
    fn all_le(self, other: Self) -> bool;
    /// Product of the components (area in 2D, volume in 3D) of an extent.
    fn product(self) -> f32;
    /// Sum of the components of an extent (half the perimeter in 2D, a quarter of the edge length in 3D).
    fn sum(self) -> f32;
    /// Half the surface measure of a box with this extent: `x + y` in 2D (half perimeter),
    /// `xy + yz + zx` in 3D (half surface area). This is the SAH cost of a box.
    fn half_area(self) -> f32;
}

impl Vector for Vec2 {
    const DIM: usize = 2;
    #[inline]
    fn splat(v: f32) -> Self {
        Vec2::splat(v)
    }
    #[inline]
    fn min_by_component(self, other: Self) -> Self {
        self.min(other)
    }
    #[inline]
    fn max_by_component(self, other: Self) -> Self {
        self.max(other)
    }
    #[inline]
    fn axis(self, axis: usize) -> f32 {
        self[axis]
    }
    #[inline]
    fn set_axis(&mut self, axis: usize, value: f32) {
        self[axis] = value;
    }
    #[inline]
    fn all_finite(self) -> bool {
        self.is_finite()
    }
    #[inline]
    fn all_le(self, other: Self) -> bool {
        (self.x <= other.x) & (self.y <= other.y)
    }
    #[inline]
    fn product(self) -> f32 {
        self.x * self.y
    }
    #[inline]
    fn sum(self) -> f32 {
        self.x + self.y
    }
    #[inline]
    fn half_area(self) -> f32 {
        self.x + self.y
    }
}

impl Vector for Vec3 {
    const DIM: usize = 3;
    #[inline]
    fn splat(v: f32) -> Self {
        Vec3::splat(v)
    }
    #[inline]
    fn min_by_component(self, other: Self) -> Self {
        self.min(other)
    }
    #[inline]
    fn max_by_component(self, other: Self) -> Self {
        self.max(other)
    }
    #[inline]
    fn axis(self, axis: usize) -> f32 {
        self[axis]
    }
    #[inline]
    fn set_axis(&mut self, axis: usize, value: f32) {
        self[axis] = value;
    }
    #[inline]
    fn all_finite(self) -> bool {
        self.is_finite()
    }
    #[inline]
    fn all_le(self, other: Self) -> bool {
        (self.x <= other.x) & (self.y <= other.y) & (self.z <= other.z)
    }
    #[inline]
    fn product(self) -> f32 {
        self.x * self.y * self.z
    }
    #[inline]
    fn sum(self) -> f32 {
        self.x + self.y + self.z
    }
    #[inline]
    fn half_area(self) -> f32 {
        self.x * self.y + self.y * self.z + self.z * self.x
    }
}
