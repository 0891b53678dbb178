//! Mutated scene text, as a hostile user would write it: byte flips, truncation, numbers
//! replaced by huge, negative, NaN, infinite and out-of-range ones, strings replaced by long or
//! control-character ones. Never a panic; every message short and free of control
//! characters; and whenever a scene is accepted, a 20-step run on the tree, brute force and
//! sweep-and-prune gives the same pairs, contacts and reinserts (or stops at the same step
//! with the same error).

use aabb_debugger::broadphase::BroadphaseKind;
use aabb_debugger::scene::{Scene, Simulation};
use proptest::prelude::*;

/// The shipped scenes the mutations start from (small ones: each accepted mutant is run on
/// three broad phases).
const BASES: [&str; 9] = [
    include_str!("../../scenes/choi-results.ron"),
    include_str!("../../scenes/choi-appear-disappear.ron"),
    include_str!("../../scenes/choi-velocity-fattening.ron"),
    include_str!("../../scenes/randall-bounding-aabbs.ron"),
    include_str!("../../scenes/randall-velocity-aabb.ron"),
    include_str!("../../scenes/abcd-view-and-hierarchy.ron"),
    include_str!("../../scenes/spheres-3d.ron"),
    include_str!("../../scenes/default.ron"),
    // Static boxes: mutated boxes are refused with messages or, when accepted, pair with the
    // spheres alike on every broad phase.
    include_str!("../../scenes/static-level.ron"),
];

/// What a number may be replaced by.
const NUMBERS: [&str; 18] = [
    "1e400",
    "-1e400",
    "NaN",
    "inf",
    "-inf",
    "3.4028235e38",
    "-3.4028235e38",
    "1e30",
    "-1e30",
    "-5",
    "0",
    "0.0",
    "4294967296",
    "18446744073709551616",
    "1e-45",
    "2e19",
    "99999999",
    "-0.0",
];

/// What a string may be replaced by.
fn strings() -> Vec<String> {
    vec![
        "x".repeat(5000),
        "\u{1b}]0;title\u{7}\u{1b}[2J".to_owned(),
        "\u{202e}reversed".to_owned(),
        String::new(),
        "\\\"".to_owned(),
    ]
}

#[derive(Clone, Debug)]
enum Mutation {
    FlipByte { at: usize, mask: u8 },
    Truncate { at: usize },
    Number { which: usize, with: usize },
    Text { which: usize, with: usize },
    Insert { at: usize, text: String },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), 1u8..=255).prop_map(|(at, mask)| Mutation::FlipByte { at, mask }),
        any::<usize>().prop_map(|at| Mutation::Truncate { at }),
        (any::<usize>(), 0..NUMBERS.len())
            .prop_map(|(which, with)| Mutation::Number { which, with }),
        (any::<usize>(), 0..5usize).prop_map(|(which, with)| Mutation::Text { which, with }),
        (
            any::<usize>(),
            prop::sample::select(vec![
                "(", ")", ",", "[", "]", ":", "\"", "Some(", "None", "1e9"
            ])
        )
            .prop_map(|(at, text)| Mutation::Insert {
                at,
                text: text.to_owned()
            }),
    ]
}

/// Byte ranges of the numbers in `text`.
fn numbers(text: &str) -> Vec<(usize, usize)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let starts =
            b[i].is_ascii_digit() || (b[i] == b'-' && b.get(i + 1).is_some_and(u8::is_ascii_digit));
        let inside_word = i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
        if starts && !inside_word {
            let start = i;
            i += 1;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b"._-+".contains(&b[i])) {
                i += 1;
            }
            out.push((start, i));
        } else {
            i += 1;
        }
    }
    out
}

/// Byte ranges of the insides of the strings in `text`.
fn texts(text: &str) -> Vec<(usize, usize)> {
    let quotes: Vec<usize> = text.match_indices('"').map(|(i, _)| i).collect();
    quotes
        .chunks(2)
        .filter(|c| c.len() == 2)
        .map(|c| (c[0] + 1, c[1]))
        .collect()
}

