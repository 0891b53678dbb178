//! UI preferences that persist between launches (eframe storage), kept apart from the runtime
//! state: visible layers, theme, panels, tree-view depth, recent files.

use super::layout::{TREE_SHARE_DEFAULT, clamp_share};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// The key under which [`Prefs`] are stored in eframe's storage.
pub const STORAGE_KEY: &str = "aabb-debugger/prefs";
/// How many recent files the Scenes menu remembers.
pub const MAX_RECENT: usize = 10;

/// One switchable layer of the world view.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Layer {
    /// Sphere outlines.
    Spheres,
    /// Id labels.
    Labels,
    /// Velocity arrows (yellow).
    Velocity,
    /// Tight boxes of spheres that collide with nothing (grey).
    Tight,
    /// Tight boxes of colliding spheres (red).
    Contacts,
    /// Leaf (fat) boxes (blue).
    Leaves,
    /// Branch boxes (green, darker with depth).
    Branches,
    /// Candidate-pair lines between centres.
    Pairs,
    /// The walls of the world.
    Walls,
}

impl Layer {
    /// Every layer, in drawing order (back to front).
    pub const ALL: [Layer; 9] = [
        Layer::Walls,
        Layer::Branches,
        Layer::Leaves,
        Layer::Tight,
        Layer::Contacts,
        Layer::Pairs,
        Layer::Spheres,
        Layer::Velocity,
        Layer::Labels,
    ];

    /// The name used in scene files and on the command line (`--layers`).
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Layer::Spheres => "spheres",
            Layer::Labels => "labels",
            Layer::Velocity => "velocity",
            Layer::Tight => "tight",
            Layer::Contacts => "contacts",
            Layer::Leaves => "leaves",
            Layer::Branches => "branches",
            Layer::Pairs => "pairs",
            Layer::Walls => "walls",
        }
    }

    /// The label in the UI.
    #[must_use]
    pub fn label(self) -> &'static str {
        match self {
            Layer::Spheres => "Spheres",
            Layer::Labels => "Id labels",
            Layer::Velocity => "Velocity arrows",
            Layer::Tight => "Tight boxes (grey)",
            Layer::Contacts => "Colliding boxes (red)",
            Layer::Leaves => "Leaf boxes (blue)",
            Layer::Branches => "Branch boxes (green)",
            Layer::Pairs => "Candidate pairs",
            Layer::Walls => "Walls",
        }
    }

    /// Parses a name, any case, with the aliases of [`crate::scene::LAYER_ALIASES`] (`fat`
    /// for leaves, `tree` for branches, ...), as the scene's checks read them.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Layer> {
        let name = crate::scene::layer_name(name)?;
        Layer::ALL.into_iter().find(|l| l.name() == name)
    }
}

/// Which layers are visible.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Layers {
    /// Sphere outlines.
    pub spheres: bool,
    /// Id labels.
    pub labels: bool,
    /// Velocity arrows.
    pub velocity: bool,
    /// Grey tight boxes of non-colliding spheres (off by default).
    pub tight: bool,
    /// Red tight boxes of colliding spheres.
    pub contacts: bool,
    /// Blue leaf boxes.
    pub leaves: bool,
    /// Green branch boxes.
    pub branches: bool,
    /// Candidate-pair lines (off by default).
    pub pairs: bool,
    /// World walls.
    pub walls: bool,
}

impl Default for Layers {
    fn default() -> Self {
        Self {
            spheres: true,
            labels: true,
            velocity: true,
            tight: false,
            contacts: true,
            leaves: true,
            branches: true,
            pairs: false,
            walls: true,
        }
    }
}

impl Layers {
    /// No layer visible.
    pub const NONE: Layers = Layers {
        spheres: false,
        labels: false,
        velocity: false,
        tight: false,
        contacts: false,
        leaves: false,
        branches: false,
        pairs: false,
        walls: false,
    };

