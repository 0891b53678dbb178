//! The rules a scene must meet, each refused with a message naming the sphere (index and id)
//! or section and field, the rule and the value found.

use super::model::{fmt_numbers, newer_message};
use super::simulation::tight_box_at;
use super::{
    FORMAT_VERSION, MAX_BODIES, MAX_SPHERES, PAIR_COST_RANGE, Scene, SceneError, Sphere, StaticBox,
    pair_cost_in_range,
};
use crate::tree::{Aabb, TreeConfig, TreeError, fat_box};
use glam::Vec3;
use std::collections::BTreeMap;

/// The first broken rule, as a message without the file name.
pub(crate) fn check(scene: &Scene) -> Result<(), String> {
    if scene.format_version > FORMAT_VERSION {
        return Err(newer_message(scene.format_version));
    }
    if scene.format_version == 0 {
        return Err(format!("format_version must be {FORMAT_VERSION}, got 0"));
    }
    let dims = scene.dimensions;
    if dims != 2 && dims != 3 {
        return Err(format!("dimensions must be 2 or 3, got {dims}"));
    }
    let d = usize::from(dims);
    let shown = |v: Vec3| fmt_numbers(&v.to_array()[..d]);
    let (wmin, wmax) = (scene.world.min, scene.world.max);
    if !wmin.is_finite() || !wmax.is_finite() {
        return Err(format!(
            "world: every number must be finite, got min {} and max {}",
            shown(wmin),
            shown(wmax)
        ));
    }
    if (0..d).any(|a| wmin[a] >= wmax[a]) {
        return Err(format!(
            "world: min must be < max on every axis, got min {} and max {}",
            shown(wmin),
            shown(wmax)
        ));
    }
    if d == 2 && (wmin.z != 0.0 || wmax.z != 0.0) {
        return Err("world: z must be 0 in a 2D scene".to_owned());
    }
    if !(scene.dt > 0.0 && scene.dt <= 1.0) {
        return Err(format!("dt must be in (0, 1] seconds, got {}", scene.dt));
    }
    check_tree(&scene.tree)?;
    if scene.spheres.len() > MAX_SPHERES {
        return Err(format!(
            "spheres: the scene lists {} spheres; at most {MAX_SPHERES} are allowed",
            scene.spheres.len()
        ));
    }
    if let Some(g) = &scene.generate {
        // The generator's own limit: the spheres listed beside it do not lower it (the count
        // given is the count generated); the bodies in all are bounded below.
        if g.count as usize > MAX_SPHERES {
            return Err(format!(
                "generate.count: {} spheres; the generator makes at most {MAX_SPHERES}",
                g.count
            ));
        }
        if let Some(density) = g.density
            && !(density > 0.0 && density <= 1.0)
        {
            return Err(format!(
                "generate.density is the share of the world the spheres fill, in (0, 1], got \
                 {density}"
            ));
        }
        let (rmin, rmax) = g.radius;
        if !(rmin.is_finite() && rmax.is_finite() && rmin > 0.0 && rmin <= rmax) {
            return Err(format!(
                "generate.radius must be (min, max) with 0 < min <= max, got ({rmin}, {rmax})"
            ));
        }
        let (smin, smax) = g.speed;
        if !(smin.is_finite() && smax.is_finite() && smin >= 0.0 && smin <= smax) {
            return Err(format!(
                "generate.speed must be (min, max) with 0 <= min <= max, got ({smin}, {smax})"
            ));
        }
        let grown = super::generate::grown_world(scene);
        if !grown.min.is_finite()
            || !grown.max.is_finite()
            || (0..d).any(|a| grown.max[a] - grown.min[a] > MAX_GROWN_EXTENT)
        {
            return Err(match g.density {
                Some(density) => format!(
                    "generate.density: {} spheres at density {density} would need a world wider \
                     than {MAX_GROWN_EXTENT} units",
                    g.count
                ),
                None => format!(
                    "generate: spheres are generated only in a world at most \
                     {MAX_GROWN_EXTENT} units wide on every axis; this one spans min {} to max \
                     {} (list the spheres instead, or make the world smaller)",
                    shown(grown.min),
                    shown(grown.max)
                ),
            });
        }
        let (wmin, wmax) = (grown.min, grown.max);
        if g.count > 0 && (0..d).any(|a| wmin[a] + rmax > wmax[a] - rmax) {
            return Err(format!(
                "generate.radius: a sphere of radius {rmax} does not fit in the world (min {}, \
                 max {})",
                shown(wmin),
                shown(wmax)
            ));
        }
        let mut speed = Vec3::splat(smax);
        if d == 2 {
            speed.z = 0.0;
        }
        check_fat_reach(&grown, dims, rmax, speed, &scene.tree)
            .map_err(|e| format!("generate (radius {rmax}, speed {smax}): {e}"))?;
        let first = super::generate::first_generated_id(scene);
        if first + u64::from(g.count) > u64::from(u32::MAX) + 1 {
            return Err(format!(
                "generate.count: {} generated spheres would need ids above {}",
                g.count,
                u32::MAX
            ));
        }
    }
    let mut seen: BTreeMap<u32, usize> = BTreeMap::new();
    for (i, s) in scene.spheres.iter().enumerate() {
        check_sphere(scene, s).map_err(|e| format!("spheres[{i}] (id {}): {e}", s.id))?;
        if let Some(first) = seen.insert(s.id, i) {
            return Err(format!(
                "spheres[{i}] (id {}): duplicate id, also used by spheres[{first}]",
                s.id
            ));
        }
    }
    check_boxes(scene, &seen)
}

