//! Density images: where shapes are smaller than a pixel or two on screen (100,000 spheres
//! fitted into a window, the deep branches of a big tree), drawing each as a shape costs the
//! renderer per shape and shows nothing more than a dot. Instead each is counted into the
//! pixel it falls on, one count grid per layer, and the grids are composed into one image, each
//! layer in its palette colour, more opaque where more shapes fall: a frame then costs what
//! the screen can show, whatever the number of proxies.

use eframe::egui;
use egui::{Color32, ColorImage, Pos2, Rect};

/// Shapes whose screen size (both sides, points) is below this are counted into the density
/// image rather than drawn.
pub const DENSITY_POINTS: f32 = 2.0;

/// One layer's counts.
#[derive(Clone, Debug, Default)]
struct Grid {
    color: Color32,
    counts: Vec<u16>,
    max: u16,
    used: bool,
}

/// The count grids of one view, one per layer, at the view's pixel size.
#[derive(Clone, Debug)]
pub struct Density {
    /// The view, points.
    viewport: Rect,
    /// Pixels per point.
    ppp: f32,
    width: usize,
    height: usize,
    grids: Vec<Grid>,
    /// Layers begun this frame.
    active: usize,
}

impl Default for Density {
    fn default() -> Self {
        Density {
            viewport: Rect::NOTHING,
            ppp: 1.0,
            width: 0,
            height: 0,
            grids: Vec::new(),
            active: 0,
        }
    }
}

impl Density {
    /// Starts a frame of `viewport` at `ppp` pixels a point: no layer, nothing counted.
    pub fn begin(&mut self, viewport: Rect, ppp: f32) {
        let ppp = if ppp.is_finite() && ppp > 0.0 {
            ppp
        } else {
            1.0
        };
        let width = (viewport.width() * ppp).round().clamp(0.0, 16_384.0) as usize;
        let height = (viewport.height() * ppp).round().clamp(0.0, 16_384.0) as usize;
        if (width, height) != (self.width, self.height) {
            for g in &mut self.grids {
                g.counts = Vec::new();
                g.used = false;
            }
        }
        self.viewport = viewport;
        self.ppp = ppp;
        self.width = width;
        self.height = height;
        self.active = 0;
    }

    /// Begins the next layer, drawn in `color` over the ones before; returns its index.
    pub fn layer(&mut self, color: Color32) -> usize {
        let i = self.active;
        if self.grids.len() <= i {
            self.grids.push(Grid::default());
        }
        let n = self.width * self.height;
        let g = &mut self.grids[i];
        if g.used || g.counts.len() != n {
            g.counts.clear();
            g.counts.resize(n, 0);
        }
        g.color = color;
        g.max = 0;
        g.used = false;
        self.active += 1;
        i
    }

    /// Counts a shape at screen point `p` (points) into `layer`; a point off the view is left
    /// out.
    #[inline]
    pub fn splat(&mut self, layer: usize, p: Pos2) {
        let x = (p.x - self.viewport.min.x) * self.ppp;
        let y = (p.y - self.viewport.min.y) * self.ppp;
        if !(x >= 0.0 && y >= 0.0) {
            return;
        }
        let (x, y) = (x as usize, y as usize);
        if x >= self.width || y >= self.height {
            return;
        }
        let Some(g) = self.grids.get_mut(layer) else {
            return;
        };
        let c = &mut g.counts[y * self.width + x];
        *c = c.saturating_add(1);
        g.max = g.max.max(*c);
        g.used = true;
    }