    /// Whether a layer is on.
    #[must_use]
    pub fn get(&self, layer: Layer) -> bool {
        *self.field(layer)
    }

    /// A mutable flag for a layer.
    pub fn get_mut(&mut self, layer: Layer) -> &mut bool {
        match layer {
            Layer::Spheres => &mut self.spheres,
            Layer::Labels => &mut self.labels,
            Layer::Velocity => &mut self.velocity,
            Layer::Tight => &mut self.tight,
            Layer::Contacts => &mut self.contacts,
            Layer::Leaves => &mut self.leaves,
            Layer::Branches => &mut self.branches,
            Layer::Pairs => &mut self.pairs,
            Layer::Walls => &mut self.walls,
        }
    }

    fn field(&self, layer: Layer) -> &bool {
        match layer {
            Layer::Spheres => &self.spheres,
            Layer::Labels => &self.labels,
            Layer::Velocity => &self.velocity,
            Layer::Tight => &self.tight,
            Layer::Contacts => &self.contacts,
            Layer::Leaves => &self.leaves,
            Layer::Branches => &self.branches,
            Layer::Pairs => &self.pairs,
            Layer::Walls => &self.walls,
        }
    }

    /// The names of the visible layers, in drawing order.
    #[must_use]
    pub fn names(&self) -> Vec<String> {
        Layer::ALL
            .into_iter()
            .filter(|l| self.get(*l))
            .map(|l| l.name().to_owned())
            .collect()
    }

    /// Layers from a list of names; an error names the first unknown one.
    pub fn from_names<S: AsRef<str>>(names: &[S]) -> Result<Layers, String> {
        let mut layers = Layers::NONE;
        for name in names {
            let name = name.as_ref();
            if name.trim().is_empty() {
                continue;
            }
            if name.trim() == "all" {
                for l in Layer::ALL {
                    *layers.get_mut(l) = true;
                }
                continue;
            }
            let layer = Layer::from_name(name).ok_or_else(|| {
                let known: Vec<&str> = Layer::ALL.iter().map(|l| l.name()).collect();
                format!(
                    "unknown layer `{name}`; expected one of {} or `all`",
                    known.join(", ")
                )
            })?;
            *layers.get_mut(layer) = true;
        }
        Ok(layers)
    }
}

/// Which views the central area shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum ViewMode {
    /// The world only.
    World,
    /// The tree diagram only.
    Tree,
    /// World and tree side by side.
    #[default]
    Both,
}

impl ViewMode {
    /// Parses `world`, `tree` or `both`.
    #[must_use]
    pub fn from_name(name: &str) -> Option<ViewMode> {
        match name.trim().to_ascii_lowercase().as_str() {
            "world" => Some(ViewMode::World),
            "tree" => Some(ViewMode::Tree),
            "both" => Some(ViewMode::Both),
            _ => None,
        }
    }
}

/// The colour theme.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum ThemeChoice {
    /// Dark background.
    #[default]
    Dark,
    /// Light background.
    Light,
}

/// The collapse depth at which the tree view folds nothing (the top of the depth slider).
pub const TREE_DEPTH_ALL: u32 = 64;

/// How the tree view draws the tree.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum TreeLayoutKind {
    /// Nodes as dots linked to their parents, one leaf slot each: readable for small trees.
    #[default]
    NodeLink,
    /// One row per depth, each node as wide as its leaves: compact for thousands of leaves.
    Icicle,
}

/// The default of [`Prefs::health_every`], steps.
pub const HEALTH_EVERY_DEFAULT: u64 = 10;
/// The default of [`Prefs::health_threshold`].
pub const HEALTH_THRESHOLD_DEFAULT: f64 = 1.5;

