//! aabb-debugger beside other engines and trees. This package holds no library code: its
//! examples stream real engines to the debugger (`examples/rapier_pile.rs`: rapier2d;
//! `examples/box2d_pile.rs`: Box2D v3 through boxdd), its tests check what they stream
//! (`tests/engines`), and its benchmarks time our tree against the trees users would pick
//! instead (`benches/workload.rs`: parry2d's `Bvh`, obvhs, Box2D's own `b2DynamicTree`, `bvh`,
//! `rstar`). It is a package of its own so that the README's `cargo test` at the root builds
//! none of those engines; see `docs/performance.md` and `docs/live.md` for the commands.