/// The static boxes' rules: how many (with the spheres), each box's own
/// ([`check_static_box`]), and ids unique among the boxes and shared with no sphere, listed
/// (`sphere_ids`: id to index in `spheres`) or generated.
fn check_boxes(scene: &Scene, sphere_ids: &BTreeMap<u32, usize>) -> Result<(), String> {
    if scene.boxes.is_empty() {
        return Ok(());
    }
    let spheres = scene.sphere_count();
    if scene.boxes.len() > MAX_SPHERES {
        return Err(format!(
            "boxes: the scene has {} static boxes; at most {MAX_SPHERES} are allowed",
            scene.boxes.len()
        ));
    }
    if scene.boxes.len() > MAX_BODIES.saturating_sub(spheres) {
        return Err(format!(
            "boxes: the scene has {spheres} spheres (listed and generated) and {} static boxes; \
             at most {MAX_BODIES} bodies together are allowed",
            scene.boxes.len()
        ));
    }
    // Generated spheres take the ids after the largest listed one (see `generate`), which
    // is never a box's; only a listed sphere can share one.
    let mut seen: BTreeMap<u32, usize> = BTreeMap::new();
    for (i, b) in scene.boxes.iter().enumerate() {
        let at = |e: String| format!("boxes[{i}] (id {}): {e}", b.id);
        check_static_box(scene, b).map_err(at)?;
        if let Some(first) = seen.insert(b.id, i) {
            return Err(at(format!("duplicate id, also used by boxes[{first}]")));
        }
        if let Some(sphere) = sphere_ids.get(&b.id) {
            return Err(at(format!(
                "duplicate id, also used by spheres[{sphere}]; a box's id must be no sphere's"
            )));
        }
    }
    Ok(())
}

