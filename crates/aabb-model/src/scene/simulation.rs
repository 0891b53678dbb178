//! The simulation: spheres move by `velocity * dt` and bounce off the walls (the standard
//! workload's rule), appear and disappear at their steps, and drive a broad phase each step.
//!
//! Static boxes are in the broad phase from step 0 to the end, never moved (zero velocity, so
//! their fat box is their box grown by the margin, made once), marked static
//! ([`Broadphase::set_static_ids`]) so that no pair of two of them is reported. A sphere and
//! a box are a contact when the sphere overlaps the box (the exact sphere-box distance).
//! Spheres pass through static boxes: they bounce off the walls only.

use super::validate::{check_box_fat_reach, check_fat_reach, check_sphere, check_tree};
use super::{
    FORMAT_VERSION, Scene, SceneError, Sphere, SphereBody, StaticBox, StepReport, ViewSettings,
};
use crate::broadphase::{self, Broadphase, BroadphaseKind};
use crate::tree::{Aabb, TreeConfig};
use glam::{DVec3, Vec3};
use std::time::Instant;

/// The name errors of a running simulation give in place of a file.
const SIM_FILE: &str = "<scene>";

/// Steps a scene and drives a broad phase. Same scene, same results, every run.
pub struct Simulation {
    name: String,
    dimensions: u8,
    world: Aabb<Vec3>,
    dt: f32,
    settings: TreeConfig,
    /// The scene's saved view (boxed: most scenes' is small or none, and a simulation is
    /// copied for every keyframe).
    view: Option<Box<ViewSettings>>,
    /// Every sphere, alive or not, sorted by id.
    bodies: Vec<SphereBody>,
    /// The static boxes, sorted by id.
    boxes: Vec<StaticBox>,
    /// The static boxes as the broad phase takes them, sorted by id.
    statics: Vec<broadphase::Body>,
    broadphase: Box<dyn Broadphase>,
    step: u64,
    report: StepReport,
    /// The live bodies handed to the broad phase, kept between steps so a step does not
    /// allocate (and page in) a fresh buffer.
    live: Vec<broadphase::Body>,
    /// The most candidate pairs a step may find.
    pair_limit: usize,
    /// Why the last step (or change) stopped, when it did.
    last_error: Option<broadphase::BroadphaseError>,
}

/// A copy that steps exactly as the original would (a recording's keyframe, see
/// [`crate::replay`]): everything but the scratch buffer of live bodies, which a step refills.
impl Clone for Simulation {
    fn clone(&self) -> Self {
        Simulation {
            name: self.name.clone(),
            dimensions: self.dimensions,
            world: self.world,
            dt: self.dt,
            settings: self.settings,
            view: self.view.clone(),
            bodies: self.bodies.clone(),
            boxes: self.boxes.clone(),
            statics: self.statics.clone(),
            broadphase: self.broadphase.clone_box(),
            step: self.step,
            report: self.report.clone(),
            live: Vec::new(),
            pair_limit: self.pair_limit,
            last_error: self.last_error.clone(),
        }
    }
}

fn invalid(message: String) -> SceneError {
    SceneError::Invalid {
        file: SIM_FILE.to_owned(),
        message,
    }
}

/// True while a sphere exists at `step`.
fn alive_at(s: &Sphere, step: u64) -> bool {
    s.appear_at <= step && s.disappear_at.is_none_or(|gone| step < gone)
}

/// True when two spheres overlap or touch, from their f64 positions: squares of f32 radii and
/// of distances within f32 range stay far below f64's limit, so nothing overflows.
fn spheres_touch(a: &SphereBody, b: &SphereBody) -> bool {
    let reach = f64::from(a.sphere.radius) + f64::from(b.sphere.radius);
    a.position.distance_squared(b.position) <= reach * reach
}

/// True when a sphere overlaps or touches a static box: the distance from its f64 centre to
/// the nearest point of the box is at most its radius (in 2D both have z = 0).
fn sphere_touches_box(a: &SphereBody, b: &StaticBox) -> bool {
    let nearest = a.position.clamp(b.min.as_dvec3(), b.max.as_dvec3());
    let r = f64::from(a.sphere.radius);
    a.position.distance_squared(nearest) <= r * r
}

