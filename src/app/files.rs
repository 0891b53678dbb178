//! Files: the in-app Open / Save As dialog widget (egui_file) and the scene files beside the
//! app (`scenes/`). The dialog view (`views/files.rs`) turns what the widget picks into
//! commands.

use eframe::egui;

use egui_file::FileDialog;
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

/// An open file dialog.
pub struct FileDialogState {
    /// What it is for.
    pub purpose: FilePurpose,
    dialog: FileDialog,
}

fn is_scene_file(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("ron" | "json")
    )
}

impl FileDialogState {
    /// A dialog starting beside `current` (or in `scenes/`, or the working directory).
    #[must_use]
    pub fn new(purpose: FilePurpose, current: Option<&Path>) -> Self {
        let start = current
            .map(Path::to_path_buf)
            .or_else(|| scenes_dir().filter(|d| d.is_dir()))
            .or_else(|| std::env::current_dir().ok())
            .unwrap_or_else(|| PathBuf::from("."));
        let filter = Box::new(|p: &Path| is_scene_file(p));
        let mut dialog = match purpose {
            FilePurpose::Export(format) => {
                let ext = format.extension();
                FileDialog::save_file()
                    .title("Export the sweep")
                    .default_filename(format!("sweep.{ext}"))
                    .show_files_filter(Box::new(move |p: &Path| {
                        p.extension().and_then(|e| e.to_str()) == Some(ext)
                    }))
            }
            FilePurpose::Open => FileDialog::open_file()
                .title("Open scene")
                .show_files_filter(filter),
            FilePurpose::SaveAs => FileDialog::save_file()
                .title("Save scene as")
                .default_filename("scene.ron")
                .show_files_filter(filter),
        }
        .initial_path(start)
        .show_new_folder(false)
        .show_rename(false)
        .default_size([560.0, 380.0]);
        dialog.open();
        Self { purpose, dialog }
    }

    /// Shows the dialog; returns the file picked, if any, and whether it is still open.
    pub fn show(&mut self, ctx: &egui::Context) -> (Option<PathBuf>, bool) {
        self.dialog.show(ctx);
        if self.dialog.selected()
            && let Some(path) = self.dialog.path()
        {
            return (Some(path.to_path_buf()), false);
        }
        let open = matches!(self.dialog.state(), egui_file::State::Open);
        (None, open)
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

/// The scene files in `dir`, sorted by name.
#[must_use]
pub fn list_scenes(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_file() && is_scene_file(p))
        .collect();
    files.sort();
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_only_scene_files_sorted() {
        let dir = tempfile::tempdir().expect("tempdir");
        for name in ["b.ron", "a.json", "c.txt", "d.RON.bak"] {
            std::fs::write(dir.path().join(name), "x").expect("write");
        }
        let names: Vec<String> = list_scenes(dir.path())
            .iter()
            .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .collect();
        assert_eq!(names, vec!["a.json", "b.ron"]);
    }
}