/// One static box's own rules (everything but id uniqueness), without the `boxes[i]` prefix:
/// finite numbers, min <= max on every axis, z = 0 in 2D, inside the world (touching the
/// walls allowed: level geometry outside the walls could never meet a sphere), and a fat box
/// (grown by the margin) within f32.
pub(crate) fn check_static_box(scene: &Scene, b: &StaticBox) -> Result<(), String> {
    let d = usize::from(scene.dimensions);
    let shown = |v: Vec3| fmt_numbers(&v.to_array()[..d]);
    if !b.min.is_finite() || !b.max.is_finite() {
        return Err(format!(
            "min and max must have finite numbers, got min {} and max {}",
            shown(b.min),
            shown(b.max)
        ));
    }
    if (0..d).any(|a| b.min[a] > b.max[a]) {
        return Err(format!(
            "min must be <= max on every axis, got min {} and max {}",
            shown(b.min),
            shown(b.max)
        ));
    }
    if d == 2 && (b.min.z != 0.0 || b.max.z != 0.0) {
        return Err("min and max must have z = 0 in a 2D scene".to_owned());
    }
    let (wmin, wmax) = (scene.world.min, scene.world.max);
    if (0..d).any(|a| b.min[a] < wmin[a] || b.max[a] > wmax[a]) {
        return Err(format!(
            "the box (min {}, max {}) reaches outside the world (min {}, max {})",
            shown(b.min),
            shown(b.max),
            shown(wmin),
            shown(wmax)
        ));
    }
    check_box_fat_reach(b, &scene.tree)
}

/// Ok when a static box's fat box (grown by the margin, no look-ahead: it never moves) is
/// finite in f32; the message names the margin.
pub(crate) fn check_box_fat_reach(b: &StaticBox, settings: &TreeConfig) -> Result<(), String> {
    let fat = fat_box(&b.aabb(), Vec3::ZERO, settings.margin, 0.0);
    if fat.min.is_finite() && fat.max.is_finite() {
        Ok(())
    } else {
        Err(format!(
            "its fat box would overflow f32 (beyond ±3.4e38): tree.margin {} grows it past \
             f32's range; lower tree.margin",
            crate::text::short_f32(settings.margin)
        ))
    }
}

/// The tree section, checked by the tree ([`TreeConfig::check`]), as a message naming the
/// scene's field: `tree.margin must be >= 0, got -1`.
pub(crate) fn check_tree(config: &TreeConfig) -> Result<(), String> {
    match config.check() {
        Ok(()) => Ok(()),
        Err(TreeError::InvalidSetting {
            name: "optimize_share",
            value,
        }) => Err(format!(
            "tree.optimize_share must be in [0, 1], got {value}"
        )),
        Err(TreeError::InvalidSetting { name, value }) if !value.is_finite() => Err(format!(
            "tree.{name} must be a finite number >= 0, got {value}"
        )),
        Err(TreeError::InvalidSetting { name, value }) => {
            Err(format!("tree.{name} must be >= 0, got {value}"))
        }
        Err(other) => Err(format!("tree: {other}")),
    }
}

/// One sphere's own rules (everything but id uniqueness), without the `spheres[i]` prefix.
pub(crate) fn check_sphere(scene: &Scene, s: &Sphere) -> Result<(), String> {
    let d = usize::from(scene.dimensions);
    let shown = |v: Vec3| fmt_numbers(&v.to_array()[..d]);
    if !s.center.is_finite() {
        return Err(format!(
            "center must have finite numbers, got {}",
            shown(s.center)
        ));
    }
    if !s.velocity.is_finite() {
        return Err(format!(
            "velocity must have finite numbers, got {}",
            shown(s.velocity)
        ));
    }
    if !s.radius.is_finite() {
        return Err(format!(
            "radius must be a finite number > 0, got {}",
            s.radius
        ));
    }
    if s.radius <= 0.0 {
        return Err(format!("radius must be > 0, got {}", s.radius));
    }
    if d == 2 && (s.center.z != 0.0 || s.velocity.z != 0.0) {
        return Err("center and velocity must have z = 0 in a 2D scene".to_owned());
    }
    // The same bounds the simulation clamps to when a sphere bounces.
    let (wmin, wmax) = (scene.world.min, scene.world.max);
    if (0..d).any(|a| s.center[a] < wmin[a] + s.radius || s.center[a] > wmax[a] - s.radius) {
        return Err(format!(
            "the sphere (center {}, radius {}) reaches outside the world (min {}, max {})",
            shown(s.center),
            s.radius,
            shown(wmin),
            shown(wmax)
        ));
    }
    if let Some(gone) = s.disappear_at
        && gone <= s.appear_at
    {
        return Err(format!(
            "disappear_at ({gone}) must be > appear_at ({})",
            s.appear_at
        ));
    }
    check_fat_reach(
        &scene.world,
        scene.dimensions,
        s.radius,
        s.velocity.abs(),
        &scene.tree,
    )
}

