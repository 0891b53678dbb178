//! The built binary's `sweep` command and `run`'s `--margin` / `--lookahead` overrides: the
//! JSON object and its fields, CSV with the same fields, a sweep point's reinserts equal to
//! `run`'s at the same settings, nothing on stderr when it is not a terminal, and one-line
//! errors naming the flag.

use crate::common::cli;
use cli::{bin, text};

fn json(args: &[&str]) -> serde_json::Value {
    let out = bin(args);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stderr),
        "",
        "no progress bar when stderr is not a terminal"
    );
    serde_json::from_slice(&out.stdout).expect("one JSON object")
}

const SCENE: &str = "scenes/random-1000.ron";

#[test]
fn sweep_json_points_match_run_at_the_same_settings() {
    let v = json(&[
        "sweep",
        SCENE,
        "--margin",
        "0.1:0.3:0.1",
        "--lookahead",
        "0,0.05",
        "--steps",
        "20",
        "--json",
    ]);
    let points = v["points"].as_array().expect("points");
    assert_eq!(points.len(), 6);
    let keys = [
        "margin",
        "lookahead",
        "reinserts_total",
        "candidate_pairs_total",
        "contacts_total",
        "false_positive_share",
        "node_visits_total",
        "ms_per_step",
        "ms_update",
        "ms_pairs",
    ];
    let expected = [
        (0.1, 0.0),
        (0.2, 0.0),
        (0.3, 0.0),
        (0.1, 0.05),
        (0.2, 0.05),
        (0.3, 0.05),
    ];
    for (p, (m, l)) in points.iter().zip(expected) {
        for key in keys {
            assert!(p.get(key).is_some(), "{key} in {p}");
        }
        assert_eq!(p["margin"].as_f64().map(|x| x as f32), Some(m));
        assert_eq!(p["lookahead"].as_f64().map(|x| x as f32), Some(l));
        assert_eq!(p["stopped"], serde_json::Value::Null);
        let (m, l) = (m.to_string(), l.to_string());
        let run = json(&[
            "run",
            SCENE,
            "--steps",
            "20",
            "--margin",
            &m,
            "--lookahead",
            &l,
            "--json",
        ]);
        assert_eq!(
            p["reinserts_total"], run["reinserts_total"],
            "margin {m}, look-ahead {l}"
        );
        let (c, k) = (
            p["candidate_pairs_total"].as_u64().expect("count"),
            p["contacts_total"].as_u64().expect("count"),
        );
        let share = p["false_positive_share"].as_f64().expect("share");
        assert_eq!(share, (c - k) as f64 / c as f64);
    }
    for best in ["best_by_time", "best_by_work"] {
        let index = v[best]["index"].as_u64().expect("an index") as usize;
        assert_eq!(v[best]["margin"], points[index]["margin"]);
        assert_eq!(v[best]["lookahead"], points[index]["lookahead"]);
    }
    let least = points
        .iter()
        .map(|p| p["node_visits_total"].as_u64().expect("count"))
        .min();
    assert_eq!(v["best_by_work"]["node_visits_total"].as_u64(), least);
    assert!(!v["why"].as_str().expect("a sentence").is_empty());
}

#[test]
fn sweep_csv_has_a_header_and_a_row_per_point_with_the_json_fields() {
    let args = [
        "sweep",
        SCENE,
        "--margin",
        "0:0.2:0.1",
        "--lookahead",
        "0",
        "--steps",
        "5",
    ];
    let out = bin(&[&args[..], &["--csv"]].concat());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let csv = text(&out.stdout);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 4);
    let header: Vec<&str> = lines[0].split(',').collect();
    let v = json(&[&args[..], &["--json"]].concat());
    let mut json_keys: Vec<String> = v["points"][0]
        .as_object()
        .expect("an object")
        .keys()
        .cloned()
        .collect();
    let mut csv_keys: Vec<String> = header.iter().map(|s| (*s).to_owned()).collect();
    json_keys.sort();
    csv_keys.sort();
    assert_eq!(csv_keys, json_keys);
    for (row, margin) in lines[1..].iter().zip(["0", "0.1", "0.2"]) {
        let cells: Vec<&str> = row.split(',').collect();
        assert_eq!(cells.len(), header.len());
        assert_eq!(cells[0], margin);
        assert_eq!(cells[1], "0");
        assert_eq!(*cells.last().expect("stopped"), "", "ran every step");
    }
    // The counts agree with the JSON run's.
    let reinserts = header
        .iter()
        .position(|h| *h == "reinserts_total")
        .expect("a column");
    for (row, p) in lines[1..]
        .iter()
        .zip(v["points"].as_array().expect("points"))
    {
        let cell: u64 = row
            .split(',')
            .nth(reinserts)
            .expect("a cell")
            .parse()
            .expect("a count");
        assert_eq!(Some(cell), p["reinserts_total"].as_u64());
    }
}