    /// True when any shape was counted this frame.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        !self.grids[..self.active].iter().any(|g| g.used)
    }

    /// The layers composed into one image of the view's pixels (transparent where nothing
    /// fell), each count drawn in its layer's colour with an opacity that grows with the
    /// count (logarithmically: one shape shows, a crowd saturates); `None` when nothing was
    /// counted.
    #[must_use]
    pub fn image(&self) -> Option<ColorImage> {
        if self.is_empty() || self.width == 0 || self.height == 0 {
            return None;
        }
        let used: Vec<(&Grid, f32)> = self.grids[..self.active]
            .iter()
            .filter(|g| g.used)
            .map(|g| (g, 1.0 / (1.0 + f32::from(g.max)).ln()))
            .collect();
        let mut pixels = vec![Color32::TRANSPARENT; self.width * self.height];
        for (i, px) in pixels.iter_mut().enumerate() {
            let (mut r, mut gr, mut b, mut a) = (0.0f32, 0.0f32, 0.0f32, 0.0f32);
            let mut any = false;
            for &(g, inv_log_max) in &used {
                let c = g.counts[i];
                if c == 0 {
                    continue;
                }
                any = true;
                let alpha = opacity(c, inv_log_max);
                let col = g.color;
                // "Over", premultiplied.
                r = f32::from(col.r()) * alpha + r * (1.0 - alpha);
                gr = f32::from(col.g()) * alpha + gr * (1.0 - alpha);
                b = f32::from(col.b()) * alpha + b * (1.0 - alpha);
                a = 255.0 * alpha + a * (1.0 - alpha);
            }
            if any {
                *px = Color32::from_rgba_premultiplied(r as u8, gr as u8, b as u8, a as u8);
            }
        }
        Some(ColorImage::new([self.width, self.height], pixels))
    }

    /// Shapes counted into `layer` this frame (for tests and the overlay).
    #[must_use]
    pub fn count(&self, layer: usize) -> u64 {
        self.grids
            .get(layer)
            .filter(|_| layer < self.active)
            .map_or(0, |g| g.counts.iter().map(|&c| u64::from(c)).sum())
    }
}

/// A count's opacity: 0.5 for one shape, 1 at the layer's most.
#[inline]
fn opacity(count: u16, inv_log_max: f32) -> f32 {
    if !inv_log_max.is_finite() {
        return 1.0;
    }
    let t = (1.0 + f32::from(count)).ln() * inv_log_max;
    (0.5 + 0.5 * t).clamp(0.0, 1.0)
}

/// True when a shape of `size` on screen (points) is small enough to be counted.
#[must_use]
pub fn is_small(size: egui::Vec2) -> bool {
    size.x < DENSITY_POINTS && size.y < DENSITY_POINTS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_land_in_their_pixels_and_compose_in_layer_order() {
        let mut d = Density::default();
        let view = Rect::from_min_size(Pos2::new(10.0, 20.0), egui::vec2(4.0, 2.0));
        d.begin(view, 1.0);
        let red = d.layer(Color32::from_rgb(255, 0, 0));
        let blue = d.layer(Color32::from_rgb(0, 0, 255));
        // Three red at pixel (0, 0), one red at (3, 1), one blue over (0, 0); one off the view.
        for _ in 0..3 {
            d.splat(red, Pos2::new(10.2, 20.7));
        }
        d.splat(red, Pos2::new(13.9, 21.5));
        d.splat(blue, Pos2::new(10.0, 20.0));
        d.splat(blue, Pos2::new(14.0, 20.0));
        d.splat(blue, Pos2::new(9.9, 20.0));
        assert_eq!((d.count(red), d.count(blue)), (4, 1));
        let image = d.image().expect("something was counted");
        assert_eq!(image.size, [4, 2]);
        let at = |x: usize, y: usize| image.pixels[y * 4 + x];
        // Blue (one shape: its own layer's most, opaque) over red.
        assert_eq!(at(0, 0), Color32::from_rgba_premultiplied(0, 0, 255, 255));
        // One red where the most is three: half way between 0.5 and 1 in log scale.
        let alpha = 0.5 + 0.5 * (2.0f32.ln() / 4.0f32.ln());
        assert_eq!(
            at(3, 1),
            Color32::from_rgba_premultiplied((255.0 * alpha) as u8, 0, 0, (255.0 * alpha) as u8)
        );
        assert_eq!(at(1, 0), Color32::TRANSPARENT);
        // A new frame starts empty.
        d.begin(view, 1.0);
        let _ = d.layer(Color32::WHITE);
        assert!(d.is_empty());
        assert!(d.image().is_none());
    }

    #[test]
    fn a_size_is_small_below_two_points() {
        assert!(is_small(egui::vec2(1.9, 0.1)));
        assert!(!is_small(egui::vec2(2.0, 0.1)));
    }
}
