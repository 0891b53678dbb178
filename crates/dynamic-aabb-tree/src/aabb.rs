//! Axis-aligned bounding boxes over a [`Vector`], with the checks the tree's API boundary needs.

use super::{TreeError, Vector};
#[cfg(feature = "serde")]
use serde::{Deserialize, Serialize};

/// An axis-aligned box `[min, max]` (closed on both ends).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct Aabb<V> {
    /// The least corner.
    pub min: V,
    /// The greatest corner.
    pub max: V,
}

impl<V: Vector> Aabb<V> {
    /// A box from its corners, unchecked (see [`Aabb::try_new`]).
    #[must_use]
    #[inline]
    pub fn new(min: V, max: V) -> Self {
        Self { min, max }
    }

    /// A box from its corners: an error if a number is not finite or `min > max` on an axis.
    pub fn try_new(min: V, max: V) -> Result<Self, TreeError> {
        let b = Self { min, max };
        b.check()?;
        Ok(b)
    }

    /// The box around a centre with half-extent `half`.
    #[must_use]
    #[inline]
    pub fn from_center_half_extent(center: V, half: V) -> Self {
        Self {
            min: center - half,
            max: center + half,
        }
    }

    /// Ok when every number is finite and `min <= max` on every axis.
    pub fn check(&self) -> Result<(), TreeError> {
        if !self.min.all_finite() || !self.max.all_finite() {
            return Err(TreeError::NonFinite);
        }
        if !self.min.all_le(self.max) {
            return Err(TreeError::Inverted);
        }
        Ok(())
    }

    /// The smallest box holding both.
    #[must_use]
    #[inline]
    pub fn union(&self, other: &Self) -> Self {
        Self {
            min: self.min.min_by_component(other.min),
            max: self.max.max_by_component(other.max),
        }
    }

    /// True when `other` lies inside `self` (boundaries included).
    #[must_use]
    #[inline]
    pub fn contains(&self, other: &Self) -> bool {
        self.min.all_le(other.min) && other.max.all_le(self.max)
    }

    /// True when the point lies inside `self` (boundaries included).
    #[must_use]
    #[inline]
    pub fn contains_point(&self, p: V) -> bool {
        self.min.all_le(p) && p.all_le(self.max)
    }

    /// True when the closed boxes share at least one point.
    ///
    /// Every comparison is made and combined with `&`, not `&&`: the traversals test boxes
    /// whose overlap is close to a coin flip, and one branch on the result mispredicts less
    /// than a branch per comparison (callgrind's branch simulation, standard workload at 1,000
    /// circles: 4% fewer mispredicted branches a step, 0.7% fewer instructions).
    #[must_use]
    #[inline]
    pub fn overlaps(&self, other: &Self) -> bool {
        self.min.all_le(other.max) & other.min.all_le(self.max)
    }

    /// `max - min`.
    #[must_use]
    #[inline]
    pub fn extent(&self) -> V {
        self.max - self.min
    }

    /// The centre point.
    #[must_use]
    #[inline]
    pub fn center(&self) -> V {
        (self.min + self.max) * 0.5
    }

    /// Area in 2D, volume in 3D.
    #[must_use]
    #[inline]
    pub fn volume(&self) -> f32 {
        self.extent().product()
    }

    /// The perimeter in 2D; the total edge length in 3D.
    #[must_use]
    #[inline]
    pub fn perimeter(&self) -> f32 {
        self.extent().sum() * if V::DIM == 2 { 2.0 } else { 4.0 }
    }

    /// The SAH cost measure: half the perimeter in 2D, half the surface area in 3D.
    #[must_use]
    #[inline]
    pub fn half_area(&self) -> f32 {
        self.extent().half_area()
    }

    /// [`Aabb::half_area`] computed in `f64` from the `f32` corners: finite for any finite box
    /// (an `f32` extent or product can overflow to infinity; these cannot).
    #[must_use]
    #[inline]
    pub fn half_area_f64(&self) -> f64 {
        let extent = |axis: usize| f64::from(self.max.axis(axis)) - f64::from(self.min.axis(axis));
        if V::DIM == 2 {
            extent(0) + extent(1)
        } else {
            let (x, y, z) = (extent(0), extent(1), extent(2));
            x * y + y * z + z * x
        }
    }

    /// The box grown by `amount` on every side.
    #[must_use]
    #[inline]
    pub fn grown(&self, amount: f32) -> Self {
        Self {
            min: self.min - V::splat(amount),
            max: self.max + V::splat(amount),
        }
    }
}