#[test]
fn bad_sweeps_give_one_line_errors_naming_the_flag() {
    let cases: [(&[&str], &str); 7] = [
        (
            &["--margin", "0.5:0.1:0.1", "--lookahead", "0"],
            "error: --margin: FROM (0.5) is greater than TO (0.1)\n",
        ),
        (
            &["--margin", "0:1:0", "--lookahead", "0"],
            "error: --margin: STEP must be > 0, got 0\n",
        ),
        (
            &["--margin", "0:inf:1", "--lookahead", "0"],
            "error: --margin: TO must be finite, got inf\n",
        ),
        (
            &["--margin", "0:1:0.1", "--lookahead", "0,-0.5"],
            "error: --lookahead: each value must be finite and >= 0 seconds, got \"-0.5\"\n",
        ),
        (
            &["--margin", "0:1:0.1", "--lookahead", "0", "--steps", "0"],
            "error: --steps: must be 1 to 1000000, got 0\n",
        ),
        (
            &[
                "--margin",
                "0:1:0.01",
                "--lookahead",
                "0",
                "--steps",
                "1000000",
            ],
            "error: --steps: 101 points x 1000000 steps = 101000000 steps; at most 100000000 \
             in one sweep\n",
        ),
        (
            &[
                "--margin",
                "0:0.999:0.001",
                "--lookahead",
                "0,0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9,1",
            ],
            "error: --margin x --lookahead: 1000 margins x 11 look-ahead values x 1 \
             configurations = 11000 points; at most 10000\n",
        ),
    ];
    for (args, message) in cases {
        let out = bin(&[&["sweep", SCENE][..], args].concat());
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert_eq!(text(&out.stderr), message, "{args:?}");
        assert!(out.stdout.is_empty());
    }
    // A look-ahead whose fat boxes overflow f32: the file and the point.
    let out = bin(&[
        "sweep",
        SCENE,
        "--margin",
        "0:0.1:0.1",
        "--lookahead",
        "0,2e38",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.starts_with(
            "error: scenes/random-1000.ron: margin 0, look-ahead 2e38 s: generate (radius 1.2, \
             speed 3): its fat box would overflow f32"
        ),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1);
}

#[test]
fn run_takes_margin_and_lookahead_overrides() {
    let base = json(&["run", SCENE, "--steps", "10", "--json"]);
    let same = json(&["run", SCENE, "--steps", "10", "--margin", "0.2", "--json"]);
    // The scene's own margin is 0.2 and its look-ahead 0.
    assert_eq!(base["reinserts_total"], same["reinserts_total"]);
    let wide = json(&[
        "run",
        SCENE,
        "--steps",
        "10",
        "--margin",
        "0.5",
        "--lookahead",
        "0.1",
        "--json",
    ]);
    assert!(
        wide["reinserts_total"].as_u64() < base["reinserts_total"].as_u64(),
        "{wide} {base}"
    );
    // A bad value is a misuse of the option (exit 2), named as such.
    let out = bin(&["run", SCENE, "--margin", "-1"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr),
        "--margin: must be a finite number >= 0, got -1\n"
    );
}

#[test]
fn a_pair_tests_cost_weighs_the_best_by_work_and_shows_how_it_moves() {
    let args = [
        "sweep",
        "scenes/default.ron",
        "--margin",
        "0:0.75:0.05",
        "--lookahead",
        "0",
        "--steps",
        "60",
        "--threads",
        "1",
        "--json",
    ];
    let at = |cost: &str| {
        let mut all = args.to_vec();
        all.extend(["--pair-cost", cost]);
        json(&all)
    };
    let (one, ten) = (at("1"), at("10"));
    // The least work by hand: node visits plus the cost times the candidate pairs.
    for (v, cost) in [(&one, 1.0), (&ten, 10.0)] {
        let points = v["points"].as_array().expect("points");
        let work = |p: &serde_json::Value| {
            let get = |k: &str| p[k].as_f64().unwrap_or_else(|| panic!("{k} in {p}"));
            get("node_visits_total") + cost * get("candidate_pairs_total")
        };
        let least = points
            .iter()
            .enumerate()
            .min_by(|a, b| work(a.1).total_cmp(&work(b.1)).then(a.0.cmp(&b.0)))
            .map(|(i, _)| i as u64);
        assert_eq!(v["best_by_work"]["index"].as_u64(), least, "cost {cost}");
        assert_eq!(v["best_by_work"]["pair_cost"].as_f64(), Some(cost));
        // The same table of how the best moves, whatever the cost asked.
        let costs: Vec<f64> = v["by_pair_cost"]
            .as_array()
            .expect("by_pair_cost")
            .iter()
            .map(|r| r["pair_cost"].as_f64().expect("a cost"))
            .collect();
        assert_eq!(costs, vec![1.0, 3.0, 10.0, 30.0, 100.0]);
    }
    assert_eq!(one["by_pair_cost"], ten["by_pair_cost"]);
    assert_eq!(
        one["by_pair_cost"][2]["index"],
        ten["best_by_work"]["index"]
    );
    // A dearer pair test never asks for a wider margin.
    let margins: Vec<f64> = one["by_pair_cost"]
        .as_array()
        .expect("rows")
        .iter()
        .map(|r| r["margin"].as_f64().expect("a margin"))
        .collect();
    assert!(margins.windows(2).all(|w| w[1] <= w[0]), "{margins:?}");
    // A cost that is not one is refused, naming the flag.
    let mut bad = args.to_vec();
    bad.extend(["--pair-cost", "-3"]);
    let out = bin(&bad);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("--pair-cost:"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn a_scenes_pair_cost_is_the_sweeps_unless_the_command_line_says_otherwise() {
    let dir = tempfile::tempdir().expect("temp dir");
    let scene = |cost: &str| {
        format!(
            "(format_version: 1, name: \"costly pairs\", dimensions: 2, world: (min: (0.0, 0.0), \
             max: (40.0, 40.0)), tree: (margin: 0.2), spheres: [], generate: Some((count: 200, \
             radius: (0.3, 0.8), speed: (0.5, 2.0), seed: 3)), view: Some((pair_cost: Some({cost}))))"
        )
    };
    let path = cli::write(dir.path(), "costly.ron", scene("10.0").as_bytes());
    let file = path.to_str().expect("utf-8");
    let sweep = |extra: &[&str]| {
        let mut args = vec![
            "sweep",
            file,
            "--margin",
            "0:0.5:0.1",
            "--lookahead",
            "0",
            "--steps",
            "20",
            "--threads",
            "1",
            "--json",
        ];
        args.extend_from_slice(extra);
        json(&args)
    };
    assert_eq!(sweep(&[])["best_by_work"]["pair_cost"].as_f64(), Some(10.0));
    assert_eq!(
        sweep(&["--pair-cost", "1"])["best_by_work"]["pair_cost"].as_f64(),
        Some(1.0)
    );
    // A cost out of range is warned about and 1 is used.
    let bad = cli::write(dir.path(), "bad.ron", scene("1e9").as_bytes());
    let out = bin(&["check", bad.to_str().expect("utf-8")]);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        text(&out.stderr).contains(
            "view.pair_cost must be a number of node visits from 0 to 1000000, got 1000000000"
        ),
        "{}",
        text(&out.stderr)
    );
}
