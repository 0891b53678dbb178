//! The colours of the views (from Choi's figures: green branches, blue leaves, red contacts), for the dark and the light theme.

use eframe::egui;

use egui::Color32;

/// Every colour the world and tree views draw with.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Palette {
    /// Branch boxes at depth 0; deeper branches are shaded darker (see [`Palette::branch`]).
    pub branch_top: Color32,
    /// Branch boxes at the deepest level.
    pub branch_deep: Color32,
    /// Leaf (fat) boxes.
    pub leaf: Color32,
    /// Actual (tight) boxes of colliding spheres.
    pub contact: Color32,
    /// Tight boxes of the other spheres.
    pub tight: Color32,
    /// Sphere outlines and labels; a trace's moving boxes.
    pub sphere: Color32,
    /// Velocity arrows.
    pub velocity: Color32,
    /// Candidate-pair lines between centres.
    pub pair: Color32,
    /// Selection and hover, in both views.
    pub highlight: Color32,
    /// The engine's own tree (a received stream's branch boxes).
    pub engine_tree: Color32,
    /// A pair the engine's broad phase missed.
    pub missed: Color32,
    /// An engine's reported pair that only the fat boxes' margin makes.
    pub pair_margin: Color32,
    /// An engine's reported pair that only the velocity look-ahead makes.
    pub pair_lookahead: Color32,
    /// An engine's reported pair of fat boxes alone, margin and look-ahead not told apart.
    pub pair_fat_only: Color32,
    /// Query boxes and rays.
    pub query: Color32,
    /// The walls of the world.
    pub walls: Color32,
    /// Tree events of the last step (inserted, reinserted, rotated).
    pub event: Color32,
    /// The background of the views.
    pub background: Color32,
    /// Links of the tree diagram.
    pub link: Color32,
    /// Tree nodes added since the previous step (the tree view's changes).
    pub diff_added: Color32,
    /// Tree nodes removed since the previous step.
    pub diff_removed: Color32,
    /// Tree nodes refit (same spheres, another box) since the previous step.
    pub diff_refit: Color32,
    /// Static boxes (a scene's level geometry, a trace's ground and walls): their outline, and
    /// a faint fill of the same hue.
    pub static_box: Color32,
}

impl Palette {
    /// The palette for a dark background.
    pub const DARK: Palette = Palette {
        branch_top: Color32::from_rgb(150, 235, 110),
        branch_deep: Color32::from_rgb(40, 165, 115),
        leaf: Color32::from_rgb(70, 140, 255),
        contact: Color32::from_rgb(240, 50, 50),
        tight: Color32::from_rgb(185, 185, 185),
        sphere: Color32::from_rgb(225, 225, 225),
        velocity: Color32::from_rgb(245, 215, 40),
        pair: Color32::from_rgb(200, 200, 200),
        highlight: Color32::from_rgb(255, 150, 20),
        engine_tree: Color32::from_rgb(225, 120, 235),
        missed: Color32::from_rgb(255, 40, 40),
        pair_margin: Color32::from_rgb(250, 205, 60),
        pair_lookahead: Color32::from_rgb(70, 225, 225),
        pair_fat_only: Color32::from_rgb(255, 150, 60),
        query: Color32::WHITE,
        walls: Color32::from_rgb(110, 110, 110),
        event: Color32::from_rgb(230, 80, 230),
        background: Color32::from_rgb(22, 22, 26),
        link: Color32::from_rgb(110, 110, 110),
        diff_added: Color32::from_rgb(70, 225, 225),
        diff_removed: Color32::from_rgb(255, 90, 110),
        diff_refit: Color32::from_rgb(250, 205, 60),
        static_box: Color32::from_rgb(176, 132, 96),
    };

    /// The palette for a light background (same hues, darker where white would vanish).
    pub const LIGHT: Palette = Palette {
        branch_top: Color32::from_rgb(50, 140, 30),
        branch_deep: Color32::from_rgb(0, 100, 75),
        leaf: Color32::from_rgb(30, 90, 230),
        contact: Color32::from_rgb(215, 20, 20),
        tight: Color32::from_rgb(105, 105, 105),
        sphere: Color32::from_rgb(60, 60, 60),
        velocity: Color32::from_rgb(200, 160, 0),
        pair: Color32::from_rgb(90, 90, 90),
        highlight: Color32::from_rgb(245, 130, 0),
        engine_tree: Color32::from_rgb(160, 40, 170),
        missed: Color32::from_rgb(220, 0, 0),
        pair_margin: Color32::from_rgb(165, 115, 0),
        pair_lookahead: Color32::from_rgb(0, 135, 150),
        pair_fat_only: Color32::from_rgb(200, 90, 0),
        query: Color32::from_rgb(250, 250, 250),
        walls: Color32::from_rgb(150, 150, 150),
        event: Color32::from_rgb(190, 40, 190),
        background: Color32::from_rgb(248, 248, 246),
        link: Color32::from_rgb(150, 150, 150),
        diff_added: Color32::from_rgb(0, 135, 150),
        diff_removed: Color32::from_rgb(200, 30, 60),
        diff_refit: Color32::from_rgb(165, 115, 0),
        static_box: Color32::from_rgb(120, 80, 45),
    };