/// Preferences that persist between launches. Unknown or missing fields take defaults, so an
/// old or damaged entry never stops the app from starting.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Prefs {
    /// Visible world layers (a scene's saved view overrides them while it is open).
    pub layers: Layers,
    /// Colour theme.
    pub theme: ThemeChoice,
    /// Which views are shown.
    pub view_mode: ViewMode,
    /// Show the controls panel (left).
    pub show_controls: bool,
    /// Show the statistics panel (right).
    pub show_stats: bool,
    /// Show the charts in the statistics panel.
    pub show_charts: bool,
    /// Show the tree's event list under the tree view.
    pub show_events: bool,
    /// Branch boxes drawn from this depth...
    pub branch_depth_min: u32,
    /// ...down to this depth (inclusive).
    pub branch_depth_max: u32,
    /// The tree view collapses nodes below this depth.
    pub tree_collapse_depth: u32,
    /// How the tree view draws the tree.
    pub tree_layout: TreeLayoutKind,
    /// Simulation speed: steps per displayed 1/60 s.
    pub speed: f32,
    /// Validate the tree after every step.
    pub validate_every_step: bool,
    /// Recently opened or saved files, newest first.
    pub recent_files: Vec<PathBuf>,
    /// The tree view's share of the central area (see `layout`; clamped where used).
    pub tree_share: f32,
    /// Bumped by "Reset layout": the side panels start again at their default widths.
    pub layout_generation: u32,
    /// Draw each branch box a few points outside its children (per level of its height), so
    /// nested boxes never share an edge.
    pub pad_parents: bool,
    /// Draw the engine's own tree (a received stream's) over the world, in its own colour.
    pub show_engine_tree: bool,
    /// Both views show the engine's own tree (a received stream's) in place of ours.
    pub views_show_engine_tree: bool,
    /// While comparing, side B's views show the engine's own tree (a received stream's) and
    /// A's show ours: the engine's tree beside ours on the same steps.
    pub compare_b_engine_tree: bool,
    /// Use the desktop's file dialog where there is one (else the in-app dialog).
    pub native_dialogs: bool,
    /// Show the timeline (the recorded steps) under the views.
    pub show_timeline: bool,
    /// The memory budget of the window's recording, bytes (see [`crate::replay`]).
    pub recording_budget: u64,
    /// The tree's health is measured every this many steps while playing (see
    /// `health_monitor.rs`; at once when paused or changed).
    pub health_every: u64,
    /// The statistics warn that the tree has degraded when its cost passes this many times a
    /// fresh rebuild's.
    pub health_threshold: f64,
}

impl Default for Prefs {
    fn default() -> Self {
        Self {
            layers: Layers::default(),
            theme: ThemeChoice::Dark,
            view_mode: ViewMode::Both,
            show_controls: true,
            show_stats: true,
            show_charts: true,
            show_events: true,
            branch_depth_min: 0,
            branch_depth_max: u32::MAX,
            tree_collapse_depth: 12,
            tree_layout: TreeLayoutKind::NodeLink,
            speed: 1.0,
            validate_every_step: false,
            recent_files: Vec::new(),
            tree_share: TREE_SHARE_DEFAULT,
            layout_generation: 0,
            pad_parents: true,
            show_engine_tree: true,
            views_show_engine_tree: false,
            compare_b_engine_tree: false,
            native_dialogs: true,
            show_timeline: true,
            recording_budget: crate::replay::DEFAULT_BUDGET_BYTES as u64,
            health_every: HEALTH_EVERY_DEFAULT,
            health_threshold: HEALTH_THRESHOLD_DEFAULT,
        }
    }
}

impl Prefs {
    /// The recording budget as a byte count for [`crate::replay::Recording::set_budget_bytes`].
    #[must_use]
    pub fn recording_budget_bytes(&self) -> usize {
        usize::try_from(self.recording_budget).unwrap_or(usize::MAX)
    }

    /// Puts `path` first in the recent files, without duplicates, keeping [`MAX_RECENT`].
    pub fn push_recent(&mut self, path: PathBuf) {
        let path = std::fs::canonicalize(&path).unwrap_or(path);
        self.recent_files.retain(|p| p != &path);
        self.recent_files.insert(0, path);
        self.recent_files.truncate(MAX_RECENT);
    }
}

