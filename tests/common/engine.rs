//! A stream carrying an engine's own broad phase, written by the Rust recorder: every step's
//! boxes, fat boxes, candidate pairs (one dropped on purpose when asked), the tree this
//! project builds over the fat boxes (broken on purpose when asked) and the margin. The
//! headless checks and the window's both read it.

use aabb_model::tree::{Aabb, DynamicTree, TreeConfig};
use aabb_recorder::wire::{NodeKind, TreeNode};
use aabb_recorder::{Hello, Recorder};
use glam::Vec2;
use std::path::Path;

pub const STEPS: u64 = 10;
pub const MARGIN: f32 = 0.1;
pub const GROUND: u32 = 1000;

/// The boxes of step `t`: 12 moving ones (id, min, max) and the ground.
pub fn boxes(t: u64) -> Vec<(u32, [f32; 2], [f32; 2])> {
    let mut out: Vec<_> = (0..12u32)
        .map(|i| {
            let x = i as f32 * 0.7 + t as f32 * 0.05 * ((i % 3) as f32 - 1.0);
            let y = (i % 4) as f32 * 0.6;
            (i, [x, y], [x + 0.5, y + 0.5])
        })
        .collect();
    out.push((GROUND, [-10.0, -1.0], [10.0, 0.0]));
    out
}

pub fn overlap(a: &([f32; 2], [f32; 2]), b: &([f32; 2], [f32; 2])) -> bool {
    (0..2).all(|k| a.0[k] <= b.1[k] && b.0[k] <= a.1[k])
}

/// What the test stream holds at one step, worked out here.
pub struct Expected {
    /// The pairs sent.
    pub pairs: Vec<[u32; 2]>,
    /// Those whose tight boxes overlap.
    pub contacts: u64,
    /// The pair dropped, when one was.
    pub dropped: Option<[u32; 2]>,
    /// The message of the broken tree, when it was broken.
    pub broken: Option<String>,
}

/// Writes the test stream to `path`: every step's boxes, fat boxes (the tight box grown by
/// [`MARGIN`]), every pair of overlapping fat boxes (but the first at `drop_at`), the tree this
/// project builds over the fat boxes (with the root's height one too high at `break_at`) and
/// What a pair test costs the engine of [`write_stream`], nanoseconds.
pub const NARROW_NS: f64 = 45.0;

/// the margin, its broad phase's time, and its narrow phase's ([`NARROW_NS`] a pair) and
/// pairs tested as timings.
pub fn write_stream(path: &Path, drop_at: Option<u64>, break_at: Option<u64>) -> Vec<Expected> {
    let hello = Hello::new("engine parts test", 2, 1.0 / 60.0);
    let mut rec = Recorder::to_file(path, hello).expect("the stream file");
    let ground = boxes(0).pop().expect("the ground");
    rec.static_box(GROUND, &ground.1, &ground.2);
    let mut expected = Vec::new();
    for t in 0..STEPS {
        let all = boxes(t);
        rec.begin_step();
        for &(id, min, max) in &all {
            if id != GROUND {
                rec.add_box_2d(id, min, max);
            }
        }
        let fat: Vec<(u32, [f32; 2], [f32; 2])> = all
            .iter()
            .map(|&(id, min, max)| {
                if id == GROUND {
                    (id, min, max)
                } else {
                    (
                        id,
                        [min[0] - MARGIN, min[1] - MARGIN],
                        [max[0] + MARGIN, max[1] + MARGIN],
                    )
                }
            })
            .collect();
        for &(id, min, max) in &fat {
            rec.fat_box(id, &min, &max);
        }
        let mut pairs = Vec::new();
        for (i, a) in fat.iter().enumerate() {
            for b in &fat[i + 1..] {
                if overlap(&(a.1, a.2), &(b.1, b.2)) {
                    pairs.push([a.0.min(b.0), a.0.max(b.0)]);
                }
            }
        }
        pairs.sort_unstable();
        let dropped = (drop_at == Some(t)).then(|| pairs.remove(0));
        let tight = |id: u32| {
            let b = all.iter().find(|b| b.0 == id).expect("a box of the step");
            (b.1, b.2)
        };
        let contacts = pairs
            .iter()
            .filter(|[a, b]| overlap(&tight(*a), &tight(*b)))
            .count() as u64;
        rec.begin_pairs();
        for &[a, b] in &pairs {
            rec.pair(a, b);
        }
        // The tree this project builds at once over the fat boxes.
        let config = TreeConfig {
            margin: 0.0,
            ..TreeConfig::default()
        };
        let mut tree = DynamicTree::<Vec2, u32>::new(config);
        let items: Vec<(Aabb<Vec2>, Vec2, u32)> = fat
            .iter()
            .map(|&(id, min, max)| (Aabb::new(Vec2::from(min), Vec2::from(max)), Vec2::ZERO, id))
            .collect();
        tree.create_proxies(&items).expect("the tree builds");
        let root = tree.root().expect("a root").0;
        rec.tree_root(Some(root));
        let mut broken = None;
        tree.walk(|id, view, _| {
            let kind = match (view.children, view.proxy) {
                (Some([a, b]), _) => NodeKind::Branch([a.0, b.0]),
                (None, Some(p)) => NodeKind::Leaf(tree.user_data(p).expect("a proxy")),
                (None, None) => unreachable!("a leaf has a proxy"),
            };
            let mut height = view.height;
            if break_at == Some(t) && id.0 == root {
                height += 1;
                broken = Some(format!(
                    "step {t}: the engine's tree is refused: node {root}: height {height}, but \
                     1 + its higher child's is {}",
                    view.height
                ));
            }
            rec.tree_node(&TreeNode {
                id: id.0,
                parent: view.parent.map(|p| p.0),
                kind,
                min: [view.aabb.min.x, view.aabb.min.y, 0.0],
                max: [view.aabb.max.x, view.aabb.max.y, 0.0],
                height,
                enlarged: false,
            });
        });
        rec.timing("margin", f64::from(MARGIN));
        rec.timing("broad_phase_ns", 1000.0 + t as f64);
        // Its narrow phase: NARROW_NS a pair tested, exactly.
        rec.timing("narrow_phase_ns", NARROW_NS * pairs.len() as f64);
        rec.timing("pairs_tested", pairs.len() as f64);
        rec.end_step();
        expected.push(Expected {
            pairs,
            contacts,
            dropped,
            broken,
        });
    }
    let stats = rec.finish();
    assert_eq!(stats.parts_rejected, 0, "{:?}", stats.last_rejection);
    assert_eq!(stats.steps_sent, STEPS);
    expected
}