/// Ok when the fat box of a sphere of `radius` moving at `speed` (per axis, >= 0) stays
/// finite in f32 wherever the sphere goes in the world: at each wall, grown by the margin and
/// stretched by the look-ahead, exactly as the broad phases compute it. The message names the
/// field to change.
pub(crate) fn check_fat_reach(
    world: &Aabb<Vec3>,
    dims: u8,
    radius: f32,
    speed: Vec3,
    settings: &TreeConfig,
) -> Result<(), String> {
    let r = f64::from(radius);
    // The tight boxes at the walls (as the simulation rounds them): their union is all the
    // tight boxes can reach, and the fat-box rule is monotone in every number.
    let low = tight_box_at(world.min.as_dvec3() + r, radius, dims);
    let high = tight_box_at(world.max.as_dvec3() - r, radius, dims);
    let reach = Aabb::new(low.min, high.max);
    let finite = |b: &Aabb<Vec3>| b.min.is_finite() && b.max.is_finite();
    let (m, l) = (settings.margin, settings.velocity_lookahead);
    let grown = fat_box(&reach, Vec3::ZERO, m, 0.0);
    let moving = [speed, -speed].map(|v| fat_box(&reach, v, m, l));
    if finite(&grown) && moving.iter().all(finite) {
        return Ok(());
    }
    let d = usize::from(dims);
    let shown = |v: Vec3| fmt_numbers(&v.to_array()[..d]);
    let field = if !finite(&reach) || (!finite(&grown) && m < 1e30) {
        "world"
    } else if !finite(&grown) {
        "tree.margin"
    } else {
        "velocity x tree.velocity_lookahead"
    };
    Err(format!(
        "its fat box would overflow f32 (beyond ±3.4e38) at the world's edge: world min {}, \
         max {}, radius {}, speed {}, tree.margin {}, tree.velocity_lookahead {} s; \
         every fat box must stay finite, so lower {field}",
        shown(world.min),
        shown(world.max),
        crate::text::short_f32(radius),
        shown(speed),
        crate::text::short_f32(m),
        crate::text::short_f32(l),
    ))
}

/// [`check`] as a [`SceneError`] naming `file`.
/// The widest a world may grow for a generator's density (world units): far past any scene,
/// well inside f32.
const MAX_GROWN_EXTENT: f32 = 1.0e9;

/// The share of a sphere's radius (or of the margin, when smaller) that the spacing of f32
/// numbers where it is may reach before the scene is warned far from the origin.
const FAR_SHARE: f64 = 0.01;

pub(crate) fn validate(scene: &Scene, file: &str) -> Result<(), SceneError> {
    check(scene).map_err(|message| SceneError::Invalid {
        file: file.to_owned(),
        message,
    })
}

/// What of the saved view the window cannot use, and so leaves out: a centre that is not a
/// point, a zoom that is not a positive number, a plane or layer it does not know.
fn view_warnings(scene: &Scene) -> Vec<String> {
    let mut out = Vec::new();
    let Some(view) = &scene.view else {
        return out;
    };
    if let Some((x, y)) = view.center
        && !(x.is_finite() && y.is_finite())
    {
        out.push(format!(
            "view.center ({x}, {y}) is not a point; the window fits the view instead"
        ));
    }
    if let Some(cost) = view.pair_cost
        && !pair_cost_in_range(cost)
    {
        out.push(format!(
            "view.pair_cost must be a number of node visits from {} to {}, got {cost}; 1 is \
             used instead",
            PAIR_COST_RANGE.0, PAIR_COST_RANGE.1
        ));
    }
    if let Some(zoom) = view.zoom
        && !(zoom.is_finite() && zoom > 0.0)
    {
        out.push(format!(
            "view.zoom must be a number > 0, got {zoom}; the window fits the view instead"
        ));
    }
    if let Some(plane) = &view.plane
        && !super::PLANE_NAMES
            .iter()
            .any(|p| p.eq_ignore_ascii_case(plane.trim()))
    {
        out.push(format!(
            "view.plane \"{}\" is not one of {}; the window shows XY",
            crate::text::excerpt(plane, crate::text::MAX_EXCERPT_CHARS),
            super::PLANE_NAMES.join(", ")
        ));
    }
    if let Some(layers) = &view.layers
        && let Some(bad) = layers.iter().find(|name| {
            let name = name.trim();
            !name.is_empty() && name != "all" && super::layer_name(name).is_none()
        })
    {
        out.push(format!(
            "view.layers names `{}`, not a layer (one of {} or `all`); the window keeps the \
             layers it shows",
            crate::text::excerpt(bad, crate::text::MAX_EXCERPT_CHARS),
            super::LAYER_NAMES.join(", ")
        ));
    }
    out
}

