//! The window's layout as plain values, so it can be tested without a window: which side panels
//! fit the window's width and how wide they may grow, and how the central area is split
//! between the world view (always the larger part) and the tree view.
//!
//! The rules, widest window first:
//! - Controls on the left, statistics on the right, as wide as their contents.
//! - A side panel shows only while the views keep at least [`MIN_VIEWS_WIDTH`] points beside
//!   it: the statistics panel steps aside first (below 1,130 points with the controls), then
//!   the controls (below 840); the View menu says so. The world and the tree stay.
//! - The world and the tree sit side by side, the tree taking the preference `tree_share` of the
//!   width (a fraction, not a width, so it neither jumps between scenes nor remembers a
//!   sliver), within [`TREE_SHARE_RANGE`]. In a portrait area (narrower than three quarters of
//!   its height) they stack, the tree below.

use eframe::egui;

use egui::{Rect, pos2};

/// The tree view's default share of the central area.
pub const TREE_SHARE_DEFAULT: f32 = 0.3;
/// The least and the most of the central area the tree view may take: the world keeps at
/// least a quarter, the tree at least a sliver one can still grab.
pub const TREE_SHARE_RANGE: (f32, f32) = (0.12, 0.75);
/// The least width (points) the world and the tree together keep beside the side panels.
pub const MIN_VIEWS_WIDTH: f32 = 560.0;
/// The width of the splitter between the world and the tree, points.
pub const SPLITTER_WIDTH: f32 = 6.0;
/// The side panels' default widths, points.
pub const CONTROLS_WIDTH: f32 = 280.0;
/// See [`CONTROLS_WIDTH`].
pub const STATS_WIDTH: f32 = 290.0;

/// Which side panels show and how wide they may be.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Panels {
    /// The controls panel shows.
    pub controls: bool,
    /// The statistics panel shows.
    pub stats: bool,
    /// The controls panel is wanted but the window is too narrow for it.
    pub controls_set_aside: bool,
    /// The statistics panel is wanted but the window is too narrow for it.
    pub stats_set_aside: bool,
}

/// The side panels for a window `width` points wide, given which the user wants shown.
#[must_use]
pub fn panels(width: f32, show_controls: bool, show_stats: bool) -> Panels {
    let controls_fits = width - CONTROLS_WIDTH >= MIN_VIEWS_WIDTH;
    let controls = show_controls && controls_fits;
    let beside_stats = width - if controls { CONTROLS_WIDTH } else { 0.0 };
    let stats_fits = beside_stats - STATS_WIDTH >= MIN_VIEWS_WIDTH;
    Panels {
        controls,
        stats: show_stats && stats_fits,
        controls_set_aside: show_controls && !controls_fits,
        stats_set_aside: show_stats && !stats_fits,
    }
}

/// How the world and the tree share the central area.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Split {
    /// The world view's rectangle.
    pub world: Rect,
    /// The splitter's rectangle (drag it to change the share).
    pub splitter: Rect,
    /// The tree view's rectangle.
    pub tree: Rect,
    /// True when the tree is below the world rather than beside it.
    pub stacked: bool,
}

/// The tree share clamped into [`TREE_SHARE_RANGE`]; a value that is not a number gives the
/// default.
#[must_use]
pub fn clamp_share(share: f32) -> f32 {
    if share.is_finite() {
        share.clamp(TREE_SHARE_RANGE.0, TREE_SHARE_RANGE.1)
    } else {
        TREE_SHARE_DEFAULT
    }
}

/// Splits `area` between the world and the tree, the tree taking `share` of it.
#[must_use]
pub fn split(area: Rect, share: f32) -> Split {
    let share = clamp_share(share);
    let stacked = area.width() < 0.75 * area.height();
    let half = SPLITTER_WIDTH * 0.5;
    if stacked {
        let y = (area.bottom() - area.height() * share).round();
        Split {
            world: Rect::from_min_max(area.min, pos2(area.right(), y - half)),
            splitter: Rect::from_min_max(pos2(area.left(), y - half), pos2(area.right(), y + half)),
            tree: Rect::from_min_max(pos2(area.left(), y + half), area.max),
            stacked,
        }
    } else {
        let x = (area.right() - area.width() * share).round();
        Split {
            world: Rect::from_min_max(area.min, pos2(x - half, area.bottom())),
            splitter: Rect::from_min_max(pos2(x - half, area.top()), pos2(x + half, area.bottom())),
            tree: Rect::from_min_max(pos2(x + half, area.top()), area.max),
            stacked,
        }
    }
}

