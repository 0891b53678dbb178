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
    /// Sphere outlines and labels.
    pub sphere: Color32,
    /// Velocity arrows.
    pub velocity: Color32,
    /// Candidate-pair lines between centres.
    pub pair: Color32,
    /// Selection and hover, in both views.
    pub highlight: Color32,
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
}

impl Palette {
    /// The palette for a dark background.
    pub const DARK: Palette = Palette {
        branch_top: Color32::from_rgb(90, 220, 90),
        branch_deep: Color32::from_rgb(20, 95, 25),
        leaf: Color32::from_rgb(70, 140, 255),
        contact: Color32::from_rgb(240, 50, 50),
        tight: Color32::from_rgb(140, 140, 140),
        sphere: Color32::from_rgb(225, 225, 225),
        velocity: Color32::from_rgb(245, 215, 40),
        pair: Color32::from_rgb(200, 200, 200),
        highlight: Color32::from_rgb(255, 150, 20),
        query: Color32::WHITE,
        walls: Color32::from_rgb(110, 110, 110),
        event: Color32::from_rgb(230, 80, 230),
        background: Color32::from_rgb(22, 22, 26),
        link: Color32::from_rgb(110, 110, 110),
    };

    /// The palette for a light background (same hues, darker where white would vanish).
    pub const LIGHT: Palette = Palette {
        branch_top: Color32::from_rgb(40, 170, 40),
        branch_deep: Color32::from_rgb(10, 80, 15),
        leaf: Color32::from_rgb(30, 90, 230),
        contact: Color32::from_rgb(215, 20, 20),
        tight: Color32::from_rgb(130, 130, 130),
        sphere: Color32::from_rgb(60, 60, 60),
        velocity: Color32::from_rgb(200, 160, 0),
        pair: Color32::from_rgb(90, 90, 90),
        highlight: Color32::from_rgb(245, 130, 0),
        query: Color32::from_rgb(250, 250, 250),
        walls: Color32::from_rgb(150, 150, 150),
        event: Color32::from_rgb(190, 40, 190),
        background: Color32::from_rgb(248, 248, 246),
        link: Color32::from_rgb(150, 150, 150),
    };

    /// The palette of a theme.
    #[must_use]
    pub fn for_dark_mode(dark: bool) -> Palette {
        if dark { Self::DARK } else { Self::LIGHT }
    }

    /// The green of a branch box at `depth` in a tree of `height`: bright at the root, darker
    /// deeper down.
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

/// Linear blend of two opaque colours.
#[must_use]
pub fn lerp_color(a: Color32, b: Color32, t: f32) -> Color32 {
    let mix = |x: u8, y: u8| (x as f32 + (y as f32 - x as f32) * t).round() as u8;
    Color32::from_rgb(mix(a.r(), b.r()), mix(a.g(), b.g()), mix(a.b(), b.b()))
}