/// A broad phase of `kind` for the simulation: the pair limit set, the static boxes
/// (`statics`, as the broad phase takes them) marked and built in
/// ([`broadphase::build_statics`]).
fn make_broadphase(
    kind: BroadphaseKind,
    dimensions: u8,
    settings: TreeConfig,
    pair_limit: usize,
    statics: &[broadphase::Body],
) -> Result<Box<dyn Broadphase>, SceneError> {
    let mut b = broadphase::make(kind, dimensions, settings).map_err(|e| invalid(e.to_string()))?;
    b.set_pair_limit(pair_limit);
    let ids: Vec<u32> = statics.iter().map(|b| b.id).collect();
    b.set_static_ids(&ids);
    broadphase::build_statics(b.as_mut(), statics);
    Ok(b)
}

/// The greatest f32 at or below `x` (finite `x` within f32's range).
fn f32_down(x: f64) -> f32 {
    let y = x as f32;
    if f64::from(y) > x { y.next_down() } else { y }
}

/// The least f32 at or above `x` (finite `x` within f32's range).
fn f32_up(x: f64) -> f32 {
    let y = x as f32;
    if f64::from(y) < x { y.next_up() } else { y }
}

/// The tight box of a sphere at an f64 position, rounded outwards to f32 so that it always
/// holds the sphere (z = 0..0 in 2D).
pub(crate) fn tight_box_at(position: DVec3, radius: f32, dims: u8) -> Aabb<Vec3> {
    let r = f64::from(radius);
    let mut min = [0.0f32; 3];
    let mut max = [0.0f32; 3];
    for a in 0..usize::from(dims) {
        min[a] = f32_down(position[a] - r);
        max[a] = f32_up(position[a] + r);
    }
    Aabb::new(Vec3::from_array(min), Vec3::from_array(max))
}

/// Ids in `all` (sorted) that are not in `minus` (sorted).
/// True when `count` ids up to `max_id` are dense enough to index by id in a table (at most
/// about four entries an id), rather than search for.
#[must_use]
pub fn ids_fit_a_table(max_id: u32, count: usize) -> bool {
    max_id as usize <= 4 * count + 1024
}

fn sorted_difference(all: &[u32], minus: &[u32]) -> Vec<u32> {
    all.iter()
        .copied()
        .filter(|id| minus.binary_search(id).is_err())
        .collect()
}

impl SphereBody {
    /// A body for `sphere` at step `step`.
    fn new(sphere: Sphere, step: u64) -> Self {
        SphereBody {
            alive: alive_at(&sphere, step),
            position: sphere.center.as_dvec3(),
            sphere,
        }
    }

    /// The centre in f64, as the simulation moves it (`sphere.center` is its nearest f32).
    #[must_use]
    pub fn position(&self) -> DVec3 {
        self.position
    }
}

impl Simulation {
    /// Starts a scene at step 0 (spheres that appear at 0 are inserted; pairs computed) with
    /// the default pair limit. An error when the scene breaks a rule (see
    /// [`Scene::validate`]) or step 0 passes the pair limit.
    pub fn new(scene: &Scene, kind: BroadphaseKind) -> Result<Simulation, SceneError> {
        Self::with_pair_limit(scene, kind, broadphase::DEFAULT_PAIR_LIMIT)
    }

    /// [`Simulation::new`] with a candidate-pair limit: a step that finds more pairs stops
    /// with [`SceneError::Step`] (see [`Simulation::set_pair_limit`]).
    pub fn with_pair_limit(
        scene: &Scene,
        kind: BroadphaseKind,
        pair_limit: usize,
    ) -> Result<Simulation, SceneError> {
        let sim = Self::paused_at_zero(scene, kind, pair_limit)?;
        sim.report_ok()?;
        Ok(sim)
    }