/// The tree share that puts the splitter under `pointer` in `area` (the inverse of [`split`]).
#[must_use]
pub fn share_at(area: Rect, pointer: egui::Pos2, stacked: bool) -> f32 {
    let share = if stacked {
        (area.bottom() - pointer.y) / area.height().max(1.0)
    } else {
        (area.right() - pointer.x) / area.width().max(1.0)
    };
    clamp_share(share)
}

#[cfg(test)]
mod tests {
    use super::*;
    use egui::vec2;

    #[test]
    fn side_panels_step_aside_as_the_window_narrows() {
        let wide = panels(1280.0, true, true);
        assert!(wide.controls && wide.stats);
        assert!(!wide.controls_set_aside && !wide.stats_set_aside);
        assert!(panels(1130.0, true, true).stats);
        assert!(!panels(1120.0, true, true).stats);
        // 1024 x 700: the statistics step aside, the views keep 744 points.
        let medium = panels(1024.0, true, true);
        assert!(medium.controls && !medium.stats && medium.stats_set_aside);
        // ...unless the controls are hidden: then the statistics fit.
        let no_controls = panels(1024.0, false, true);
        assert!(no_controls.stats && !no_controls.controls_set_aside);
        assert!(panels(840.0, true, true).controls);
        assert!(!panels(830.0, true, true).controls);
        let small = panels(640.0, true, true);
        assert!(!small.controls && !small.stats);
        assert!(small.controls_set_aside && small.stats_set_aside);
        // Hidden by the user is not "set aside".
        assert!(!panels(640.0, true, false).stats_set_aside);
    }

    #[test]
    fn the_world_gets_the_larger_share_and_the_splitter_inverts() {
        let area = Rect::from_min_size(pos2(100.0, 20.0), vec2(800.0, 600.0));
        let s = split(area, TREE_SHARE_DEFAULT);
        assert!(!s.stacked);
        assert_eq!(s.world.min, area.min);
        assert_eq!(s.tree.max, area.max);
        assert_eq!(s.world.right(), 657.0); // the split at 900 - 240 = 660, less half a splitter
        assert_eq!(s.tree.left(), 663.0);
        assert_eq!(s.splitter.width(), SPLITTER_WIDTH);
        assert!(s.world.width() > s.tree.width());
        let back = share_at(area, s.splitter.center(), false);
        assert!((back - TREE_SHARE_DEFAULT).abs() < 0.001, "{back}");
        // Out-of-range shares, from a drag or a damaged preference, are clamped.
        assert_eq!(
            share_at(area, pos2(890.0, 300.0), false),
            TREE_SHARE_RANGE.0
        );
        assert_eq!(share_at(area, pos2(0.0, 300.0), false), TREE_SHARE_RANGE.1);
        assert_eq!(clamp_share(f32::NAN), TREE_SHARE_DEFAULT);
        assert_eq!(clamp_share(0.01), TREE_SHARE_RANGE.0);
    }

    #[test]
    fn a_tall_area_stacks_the_tree_under_the_world() {
        let area = Rect::from_min_size(pos2(0.0, 0.0), vec2(300.0, 500.0));
        let s = split(area, 0.4);
        assert!(s.stacked);
        assert_eq!(s.world.width(), 300.0);
        assert_eq!(s.tree.bottom(), 500.0);
        assert_eq!(s.world.bottom(), 297.0);
        assert_eq!(s.tree.top(), 303.0);
        assert!((share_at(area, s.splitter.center(), true) - 0.4).abs() < 0.001);
    }
}
