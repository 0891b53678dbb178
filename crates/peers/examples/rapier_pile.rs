//! A real physics engine streaming live to the debugger: rapier2d pours balls of varied sizes
//! into an open box under gravity until they pile up, and each step's ball boxes (rapier's own
//! colliders' AABBs) go through the Rust recorder (`aabb-recorder`) to a debugger that
//! listens, the box's walls as its static boxes. When no debugger listens, the stream goes to
//! a file instead (`pile.aabbstream`, or `--stream-out`); `--out FILE.trace` writes a text
//! trace.
//!
//! ```text
//! aabb-debugger listen --out pile.aabbstream &      # or the window: File > Listen for an engine…
//! cargo run --release -p aabb-peers --example rapier_pile
//! aabb-debugger run pile.aabbstream --steps 100000
//! aabb-debugger sweep pile.aabbstream --margin 0:0.2:0.05 --lookahead 0,0.05 --steps 900
//! ```
//!
//! `--balls N` (default 3000) and `--steps N` (default: long enough to pour them all and let
//! the pile settle); `--port N` (default 7616); `--realtime` paces the steps at 60 a second.
//! The same arguments always give the same boxes.

#[path = "rapier_pile/pile.rs"]
mod pile;

#[path = "common/live.rs"]
mod live;

use aabb_recorder::Recorder;

/// rapier2d, pouring the pile.
struct Rapier;

impl live::PileEngine for Rapier {
    type BroadPhase = pile::EngineBroadPhase;
    const NAME: &'static str = "rapier2d 0.36 (rapier_pile example)";
    const EXAMPLE: &'static str = "rapier_pile";
    const ABOUT: &'static str =
        "Pours rapier2d balls into a box and streams the pile to the debugger.";
    const STREAM_OUT: &'static str = "pile.aabbstream";
    fn simulate<S: pile::PileSink<Self::BroadPhase>>(
        spec: pile::PileSpec,
        sink: &mut S,
    ) -> anyhow::Result<pile::PileSummary> {
        pile::simulate_pile(spec, sink).map_err(Into::into)
    }
}

/// Adds rapier's own broad phase to the open step: its leaves' boxes (the fat boxes), its
/// pairs, its BVH and the margin its broad-phase boxes have.
impl live::SendParts for pile::EngineBroadPhase {
    fn send(&self, r: &mut Recorder) {
        for (id, min, max) in &self.fat_boxes {
            r.fat_box(*id, min, max);
        }
        r.begin_pairs();
        for &[a, b] in &self.pairs {
            r.pair(a, b);
        }
        r.tree_root(self.tree.root);
        if self.tree.partial {
            r.tree_partial();
        }
        for n in &self.tree.nodes {
            r.tree_node(n);
        }
        r.timing(aabb_recorder::wire::TIMING_MARGIN, f64::from(self.margin));
        // rapier's counters time its broad and narrow phases only when it is built with its
        // `profiler` feature (they read 0 otherwise): no times are sent.
    }
}

fn main() -> anyhow::Result<()> {
    live::main::<Rapier>()
}