    /// The simulation at step 0 even when step 0 passed the pair limit (then its report has no
    /// pairs and [`Simulation::last_error`] says why): the window opens such a scene paused, so
    /// the user can change the margin or the limit. An error when the scene breaks a rule.
    pub fn paused_at_zero(
        scene: &Scene,
        kind: BroadphaseKind,
        pair_limit: usize,
    ) -> Result<Simulation, SceneError> {
        broadphase::check_pair_limit(pair_limit).map_err(invalid)?;
        scene.validate(SIM_FILE)?;
        if kind != BroadphaseKind::Tree
            && let Some(why) = scene.work_at_start().refusal(kind)
        {
            return Err(invalid(why));
        }
        let mut boxes = scene.boxes.clone();
        boxes.sort_by_key(|b| b.id);
        let statics: Vec<broadphase::Body> = boxes
            .iter()
            .map(|b| broadphase::Body::fixed(b.id, b.aabb()))
            .collect();
        let broadphase = make_broadphase(kind, scene.dimensions, scene.tree, pair_limit, &statics)?;
        let bodies: Vec<SphereBody> = scene
            .all_spheres()
            .into_iter()
            .map(|sphere| SphereBody::new(sphere, 0))
            .collect();
        let appeared = bodies
            .iter()
            .filter(|b| b.alive)
            .map(|b| b.sphere.id)
            .collect();
        let mut sim = Simulation {
            name: scene.name.clone(),
            dimensions: scene.dimensions,
            world: scene.grown_world(),
            dt: scene.dt,
            settings: scene.tree,
            view: scene.view.clone().map(Box::new),
            bodies,
            boxes,
            statics,
            broadphase,
            step: 0,
            report: StepReport::default(),
            live: Vec::new(),
            pair_limit,
            last_error: None,
        };
        match sim.refresh(appeared, Vec::new(), Instant::now()) {
            Ok(_) | Err(SceneError::Step { .. }) => Ok(sim),
            Err(e) => Err(e),
        }
    }

    /// Ok when the last step (or change) completed; else the error it stopped with.
    fn report_ok(&self) -> Result<(), SceneError> {
        match &self.last_error {
            None => Ok(()),
            Some(source) => Err(SceneError::Step {
                step: self.step,
                source: source.clone(),
            }),
        }
    }

    /// Why the last step (or change) stopped, when it did: its report then has no pairs.
    #[must_use]
    pub fn last_error(&self) -> Option<&broadphase::BroadphaseError> {
        self.last_error.as_ref()
    }

    /// The most candidate pairs a step may find.
    #[must_use]
    pub fn pair_limit(&self) -> usize {
        self.pair_limit
    }

    /// Sets the candidate-pair limit and finds the pairs again under it (an error when they
    /// pass it; the spheres are kept either way).
    pub fn set_pair_limit(&mut self, limit: usize) -> Result<&StepReport, SceneError> {
        broadphase::check_pair_limit(limit).map_err(invalid)?;
        self.pair_limit = limit;
        self.broadphase.set_pair_limit(limit);
        self.refresh(Vec::new(), Vec::new(), Instant::now())
    }

    /// Advances one step of `dt`: live spheres move and bounce, then spheres appear and
    /// disappear, then the broad phase is updated and the pairs found.
    ///
    /// An error ([`SceneError::Step`]) when the broad phase refuses a body or the pairs pass
    /// the pair limit: the spheres have moved, the report has no pairs, and a later step, or
    /// a change of settings or limit, carries on from here.
    pub fn step(&mut self) -> Result<&StepReport, SceneError> {
        let started = Instant::now();
        self.step += 1;
        let step = self.step;
        let (dt, dims, world) = (self.dt, usize::from(self.dimensions), self.world);
        let mut appeared = Vec::new();
        let mut disappeared = Vec::new();
        for body in &mut self.bodies {
            let alive_now = alive_at(&body.sphere, step);
            match (body.alive, alive_now) {
                (true, true) => move_and_bounce(body, dt, dims, &world),
                (false, true) => appeared.push(body.sphere.id),
                (true, false) => disappeared.push(body.sphere.id),
                (false, false) => {}
            }
            body.alive = alive_now;
        }
        self.refresh(appeared, disappeared, started)
    }

