//! The scene model and its file format (RON, or JSON by extension), validation with messages
//! that say what and where, atomic saving (with [`crate::fileio`]), and the [`Simulation`]
//! that steps a scene. The file format is described in docs/formats.md ("Scene files"); the field
//! names here are the file's.

pub mod boxlist;
mod format;
mod generate;
mod model;
mod simulation;
mod validate;

pub use format::is_json_path;
pub use simulation::{Simulation, ids_fit_a_table};

use crate::fileio::{ReadError, WriteError, WriteOptions};
use crate::text::{clean_message, escape_controls};
use crate::tree::{Aabb, TreeConfig, TreeEvent, TreeStats};
use glam::Vec3;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The newest `format_version` this build reads and the one it writes.
pub const FORMAT_VERSION: u32 = 1;
/// The most spheres a scene may list, the most its generator makes, and the most static
/// boxes it may hold: each on its own, so the count a user gives the generator is the count
/// generated, whatever the scene lists beside it.
pub const MAX_SPHERES: usize = 1_000_000;
/// The most bodies a scene may hold in all: listed and generated spheres and static boxes.
pub const MAX_BODIES: usize = 2 * MAX_SPHERES;
/// The least and the most a pair test may cost, in node visits: a scene's `view.pair_cost`,
/// and the margin sweep's.
pub const PAIR_COST_RANGE: (f64, f64) = (0.0, 1e6);

/// True when `cost` is a pair test's cost in node visits: a finite number in
/// [`PAIR_COST_RANGE`].
#[must_use]
pub fn pair_cost_in_range(cost: f64) -> bool {
    cost.is_finite() && (PAIR_COST_RANGE.0..=PAIR_COST_RANGE.1).contains(&cost)
}

/// A scene file's content. Vectors are stored as `Vec3`; 2D scenes have z = 0 and are written
/// with two numbers.
#[derive(Clone, Debug, PartialEq)]
pub struct Scene {
    /// Always [`FORMAT_VERSION`] once loaded.
    pub format_version: u32,
    /// A human name.
    pub name: String,
    /// 2 or 3.
    pub dimensions: u8,
    /// The walls the spheres bounce off.
    pub world: Aabb<Vec3>,
    /// Seconds per step, in (0, 1].
    pub dt: f32,
    /// Tree settings (the `tree` section; the tree's own [`TreeConfig`]).
    pub tree: TreeConfig,
    /// Listed spheres.
    pub spheres: Vec<Sphere>,
    /// Static boxes (level geometry): never move, live in the broad phase with the spheres,
    /// pair with spheres but never with each other. Empty unless the file has `boxes`.
    pub boxes: Vec<StaticBox>,
    /// Generated spheres, added after the listed ones.
    pub generate: Option<Generate>,
    /// Camera and layers saved by the app.
    pub view: Option<ViewSettings>,
}

/// One sphere.
#[derive(Clone, Debug, PartialEq)]
pub struct Sphere {
    /// Unique id.
    pub id: u32,
    /// Optional label drawn instead of the id.
    pub label: Option<String>,
    /// Centre (z = 0 in 2D).
    pub center: Vec3,
    /// Radius, > 0.
    pub radius: f32,
    /// Velocity, world units per second.
    pub velocity: Vec3,
    /// First step at which it exists.
    pub appear_at: u64,
    /// Step at which it goes away, if any.
    pub disappear_at: Option<u64>,
}

/// A static box: level geometry that never moves. Its fat box is its box grown by the
/// margin, made once; it pairs with the spheres whose fat boxes overlap it (a contact when the
/// sphere overlaps the box itself) and never with another static box. Spheres pass through it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StaticBox {
    /// Unique id, shared with no sphere.
    pub id: u32,
    /// Least corner (z = 0 in 2D).
    pub min: Vec3,
    /// Greatest corner (z = 0 in 2D), >= `min` on every axis.
    pub max: Vec3,
}

impl StaticBox {
    /// The box as an [`Aabb`].
    #[must_use]
    pub fn aabb(&self) -> Aabb<Vec3> {
        Aabb::new(self.min, self.max)
    }
}

/// A seeded generator of spheres.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Generate {
    /// How many spheres.
    pub count: u32,
    /// Radius range `(min, max)`.
    pub radius: (f32, f32),
    /// Speed range `(min, max)`, world units per second.
    pub speed: (f32, f32),
    /// Seed; the same seed always gives the same spheres.
    pub seed: u64,
    /// The share of the world's area (2D) or volume (3D) the generated spheres fill, on
    /// average: when set, the world grows (about its centre, keeping its shape) until they
    /// fill no more than this, so 10,000 or 100,000 spheres stay a scene rather than a solid
    /// blob. In (0, 1]; `None` keeps the world as it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub density: Option<f32>,
}

