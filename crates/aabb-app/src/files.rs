//! Files: the in-app Open / Save As / Export dialog ([`FileDialogState`]), what it shares
//! with the desktop's dialog (`native_dialog.rs`): the folder a dialog starts in, the name it
//! suggests and the extension a saved file gets, all on [`FilePurpose`]; and the scene files
//! beside the app (`scenes/`). The dialog view (`views/files.rs`) turns what a dialog picks
//! into commands.

use eframe::egui;

use egui::{Key, RichText};
use std::path::{Path, PathBuf};

/// What a file dialog is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FilePurpose {
    /// Pick a scene to open.
    Open,
    /// Pick where to save.
    SaveAs,
    /// Pick where to export a sweep's result.
    Export(ExportFormat),
    /// Pick where to save the recording (File > Save recording…).
    SaveRecording,
    /// Pick where to save a stream received live (File > Save received stream…).
    SaveStream,
}

/// The format of an exported sweep (the `sweep` command's `--csv` and `--json`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExportFormat {
    /// A header row and one row per point.
    Csv,
    /// One JSON object.
    Json,
}

impl ExportFormat {
    /// The file extension, without the dot.
    #[must_use]
    pub fn extension(self) -> &'static str {
        match self {
            ExportFormat::Csv => "csv",
            ExportFormat::Json => "json",
        }
    }
}

/// The extensions of scene files, without the dot; the first is the one a save adds.
const SCENE_EXTENSIONS: &[&str] = &["ron", "json"];

/// The extension of recording files, without the dot.
const RECORDING_EXTENSIONS: &[&str] = &["rec"];

/// The extension of stream files (the live link's), without the dot.
const STREAM_EXTENSIONS: &[&str] = &[crate::fileio::STREAM_EXTENSION];

/// The extensions the Open dialog lists: scenes, recordings (`run --record`), traces (text,
/// and the live link's stream files) and box lists (level geometry, imported as a new scene).
const OPEN_EXTENSIONS: &[&str] = &["ron", "json", "rec", "trace", "aabbstream", "txt", "boxes"];