/// How many pairs of the scene's static boxes overlap, grown by its margin as the broad phase
/// fattens them, counting up to `cap` (then `cap`).
fn static_overlaps(scene: &Scene, cap: usize) -> usize {
    let m = Vec3::splat(scene.tree.margin.max(0.0));
    let items: Vec<(Aabb<Vec3>, Vec3, usize)> = scene
        .boxes
        .iter()
        .enumerate()
        .map(|(i, b)| (Aabb::new(b.min - m, b.max + m), Vec3::ZERO, i))
        .collect();
    let mut tree = crate::tree::DynamicTree::<Vec3, usize>::new(TreeConfig {
        margin: 0.0,
        velocity_lookahead: 0.0,
        ..TreeConfig::default()
    });
    if tree.create_proxies(&items).is_err() {
        // A box the tree refuses is refused with its reason when the scene runs.
        return 0;
    }
    let mut count = 0;
    for (i, (aabb, _, _)) in items.iter().enumerate() {
        tree.query_aabb(aabb, |proxy| {
            if tree.user_data(proxy).is_ok_and(|j| j > i) {
                count += 1;
            }
            count < cap
        });
        if count >= cap {
            break;
        }
    }
    count
}

/// Warnings about a valid scene: things that will not fail `check` but that a user should
/// know before running it, each a sentence with the numbers.
///
/// - The expected number of candidate pairs (spheres spread evenly over the world; fat boxes
///   of the mean size) is more than half of `pair_limit`: the run is likely to stop there.
/// - Coordinates so far from the origin that f32 numbers there are further apart than a
///   sphere moves in a step: the simulation keeps positions in f64, so the motion is not
///   lost, but the tree's f32 boxes move in jumps of that spacing.
/// - The static boxes alone overlap (fat, counted exactly) in more than half of `pair_limit`
///   pairs: those overlaps count towards the limit though they are never reported.
pub(crate) fn warnings(scene: &Scene, pair_limit: usize) -> Vec<String> {
    let mut out = Vec::new();
    let d = usize::from(scene.dimensions);
    let n = scene.sphere_count() as f64;
    if n >= 2.0 {
        let (m, l) = (
            f64::from(scene.tree.margin),
            f64::from(scene.tree.velocity_lookahead),
        );
        // Mean fat-box side per axis.
        let mut side = [0.0f64; 3];
        let mut count = 0.0;
        for s in &scene.spheres {
            for (a, sa) in side.iter_mut().enumerate().take(d) {
                *sa += 2.0 * (f64::from(s.radius) + m) + f64::from(s.velocity[a]).abs() * l;
            }
            count += 1.0;
        }
        if let Some(g) = scene.generate {
            let r = 0.5 * (f64::from(g.radius.0) + f64::from(g.radius.1));
            let v = 0.5 * (f64::from(g.speed.0) + f64::from(g.speed.1));
            let c = f64::from(g.count);
            for sa in side.iter_mut().take(d) {
                // A random direction's mean |component| is about half the speed.
                *sa += c * (2.0 * (r + m) + 0.5 * v * l);
            }
            count += c;
        }
        // Two boxes of side s, centres spread over a length w, overlap on that axis with
        // probability about 2s / w.
        let mut p = 1.0;
        for (a, sa) in side.iter().enumerate().take(d) {
            let w = f64::from(scene.world.max[a]) - f64::from(scene.world.min[a]);
            p *= (2.0 * sa / count / w).min(1.0);
        }
        let expected = 0.5 * n * (n - 1.0) * p;
        if expected > 0.5 * pair_limit as f64 {
            out.push(format!(
                "about {expected:.3e} candidate pairs are expected ({} spheres, fat boxes of mean \
                 side {:.3} in a world of {}): a run stops past the pair limit of {pair_limit}. \
                 Use a larger world, fewer or smaller spheres, a smaller tree.margin, or a \
                 higher limit (--pair-limit)",
                scene.sphere_count(),
                side[0] / count,
                fmt_numbers(&(scene.world.max - scene.world.min).to_array()[..d]),
            ));
        }
    }
    if scene.boxes.len() >= 2 {
        let overlaps = static_overlaps(scene, pair_limit.saturating_add(1));
        if overlaps > pair_limit / 2 {
            let (count, outcome) = if overlaps > pair_limit {
                (format!("more than {pair_limit}"), "a run stops at step 0")
            } else {
                (overlaps.to_string(), "a run may stop there")
            };
            out.push(format!(
                "the static boxes alone overlap in {count} pairs (their fat boxes, with \
                 tree.margin {}): their overlaps count towards the pair limit of {pair_limit} \
                 though they are never reported, so {outcome}. Use a smaller tree.margin or a \
                 higher limit (--pair-limit)",
                scene.tree.margin
            ));
        }
    }
    out.extend(view_warnings(scene));
    // A sphere far from the origin against its size: where f32 numbers (the tree's boxes) are
    // apart by a share of its radius or of the margin that shows, its box is rounded that
    // coarsely and moves in jumps. A sphere that barely moves is not a far world: a motion
    // below the spacing is lost only where the spacing itself matters.
    let spacing_at = |far: f32| f64::from(far.next_up() - far);
    let far_of = |c: &[f32]| c.iter().map(|v| v.abs()).fold(0.0f32, f32::max);
    let margin = f64::from(scene.tree.margin);
    // What matters of a sphere of radius `r`: the smaller of its radius and the margin.
    let matters = |r: f64| {
        if margin > 0.0 && margin < r {
            (margin, format!("tree.margin ({})", scene.tree.margin))
        } else {
            (r, format!("its radius ({r})"))
        }
    };
    let mut worst: Option<(f64, String, f32, String)> = None;
    let mut consider = |share: f64, who: String, far: f32, what: String| {
        if share > FAR_SHARE && worst.as_ref().is_none_or(|w| share > w.0) {
            worst = Some((share, who, far, what));
        }
    };
    for sp in &scene.spheres {
        let far = far_of(&sp.center.to_array()[..d]);
        let (size, what) = matters(f64::from(sp.radius));
        consider(
            spacing_at(far) / size,
            format!("sphere {}", sp.id),
            far,
            what,
        );
    }
    if let Some(g) = scene.generate.filter(|g| g.count > 0) {
        let world = scene.grown_world();
        let world_far = (0..d)
            .map(|a| world.min[a].abs().max(world.max[a].abs()))
            .fold(0.0f32, f32::max);
        let (size, what) = matters(f64::from(g.radius.0));
        consider(
            spacing_at(world_far) / size,
            "the generated spheres (the smallest, at the world's far corner)".to_owned(),
            world_far,
            what,
        );
    }
    if let Some((share, who, far, what)) = worst {
        let spacing = spacing_at(far);
        out.push(format!(
            "{who} is at coordinates of {far:e}, where f32 numbers (the tree's boxes) are \
             {spacing:.3e} apart, {:.1}% of {what}: its box is rounded that coarsely and moves \
             in jumps (positions are simulated in f64). Move the world nearer the origin for \
             smooth boxes",
            100.0 * share
        ));
    }
    out
}