/// The names `view.layers` may hold (the window's layers), and `all`.
pub const LAYER_NAMES: [&str; 9] = [
    "walls", "branches", "leaves", "tight", "contacts", "pairs", "spheres", "velocity", "labels",
];

/// Other names `view.layers` (and `screenshot --layers`) take for a layer, any case: each
/// with the name it stands for.
pub const LAYER_ALIASES: [(&str, &str); 8] = [
    ("fat", "leaves"),
    ("leaf", "leaves"),
    ("tree", "branches"),
    ("branch", "branches"),
    ("velocities", "velocity"),
    ("arrows", "velocity"),
    ("ids", "labels"),
    ("label", "labels"),
];

/// The layer `name` stands for (one of [`LAYER_NAMES`]), any case, aliases too; `None` for
/// a name that is no layer's.
#[must_use]
pub fn layer_name(name: &str) -> Option<&'static str> {
    let name = name.trim().to_ascii_lowercase();
    LAYER_ALIASES
        .iter()
        .find(|(alias, _)| *alias == name)
        .map(|(_, layer)| *layer)
        .or_else(|| LAYER_NAMES.iter().copied().find(|l| *l == name))
}

/// The planes `view.plane` may name (any case).
pub const PLANE_NAMES: [&str; 3] = ["XY", "XZ", "YZ"];

/// Camera and visible layers, saved by the app; opaque to the simulation.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename = "view", deny_unknown_fields)]
pub struct ViewSettings {
    /// World point at the centre of the view.
    pub center: Option<(f32, f32)>,
    /// Screen points per world unit.
    pub zoom: Option<f32>,
    /// Names of the visible layers.
    pub layers: Option<Vec<String>>,
    /// Projection plane of 3D scenes: "XY", "XZ" or "YZ".
    pub plane: Option<String>,
    /// `Some(true)`: the tree view names the branches a, b, c, ... breadth-first from the
    /// root (as Randall's figures do), beside the leaves' labels.
    pub branch_letters: Option<bool>,
    /// `Some(true)`: fitting the world view (on opening, F) frames the spheres and the tree,
    /// not the walls, so a figure's subject fills the view.
    pub fit_content: Option<bool>,
    /// A caption the world view shows at its foot (a figure's claim, say), with what this
    /// run measures beside it: the broad phase's time a step and its share of a 60 Hz frame.
    pub caption: Option<String>,
    /// The generator the listed spheres were made with, when they were generated (a scene
    /// saved from a generated one lists its spheres at the step it was saved): the app's
    /// generator panel starts from it. Never run on opening. (Boxed: the view travels
    /// with every simulation, and most have none.)
    pub generator: Option<Box<Generate>>,
    /// What one candidate pair's narrow-phase test costs the engine this scene stands for, in
    /// node visits: the Advisor's and `sweep`'s weight of the pairs in the work they minimise
    /// (1 when left out; see [`Scene::pair_cost`]).
    pub pair_cost: Option<f64>,
}

/// Why a scene could not be read, checked or written. The message names the file, then the
/// line and column (syntax) or the sphere and field (meaning), and what was expected.
#[derive(Debug, thiserror::Error)]
pub enum SceneError {
    /// `FILE:LINE:COL: message`.
    #[error(
        "{}:{line}:{col}: {}",
        escape_controls(.file),
        clean_message(.message)
    )]
    Syntax {
        /// File name (or `<text>`).
        file: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        col: usize,
        /// What was expected.
        message: String,
    },
    /// `FILE: spheres[3] (id 7): radius must be > 0, got -1`.
    #[error("{}: {}", escape_controls(.file), clean_message(.message))]
    Invalid {
        /// File name (or `<text>`).
        file: String,
        /// Where and what.
        message: String,
    },
    /// A step of the simulation (or a change to it) stopped: the broad phase refused a body
    /// or found more candidate pairs than the limit. The spheres are kept.
    #[error("step {step}: {source}")]
    Step {
        /// The step it stopped at.
        step: u64,
        /// What the broad phase said.
        source: crate::broadphase::BroadphaseError,
    },
    /// The file could not be read: not a regular file, larger than
    /// [`MAX_SCENE_BYTES`](crate::fileio::MAX_SCENE_BYTES), or an I/O error. The message names
    /// the file.
    #[error("{}", escape_controls(&.0.to_string()))]
    Read(#[from] ReadError),
    /// The file could not be saved; the message names it and what failed. Unless it says
    /// otherwise, the file is unchanged.
    #[error("{}", escape_controls(&.0.to_string()))]
    Write(WriteError),
    /// The file is read-only and the save was not asked to replace it (see
    /// [`Scene::save_with`]); the file is unchanged.
    #[error("{}: the file is read-only; it was not replaced", escape_controls(.file))]
    ReadOnly {
        /// File name.
        file: String,
    },
}