impl FilePurpose {
    /// The dialog's title.
    #[must_use]
    pub fn title(self) -> &'static str {
        match self {
            FilePurpose::Open => "Open a file",
            FilePurpose::SaveAs => "Save scene as",
            FilePurpose::Export(_) => "Export the sweep",
            FilePurpose::SaveRecording => "Save recording as",
            FilePurpose::SaveStream => "Save the received stream as",
        }
    }

    /// True when the dialog picks a file to write (Save As, Export).
    #[must_use]
    pub fn saves(self) -> bool {
        !matches!(self, FilePurpose::Open)
    }

    /// The files the dialog lists, by extension (without the dot).
    #[must_use]
    pub fn extensions(self) -> &'static [&'static str] {
        match self {
            FilePurpose::Open => OPEN_EXTENSIONS,
            FilePurpose::SaveAs => SCENE_EXTENSIONS,
            FilePurpose::Export(ExportFormat::Csv) => &["csv"],
            FilePurpose::Export(ExportFormat::Json) => &["json"],
            FilePurpose::SaveRecording => RECORDING_EXTENSIONS,
            FilePurpose::SaveStream => STREAM_EXTENSIONS,
        }
    }

    /// The name of the files it lists (a native dialog's filter).
    #[must_use]
    pub fn filter_name(self) -> &'static str {
        match self {
            FilePurpose::Open => "Scenes, recordings, traces and box lists",
            FilePurpose::SaveAs => "Scenes",
            FilePurpose::Export(ExportFormat::Csv) => "CSV",
            FilePurpose::Export(ExportFormat::Json) => "JSON",
            FilePurpose::SaveRecording => "Recordings",
            FilePurpose::SaveStream => "Stream files",
        }
    }

    /// The file name the dialog starts with: for Save As the current file's name (or
    /// `scene.ron`), for Export `sweep.csv` / `sweep.json`, for Save recording the current
    /// file's stem with `.rec` (or `recording.rec`), for Open none.
    #[must_use]
    pub fn default_name(self, current: Option<&Path>) -> String {
        match self {
            FilePurpose::Open => String::new(),
            FilePurpose::SaveAs => current
                .filter(|p| !p.is_dir())
                .and_then(Path::file_name)
                .map_or_else(
                    || "scene.ron".to_owned(),
                    |n| n.to_string_lossy().into_owned(),
                ),
            FilePurpose::Export(format) => format!("sweep.{}", format.extension()),
            FilePurpose::SaveRecording => format!(
                "{}.rec",
                current
                    .filter(|p| !p.is_dir())
                    .and_then(Path::file_stem)
                    .map_or_else(|| "recording".into(), |n| n.to_string_lossy())
            ),
            FilePurpose::SaveStream => format!("live.{}", STREAM_EXTENSIONS[0]),
        }
    }

    /// `path` with the extension a save needs: Save As adds `.ron` unless the name ends in
    /// `.ron` or `.json` (`b` → `b.ron`, `b.v2` → `b.v2.ron`); Export adds `.csv` / `.json`
    /// when the name has no extension; Save recording adds `.rec` unless the name ends in
    /// `.rec`. Open leaves it alone.
    #[must_use]
    pub fn with_extension(self, path: PathBuf) -> PathBuf {
        let ext = path.extension().and_then(|e| e.to_str());
        let add = match self {
            FilePurpose::Open => None,
            FilePurpose::SaveAs => {
                (!ext.is_some_and(|e| SCENE_EXTENSIONS.contains(&e))).then_some(SCENE_EXTENSIONS[0])
            }
            FilePurpose::Export(format) => ext.is_none().then_some(format.extension()),
            FilePurpose::SaveRecording => (!ext.is_some_and(|e| RECORDING_EXTENSIONS.contains(&e)))
                .then_some(RECORDING_EXTENSIONS[0]),
            FilePurpose::SaveStream => (!ext.is_some_and(|e| STREAM_EXTENSIONS.contains(&e)))
                .then_some(STREAM_EXTENSIONS[0]),
        };
        match add {
            Some(add) => {
                let mut s = path.into_os_string();
                s.push(".");
                s.push(add);
                PathBuf::from(s)
            }
            None => path,
        }
    }

    /// True when the dialog lists `path` (a file, not a folder) without "Show all files".
    fn lists(self, path: &Path) -> bool {
        path.extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| self.extensions().contains(&e))
    }
}

/// The folder a dialog starts in: the folder of `current` (the open file; never the file's
/// own path), or `current` itself when it is a folder; else `scenes/`, else the working
/// directory. Absolute when it can be made so.
#[must_use]
pub fn start_folder(current: Option<&Path>) -> PathBuf {
    let beside = current.and_then(|p| {
        if p.is_dir() {
            return Some(p.to_path_buf());
        }
        match p.parent() {
            // A bare file name ("a.ron") is in the working directory.
            Some(parent) if parent.as_os_str().is_empty() => std::env::current_dir().ok(),
            Some(parent) => Some(parent.to_path_buf()),
            None => None,
        }
    });
    let folder = beside
        .filter(|d| d.is_dir())
        .or_else(|| scenes_dir().filter(|d| d.is_dir()))
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_else(|| PathBuf::from("."));
    std::path::absolute(&folder).unwrap_or(folder)
}

/// What the name typed into a dialog names: itself when absolute, else that name in `folder`
/// (a relative path such as `sub/a.ron` too). A leading `~/` is the home folder.
#[must_use]
pub fn resolve_typed(folder: &Path, typed: &str) -> PathBuf {
    let typed = typed.trim();
    if let Some(rest) = typed.strip_prefix("~/")
        && let Some(home) = std::env::var_os("HOME").filter(|h| !h.is_empty())
    {
        return PathBuf::from(home).join(rest);
    }
    folder.join(typed)
}