fn apply(base: &str, m: &Mutation) -> Vec<u8> {
    let mut bytes = base.as_bytes().to_vec();
    if bytes.is_empty() {
        // An earlier mutation truncated everything.
        return bytes;
    }
    let splice = |bytes: &mut Vec<u8>, (start, end): (usize, usize), with: &str| {
        bytes.splice(start..end, with.bytes());
    };
    match m {
        Mutation::FlipByte { at, mask } => {
            let i = at % bytes.len();
            bytes[i] ^= mask;
        }
        Mutation::Truncate { at } => bytes.truncate(at % bytes.len()),
        Mutation::Number { which, with } => {
            let spots = numbers(base);
            if !spots.is_empty() {
                splice(&mut bytes, spots[which % spots.len()], NUMBERS[*with]);
            }
        }
        Mutation::Text { which, with } => {
            let spots = texts(base);
            if !spots.is_empty() {
                splice(&mut bytes, spots[which % spots.len()], &strings()[*with]);
            }
        }
        Mutation::Insert { at, text } => {
            let i = at % bytes.len();
            splice(&mut bytes, (i, i), text);
        }
    }
    bytes
}

/// A message is short and safe to print.
fn check_message(message: &str) -> Result<(), TestCaseError> {
    prop_assert!(message.chars().count() <= 600, "long: {}", message.len());
    prop_assert!(
        !message.chars().any(char::is_control),
        "control character in {message:?}"
    );
    Ok(())
}

const KINDS: [BroadphaseKind; 3] = [
    BroadphaseKind::Tree,
    BroadphaseKind::Brute,
    BroadphaseKind::Sap,
];

fn run_everywhere(scene: &Scene) -> Result<(), TestCaseError> {
    // Brute force is O(n^2): larger mutants are checked only by the parser.
    if scene.body_count() > 1500 {
        return Ok(());
    }
    let starts: Vec<_> = KINDS
        .iter()
        .map(|&k| Simulation::paused_at_zero(scene, k, 100_000))
        .collect();
    let mut sims = Vec::new();
    for s in starts {
        match s {
            Ok(sim) => sims.push(sim),
            Err(e) => {
                check_message(&e.to_string())?;
                prop_assert!(false, "a valid scene did not start: {e}");
            }
        }
    }
    for step in 0..=20u64 {
        let mut outcomes = Vec::new();
        for sim in &mut sims {
            let outcome = if step == 0 {
                sim.last_error().map_or(Ok(()), |e| Err(e.to_string()))
            } else {
                sim.step().map(|_| ()).map_err(|e| e.to_string())
            };
            if let Err(e) = &outcome {
                check_message(e)?;
            }
            outcomes.push(outcome.map(|()| {
                let r = sim.report();
                (
                    r.candidate_pairs.clone(),
                    r.contacts.clone(),
                    r.reinserted.clone(),
                )
            }));
        }
        for (k, o) in outcomes.iter().enumerate().skip(1) {
            prop_assert_eq!(
                o,
                &outcomes[0],
                "{} against the tree at step {}",
                KINDS[k],
                step
            );
        }
        if outcomes[0].is_err() {
            break;
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 512,
        max_shrink_iters: 200,
        .. ProptestConfig::default()
    })]

    #[test]
    fn mutated_scenes_never_panic_and_every_broad_phase_agrees(
        base in 0..BASES.len(),
        mutations in prop::collection::vec(mutation(), 1..4),
        json in any::<bool>(),
    ) {
        let mut text = BASES[base].to_owned();
        if json {
            // The JSON form of the scene, mutated the same ways.
            let scene = Scene::parse(&text, "base", false).expect("shipped scene");
            text = scene.to_text(true).expect("json");
        }
        for m in &mutations {
            text = String::from_utf8_lossy(&apply(&text, m)).into_owned();
        }
        match Scene::parse(&text, "mutant", json) {
            Err(e) => check_message(&e.to_string())?,
            Ok(scene) => {
                for warning in scene.warnings(100_000) {
                    prop_assert!(!warning.chars().any(char::is_control), "{warning:?}");
                }
                run_everywhere(&scene)?;
            }
        }
    }
}

#[test]
fn the_mutation_helpers_find_numbers_and_strings() {
    let text = "(a: 1.5, b: -2, c: \"x1\", d: 1e-3, id_2: 7)";
    let found: Vec<&str> = numbers(text).iter().map(|&(s, e)| &text[s..e]).collect();
    assert_eq!(found, ["1.5", "-2", "1e-3", "7"]);
    let found: Vec<&str> = texts(text).iter().map(|&(s, e)| &text[s..e]).collect();
    assert_eq!(found, ["x1"]);
    let flipped = apply(text, &Mutation::Number { which: 1, with: 2 });
    assert_eq!(
        String::from_utf8(flipped).expect("utf-8"),
        "(a: 1.5, b: NaN, c: \"x1\", d: 1e-3, id_2: 7)"
    );
}