/// One change of the preferences, asked for by a view (see `Command::SetPref`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PrefChange {
    /// Which views are shown.
    ViewMode(ViewMode),
    /// The colour theme.
    Theme(ThemeChoice),
    /// Show the controls panel.
    ShowControls(bool),
    /// Show the statistics panel.
    ShowStats(bool),
    /// Show the tree's event list.
    ShowEvents(bool),
    /// Simulation speed, steps per displayed 1/60 s.
    Speed(f32),
    /// Show or hide a world layer.
    Layer(Layer, bool),
    /// Branch boxes drawn from `min` down to `max` (raised to `min` when below it).
    BranchDepths {
        /// From this depth...
        min: u32,
        /// ...down to this one (inclusive).
        max: u32,
    },
    /// The tree view collapses nodes below this depth.
    TreeCollapseDepth(u32),
    /// The tree view's share of the central area (the splitter).
    TreeShare(f32),
    /// Back to the default layout: both views, both side panels at their default widths.
    ResetLayout,
    /// Space nested branch boxes apart.
    PadParents(bool),
    /// Draw the engine's own tree over the world.
    ShowEngineTree(bool),
    /// Both views show the engine's own tree in place of ours.
    ViewsShowEngineTree(bool),
    /// While comparing, B's views show the engine's own tree, A's ours.
    CompareBEngineTree(bool),
    /// Use the desktop's file dialog.
    NativeDialogs(bool),
    /// How the tree view draws the tree.
    TreeLayout(TreeLayoutKind),
    /// Show the timeline.
    ShowTimeline(bool),
    /// The recording's memory budget, bytes (applied to the open recording at once).
    RecordingBudget(u64),
    /// Measure the tree's health every this many steps (at least 1).
    HealthEvery(u64),
    /// Warn when the tree's cost passes this many times a fresh rebuild's.
    HealthThreshold(f64),
}