/// How the list marks a folder: its name then this (a slash, as shells do). egui's default
/// fonts have no emoji or arrows at all (egui_file's 📂 💾 ⬆ ⟲ 🗀 🗋 drew as boxes), so the
/// dialog draws words and plain Latin punctuation only; a unit test checks every glyph.
const FOLDER_MARK: &str = "/";

/// One row of the dialog's list.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Entry {
    name: String,
    is_dir: bool,
}

/// How a frame of the in-app dialog ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DialogAnswer {
    /// Still open.
    Open,
    /// The file picked (for a save: with its extension, its folder existing).
    Picked(PathBuf),
    /// Closed without a file (Cancel, Esc, the window's ×).
    Cancelled,
}

/// The in-app file dialog: a folder, its listing, a file name field, Open/Save and Cancel.
pub struct FileDialogState {
    /// What it is for.
    pub purpose: FilePurpose,
    folder: PathBuf,
    folder_edit: String,
    name: String,
    default_name: String,
    entries: Result<Vec<Entry>, String>,
    /// The folder highlighted in the list (double-click or Open enters it).
    highlighted: Option<String>,
    show_all: bool,
    /// An existing file a save asked about; saving to it again replaces it.
    replace: Option<PathBuf>,
    message: Option<String>,
    focus_name: bool,
}

impl FileDialogState {
    /// A dialog for `purpose` beside `current` (the open file): see [`start_folder`] and
    /// [`FilePurpose::default_name`].
    #[must_use]
    pub fn new(purpose: FilePurpose, current: Option<&Path>) -> Self {
        let default_name = purpose.default_name(current);
        let mut dialog = Self {
            purpose,
            folder: PathBuf::new(),
            folder_edit: String::new(),
            name: default_name.clone(),
            default_name,
            entries: Ok(Vec::new()),
            highlighted: None,
            show_all: false,
            replace: None,
            message: None,
            focus_name: true,
        };
        dialog.set_folder(start_folder(current));
        dialog
    }

    /// The folder shown.
    #[must_use]
    pub fn folder(&self) -> &Path {
        &self.folder
    }

    /// The file name field.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Sets the file name field (as typing does).
    pub fn set_name(&mut self, name: &str) {
        name.clone_into(&mut self.name);
        self.replace = None;
    }

    /// The message shown under the buttons (why Open or Save did nothing), if any.
    #[must_use]
    pub fn message(&self) -> Option<&str> {
        self.message.as_deref()
    }

    /// Shows `folder` (and lists it again).
    pub fn set_folder(&mut self, folder: PathBuf) {
        self.folder = std::path::absolute(&folder).unwrap_or(folder);
        self.folder_edit = self.folder.display().to_string();
        self.highlighted = None;
        self.refresh();
    }

