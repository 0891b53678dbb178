//! The `screenshot` subcommand (part of the binary, not the library: it opens the app
//! crate's window): opens the real window on a scene (or a trace), renders it (after
//! `--steps`), saves a PNG and exits by itself; see `aabb_app::run_screenshot`.

use aabb_app::prefs::{Layers, ThemeChoice, ViewMode};
use aabb_app::views::advisor::AdvisorGrid;
use aabb_app::{ScreenshotPlan, run_screenshot};
use aabb_debugger::{fileio, sweep, text};
use std::path::PathBuf;
use std::time::Duration;

/// Arguments of `screenshot`.
#[derive(Debug, clap::Args)]
pub struct ScreenshotArgs {
    /// The scene file to render, a trace (told by its first word `aabb-trace`, or the name
    /// `*.trace`) or a box list (told by its first line): the window opens it as File > Open
    /// does.
    pub scene: PathBuf,
    /// Where to write the PNG (a `.png` name; a missing folder is made).
    #[arg(long)]
    pub out: PathBuf,
    /// Steps to run before the shot.
    #[arg(long, default_value_t = 0)]
    pub steps: u64,
    /// Window size in pixels, `WIDTHxHEIGHT`.
    #[arg(long, default_value = "1280x800", value_parser = parse_size)]
    pub size: (u32, u32),
    /// A sphere id to select (drawn orange in both views).
    #[arg(long)]
    pub select: Option<u32>,
    /// Visible layers, comma-separated: walls, branches, leaves, tight, contacts, pairs,
    /// spheres, velocity, labels, or `all` (default: the scene's saved view, else the defaults).
    #[arg(long, value_delimiter = ',')]
    pub layers: Option<Vec<String>>,
    /// Which views: world, tree or both.
    #[arg(long, value_parser = parse_view)]
    pub view: Option<ViewMode>,
    /// Colour theme: dark or light.
    #[arg(long, value_parser = parse_theme)]
    pub theme: Option<ThemeChoice>,
    /// The broad phase to run and draw (`box2d` draws Box2D's own tree); the tree when left
    /// out.
    #[arg(long, value_enum)]
    pub broadphase: Option<aabb_debugger::cli::run::BroadphaseArg>,
    /// Compare with a second broad phase or other settings from step 0, side by side:
    /// `KIND[:KEY=VALUE,...]` as `compare` takes it (`tree:margin=0.2`, `box2d`), over the
    /// scene's settings.
    #[arg(long, value_name = "SIDE")]
    pub compare: Option<String>,
    /// With `--compare`: the document's own side A, set first (`tree:margin=0.05`).
    #[arg(long, value_name = "SIDE", requires = "compare")]
    pub compare_a: Option<String>,
    /// With `--compare`: B's views draw the engine's own tree (a stream that carried one),
    /// A's ours: the engine's tree beside ours.
    #[arg(long, requires = "compare")]
    pub compare_engine_tree: bool,
    /// Frame this world rectangle instead of the whole world: `X0,Y0,X1,Y1` (min and max
    /// corners on the view's plane).
    #[arg(long, value_name = "X0,Y0,X1,Y1", value_parser = parse_frame, allow_hyphen_values = true)]
    pub frame: Option<[f32; 4]>,
    /// Show the timeline (the recorded steps) under the world view; left out by default, as
    /// the articles' figures have none.
    #[arg(long)]
    pub timeline: bool,
    /// Open the Advisor and run a sweep (from the scene after `--steps`) before the shot,
    /// which waits for it; its grid is the window's default unless `--advisor-margin`,
    /// `--advisor-lookahead` or `--advisor-steps` say otherwise. Raise `--timeout-secs` for a
    /// long sweep.
    #[arg(long)]
    pub advisor: bool,
    /// The Advisor's margins, `FROM:TO:STEP` (implies `--advisor`).
    #[arg(long, value_name = "FROM:TO:STEP", allow_hyphen_values = true)]
    pub advisor_margin: Option<String>,
    /// The Advisor's look-ahead values, `0,0.05,0.2` (implies `--advisor`).
    #[arg(long, value_name = "LIST", allow_hyphen_values = true)]
    pub advisor_lookahead: Option<String>,
    /// The Advisor's steps a point (implies `--advisor`).
    #[arg(long)]
    pub advisor_steps: Option<u64>,
    /// Give up (exit status 3) when nothing was saved after this many seconds.
    #[arg(long, default_value_t = 60)]
    pub timeout_secs: u64,
    /// Replace `--out` even when it holds something other than a PNG image; without it such
    /// a file is refused before the window opens.
    #[arg(long)]
    pub force: bool,
}

pub(crate) fn parse_size(s: &str) -> Result<(u32, u32), String> {
    let (w, h) = s
        .split_once(['x', 'X'])
        .ok_or_else(|| format!("expected WIDTHxHEIGHT, got `{s}`"))?;
    let parse = |v: &str| -> Result<u32, String> {
        let n: u32 = v
            .trim()
            .parse()
            .map_err(|_| format!("`{v}` is not a whole number"))?;
        if (64..=8192).contains(&n) {
            Ok(n)
        } else {
            Err(format!("{n} is outside 64..=8192"))
        }
    };
    Ok((parse(w)?, parse(h)?))
}

fn parse_view(s: &str) -> Result<ViewMode, String> {
    ViewMode::from_name(s).ok_or_else(|| format!("expected world, tree or both, got `{s}`"))
}

fn parse_theme(s: &str) -> Result<ThemeChoice, String> {
    match s.trim().to_ascii_lowercase().as_str() {
        "dark" => Ok(ThemeChoice::Dark),
        "light" => Ok(ThemeChoice::Light),
        _ => Err(format!("expected dark or light, got `{s}`")),
    }
}