impl Prefs {
    /// Makes one change.
    pub fn change(&mut self, change: PrefChange) {
        match change {
            PrefChange::ViewMode(mode) => self.view_mode = mode,
            PrefChange::Theme(theme) => self.theme = theme,
            PrefChange::ShowControls(on) => self.show_controls = on,
            PrefChange::ShowStats(on) => self.show_stats = on,
            PrefChange::ShowEvents(on) => self.show_events = on,
            PrefChange::Speed(speed) => self.speed = speed,
            PrefChange::Layer(layer, on) => *self.layers.get_mut(layer) = on,
            PrefChange::BranchDepths { min, max } => {
                self.branch_depth_min = min;
                self.branch_depth_max = max.max(min);
            }
            PrefChange::TreeCollapseDepth(depth) => self.tree_collapse_depth = depth,
            PrefChange::PadParents(on) => self.pad_parents = on,
            PrefChange::ShowEngineTree(on) => self.show_engine_tree = on,
            PrefChange::ViewsShowEngineTree(on) => self.views_show_engine_tree = on,
            PrefChange::CompareBEngineTree(on) => self.compare_b_engine_tree = on,
            PrefChange::TreeShare(share) => self.tree_share = clamp_share(share),
            PrefChange::ResetLayout => {
                self.tree_share = TREE_SHARE_DEFAULT;
                self.view_mode = ViewMode::Both;
                self.show_controls = true;
                self.show_stats = true;
                self.layout_generation = self.layout_generation.wrapping_add(1);
            }
            PrefChange::NativeDialogs(on) => self.native_dialogs = on,
            PrefChange::TreeLayout(kind) => self.tree_layout = kind,
            PrefChange::ShowTimeline(on) => self.show_timeline = on,
            PrefChange::RecordingBudget(bytes) => self.recording_budget = bytes,
            PrefChange::HealthEvery(steps) => self.health_every = steps.max(1),
            PrefChange::HealthThreshold(ratio) if ratio.is_finite() => {
                self.health_threshold = ratio;
            }
            PrefChange::HealthThreshold(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The scene's list of layer names (what `check` accepts in `view.layers`) is the
    /// window's, and every alias reads as its layer.
    #[test]
    fn the_scenes_layer_names_are_the_windows() {
        let mut window: Vec<&str> = Layer::ALL.iter().map(|l| l.name()).collect();
        let mut scene = crate::scene::LAYER_NAMES.to_vec();
        window.sort_unstable();
        scene.sort_unstable();
        assert_eq!(window, scene);
        for (alias, name) in crate::scene::LAYER_ALIASES {
            assert_eq!(Layer::from_name(alias).map(Layer::name), Some(name));
            assert_eq!(
                Layer::from_name(&alias.to_ascii_uppercase()).map(Layer::name),
                Some(name)
            );
        }
        assert_eq!(Layer::from_name(" Walls "), Some(Layer::Walls));
        assert_eq!(Layer::from_name("nope"), None);
    }

    #[test]
    fn layer_names_round_trip() {
        let layers = Layers::default();
        let names = layers.names();
        assert_eq!(Layers::from_names(&names), Ok(layers));
        assert_eq!(
            names,
            vec![
                "walls", "branches", "leaves", "contacts", "spheres", "velocity", "labels"
            ]
        );
    }

    #[test]
    fn unknown_layer_is_an_error_naming_it() {
        let err = Layers::from_names(&["spheres", "bogus"]).expect_err("bogus is unknown");
        assert!(err.starts_with("unknown layer `bogus`"), "{err}");
    }

    #[test]
    fn prefs_fill_missing_fields_with_defaults() {
        let prefs: Prefs = ron::from_str("(speed: 2.0)").expect("parses");
        assert_eq!(prefs.speed, 2.0);
        assert_eq!(prefs.layers, Layers::default());
    }

    #[test]
    fn the_tree_layout_round_trips_and_defaults_to_node_link() {
        let prefs: Prefs = ron::from_str("(speed: 2.0)").expect("parses");
        assert_eq!(prefs.tree_layout, TreeLayoutKind::NodeLink);
        let mut prefs = Prefs::default();
        prefs.change(PrefChange::TreeLayout(TreeLayoutKind::Icicle));
        let text = ron::to_string(&prefs).expect("writes");
        let back: Prefs = ron::from_str(&text).expect("reads");
        assert_eq!(back.tree_layout, TreeLayoutKind::Icicle);
        assert_eq!(back, prefs);
    }

    #[test]
    fn health_settings_default_and_refuse_nonsense() {
        let mut prefs: Prefs = ron::from_str("(speed: 2.0)").expect("parses");
        assert_eq!((prefs.health_every, prefs.health_threshold), (10, 1.5));
        prefs.change(PrefChange::HealthEvery(0));
        prefs.change(PrefChange::HealthThreshold(f64::NAN));
        assert_eq!((prefs.health_every, prefs.health_threshold), (1, 1.5));
        prefs.change(PrefChange::HealthEvery(25));
        prefs.change(PrefChange::HealthThreshold(2.25));
        assert_eq!((prefs.health_every, prefs.health_threshold), (25, 2.25));
    }

    #[test]
    fn recent_files_are_unique_and_bounded() {
        let mut prefs = Prefs::default();
        for i in 0..15 {
            prefs.push_recent(PathBuf::from(format!("/nonexistent/{i}.ron")));
        }
        prefs.push_recent(PathBuf::from("/nonexistent/3.ron"));
        assert_eq!(prefs.recent_files.len(), MAX_RECENT);
        assert_eq!(prefs.recent_files[0], PathBuf::from("/nonexistent/3.ron"));
        assert_eq!(
            prefs
                .recent_files
                .iter()
                .filter(|p| p.as_path() == std::path::Path::new("/nonexistent/3.ron"))
                .count(),
            1
        );
    }
}