    /// Lists the folder again: its folders, then the files the purpose lists (all files with
    /// "Show all files"), each sorted by name; hidden ones only with "Show all files".
    fn refresh(&mut self) {
        let read = match std::fs::read_dir(&self.folder) {
            Ok(read) => read,
            Err(e) => {
                self.entries = Err(format!("Cannot list {}: {e}", self.folder.display()));
                return;
            }
        };
        let mut entries: Vec<Entry> = read
            .filter_map(Result::ok)
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                let path = e.path();
                let is_dir = path.is_dir();
                let shown = self.show_all
                    || (!name.starts_with('.') && (is_dir || self.purpose.lists(&path)));
                shown.then_some(Entry { name, is_dir })
            })
            .collect();
        entries.sort_by(|a, b| {
            (!a.is_dir, a.name.to_lowercase(), &a.name).cmp(&(
                !b.is_dir,
                b.name.to_lowercase(),
                &b.name,
            ))
        });
        self.entries = Ok(entries);
    }

    /// Open / Save (the button, or Enter in the name field): the file the name field names
    /// in the folder shown, or a message saying why not. A name that is a folder enters it;
    /// with the field empty, so does the highlighted folder.
    pub fn submit(&mut self) -> Option<PathBuf> {
        self.message = None;
        let typed = self.name.trim().to_owned();
        if typed.is_empty() {
            if let Some(dir) = self.highlighted.take() {
                self.set_folder(self.folder.join(dir));
            } else {
                self.message = Some("Type a file name, or pick a file in the list.".into());
            }
            return None;
        }
        let path = resolve_typed(&self.folder, &typed);
        if path.is_dir() {
            self.set_folder(path);
            self.name = if self.purpose.saves() {
                self.default_name.clone()
            } else {
                String::new()
            };
            return None;
        }
        if self.purpose.saves() {
            self.check_save(self.purpose.with_extension(path))
        } else {
            self.check_open(&path, &typed)
        }
    }

    /// The file to open: `path`, or `path.ron` when the name has no extension.
    fn check_open(&mut self, path: &Path, typed: &str) -> Option<PathBuf> {
        // A FIFO, a device, ...: opened, so the reader refuses it saying what it is (it
        // does not block on it); a folder was entered before this.
        if path.metadata().is_ok_and(|m| !m.is_dir()) {
            return Some(path.to_path_buf());
        }
        if path.extension().is_none() {
            let with_ron = FilePurpose::SaveAs.with_extension(path.to_path_buf());
            if with_ron.is_file() {
                return Some(with_ron);
            }
        }
        self.message = Some(if Path::new(typed).components().count() > 1 {
            format!("There is no file {}.", path.display())
        } else {
            format!("There is no file “{typed}” in {}.", self.folder.display())
        });
        None
    }

    /// The file to save to, once its folder exists and, if it exists, Save was pressed again.
    fn check_save(&mut self, path: PathBuf) -> Option<PathBuf> {
        if path.is_dir() {
            self.message = Some(format!("{} is a folder.", path.display()));
            return None;
        }
        if let Some(parent) = path.parent()
            && !parent.is_dir()
        {
            self.message = Some(format!("There is no folder {}.", parent.display()));
            return None;
        }
        if path.exists() && self.replace.as_ref() != Some(&path) {
            let name = path
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
            self.message = Some(format!("“{name}” exists: press Save again to replace it."));
            self.replace = Some(path);
            return None;
        }
        Some(path)
    }

    /// Shows the dialog for one frame.
    pub fn show(&mut self, ctx: &egui::Context) -> DialogAnswer {
        let mut open = true;
        let mut answer = DialogAnswer::Open;
        egui::Window::new(self.purpose.title())
            .open(&mut open)
            .collapsible(false)
            .resizable(true)
            .default_size([560.0, 380.0])
            .show(ctx, |ui| answer = self.contents(ui));
        if !open || ctx.input(|i| i.key_pressed(Key::Escape)) {
            return DialogAnswer::Cancelled;
        }
        answer
    }

    fn contents(&mut self, ui: &mut egui::Ui) -> DialogAnswer {
        self.folder_row(ui);
        ui.separator();
        let mut submit = self.list(ui);
        ui.separator();
        ui.horizontal(|ui| {
            let label = ui.label("File name:");
            let field = ui
                .add(egui::TextEdit::singleline(&mut self.name).desired_width(f32::INFINITY))
                .labelled_by(label.id);
            if std::mem::take(&mut self.focus_name) {
                field.request_focus();
            }
            if field.changed() {
                self.replace = None;
            }
            submit |= field.lost_focus() && ui.input(|i| i.key_pressed(Key::Enter));
        });
        let mut answer = DialogAnswer::Open;
        ui.horizontal(|ui| {
            if ui.checkbox(&mut self.show_all, "Show all files").changed() {
                self.refresh();
            }
            ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
                if ui.button("Cancel").clicked() {
                    answer = DialogAnswer::Cancelled;
                }
                let verb = if self.purpose.saves() { "Save" } else { "Open" };
                submit |= ui.button(verb).clicked();
            });
        });
        if let Some(message) = &self.message {
            ui.colored_label(ui.visuals().warn_fg_color, message);
        }
        if submit && let Some(path) = self.submit() {
            answer = DialogAnswer::Picked(path);
        }
        answer
    }

    /// The Up button and the folder field (Enter there goes to the folder typed).
    fn folder_row(&mut self, ui: &mut egui::Ui) {
        ui.horizontal(|ui| {
            let parent = self.folder.parent().map(Path::to_path_buf);
            if ui
                .add_enabled(parent.is_some(), egui::Button::new("Up"))
                .on_hover_text("The folder above")
                .clicked()
                && let Some(parent) = parent
            {
                self.set_folder(parent);
            }
            let label = ui.label("Folder:");
            let field = ui
                .add(egui::TextEdit::singleline(&mut self.folder_edit).desired_width(f32::INFINITY))
                .labelled_by(label.id);
            if field.lost_focus() && ui.input(|i| i.key_pressed(Key::Enter)) {
                let typed = resolve_typed(&self.folder, &self.folder_edit);
                if typed.is_dir() {
                    self.message = None;
                    self.set_folder(typed);
                } else {
                    self.message = Some(format!("There is no folder {}.", typed.display()));
                }
            }
        });
    }

    /// The folder's listing: a click on a file puts its name in the field, a double-click
    /// opens or saves it (returns true); a click highlights a folder, a double-click enters
    /// it.
    fn list(&mut self, ui: &mut egui::Ui) -> bool {
        let mut enter = None;
        let mut pick = None;
        egui::ScrollArea::vertical()
            .max_height(240.0)
            .auto_shrink([false, false])
            .show(ui, |ui| match &self.entries {
                Err(e) => {
                    ui.colored_label(ui.visuals().warn_fg_color, e);
                }
                Ok(entries) if entries.is_empty() => {
                    ui.weak("No folders or matching files here.");
                }
                Ok(entries) => {
                    for entry in entries {
                        let selected = if entry.is_dir {
                            self.highlighted.as_ref() == Some(&entry.name)
                        } else {
                            self.name.trim() == entry.name
                        };
                        let text = if entry.is_dir {
                            RichText::new(format!("{}{FOLDER_MARK}", entry.name)).strong()
                        } else {
                            RichText::new(&entry.name)
                        };
                        let row = ui.add(
                            egui::Button::selectable(selected, text)
                                .frame_when_inactive(false)
                                .min_size(egui::vec2(ui.available_width(), 0.0)),
                        );
                        if row.double_clicked() {
                            if entry.is_dir {
                                enter = Some(entry.name.clone());
                            } else {
                                pick = Some((entry.name.clone(), true));
                            }
                        } else if row.clicked() {
                            if entry.is_dir {
                                self.highlighted = Some(entry.name.clone());
                            } else {
                                pick = Some((entry.name.clone(), false));
                            }
                        }
                    }
                }
            });
        if let Some(dir) = enter {
            self.set_folder(self.folder.join(dir));
        }
        let Some((name, confirm)) = pick else {
            return false;
        };
        self.set_name(&name);
        self.highlighted = None;
        confirm
    }
}

