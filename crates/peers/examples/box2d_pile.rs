//! Box2D streaming live to the debugger: Box2D v3 (through boxdd, its safe Rust bindings)
//! pours balls of varied sizes into an open box under gravity until they pile up (the same
//! balls at the same steps as the rapier example), and each step's ball boxes (Box2D's own
//! shape AABBs) go through the Rust recorder (`aabb-recorder`) to a debugger that listens,
//! the box's walls as its static boxes. When no debugger listens, the stream goes to a file
//! instead (`box2d_pile.aabbstream`, or `--stream-out`); `--out FILE.trace` writes a text
//! trace.
//!
//! ```text
//! aabb-debugger listen --out box2d_pile.aabbstream &   # or the window: File > Listen for an engine…
//! cargo run --release -p aabb-peers --example box2d_pile
//! aabb-debugger check box2d_pile.aabbstream
//! aabb-debugger compare tree box2d box2d_pile.aabbstream
//! ```
//!
//! Besides the boxes, each step carries what can be read of Box2D's own broad phase
//! (`--boxes-only` leaves it out): each shape's fat box (its leaf's box in Box2D's trees),
//! its candidate pairs (its contacts, touching or not, followed from the pairs its broad
//! phase creates) and their number as Box2D counts them, its trees' heights, and its broad
//! and narrow phases' times (see `examples/box2d_pile/pile.rs`). `aabb-debugger check`
//! checks the pairs against brute force over the fat boxes.
//!
//! `--balls N` (default 3000) and `--steps N` (default: long enough to pour them all and let
//! the pile settle); `--port N` (default 7616); `--realtime` paces the steps at 60 a second.
//! The same arguments always give the same boxes.

#[path = "box2d_pile/pile.rs"]
mod pile;

#[path = "common/live.rs"]
mod live;

use aabb_recorder::Recorder;

/// Box2D, pouring the pile.
struct Box2d;

impl live::PileEngine for Box2d {
    type BroadPhase = pile::EngineBroadPhase;
    const NAME: &'static str = "Box2D 3.2 via boxdd 0.6 (box2d_pile example)";
    const EXAMPLE: &'static str = "box2d_pile";
    const ABOUT: &'static str =
        "Pours Box2D balls into a box and streams the pile to the debugger.";
    const STREAM_OUT: &'static str = "box2d_pile.aabbstream";
    fn simulate<S: pile::PileSink<Self::BroadPhase>>(
        spec: pile::PileSpec,
        sink: &mut S,
    ) -> anyhow::Result<pile::PileSummary> {
        pile::simulate_pile(spec, sink)
    }
}

impl live::SendParts for pile::EngineBroadPhase {
    fn send(&self, r: &mut Recorder) {
        pile::EngineBroadPhase::send(self, r, true);
    }
}

fn main() -> anyhow::Result<()> {
    live::main::<Box2d>()
}
