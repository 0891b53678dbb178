//! The engine-parts case the C and Python check programs write (`parts FILE`): what each
//! step must decode to, exactly. And [`needs`]: a C compiler or python3 missing fails the
//! test under CI and skips it, saying so, elsewhere.

use aabb_recorder::wire::{EngineParts, EngineTree, NodeKind, Timing, TreeNode};
use aabb_recorder::{Decoder, Frame, Limits, WireBox};

/// What a test needs of the machine, and the rule when it is missing: the workspace's one
/// helper, the root's tests/common/needs.rs.
#[path = "../../../../tests/common/needs.rs"]
pub mod needs;

fn wb(id: u32, min: [f32; 2], max: [f32; 2]) -> WireBox {
    WireBox {
        id,
        min: [min[0], min[1], 0.0],
        max: [max[0], max[1], 0.0],
    }
}

fn node(id: u32, parent: Option<u32>, kind: NodeKind, min: [f32; 2], max: [f32; 2]) -> TreeNode {
    let leaf = matches!(kind, NodeKind::Leaf(_));
    TreeNode {
        id,
        parent,
        kind,
        min: [min[0], min[1], 0.0],
        max: [max[0], max[1], 0.0],
        height: u32::from(!leaf),
        enlarged: !leaf,
    }
}

/// The parts of the case's three steps: every part at step 0 (the bad ones left out, the
/// fat boxes sorted by id, the pairs canonical and sorted), no pairs and step 0's tree and
/// timings at step 1, nothing at step 2.
pub fn parts_case() -> Vec<EngineParts> {
    let step0 = EngineParts {
        fat_boxes: Some(vec![
            wb(1, [-0.25, -0.25], [1.25, 1.25]),
            wb(2, [1.25, -0.25], [2.75, 1.25]),
            wb(3, [4.75, -0.25], [6.25, 1.25]),
            wb(50, [-10.0, -1.0], [10.0, 0.0]),
        ]),
        pairs: Some(vec![[1, 2], [1, 50], [2, 50], [3, 50]]),
        tree: Some(EngineTree {
            root: Some(100),
            partial: true,
            nodes: vec![
                node(
                    100,
                    None,
                    NodeKind::Branch([11, 12]),
                    [-0.25, -0.25],
                    [2.75, 1.25],
                ),
                node(
                    11,
                    Some(100),
                    NodeKind::Leaf(1),
                    [-0.25, -0.25],
                    [1.25, 1.25],
                ),
                node(
                    12,
                    Some(100),
                    NodeKind::Leaf(2),
                    [1.25, -0.25],
                    [2.75, 1.25],
                ),
            ],
        }),
        timings: Some(vec![
            Timing {
                key: "broad_phase_ns".to_owned(),
                value: 1500.0,
            },
            Timing {
                key: "pairs_tested".to_owned(),
                value: 6.0,
            },
            Timing {
                key: "margin".to_owned(),
                value: 0.25,
            },
        ]),
    };
    let step1 = EngineParts {
        pairs: Some(Vec::new()),
        tree: step0.tree.clone(),
        timings: step0.timings.clone(),
        ..EngineParts::default()
    };
    vec![step0, step1, EngineParts::default()]
}

/// For each STEP frame of `bytes`, its step and the tags of its empty sections (the parts the
/// same as the step before's).
pub fn repeated_sections(bytes: &[u8]) -> Vec<(u64, Vec<u8>)> {
    let mut d = Decoder::new(bytes, Limits::default());
    let mut out = Vec::new();
    while let Some(frame) = d.next_frame().expect("a valid stream") {
        if let Frame::Step(s) = frame {
            let empty = s.sections.iter().filter(|x| x.bytes.is_empty());
            out.push((s.step, empty.map(|x| x.tag).collect()));
        }
    }
    out
}

/// What [`repeated_sections`] gives for the case: the tree and timings of step 1.
pub fn parts_case_repeats() -> Vec<(u64, Vec<u8>)> {
    vec![(0, Vec::new()), (1, vec![3, 4]), (2, Vec::new())]
}

/// Rejected parts in the case: a fat box twice, of an unknown id and NaN; a pair twice, of
/// an unknown id and of one id; a bad key, a NaN timing and a key twice.
pub const PARTS_REJECTED: u64 = 9;