impl SceneError {
    /// What is wrong without a file name in front: an [`SceneError::Invalid`]'s message (as
    /// its own text cleans it), any other error whole. For a scene or simulation that has no
    /// file of its own here (one made in memory, a recorded edit), where the caller names the
    /// place.
    #[must_use]
    pub fn without_file(self) -> String {
        match self {
            SceneError::Invalid { message, .. } => clean_message(&message),
            other => other.to_string(),
        }
    }
}

impl From<WriteError> for SceneError {
    fn from(e: WriteError) -> Self {
        match e {
            WriteError::ReadOnly { path } => SceneError::ReadOnly {
                file: path.display().to_string(),
            },
            other => SceneError::Write(other),
        }
    }
}

impl Scene {
    /// What a pair test costs the engine, in node visits: the scene's `view.pair_cost` when it
    /// is a valid one, else 1 (a bad value is warned about by [`Scene::warnings`]).
    #[must_use]
    pub fn pair_cost(&self) -> f64 {
        self.view
            .as_ref()
            .and_then(|v| v.pair_cost)
            .filter(|&c| pair_cost_in_range(c))
            .unwrap_or(1.0)
    }

    /// Reads and validates a file: RON, or JSON when the path ends in `.json`.
    pub fn load(path: &Path) -> Result<Scene, SceneError> {
        format::load(path)
    }

    /// Parses and validates text; `file` names it in messages; `json` picks the format.
    pub fn parse(text: &str, file: &str, json: bool) -> Result<Scene, SceneError> {
        format::parse(text, file, json)
    }

    /// Writes atomically with [`crate::fileio::write_atomic`] (a new temporary file beside the
    /// target, synced, renamed over it), RON or JSON by extension. An invalid scene is refused
    /// and nothing is written; so is a read-only file ([`SceneError::ReadOnly`]; see
    /// [`Scene::save_with`]).
    pub fn save(&self, path: &Path) -> Result<(), SceneError> {
        self.save_with(
            path,
            WriteOptions::of_kind(crate::fileio::FileKind::Scene, false),
        )
    }

    /// [`Scene::save`] with options: `replace_read_only` replaces a read-only file (which
    /// keeps its mode).
    pub fn save_with(&self, path: &Path, options: WriteOptions) -> Result<(), SceneError> {
        self.validate(&path.display().to_string())?;
        let text = self.to_text(format::is_json_path(path))?;
        format::write_atomic(path, &text, options)
    }

    /// The text `save` would write.
    pub fn to_text(&self, json: bool) -> Result<String, SceneError> {
        format::to_text(self, json)
    }

    /// Checks every rule; the message says which sphere and field.
    pub fn validate(&self, file: &str) -> Result<(), SceneError> {
        validate::validate(self, file)
    }

    /// Warnings about a valid scene (`check` prints them; the window shows them when it opens
    /// the scene): the pairs expected against `pair_limit`, and coordinates where f32 is
    /// coarser than a step's motion. Each a sentence with the numbers.
    #[must_use]
    pub fn warnings(&self, pair_limit: usize) -> Vec<String> {
        validate::warnings(self, pair_limit)
    }

    /// The listed spheres followed by the generated ones, sorted by id.
    #[must_use]
    pub fn all_spheres(&self) -> Vec<Sphere> {
        let mut all = self.spheres.clone();
        all.extend(generate::generate(self));
        all.sort_by_key(|s| s.id);
        all
    }

    /// The world the scene runs in: its `world`, grown for the generator's density when one
    /// is set (see [`Generate::density`]). Parsing a scene puts it into `world`, so a parsed
    /// scene's world is already this one.
    #[must_use]
    pub fn grown_world(&self) -> Aabb<Vec3> {
        generate::grown_world(self)
    }

    /// The pair tests a step of each broad phase makes over the scene's bodies at step 0
    /// (the tight boxes of the spheres there and the static boxes): what brute force and
    /// sweep-and-prune are refused or warned about by ([`crate::broadphase::Work`]).
    #[must_use]
    pub fn work_at_start(&self) -> crate::broadphase::Work {
        let flat = self.dimensions == 2;
        let mut boxes: Vec<Aabb<glam::Vec3>> = self
            .all_spheres()
            .iter()
            .filter(|s| s.appear_at == 0 && s.disappear_at.is_none_or(|gone| gone > 0))
            .map(|s| {
                let mut r = glam::Vec3::splat(s.radius);
                if flat {
                    r.z = 0.0;
                }
                Aabb::new(s.center - r, s.center + r)
            })
            .collect();
        boxes.extend(self.boxes.iter().map(|b| b.aabb()));
        crate::broadphase::estimate_work(&boxes)
    }

