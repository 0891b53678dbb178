//! Recording files: round trip through a file on disk; truncated, wrong-magic, wrong-version,
//! oversized-count, damaged and hostile files refused with `FILE: message` and no panic; a
//! loop of byte mutations of a valid file never panics.

use aabb_debugger::broadphase::BroadphaseKind;
use aabb_debugger::replay::file::{self, MAX_RECORDING_BYTES, STEP_BYTES, checksum};
use aabb_debugger::replay::{Edit, History, KeyframePolicy, Recording};
use aabb_debugger::scene::Scene;
use glam::Vec3;
use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64;

const SCENES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/scenes");

/// A recording of the default scene: 30 steps, a drag at step 4, a rebuild at step 9.
fn history() -> History {
    let scene = Scene::load(&std::path::Path::new(SCENES).join("default.ron")).expect("scene");
    let (mut rec, mut sim) = Recording::start(
        &scene,
        "scenes/default.ron",
        BroadphaseKind::Tree,
        5_000_000,
    )
    .expect("valid");
    for step in 1..=30 {
        rec.step(&mut sim).expect("recorded").expect("stepped");
        if step == 4 {
            let id = sim.bodies()[0].sphere.id;
            let r = sim.bodies()[0].sphere.radius;
            let center = sim.clamp_center(r, Vec3::new(1.0, 2.0, 0.0));
            rec.apply(&mut sim, Edit::MoveSphere { id, center })
                .expect("moved");
        }
        if step == 9 {
            rec.apply(&mut sim, Edit::Rebuild).expect("rebuilt");
        }
    }
    rec.history().clone()
}

/// `bytes` with the checksum made right again (so a test reaches the checks after it).
fn resealed(mut bytes: Vec<u8>) -> Vec<u8> {
    if bytes.len() >= 24 {
        let sum = checksum(&bytes[20..]);
        bytes[12..20].copy_from_slice(&sum.to_le_bytes());
    }
    bytes
}

fn refused(bytes: &[u8]) -> String {
    file::from_bytes(bytes, "r.rec")
        .expect_err("refused")
        .to_string()
}

#[test]
fn a_recording_round_trips_through_a_file() {
    let h = history();
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("r.rec");
    file::save(&h, &path).expect("saved");
    let read = file::load(&path).expect("loaded");
    assert_eq!(read, h);
    assert_eq!(read.edits.len(), 2);
    assert_eq!(read.steps.len(), 31);
    // The size: the fixed start, the header, 60 bytes a step.
    let bytes = std::fs::read(&path).expect("bytes");
    let header = u32::from_le_bytes(bytes[20..24].try_into().expect("4 bytes")) as usize;
    assert_eq!(bytes.len(), 24 + header + 31 * STEP_BYTES);
    assert_eq!(&bytes[..8], b"AABBREC\n");
    // Every step rebuilt from the file equals the original's record.
    let rec = Recording::from_history(read, KeyframePolicy::Every(8)).expect("rebuilt");
    assert_eq!(rec.keyframe_steps(), vec![0, 8, 16, 24]);
    // The state at a step is after its edits: the last edit's hash where there is one.
    for s in 0..=30 {
        let after_edits = h.edits.iter().rev().find(|e| e.step == s).map(|e| e.hash);
        assert_eq!(
            rec.state_at(s).expect("rebuilt").structure_hash(),
            after_edits.unwrap_or(h.steps[s as usize].hash),
            "step {s}"
        );
    }
    assert_ne!(
        h.edits[1].hash, h.steps[9].hash,
        "the rebuild changed the tree"
    );
}

