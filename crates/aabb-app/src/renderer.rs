//! Which renderer draws the window. OpenGL (glow) first: on the software renderers that
//! machines without a working GPU driver fall back to (Mesa's llvmpipe, as under Xvfb), it
//! paints a frame about three times as fast as wgpu on Vulkan's lavapipe; on a real GPU both
//! are fast. Built with the `wgpu` feature, when OpenGL cannot start (no GL driver), the window
//! opens with wgpu instead; `AABB_DEBUGGER_RENDERER=wgpu` (or `glow`) chooses one and turns the
//! fallback off. Without the feature (the default: wgpu is a third of the first build), OpenGL
//! alone draws, and asking for wgpu says how to build it in.

use eframe::Renderer;

/// The environment variable that chooses the renderer.
pub const RENDERER_VAR: &str = "AABB_DEBUGGER_RENDERER";

/// What asking for wgpu in a build without it says.
pub const NO_WGPU: &str = "this build draws with OpenGL (glow) only; build with `--features wgpu` \
                           for the wgpu renderer";

/// A renderer by name (`glow` or `wgpu`, any case): `Ok(None)` for an unknown name; wgpu in a
/// build without the `wgpu` feature is an error saying so ([`NO_WGPU`]).
pub fn renderer_from_name(name: &str) -> Result<Option<Renderer>, &'static str> {
    match name.trim().to_ascii_lowercase().as_str() {
        "glow" | "opengl" | "gl" => Ok(Some(Renderer::Glow)),
        #[cfg(feature = "wgpu")]
        "wgpu" => Ok(Some(Renderer::Wgpu)),
        #[cfg(not(feature = "wgpu"))]
        "wgpu" => Err(NO_WGPU),
        _ => Ok(None),
    }
}

/// The renderers to try, in order: the one `AABB_DEBUGGER_RENDERER` names alone, else glow
/// then (built with the `wgpu` feature) wgpu. An unknown name is an error that says what was
/// expected.
pub fn renderers_to_try() -> anyhow::Result<Vec<Renderer>> {
    match std::env::var(RENDERER_VAR) {
        Ok(name) if !name.trim().is_empty() => match renderer_from_name(&name) {
            Ok(Some(r)) => Ok(vec![r]),
            Ok(None) => anyhow::bail!("{RENDERER_VAR}={name:?}: expected glow or wgpu"),
            Err(why) => anyhow::bail!("{RENDERER_VAR}={name:?}: {why}"),
        },
        _ => Ok(ALL.to_vec()),
    }
}

/// Every renderer of this build, in the order they are tried.
#[cfg(feature = "wgpu")]
const ALL: &[Renderer] = &[Renderer::Glow, Renderer::Wgpu];
/// Every renderer of this build, in the order they are tried.
#[cfg(not(feature = "wgpu"))]
const ALL: &[Renderer] = &[Renderer::Glow];

/// Runs `eframe::run_native` with each renderer of `renderers` in turn until one opens the
/// window: `make_options` and `make_app` are called once per try (a failed try never called the app's creator, or
/// the window did open and its outcome is returned). The last renderer's error is returned
/// when none opened, with the earlier ones' said on stderr.
pub fn run_native_with(
    app_name: &str,
    make_options: impl Fn() -> eframe::NativeOptions,
    renderers: &[Renderer],
    mut make_app: impl FnMut() -> eframe::AppCreator<'static>,
) -> eframe::Result {
    let started = std::cell::Cell::new(false);
    let mut last = Ok(());
    for (i, &renderer) in renderers.iter().enumerate() {
        let options = eframe::NativeOptions {
            renderer,
            ..make_options()
        };
        let creator = make_app();
        let started_ref = &started;
        let outcome = eframe::run_native(
            app_name,
            options,
            Box::new(move |cc| {
                started_ref.set(true);
                creator(cc)
            }),
        );
        match outcome {
            Err(e) if !started.get() && i + 1 < renderers.len() => {
                eprintln!(
                    "the window could not start with {renderer}: {e}; trying the next renderer"
                );
                last = Err(e);
            }
            other => return other,
        }
    }
    last
}

/// The options of a self-closing window run (`screenshot`, `frames`): a fixed size of
/// `size` pixels, titled `title`, its storage in `storage` (a scratch path the run removes),
/// nothing remembered of the user's window.
#[must_use]
pub fn self_closing_options(
    title: &str,
    app_id: &str,
    size: [u32; 2],
    storage: &std::path::Path,
) -> eframe::NativeOptions {
    eframe::NativeOptions {
        viewport: eframe::egui::ViewportBuilder::default()
            .with_title(title)
            .with_app_id(app_id)
            .with_inner_size([size[0] as f32, size[1] as f32])
            .with_resizable(false),
        persist_window: false,
        persistence_path: Some(storage.to_path_buf()),
        system_font_fallback: false,
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renderers_by_name() {
        assert_eq!(renderer_from_name(" GLOW "), Ok(Some(Renderer::Glow)));
        #[cfg(feature = "wgpu")]
        assert_eq!(renderer_from_name("wgpu"), Ok(Some(Renderer::Wgpu)));
        #[cfg(not(feature = "wgpu"))]
        assert_eq!(renderer_from_name("wgpu"), Err(NO_WGPU));
        assert_eq!(renderer_from_name("vulkan"), Ok(None));
    }
}