/// Runs `screenshot`; returns the exit code.
pub fn main(args: &ScreenshotArgs) -> anyhow::Result<i32> {
    if fileio::same_file(&args.scene, &args.out) {
        eprintln!(
            "{}: is the scene being shown ({}); give --out another path (nothing was written)",
            text::escape_controls(&args.out.display().to_string()),
            text::escape_controls(&args.scene.display().to_string())
        );
        return Ok(2);
    }
    // A PNG is what is written: another name would be written as a PNG over what it held,
    // and then refused when read back.
    if !args
        .out
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("png"))
    {
        eprintln!(
            "{}: --out must name a .png file (nothing was written)",
            text::escape_controls(&args.out.display().to_string())
        );
        return Ok(2);
    }
    if let Err(e) = fileio::check_replaceable(
        &args.out,
        fileio::WriteOptions::of_kind(fileio::FileKind::Png, args.force),
    ) {
        eprintln!("{e}");
        return Ok(1);
    }
    if args.steps > sweep::grid::MAX_STEPS {
        eprintln!(
            "--steps: at most {} steps before the shot (the window records every one), got {}",
            sweep::grid::MAX_STEPS,
            args.steps
        );
        return Ok(2);
    }
    // The Advisor's grid is checked as `sweep` checks it, before the window opens (a bad one
    // was only said by the Advisor, and the shot made with exit 0).
    if let Some(margins) = &args.advisor_margin
        && let Err(e) = sweep::MarginRange::parse(margins).and_then(|r| r.values())
    {
        eprintln!("--advisor-margin: {}", sweep_message(e));
        return Ok(2);
    }
    if let Some(lookaheads) = &args.advisor_lookahead
        && let Err(e) = sweep::parse_lookaheads(lookaheads)
    {
        eprintln!("--advisor-lookahead: {}", sweep_message(e));
        return Ok(2);
    }
    if let Some(steps) = args.advisor_steps
        && !(1..=sweep::grid::MAX_STEPS).contains(&steps)
    {
        eprintln!(
            "--advisor-steps: 1 to {} steps a point, got {steps}",
            sweep::grid::MAX_STEPS
        );
        return Ok(2);
    }
    let layers = match &args.layers {
        Some(names) => {
            Some(Layers::from_names(names).map_err(|e| anyhow::anyhow!("--layers: {e}"))?)
        }
        None => None,
    };
    // Read again over the document's settings once it is open; refused here at once.
    for (flag, text) in [
        ("--compare", &args.compare),
        ("--compare-a", &args.compare_a),
    ] {
        if let Some(text) = text {
            aabb_debugger::compare::Side::parse(text, aabb_debugger::tree::TreeConfig::default())
                .map_err(|e| anyhow::anyhow!("{flag}: {e}"))?;
        }
    }
    let plan = ScreenshotPlan {
        compare: args.compare.clone(),
        compare_a: args.compare_a.clone(),
        compare_engine_tree: args.compare_engine_tree,
        frame: args.frame,
        out: args.out.clone(),
        steps: args.steps,
        size: [args.size.0, args.size.1],
        select: args.select,
        layers,
        view: args.view,
        theme: args.theme,
        timeline: args.timeline,
        broadphase: args.broadphase.map(Into::into),
        advisor: (args.advisor
            || args.advisor_margin.is_some()
            || args.advisor_lookahead.is_some()
            || args.advisor_steps.is_some())
        .then(|| AdvisorGrid {
            margins: args.advisor_margin.clone(),
            lookaheads: args.advisor_lookahead.clone(),
            steps: args.advisor_steps,
        }),
    };
    run_screenshot(
        &args.scene,
        plan,
        Duration::from_secs(args.timeout_secs.max(1)),
    )
}

/// A grid's refusal without the field `sweep` names (the option is named instead).
fn sweep_message(e: sweep::SweepError) -> String {
    match e {
        sweep::SweepError::Grid { message, .. } => message,
        other => other.to_string(),
    }
}

/// `X0,Y0,X1,Y1`: four finite numbers, each max above its min.
fn parse_frame(text: &str) -> Result<[f32; 4], String> {
    let v: Vec<f32> = text
        .split(',')
        .map(|p| p.trim().parse::<f32>())
        .collect::<Result<_, _>>()
        .map_err(|e| format!("`{text}`: {e} (expected X0,Y0,X1,Y1)"))?;
    match v[..] {
        [x0, y0, x1, y1] if v.iter().all(|x| x.is_finite()) && x1 > x0 && y1 > y0 => {
            Ok([x0, y0, x1, y1])
        }
        _ => Err(format!(
            "`{text}`: expected four finite numbers X0,Y0,X1,Y1 with X1 > X0 and Y1 > Y0"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_and_refuse() {
        assert_eq!(parse_size("800x600"), Ok((800, 600)));
        assert!(parse_size("800").is_err());
        assert!(parse_size("10x600").is_err());
        assert!(parse_size("axb").is_err());
    }

    #[test]
    fn frames_parse_and_refuse() {
        assert_eq!(parse_frame("-1,2.5,3,4"), Ok([-1.0, 2.5, 3.0, 4.0]));
        for bad in ["1,2,3", "1,2,3,4,5", "3,0,1,4", "0,0,NaN,1", "a,b,c,d", ""] {
            assert!(parse_frame(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn views_and_themes_parse() {
        assert_eq!(parse_view("Tree"), Ok(ViewMode::Tree));
        assert!(parse_view("side").is_err());
        assert_eq!(parse_theme("light"), Ok(ThemeChoice::Light));
    }
}
