//! Queries in 3D: a thousand boxes in a cube, then a ray cast (every hit, and the closest hit)
//! and a box query, each printed and checked against brute force over the boxes.
//!
//! `cargo run -p dynamic-aabb-tree --example queries_3d` (exits 1 on a mismatch).

use dynamic_aabb_tree::{Aabb, DynamicTree, TreeConfig};
use glam::Vec3;
use std::process::ExitCode;

/// The fractional part of `x` (for a deterministic, evenly spread layout).
fn fract(x: f64) -> f32 {
    (x - x.floor()) as f32
}

/// Where the segment `origin + t (end - origin)`, `t` in `[0, 1]`, enters the box, or `None`
/// when it misses it (the slab test, written out for the check).
fn entry(b: &Aabb<Vec3>, origin: Vec3, end: Vec3) -> Option<f32> {
    let d = end - origin;
    let (mut t0, mut t1) = (0.0f32, 1.0f32);
    for axis in 0..3 {
        if d[axis] == 0.0 {
            if origin[axis] < b.min[axis] || origin[axis] > b.max[axis] {
                return None;
            }
            continue;
        }
        let a = (b.min[axis] - origin[axis]) / d[axis];
        let c = (b.max[axis] - origin[axis]) / d[axis];
        t0 = t0.max(a.min(c));
        t1 = t1.min(a.max(c));
        if t0 > t1 {
            return None;
        }
    }
    Some(t0)
}

fn main() -> ExitCode {
    // Static boxes: no margin, so each fat box is the box itself.
    let config = TreeConfig {
        margin: 0.0,
        ..TreeConfig::default()
    };
    let items: Vec<(Aabb<Vec3>, Vec3, u32)> = (0..1000u32)
        .map(|i| {
            let k = f64::from(i);
            let center = Vec3::new(
                100.0 * fract(k * 0.819_172_513),
                100.0 * fract(k * 0.671_043_606),
                100.0 * fract(k * 0.549_700_477),
            );
            let half = Vec3::new(
                1.0 + 4.0 * fract(k * 0.414_213_562),
                1.0 + 4.0 * fract(k * 0.732_050_808),
                1.0 + 4.0 * fract(k * 0.236_067_977),
            );
            (Aabb::from_center_half_extent(center, half), Vec3::ZERO, i)
        })
        .collect();
    let mut tree = DynamicTree::<Vec3, u32>::new(config);
    // Static scenes are best added in one batch: one binned-SAH build.
    let ids = tree.create_proxies(&items).expect("finite boxes");
    let mut ok = true;

    // A ray cast across the cube: every box the segment enters, nearest first.
    let (origin, end) = (Vec3::new(-5.0, 20.0, 30.0), Vec3::new(105.0, 70.0, 60.0));
    let mut hits = Vec::new();
    let stats = tree.ray_cast(origin, end, 1.0, |id, t| {
        hits.push((tree.user_data(id).expect("live"), t));
        1.0 // go on along the whole segment
    });
    hits.sort_by(|a, b| a.1.total_cmp(&b.1));
    println!(
        "ray {origin} -> {end}: {} hits ({} nodes tested)",
        hits.len(),
        stats.node_visits
    );
    for (user, t) in &hits {
        println!("  box {user:4} entered at t = {t:.4}");
    }
    let mut want: Vec<(u32, f32)> = items
        .iter()
        .filter_map(|(b, _, user)| entry(b, origin, end).map(|t| (*user, t)))
        .collect();
    want.sort_by(|a, b| a.1.total_cmp(&b.1));
    // Compared by box (two boxes may be entered at the same point).
    let by_box = |v: &[(u32, f32)]| {
        let mut v = v.to_vec();
        v.sort_by_key(|h| h.0);
        v
    };
    let same = hits.len() == want.len()
        && by_box(&hits)
            .iter()
            .zip(&by_box(&want))
            .all(|(h, w)| h.0 == w.0 && (h.1 - w.1).abs() <= 1e-5);
    println!(
        "  brute force: {} hits, {}",
        want.len(),
        if same { "agrees" } else { "DISAGREES" }
    );
    ok &= same;

    // The closest hit: the callback returns the entry fraction, which clips the segment.
    let mut closest = None;
    tree.ray_cast(origin, end, 1.0, |id, t| {
        closest = Some((tree.user_data(id).expect("live"), t));
        t
    });
    println!("closest hit: {closest:?}");
    let same = match (closest, want.first()) {
        (Some((_, t)), Some(&(_, t_want))) => (t - t_want).abs() <= 1e-5,
        (None, None) => true,
        _ => false,
    };
    println!(
        "  brute force: {:?}, {}",
        want.first(),
        if same { "agrees" } else { "DISAGREES" }
    );
    ok &= same;

    // A box query: every box that overlaps the query box.
    let query = Aabb::new(Vec3::new(40.0, 40.0, 40.0), Vec3::new(55.0, 50.0, 60.0));
    let mut found = Vec::new();
    let stats = tree.query_aabb(&query, |id| {
        found.push(tree.user_data(id).expect("live"));
        true // go on
    });
    found.sort_unstable();
    println!(
        "box query {} .. {}: {} boxes ({} nodes tested): {found:?}",
        query.min,
        query.max,
        found.len(),
        stats.node_visits
    );
    let want: Vec<u32> = items
        .iter()
        .filter(|(b, _, _)| b.overlaps(&query))
        .map(|(_, _, user)| *user)
        .collect();
    let same = found == want;
    println!(
        "  brute force: {} boxes, {}",
        want.len(),
        if same { "agrees" } else { "DISAGREES" }
    );
    ok &= same;

    ok &= tree.validate().is_ok() && ids.len() == items.len();
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