    /// How many spheres the scene holds, listed and generated.
    #[must_use]
    pub fn sphere_count(&self) -> usize {
        self.spheres.len() + self.generate.map_or(0, |g| g.count as usize)
    }

    /// How many bodies the broad phase holds: spheres (listed and generated) and static
    /// boxes. [`MAX_BODIES`] bounds this.
    #[must_use]
    pub fn body_count(&self) -> usize {
        self.sphere_count() + self.boxes.len()
    }

    /// An empty world (the built-in scene's walls and settings, no sphere): what the window
    /// shows while it waits for an engine.
    #[must_use]
    pub fn waiting_for_engine() -> Scene {
        let mut scene = Scene::builtin_default();
        scene.name = "Waiting for an engine".to_owned();
        scene.spheres.clear();
        scene.generate = None;
        scene
    }

    /// The scene the binary opens when given no file (`scenes/default.ron`, built in).
    #[must_use]
    pub fn builtin_default() -> Scene {
        // The file is checked by a test; a broken built-in scene is a bug.
        #[allow(clippy::expect_used)]
        Scene::parse(BUILTIN_DEFAULT, "scenes/default.ron", false)
            .expect("the built-in scenes/default.ron is valid")
    }
}

/// The text of `scenes/default.ron`, built into the binary.
pub const BUILTIN_DEFAULT: &str = include_str!("../../../../scenes/default.ron");

/// What one [`Simulation::step`] did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StepReport {
    /// The step just completed (1 after the first step).
    pub step: u64,
    /// Ids whose fat box was recomputed / leaf reinserted because the sphere left it, sorted
    /// (spheres new to the broad phase are in `appeared`, not here).
    pub reinserted: Vec<u32>,
    /// Ids that appeared this step, sorted.
    pub appeared: Vec<u32>,
    /// Ids that disappeared this step, sorted.
    pub disappeared: Vec<u32>,
    /// Candidate pairs (fat boxes overlap), `(a, b)` with `a < b`, sorted.
    pub candidate_pairs: Vec<(u32, u32)>,
    /// Contacts (spheres overlap), a subset of the candidates, sorted.
    pub contacts: Vec<(u32, u32)>,
    /// False when the pairs were reused because nothing changed (Choi's `tree_updated`).
    pub pairs_recomputed: bool,
    /// Tree stats (tree broad phase only).
    pub tree: Option<TreeStats>,
    /// Seconds spent moving bodies and updating the broad phase.
    pub update_secs: f64,
    /// Seconds spent finding pairs and contacts.
    pub pairs_secs: f64,
    /// What the tree did this step.
    pub events: Vec<TreeEvent>,
}

/// A live sphere in the simulation.
#[derive(Clone, Debug, PartialEq)]
pub struct SphereBody {
    /// The sphere as in the scene, with its current centre (the nearest f32 to
    /// [`SphereBody::position`]) and velocity.
    pub sphere: Sphere,
    /// True while it exists (between `appear_at` and `disappear_at`).
    pub alive: bool,
    /// The centre in f64: the simulation moves this, so motion smaller than f32's spacing at
    /// the sphere's coordinates is not lost.
    pub(crate) position: glam::DVec3,
}

/// Loading and saving through [`crate::fileio`]: its refusals are the scene's errors, with
/// its messages.
#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::{MetadataExt, PermissionsExt};

    fn mode_of(path: &Path) -> u32 {
        std::fs::metadata(path).expect("metadata").mode() & 0o7777
    }

    #[test]
    fn scene_load_refuses_devices_with_the_read_error() {
        let err = Scene::load(Path::new("/dev/zero")).expect_err("device");
        assert!(matches!(
            err,
            SceneError::Read(ReadError::NotRegular { .. })
        ));
        assert_eq!(
            err.to_string(),
            "/dev/zero: is a character device, not a regular file"
        );
    }

    #[test]
    fn scene_save_refuses_a_read_only_file_and_leaves_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("scene.ron");
        std::fs::write(&path, b"old").expect("write");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444)).expect("chmod");
        let scene = Scene::builtin_default();
        let err = scene.save(&path).expect_err("read-only");
        assert!(
            matches!(&err, SceneError::ReadOnly { file } if *file == path.display().to_string()),
            "{err:?}"
        );
        assert_eq!(
            err.to_string(),
            format!(
                "{}: the file is read-only; it was not replaced",
                path.display()
            )
        );
        assert_eq!(std::fs::read(&path).expect("read"), b"old");
        assert_eq!(mode_of(&path), 0o444);
        let replace = WriteOptions {
            replace_read_only: true,
            kind: None,
            force: false,
        };
        scene.save_with(&path, replace).expect("replace");
        assert_eq!(Scene::load(&path).expect("load"), scene);
        assert_eq!(mode_of(&path), 0o444);
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .expect("read_dir")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(names, ["scene.ron"]);
    }
}