    /// Brings the broad phase to the live bodies, finds pairs and contacts, and stores the
    /// report of the current step (with no pairs when the broad phase stopped with an error).
    fn refresh(
        &mut self,
        appeared: Vec<u32>,
        disappeared: Vec<u32>,
        started: Instant,
    ) -> Result<&StepReport, SceneError> {
        let dims = self.dimensions;
        let spheres = self
            .bodies
            .iter()
            .filter(|b| b.alive)
            .map(|b| broadphase::Body {
                id: b.sphere.id,
                tight: tight_box_at(b.position, b.sphere.radius, dims),
                velocity: b.sphere.velocity,
            });
        broadphase::merge_by_id(&self.statics, spheres, &mut self.live);
        let outcome = self.broadphase.update(&self.live);
        let update_secs = started.elapsed().as_secs_f64();
        let pairs_started = Instant::now();
        let found = outcome
            .and_then(|outcome| Ok((outcome, self.broadphase.find_pairs()?)))
            .map(|(outcome, found)| {
                let contacts = self.contacts_of(&found.pairs);
                (outcome, found, contacts)
            });
        let pairs_secs = pairs_started.elapsed().as_secs_f64();
        let (outcome, found, contacts) = match found {
            Ok(found) => {
                self.last_error = None;
                found
            }
            Err(source) => {
                self.report = StepReport {
                    step: self.step,
                    appeared,
                    disappeared,
                    pairs_recomputed: true,
                    tree: self.broadphase.tree_stats(),
                    update_secs,
                    pairs_secs,
                    events: self.broadphase.take_events(),
                    ..StepReport::default()
                };
                self.last_error = Some(source.clone());
                return Err(SceneError::Step {
                    step: self.step,
                    source,
                });
            }
        };
        self.report = StepReport {
            step: self.step,
            reinserted: sorted_difference(&outcome.reinserted, &outcome.added),
            appeared,
            disappeared,
            candidate_pairs: found.pairs,
            contacts,
            pairs_recomputed: found.recomputed,
            tree: self.broadphase.tree_stats(),
            update_secs,
            pairs_secs,
            events: self.broadphase.take_events(),
        };
        Ok(&self.report)
    }

    /// The candidate pairs whose spheres overlap or touch, or whose sphere overlaps or touches
    /// its static box.
    fn contacts_of(&self, pairs: &[(u32, u32)]) -> Vec<(u32, u32)> {
        // Ids are usually dense: index the bodies by id once instead of two binary searches
        // a pair (a sparse id range falls back to the searches).
        let max_id = self.bodies.last().map_or(0, |b| b.sphere.id);
        let dense = ids_fit_a_table(max_id, self.bodies.len());
        let max_id = max_id as usize;
        let mut by_id = Vec::new();
        if dense {
            by_id = vec![u32::MAX; max_id + 1];
            for (i, b) in self.bodies.iter().enumerate() {
                by_id[b.sphere.id as usize] = i as u32;
            }
        }
        let body = |id: u32| -> Option<&SphereBody> {
            if dense {
                let i = *by_id.get(id as usize)?;
                self.bodies.get(i as usize)
            } else {
                self.body(id)
            }
        };
        let static_box = |id: u32| -> Option<&StaticBox> {
            self.boxes
                .binary_search_by_key(&id, |b| b.id)
                .ok()
                .map(|i| &self.boxes[i])
        };
        pairs
            .iter()
            .copied()
            .filter(|&(a, b)| match (body(a), body(b)) {
                (Some(a), Some(b)) => spheres_touch(a, b),
                (Some(s), None) => static_box(b).is_some_and(|b| sphere_touches_box(s, b)),
                (None, Some(s)) => static_box(a).is_some_and(|b| sphere_touches_box(s, b)),
                (None, None) => false,
            })
            .collect()
    }

    fn index_of(&self, id: u32) -> Option<usize> {
        self.bodies.binary_search_by_key(&id, |b| b.sphere.id).ok()
    }