    /// The palette of a theme.
    #[must_use]
    pub fn for_dark_mode(dark: bool) -> Palette {
        if dark { Self::DARK } else { Self::LIGHT }
    }

    /// The colour of an engine's reported pair of class `class` (a contact candidate is
    /// drawn as our pairs are; a pair its fat boxes do not justify as a missed one).
    #[must_use]
    pub fn pair_class(&self, class: crate::stream::engine::PairClass) -> Color32 {
        use crate::stream::engine::PairClass;
        match class {
            PairClass::Contact => self.pair,
            PairClass::Margin => self.pair_margin,
            PairClass::LookAhead => self.pair_lookahead,
            PairClass::FatOnly => self.pair_fat_only,
            PairClass::FatApart => self.missed,
        }
    }

    /// The green of a branch box at `depth` in a tree of `height`: yellow-green at the root,
    /// turning to a deeper blue-green down the tree; every depth keeps a contrast of at least
    /// 3:1 with the background in both themes (tested).
    #[must_use]
    pub fn branch(&self, depth: u32, height: u32) -> Color32 {
        let t = if height <= 1 {
            0.0
        } else {
            (depth as f32 / (height - 1) as f32).clamp(0.0, 1.0)
        };
        lerp_color(self.branch_top, self.branch_deep, t)
    }
}

/// The WCAG contrast ratio of two opaque colours (1 to 21).
#[must_use]
pub fn contrast(a: Color32, b: Color32) -> f32 {
    let lum = |c: Color32| {
        let ch = |v: u8| {
            let v = f32::from(v) / 255.0;
            if v <= 0.039_28 {
                v / 12.92
            } else {
                ((v + 0.055) / 1.055).powf(2.4)
            }
        };
        0.2126 * ch(c.r()) + 0.7152 * ch(c.g()) + 0.0722 * ch(c.b())
    };
    let (x, y) = (lum(a), lum(b));
    (x.max(y) + 0.05) / (x.min(y) + 0.05)
}

/// Linear blend of two opaque colours.
#[must_use]
pub fn lerp_color(a: Color32, b: Color32, t: f32) -> Color32 {
    let mix = |x: u8, y: u8| (x as f32 + (y as f32 - x as f32) * t).round() as u8;
    Color32::from_rgb(mix(a.r(), b.r()), mix(a.g(), b.g()), mix(a.b(), b.b()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_branch_depth_and_the_leaves_stand_out_from_the_background() {
        for pal in [Palette::DARK, Palette::LIGHT] {
            for depth in 0..=20 {
                let c = pal.branch(depth, 21);
                let ratio = contrast(c, pal.background);
                assert!(ratio >= 3.0, "depth {depth}: {ratio:.2} ({c:?})");
            }
            assert!(contrast(pal.leaf, pal.background) >= 3.0);
            // Leaves are told from the deepest branches by hue, not only by lightness.
            assert_ne!(pal.leaf, pal.branch(20, 21));
            // Static boxes stand out from the background and are no other layer's colour.
            assert!(contrast(pal.static_box, pal.background) >= 4.5);
            for other in [pal.leaf, pal.contact, pal.tight, pal.walls, pal.highlight] {
                assert_ne!(pal.static_box, other);
            }
        }
        assert!((contrast(Color32::BLACK, Color32::WHITE) - 21.0).abs() < 0.01);
    }

    #[test]
    fn the_tree_changes_stand_out_and_apart() {
        for pal in [Palette::DARK, Palette::LIGHT] {
            let changes = [pal.diff_added, pal.diff_removed, pal.diff_refit];
            for c in changes {
                let ratio = contrast(c, pal.background);
                assert!(ratio >= 3.0, "{c:?}: {ratio:.2}");
                // Told from the other marks of the tree view.
                for other in [pal.event, pal.highlight, pal.leaf, pal.link] {
                    assert_ne!(c, other);
                }
            }
            for (i, a) in changes.iter().enumerate() {
                for b in &changes[i + 1..] {
                    assert_ne!(a, b);
                }
            }
        }
    }
}
