//! The engine examples' tests, one binary: the rapier2d and Box2D piles (the examples' own code,
//! included) stream their boxes, their broad phases' trees and pairs, and their timings; read
//! back, every step's tree validates, no pair is missed, and every broad phase of ours reports
//! the same pairs on their traces.

mod engine_box2d;
mod engine_rapier;
mod trace_rapier;
