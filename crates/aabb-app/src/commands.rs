//! What the UI asks for. Views never change the state while they draw; they return
//! [`Command`]s, which the shell applies through `State::apply` (`apply.rs`) after the panels
//! are drawn. This file only names them: it imports no view and no state.

use super::camera::{Plane, WorldCamera};
use super::files::ExportFormat;
use super::pick::Pick;
use super::prefs::PrefChange;
use crate::broadphase::BroadphaseKind;
use crate::scene::Generate;
use crate::tree::TreeConfig;
use glam::{Vec2, Vec3};
use std::path::PathBuf;

/// One thing the user asked for.
#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    /// Play or pause.
    SetPlaying(bool),
    /// Toggle play/pause (Space).
    TogglePlay,
    /// Pause and advance one step (Right arrow, N).
    Step,
    /// Show a recorded step (the timeline's playhead, Home, End): the simulation becomes the
    /// state at that step, rebuilt from the recording (clamped to the last step); pauses.
    SeekTo(u64),
    /// Pause and show the step before (Left arrow).
    StepBack,
    /// Restart from the document (R).
    Reset,
    /// New tree settings (margin, look-ahead, insertion, balancing, pairs, update), applied at
    /// once.
    SetTreeSettings(TreeConfig),
    /// Go back to the tree settings before the last change (Ctrl+Z); a slider drag is one
    /// change, a click on an Advisor point another.
    Undo,
    /// Make again the settings change the last Undo took back (Ctrl+Shift+Z or Ctrl+Y).
    Redo,
    /// While an engine streams: hold the live view at this received step (the engine, the
    /// recording and our side go on), or follow the newest step again (`None`).
    LiveShow(Option<u64>),
    /// Show received session `index` of the window's list (`State::sessions`).
    ShowSession(usize),
    /// Another broad phase (tree, brute force, sweep-and-prune, Box2D's tree).
    SetBroadphase(BroadphaseKind),
    /// What a pair test costs the engine, in node visits (kept with the scene: its
    /// `view.pair_cost`).
    SetPairCost(f64),
    /// Rebuild the tree from scratch.
    Rebuild,
    /// Compare the document's run (A) with a second one (B: this broad phase and these
    /// settings) on the same motion, from the step shown (see `compare.rs`).
    StartCompare(crate::compare_model::Side),
    /// End the comparison.
    StopCompare,
    /// New generator settings; the simulation restarts.
    SetGenerator(Option<Generate>),
    /// Select something, or clear the selection.
    Select(Option<Pick>),
    /// Begin dragging a sphere whose centre was at `start` when the pointer went down at
    /// `press` (plane coordinates).
    BeginDrag {
        /// The sphere.
        id: u32,
        /// The plane point under the pointer at the press.
        press: Vec2,
    },
    /// The drag ended (button released).
    EndDrag,
    /// Move a sphere's centre now (a drag).
    MoveSphere {
        /// The sphere.
        id: u32,
        /// The new centre.
        center: Vec3,
    },
    /// Add a sphere at a point.
    AddSphere {
        /// Its centre.
        center: Vec3,
    },
    /// Remove a sphere.
    DeleteSphere(u32),
    /// The most candidate pairs a step may find (past it the simulation pauses).
    SetPairLimit(usize),
    /// Check every tree invariant after each step and change (checked once now when on).
    SetValidateEveryStep(bool),
    /// Open a scene file (asks first when there are unsaved changes).
    Open(PathBuf),
    /// Open the built-in scene (asks first when there are unsaved changes).
    OpenBuiltin,
    /// Show the Open dialog (Ctrl+O).
    OpenDialog,
    /// Save to the open file, or ask where (Ctrl+S).
    Save,
    /// Save to this file.
    SaveAs(PathBuf),
    /// Save to this file even though it is read-only (the user answered Replace); it keeps
    /// its read-only mode.
    ReplaceReadOnly(PathBuf),
    /// Do not replace this read-only file (the user answered Cancel): the file and the scene
    /// stay as they are.
    KeepReadOnly(PathBuf),
    /// Show the Save As dialog (Ctrl+Shift+S).
    SaveAsDialog,
    /// Fit the world and the tree into their views (F, double-click).
    Fit,
    /// Project 3D scenes onto another plane.
    SetPlane(Plane),
    /// Show 3D scenes in the orbiting 3D view (true) or projected onto the plane (false).
    SetWorld3d(bool),
    /// Show or hide the help window (F1).
    ToggleHelp,
    /// Close the window (asks first when there are unsaved changes).
    Quit,
    /// Dismiss the error window.
    DismissError,
    /// Show or hide the help window (its close button).
    ShowHelp(bool),
    /// Show or hide the "about" window.
    ShowAbout(bool),
    /// The file dialog closed (a file was picked, or it was cancelled).
    CloseFileDialog,
    /// The "unsaved changes?" question was answered or dismissed.
    CloseConfirm,
    /// Apply a command that loses unsaved changes: the user agreed to lose them.
    Confirmed(Box<Command>),
    /// Show or hide the Advisor window (the margin sweep).
    ShowAdvisor(bool),
    /// Ask where to save a sweep's result, already rendered as `text` in `format` (the
    /// `sweep --csv` / `--json` format); a file picked then becomes [`Command::Export`].
    ExportDialog {
        /// The file's contents.
        text: String,
        /// CSV or JSON.
        format: ExportFormat,
    },
    /// Write the export waiting for a file (see [`Command::ExportDialog`]) to this file.
    Export(PathBuf),
    /// Show the "Save recording" dialog (File > Save recording…).
    SaveRecordingDialog,
    /// Write the recording (every step and edit since the document was opened) to this file
    /// (`.rec` added when the name has another extension), atomically.
    SaveRecording(PathBuf),
    /// The recording being opened on its worker thread has ended (the progress window saw
    /// it): show it, or say why not.
    FinishOpenRecording,
    /// Stop opening the recording (the progress window's Cancel): the open document stays.
    CancelOpenRecording,
    /// Show the "Listen for an engine" window (File > Listen for an engine…).
    ListenDialog,
    /// Close the "Listen for an engine" window without listening.
    CloseListenDialog,
    /// Listen for an engine's recorder on this address (the live link; see `app::live`).
    StartListening(std::net::SocketAddr),
    /// Stop listening: what the engine sent so far opens as a trace.
    StopListening,
    /// The live session has ended (the live window saw it): open what arrived as a trace.
    FinishLive,
    /// Show the "Save received stream" dialog (File > Save received stream…).
    SaveStreamDialog,
    /// Write the stream received live (the document) to this file as a stream file
    /// (`.aabbstream` added when the name has another extension), atomically.
    SaveStream(PathBuf),
    /// Change a preference (views, panels, theme, layers, speed, depths).
    SetPref(PrefChange),
    /// What the pointer rests on this frame (a report). The shell starts each frame's
    /// commands with `Hover(None)`; a view under the pointer follows with what it rests on.
    Hover(Option<Pick>),
    /// The world view's camera after this frame's pan, zoom or fit (a report).
    SetWorldCamera {
        /// The camera.
        camera: WorldCamera,
        /// True when the view fitted the world (the pending fit is done).
        fitted: bool,
    },
    /// Milliseconds a view spent building its meshes this frame (a report; shown in the
    /// statistics and charted with the next steps).
    AddDrawTime(f32),
}

impl Command {
    /// True for a view's report of the frame it just drew (hover, world camera, drawing
    /// time), as opposed to a request. The shell applies a frame's reports before its
    /// requests, so a request (open a scene, fit) overrides what the frame showed, as when
    /// the views changed their state while they drew.
    #[must_use]
    pub fn is_report(&self) -> bool {
        matches!(
            self,
            Command::Hover(_) | Command::SetWorldCamera { .. } | Command::AddDrawTime(_)
        )
    }

    /// True for commands that would lose unsaved changes.
    #[must_use]
    pub fn discards_changes(&self) -> bool {
        matches!(
            self,
            Command::Open(_) | Command::OpenBuiltin | Command::Quit
        )
    }
}

/// The name of a broad phase in the UI.
#[must_use]
pub fn broadphase_name(kind: BroadphaseKind) -> &'static str {
    match kind {
        BroadphaseKind::Tree => "dynamic AABB tree",
        BroadphaseKind::Brute => "brute force",
        BroadphaseKind::Sap => "sweep-and-prune",
        BroadphaseKind::Box2d => "Box2D's tree",
    }
}