/// The `scenes/` directory: beside the working directory, or up from the executable (so a
/// `cargo run` from anywhere in the checkout finds it).
#[must_use]
pub fn scenes_dir() -> Option<PathBuf> {
    let cwd = std::env::current_dir().ok()?.join("scenes");
    if cwd.is_dir() {
        return Some(cwd);
    }
    let exe = std::env::current_exe().ok()?;
    exe.ancestors()
        .skip(1)
        .take(5)
        .map(|d| d.join("scenes"))
        .find(|d| d.is_dir())
}

/// The scene files in `dir` (`.ron` and `.json`: what Save As lists, not the recordings, traces
/// and box lists Open takes too), sorted by name.
#[must_use]
pub fn list_scenes(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_file() && FilePurpose::SaveAs.lists(p))
        .collect();
    files.sort();
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    fn absolute(p: &Path) -> PathBuf {
        std::path::absolute(p).expect("absolute")
    }

    /// A temp folder holding `a.ron`, `b.json`, `notes.txt`, `.hidden.ron` and a folder `sub`.
    fn folder() -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("tempdir");
        for name in ["a.ron", "b.json", "notes.txt", ".hidden.ron"] {
            std::fs::write(dir.path().join(name), "x").expect("write");
        }
        std::fs::create_dir(dir.path().join("sub")).expect("mkdir");
        dir
    }

    #[test]
    fn lists_only_scene_files_sorted() {
        let dir = tempfile::tempdir().expect("tempdir");
        for name in ["b.ron", "a.json", "c.txt", "d.RON.bak", "e.rec", "f.boxes"] {
            std::fs::write(dir.path().join(name), "x").expect("write");
        }
        let names: Vec<String> = list_scenes(dir.path())
            .iter()
            .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .collect();
        assert_eq!(names, vec!["a.json", "b.ron"]);
    }

    #[test]
    fn starts_in_the_folder_of_the_file_never_inside_it() {
        let dir = folder();
        let file = dir.path().join("a.ron");
        assert_eq!(start_folder(Some(&file)), absolute(dir.path()));
        assert_eq!(start_folder(Some(dir.path())), absolute(dir.path()));
        let cwd = std::env::current_dir().expect("cwd");
        assert_eq!(start_folder(Some(Path::new("a.ron"))), cwd);
        // A file whose folder is gone: scenes/ (or the working directory), not its path.
        let fallback = absolute(&scenes_dir().unwrap_or(cwd));
        let gone = dir.path().join("gone").join("x.ron");
        assert_eq!(start_folder(Some(&gone)), fallback);
        assert_eq!(start_folder(None), fallback);
    }

    #[test]
    fn default_names() {
        let file = Path::new("/somewhere/a.ron");
        assert_eq!(FilePurpose::SaveAs.default_name(Some(file)), "a.ron");
        assert_eq!(FilePurpose::SaveAs.default_name(None), "scene.ron");
        assert_eq!(FilePurpose::Open.default_name(Some(file)), "");
        let csv = FilePurpose::Export(ExportFormat::Csv);
        assert_eq!(csv.default_name(Some(file)), "sweep.csv");
        let json = FilePurpose::Export(ExportFormat::Json);
        assert_eq!(json.default_name(None), "sweep.json");
        let rec = FilePurpose::SaveRecording;
        assert_eq!(rec.default_name(Some(file)), "a.rec");
        assert_eq!(rec.default_name(None), "recording.rec");
        assert_eq!(rec.title(), "Save recording as");
        assert_eq!(rec.extensions(), &["rec"]);
    }

    /// Open lists every kind of file it opens: scenes, recordings, traces and box lists.
    #[test]
    fn open_lists_what_it_opens() {
        let open = FilePurpose::Open;
        for name in [
            "a.ron",
            "a.json",
            "a.rec",
            "pile.trace",
            "level.txt",
            "level.boxes",
        ] {
            assert!(open.lists(Path::new(name)), "{name}");
        }
        for ext in crate::fileio::BOX_LIST_EXTENSIONS {
            assert!(open.extensions().contains(ext), "{ext}");
        }
        assert!(!open.lists(Path::new("shot.png")));
        assert!(!FilePurpose::SaveAs.lists(Path::new("level.txt")));
        assert_eq!(
            open.filter_name(),
            "Scenes, recordings, traces and box lists"
        );
        assert_eq!(FilePurpose::SaveAs.filter_name(), "Scenes");
    }

    #[test]
    fn saves_get_the_right_extension() {
        let cases = [
            (FilePurpose::SaveAs, "d/b", "d/b.ron"),
            (FilePurpose::SaveAs, "d/b.ron", "d/b.ron"),
            (FilePurpose::SaveAs, "d/b.json", "d/b.json"),
            (FilePurpose::SaveAs, "d/b.v2", "d/b.v2.ron"),
            (FilePurpose::Export(ExportFormat::Csv), "d/s", "d/s.csv"),
            (FilePurpose::Export(ExportFormat::Csv), "d/s.txt", "d/s.txt"),
            (FilePurpose::Export(ExportFormat::Json), "d/s", "d/s.json"),
            (FilePurpose::Open, "d/b", "d/b"),
            (FilePurpose::SaveRecording, "d/r", "d/r.rec"),
            (FilePurpose::SaveRecording, "d/r.rec", "d/r.rec"),
            (FilePurpose::SaveRecording, "d/r.ron", "d/r.ron.rec"),
        ];
        for (purpose, typed, want) in cases {
            assert_eq!(
                purpose.with_extension(PathBuf::from(typed)),
                PathBuf::from(want),
                "{purpose:?} {typed}"
            );
        }
    }

    #[test]
    fn typed_names_resolve_in_the_folder() {
        let f = Path::new("/data/scenes");
        assert_eq!(
            resolve_typed(f, " b.ron "),
            PathBuf::from("/data/scenes/b.ron")
        );
        assert_eq!(
            resolve_typed(f, "sub/b"),
            PathBuf::from("/data/scenes/sub/b")
        );
        assert_eq!(resolve_typed(f, "/tmp/c.ron"), PathBuf::from("/tmp/c.ron"));
    }

    #[test]
    fn lists_folders_then_the_purposes_files() {
        let dir = folder();
        let names = |d: &FileDialogState| -> Vec<String> {
            d.entries
                .as_ref()
                .expect("listed")
                .iter()
                .map(|e| e.name.clone())
                .collect()
        };
        // Open lists box lists too (`.txt`); Save As, scenes only.
        let save = FileDialogState::new(FilePurpose::SaveAs, Some(&dir.path().join("a.ron")));
        assert_eq!(names(&save), vec!["sub", "a.ron", "b.json"]);
        let mut d = FileDialogState::new(FilePurpose::Open, Some(&dir.path().join("a.ron")));
        assert_eq!(names(&d), vec!["sub", "a.ron", "b.json", "notes.txt"]);
        d.show_all = true;
        d.refresh();
        assert_eq!(
            names(&d),
            vec!["sub", ".hidden.ron", "a.ron", "b.json", "notes.txt"]
        );
        let d = FileDialogState::new(
            FilePurpose::Export(ExportFormat::Csv),
            Some(&dir.path().join("a.ron")),
        );
        assert_eq!(names(&d), vec!["sub"]);
    }

    #[test]
    fn save_as_after_open_saves_the_typed_name_beside_the_file() {
        let dir = folder();
        let mut d = FileDialogState::new(FilePurpose::SaveAs, Some(&dir.path().join("a.ron")));
        assert_eq!(d.folder(), absolute(dir.path()));
        assert_eq!(d.name(), "a.ron");
        d.set_name("b");
        assert_eq!(d.submit(), Some(absolute(dir.path()).join("b.ron")));
        // An existing file: asked first, replaced on the second Save.
        d.set_name("a");
        assert_eq!(d.submit(), None);
        assert_eq!(
            d.message(),
            Some("“a.ron” exists: press Save again to replace it.")
        );
        assert_eq!(d.submit(), Some(absolute(dir.path()).join("a.ron")));
        assert_eq!(d.message(), None);
        // A folder that is not there.
        d.set_name("nowhere/c");
        assert_eq!(d.submit(), None);
        let nowhere = absolute(dir.path()).join("nowhere");
        assert_eq!(
            d.message(),
            Some(format!("There is no folder {}.", nowhere.display()).as_str())
        );
        // A folder's name enters it, keeping the suggested name.
        d.set_name("sub");
        assert_eq!(d.submit(), None);
        assert_eq!(d.folder(), absolute(dir.path()).join("sub"));
        assert_eq!(d.name(), "a.ron");
        // An absolute path.
        let elsewhere = absolute(dir.path()).join("e.json");
        d.set_name(&elsewhere.display().to_string());
        assert_eq!(d.submit(), Some(elsewhere));
    }

    #[test]
    fn export_adds_its_format_extension() {
        let dir = folder();
        let mut d = FileDialogState::new(
            FilePurpose::Export(ExportFormat::Json),
            Some(&dir.path().join("a.ron")),
        );
        assert_eq!(d.name(), "sweep.json");
        d.set_name("out");
        assert_eq!(d.submit(), Some(absolute(dir.path()).join("out.json")));
    }

    #[test]
    fn open_finds_a_typed_name_or_says_why_not() {
        let dir = folder();
        let here = absolute(dir.path());
        let mut d = FileDialogState::new(FilePurpose::Open, Some(&dir.path().join("a.ron")));
        assert_eq!(d.name(), "");
        assert_eq!(d.submit(), None);
        assert_eq!(
            d.message(),
            Some("Type a file name, or pick a file in the list.")
        );
        d.set_name("b.json");
        assert_eq!(d.submit(), Some(here.join("b.json")));
        d.set_name("a");
        assert_eq!(d.submit(), Some(here.join("a.ron")));
        d.set_name("zzz.ron");
        assert_eq!(d.submit(), None);
        assert_eq!(
            d.message(),
            Some(format!("There is no file “zzz.ron” in {}.", here.display()).as_str())
        );
        d.set_name("sub");
        assert_eq!(d.submit(), None);
        assert_eq!(d.folder(), here.join("sub"));
        assert_eq!(d.name(), "");
        assert_eq!(d.message(), None);
    }

    #[test]
    fn every_glyph_the_dialog_draws_is_in_the_default_fonts() {
        let ctx = egui::Context::default();
        let mut output = ctx.run_ui(egui::RawInput::default(), |_| {});
        output.textures_delta.clear();
        let font = egui::TextStyle::Body.resolve(&ctx.global_style());
        let has = |s: &str| ctx.fonts_mut(|f| f.has_glyphs(&font, s));
        let dir = folder();
        let mut d = FileDialogState::new(FilePurpose::SaveAs, Some(&dir.path().join("a.ron")));
        d.set_name("a");
        d.submit();
        let mut texts = vec![
            format!("sub{FOLDER_MARK}"),
            d.message().unwrap_or_default().to_owned(),
        ];
        d.set_name("zzz/b");
        d.submit();
        texts.push(d.message().unwrap_or_default().to_owned());
        let mut open = FileDialogState::new(FilePurpose::Open, None);
        open.set_name("zzz");
        open.submit();
        texts.push(open.message().unwrap_or_default().to_owned());
        let words = [
            "Up",
            "Folder:",
            "File name:",
            "Show all files",
            "Open",
            "Save",
            "Cancel",
            "No folders or matching files here.",
            "Choose the file in the desktop's file dialog.",
            "Use the in-app dialog",
            "Use the desktop's file dialog",
        ];
        texts.extend(words.iter().map(|w| (*w).to_owned()));
        texts.extend(
            [
                FilePurpose::Open,
                FilePurpose::SaveAs,
                FilePurpose::Export(ExportFormat::Csv),
            ]
            .map(|p| p.title().to_owned()),
        );
        for text in &texts {
            assert!(!text.is_empty());
            assert!(has(text), "a glyph of {text:?} is missing");
        }
        // The icons egui_file 0.29 drew: none is in the fonts, so each showed as an empty box.
        for icon in ["📁", "📂", "💾", "⬆", "⟲", "🗀", "🗋"] {
            assert!(!has(icon), "{icon}");
        }
    }
}