    /// Bytes a copy ([`Clone`]) of this simulation holds: the bodies (labels included), the
    /// broad phase's storage and the last report's lists (capacities where the copy keeps
    /// them; an estimate).
    #[must_use]
    pub fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        let labels: usize = self
            .bodies
            .iter()
            .filter_map(|b| b.sphere.label.as_ref().map(String::len))
            .sum();
        let r = &self.report;
        let ids = r.reinserted.len() + r.appeared.len() + r.disappeared.len();
        size_of::<Self>()
            + self.bodies.len() * size_of::<SphereBody>()
            + self.boxes.len() * size_of::<StaticBox>()
            + self.statics.len() * size_of::<broadphase::Body>()
            + labels
            + self.broadphase.heap_bytes()
            + ids * size_of::<u32>()
            + (r.candidate_pairs.len() + r.contacts.len()) * size_of::<(u32, u32)>()
            + r.events.len() * size_of::<crate::tree::TreeEvent>()
    }

    /// The hash of the broad phase's structure ([`Broadphase::structure_hash`]): what a
    /// recording stores for every step and checks when it rebuilds one.
    #[must_use]
    pub fn structure_hash(&self) -> u64 {
        self.broadphase.structure_hash()
    }

    /// The body with this id, alive or not.
    #[must_use]
    pub fn body(&self, id: u32) -> Option<&SphereBody> {
        self.index_of(id).map(|i| &self.bodies[i])
    }

    /// The last report (after `new`, the report of step 0).
    #[must_use]
    pub fn report(&self) -> &StepReport {
        &self.report
    }

    /// The current step (0 before the first [`Simulation::step`]).
    #[must_use]
    pub fn step_index(&self) -> u64 {
        self.step
    }

    /// 2 or 3.
    #[must_use]
    pub fn dimensions(&self) -> u8 {
        self.dimensions
    }

    /// The walls.
    #[must_use]
    pub fn world(&self) -> Aabb<Vec3> {
        self.world
    }

    /// Seconds per step.
    #[must_use]
    pub fn dt_secs(&self) -> f32 {
        self.dt
    }

    /// The current tree settings.
    #[must_use]
    pub fn tree_settings(&self) -> TreeConfig {
        self.settings
    }

    /// The scene's name.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The scene as it is now, to save it: current centres and velocities, spheres that have
    /// disappeared left out, and `appear_at` / `disappear_at` counted from now, so that
    /// running the saved scene carries on from here.
    #[must_use]
    pub fn scene(&self) -> Scene {
        let step = self.step;
        let spheres = self
            .bodies
            .iter()
            .filter(|b| b.sphere.disappear_at.is_none_or(|gone| gone > step))
            .map(|b| Sphere {
                appear_at: b.sphere.appear_at.saturating_sub(step),
                disappear_at: b.sphere.disappear_at.map(|gone| gone - step),
                ..b.sphere.clone()
            })
            .collect();
        Scene {
            format_version: FORMAT_VERSION,
            name: self.name.clone(),
            dimensions: self.dimensions,
            world: self.world,
            dt: self.dt,
            tree: self.settings,
            spheres,
            boxes: self.boxes.clone(),
            generate: None,
            view: self.view.as_deref().cloned(),
        }
    }

    /// Every sphere, alive or not, sorted by id (the static boxes are
    /// [`Simulation::static_boxes`]).
    #[must_use]
    pub fn bodies(&self) -> &[SphereBody] {
        &self.bodies
    }

    /// An id no sphere or static box has: one past the largest (0 when there is none; the
    /// largest itself when that is `u32::MAX`, which [`Simulation::add_sphere`] then refuses).
    #[must_use]
    pub fn unused_id(&self) -> u32 {
        let spheres = self.bodies.iter().map(|b| b.sphere.id);
        let boxes = self.boxes.iter().map(|b| b.id);
        spheres
            .chain(boxes)
            .max()
            .map_or(0, |m| m.saturating_add(1))
    }

    /// The static boxes, sorted by id: in the broad phase from step 0 on, never moving.
    #[must_use]
    pub fn static_boxes(&self) -> &[StaticBox] {
        &self.boxes
    }

    /// The broad phase (for drawing fat boxes and the tree).
    #[must_use]
    pub fn broadphase(&self) -> &dyn Broadphase {
        self.broadphase.as_ref()
    }

    /// The tree's work counts since the broad phase was made (by [`Simulation::new`] or a
    /// switch of broad phase): nodes and leaves visited by its updates and pair searches,
    /// the same on every machine; `None` for brute force and sweep-and-prune.
    #[must_use]
    pub fn work_counts(&self) -> Option<crate::tree::WorkCounts> {
        self.broadphase.work_counts()
    }

    /// Which broad phase runs.
    #[must_use]
    pub fn broadphase_kind(&self) -> BroadphaseKind {
        self.broadphase.kind()
    }

    /// Switches broad phase, keeping the spheres and the pair limit; every fat box is made
    /// afresh and the pairs recomputed. An error when the pairs pass the limit (the new broad
    /// phase stays; the spheres are kept).
    pub fn set_broadphase(&mut self, kind: BroadphaseKind) -> Result<&StepReport, SceneError> {
        if kind != BroadphaseKind::Tree {
            // Refused, the broad phase in use is kept: a step of brute force over a million
            // bodies would take minutes.
            let boxes: Vec<Aabb<Vec3>> = self
                .bodies
                .iter()
                .filter(|b| b.alive)
                .map(|b| tight_box_at(b.position, b.sphere.radius, self.dimensions))
                .chain(self.statics.iter().map(|s| s.tight))
                .collect();
            if let Some(why) = broadphase::estimate_work(&boxes).refusal(kind) {
                return Err(invalid(why));
            }
        }
        self.broadphase = make_broadphase(
            kind,
            self.dimensions,
            self.settings,
            self.pair_limit,
            &self.statics,
        )?;
        self.refresh(Vec::new(), Vec::new(), Instant::now())
    }

    /// Applies new tree settings at once (fat boxes recomputed, pairs recomputed). An error
    /// names the bad value and changes nothing; or, when the settings were applied but the
    /// pairs pass the limit, [`SceneError::Step`].
    pub fn set_tree_settings(&mut self, settings: TreeConfig) -> Result<(), SceneError> {
        check_tree(&settings).map_err(invalid)?;
        for b in &self.bodies {
            check_fat_reach(
                &self.world,
                self.dimensions,
                b.sphere.radius,
                b.sphere.velocity.abs(),
                &settings,
            )
            .map_err(|e| invalid(format!("sphere (id {}): {e}", b.sphere.id)))?;
        }
        for b in &self.boxes {
            check_box_fat_reach(b, &settings)
                .map_err(|e| invalid(format!("static box (id {}): {e}", b.id)))?;
        }
        self.broadphase
            .set_config(settings)
            .map_err(|e| invalid(e.to_string()))?;
        self.settings = settings;
        self.refresh(Vec::new(), Vec::new(), Instant::now())?;
        Ok(())
    }

    /// Moves a sphere to `center` now (the app's drag) and updates the broad phase and pairs;
    /// the report says whether it was reinserted and whether pairs were recomputed. An error
    /// when there is no such id or the sphere would reach outside the world (see
    /// [`Simulation::clamp_center`]); nothing changes then.
    pub fn move_sphere(&mut self, id: u32, center: Vec3) -> Result<&StepReport, SceneError> {
        let i = self
            .index_of(id)
            .ok_or_else(|| invalid(format!("no sphere has id {id}")))?;
        let mut moved = self.bodies[i].sphere.clone();
        moved.center = center;
        self.check_one(&moved)?;
        self.bodies[i].sphere.center = center;
        self.bodies[i].position = center.as_dvec3();
        self.refresh(Vec::new(), Vec::new(), Instant::now())
    }

    /// The nearest centre to `center` where a sphere of `radius` lies inside the world (z = 0
    /// in 2D); for drags that go past a wall. On an axis where the sphere is wider than the
    /// world, the world's middle (such a sphere is refused by the scene's rules anyway).
    #[must_use]
    pub fn clamp_center(&self, radius: f32, center: Vec3) -> Vec3 {
        let mut c = center;
        for a in 0..3 {
            if a >= usize::from(self.dimensions) {
                c[a] = 0.0;
                continue;
            }
            let (lo, hi) = (self.world.min[a] + radius, self.world.max[a] - radius);
            c[a] = if lo <= hi {
                c[a].clamp(lo, hi)
            } else {
                0.5 * (self.world.min[a] + self.world.max[a])
            };
        }
        c
    }

    /// Adds a sphere now; it is live at once when its `appear_at` has passed. An error if the id
    /// is taken or a value is bad; nothing changes then.
    pub fn add_sphere(&mut self, sphere: Sphere) -> Result<&StepReport, SceneError> {
        let at = match self
            .bodies
            .binary_search_by_key(&sphere.id, |b| b.sphere.id)
        {
            Ok(_) => return Err(invalid(format!("id {} is already taken", sphere.id))),
            Err(at) => at,
        };
        if self
            .boxes
            .binary_search_by_key(&sphere.id, |b| b.id)
            .is_ok()
        {
            return Err(invalid(format!(
                "id {} is already taken by a static box",
                sphere.id
            )));
        }
        self.check_one(&sphere)?;
        let body = SphereBody::new(sphere, self.step);
        let appeared = if body.alive {
            vec![body.sphere.id]
        } else {
            Vec::new()
        };
        self.bodies.insert(at, body);
        self.refresh(appeared, Vec::new(), Instant::now())
    }

    /// Removes a sphere now; an error if there is no such id.
    pub fn remove_sphere(&mut self, id: u32) -> Result<&StepReport, SceneError> {
        let i = self
            .index_of(id)
            .ok_or_else(|| invalid(format!("no sphere has id {id}")))?;
        let body = self.bodies.remove(i);
        let disappeared = if body.alive { vec![id] } else { Vec::new() };
        self.refresh(Vec::new(), disappeared, Instant::now())
    }

    /// Full rebuild of the tree (the other broad phases have none); the report is refreshed
    /// (an error when its pairs pass the limit).
    pub fn rebuild(&mut self) -> Result<&StepReport, SceneError> {
        self.broadphase.rebuild();
        self.refresh(Vec::new(), Vec::new(), Instant::now())
    }

    /// A sphere's own rules against this simulation's world.
    fn check_one(&self, sphere: &Sphere) -> Result<(), SceneError> {
        let probe = Scene {
            format_version: FORMAT_VERSION,
            name: String::new(),
            dimensions: self.dimensions,
            world: self.world,
            dt: self.dt,
            tree: self.settings,
            spheres: Vec::new(),
            boxes: Vec::new(),
            generate: None,
            view: None,
        };
        check_sphere(&probe, sphere).map_err(|e| invalid(format!("sphere (id {}): {e}", sphere.id)))
    }
}