#[test]
fn bad_files_are_refused_with_messages() {
    let good = file::to_bytes(&history()).expect("bytes");
    let header = u32::from_le_bytes(good[20..24].try_into().expect("4 bytes")) as usize;

    assert_eq!(
        refused(b"(format_version: 1)"),
        "r.rec: not a recording file (it does not start with the magic \"AABBREC\"; write one \
         with `aabb-debugger run SCENE --record FILE`)"
    );
    assert!(refused(&[]).starts_with("r.rec: not a recording file"));

    let mut v = good.clone();
    v[8..12].copy_from_slice(&2u32.to_le_bytes());
    assert_eq!(
        refused(&v),
        "r.rec: the recording is format version 2; this build reads version 1 (a newer \
         aabb-debugger wrote it)"
    );
    v[8..12].copy_from_slice(&0u32.to_le_bytes());
    assert_eq!(
        refused(&v),
        "r.rec: format version 0 is not a recording format"
    );

    assert_eq!(
        refused(&good[..20]),
        "r.rec: the file is truncated: 20 bytes, less than the 24 bytes of a recording's start"
    );
    // Cut inside the header, then inside the steps.
    let cut = 24 + header / 2;
    assert_eq!(
        refused(&good[..cut]),
        format!(
            "r.rec: the file is truncated: the header says it is {header} bytes, but only {} \
             bytes follow",
            header / 2
        )
    );
    let cut = good.len() - 7;
    assert_eq!(
        refused(&good[..cut]),
        format!(
            "r.rec: the file is truncated: the header says 31 steps (60 bytes each), but {} \
             bytes follow the header",
            31 * 60 - 7
        )
    );
    let mut v = good.clone();
    v.push(0);
    assert!(refused(&v).starts_with("r.rec: the file has bytes after its last step: "));

    // A header length far past the file: refused before anything is allocated.
    let mut v = good.clone();
    v[20..24].copy_from_slice(&u32::MAX.to_le_bytes());
    assert!(
        refused(&v)
            .starts_with("r.rec: the file is truncated: the header says it is 4294967295 bytes")
    );

    // A step count past the file (and one whose byte count overflows u64).
    for steps in ["31000000000", "18446744073709551615"] {
        let json = std::str::from_utf8(&good[24..24 + header]).expect("JSON");
        let changed = json.replacen("\"steps\":31", &format!("\"steps\":{steps}"), 1);
        assert_ne!(changed, json);
        let mut v = good[..24].to_vec();
        v[20..24].copy_from_slice(&(changed.len() as u32).to_le_bytes());
        v.extend_from_slice(changed.as_bytes());
        v.extend_from_slice(&good[24 + header..]);
        let v = resealed(v);
        assert_eq!(
            refused(&v),
            format!(
                "r.rec: the file is truncated: the header says {steps} steps (60 bytes each), \
                 but 1860 bytes follow the header"
            )
        );
    }

    // A changed byte in a step: the checksum says so.
    let mut v = good.clone();
    let last = v.len() - 10;
    v[last] ^= 0x40;
    assert_eq!(
        refused(&v),
        "r.rec: the file is damaged: its checksum does not match its content"
    );

    // Flags this version does not write.
    let mut v = good.clone();
    let flags = 24 + header + 3 * STEP_BYTES + 56;
    v[flags] |= 0x80;
    assert_eq!(
        refused(&resealed(v)),
        "r.rec: step 3: its flags or padding are not those of format version 1"
    );

    // Edits out of order, and past the last step.
    let json = std::str::from_utf8(&good[24..24 + header]).expect("JSON");
    for (from, to, message) in [
        (
            "\"step\":9",
            "\"step\":2",
            "r.rec: edits[1] is at step 2: edits must be in step order and within steps 0 to 30",
        ),
        (
            "\"step\":9",
            "\"step\":31",
            "r.rec: edits[1] is at step 31: edits must be in step order and within steps 0 to 30",
        ),
    ] {
        let changed = json.replacen(from, to, 1);
        assert_ne!(changed, json);
        let mut v = good[..24].to_vec();
        v[20..24].copy_from_slice(&(changed.len() as u32).to_le_bytes());
        v.extend_from_slice(changed.as_bytes());
        v.extend_from_slice(&good[24 + header..]);
        assert_eq!(refused(&resealed(v)), message);
    }

    // A scene that breaks a rule: the scene's own message, naming the recording.
    let changed = json.replacen("\\\"dt\\\": 0.016666668", "\\\"dt\\\": -1.0", 1);
    assert_ne!(changed, json);
    let mut v = good[..24].to_vec();
    v[20..24].copy_from_slice(&(changed.len() as u32).to_le_bytes());
    v.extend_from_slice(changed.as_bytes());
    v.extend_from_slice(&good[24 + header..]);
    let message = refused(&resealed(v));
    assert!(
        message.starts_with("r.rec (its scene): dt must be "),
        "{message}"
    );

    // A header that is not JSON.
    let mut v = good.clone();
    v[24] = b'[';
    assert!(refused(&resealed(v)).starts_with("r.rec: the header (bytes 24 to "));

    // A file that is not a regular file, and one over the size limit, are not read.
    let dir = tempfile::tempdir().expect("temp dir");
    let e = file::load(dir.path()).expect_err("a directory");
    assert!(
        e.to_string()
            .ends_with("is a directory, not a regular file"),
        "{e}"
    );
    let big = dir.path().join("big.rec");
    let f = std::fs::File::create(&big).expect("create");
    f.set_len(MAX_RECORDING_BYTES + 1).expect("sparse file");
    let e = file::load(&big).expect_err("too large");
    assert!(
        e.to_string()
            .contains("more than the limit of 536870912 bytes"),
        "{e}"
    );
}

#[test]
fn byte_mutations_of_a_valid_file_never_panic() {
    let good = file::to_bytes(&history()).expect("bytes");
    let mut rng = Pcg64::seed_from_u64(16);
    let (mut read, mut rebuilt) = (0, 0);
    for round in 0..3000 {
        let mut v = good.clone();
        for _ in 0..rng.random_range(1..4) {
            let at = rng.random_range(0..v.len());
            match rng.random_range(0..4) {
                0 => v[at] ^= 1 << rng.random_range(0..8),
                1 => v[at] = rng.random(),
                2 => v.truncate(at),
                _ => v.insert(at, rng.random()),
            }
        }
        // Half the time the checksum is made right, so the checks after it are reached.
        if round % 2 == 0 {
            v = resealed(v);
        }
        match file::from_bytes(&v, "m.rec") {
            Err(e) => assert!(e.to_string().starts_with("m.rec"), "{e}"),
            Ok(h) => {
                read += 1;
                // Whatever was read, rebuilding it gives a step or an error, never a panic.
                if let Ok(sim) = h.state_at(h.last_step()) {
                    rebuilt += 1;
                    assert_eq!(sim.step_index(), h.last_step());
                }
            }
        }
    }
    // Some mutations (in the step times, say) leave a file that reads and rebuilds.
    assert!(read > 0 && rebuilt > 0, "read {read}, rebuilt {rebuilt}");
}