/// One step of the standard workload's rule on every axis in use: `x += v * dt`, then if past
/// a wall, clamp to it and flip that velocity component. Positions are kept in f64, so a
/// sphere far from the origin (where f32 numbers are further apart than it moves in a step)
/// still moves; the f32 centre is the nearest to the f64 one.
fn move_and_bounce(body: &mut SphereBody, dt: f32, dims: usize, world: &Aabb<Vec3>) {
    let s = &mut body.sphere;
    let r = f64::from(s.radius);
    for a in 0..dims {
        let lo = f64::from(world.min[a]) + r;
        let hi = f64::from(world.max[a]) - r;
        let (x, bounced) = crate::motion::advance_and_bounce(
            body.position[a],
            f64::from(s.velocity[a]),
            f64::from(dt),
            lo,
            hi,
        );
        if bounced {
            s.velocity[a] = -s.velocity[a];
        }
        body.position[a] = x;
        // The nearest f32, kept within the f32 bounds the scene's rules use, so that the
        // saved scene is valid whatever the double rounding did.
        let (lo32, hi32) = (world.min[a] + s.radius, world.max[a] - s.radius);
        s.center[a] = if lo32 <= hi32 {
            (x as f32).clamp(lo32, hi32)
        } else {
            x as f32
        };
    }
}
