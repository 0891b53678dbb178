//! The live link's windows: "Listen for an engine" (the port, and whether engines on other
//! machines may connect, with a warning), then, while it listens or receives, the live window
//! with the status line and Stop. The job runs on its own thread and is polled each frame,
//! never waited on; once it has ended the window asks for [`Command::FinishLive`].

use eframe::egui;

use super::View;
use crate::commands::Command;
use crate::state::State;
use crate::stream::listen::DEFAULT_PORT;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;

/// How often the window redraws while live (the numbers move).
const REPAINT: Duration = Duration::from_millis(100);

/// The live windows; they keep the port and the "other machines" choice between openings.
pub struct LiveView {
    port: u16,
    open_to_network: bool,
    /// "Pause at the first missed pair" (on by default).
    pause_at_missed: bool,
    /// The engine and the step the view was held at for its first missed pair (once a
    /// session: Follow then follows).
    held_for_missed: Option<(SocketAddr, u64)>,
}

impl Default for LiveView {
    fn default() -> Self {
        LiveView {
            port: DEFAULT_PORT,
            open_to_network: false,
            pause_at_missed: true,
            held_for_missed: None,
        }
    }
}

impl LiveView {
    /// "Pause at the first missed pair": once our side has stepped to the step of the
    /// engine's first missed pair, the views hold it (once a session).
    fn hold_at_first_missed(
        &mut self,
        state: &State,
        job: &crate::live::LiveJob,
        status: &crate::live::LiveStatus,
        out: &mut Vec<Command>,
    ) {
        let (Some(peer), Some(first)) = (status.peer, status.first_missed) else {
            return;
        };
        if !self.pause_at_missed
            || self.held_for_missed == Some((peer, first))
            || state.live_held.is_some()
        {
            return;
        }
        let stepped = job
            .session()
            .as_ref()
            .is_some_and(|s| s.recording().last_step() >= first);
        if stepped {
            self.held_for_missed = Some((peer, first));
            out.push(Command::LiveShow(Some(first)));
        }
    }

    /// The address the form asks for.
    #[must_use]
    pub fn addr(&self) -> SocketAddr {
        let ip = if self.open_to_network {
            IpAddr::V4(Ipv4Addr::UNSPECIFIED)
        } else {
            IpAddr::V4(Ipv4Addr::LOCALHOST)
        };
        SocketAddr::new(ip, self.port)
    }
}

impl View for LiveView {
    fn ui(&mut self, ui: &mut egui::Ui, state: &State, out: &mut Vec<Command>) {
        let ctx = ui.ctx().clone();
        if state.dialogs.listen {
            let mut open = true;
            egui::Window::new("Listen for an engine")
                .collapsible(false)
                .resizable(false)
                .open(&mut open)
                .anchor(egui::Align2::CENTER_CENTER, egui::Vec2::ZERO)
                .show(&ctx, |ui| {
                    ui.label(
                        "An engine streams its boxes here through a recorder (Rust, C or \
                         Python; see docs/live.md). Every step it sends is kept; when it \
                         ends, or you stop, what arrived opens as a trace.",
                    );
                    ui.horizontal(|ui| {
                        ui.label("Port");
                        ui.add(egui::DragValue::new(&mut self.port).range(0..=65535))
                            .on_hover_text("0 picks any free port (the live window says which).");
                    });
                    ui.checkbox(
                        &mut self.open_to_network,
                        "Accept engines on other machines",
                    )
                    .on_hover_text(
                        "Off: this machine only (127.0.0.1). On: anyone who can reach the \
                             port can send boxes to the debugger.",
                    );
                    if self.open_to_network {
                        ui.colored_label(
                            ui.visuals().warn_fg_color,
                            "Open to the network: any machine that reaches this port can connect.",
                        );
                    }
                    ui.horizontal(|ui| {
                        if ui.button("Listen").clicked() {
                            out.push(Command::StartListening(self.addr()));
                        }
                        if ui.button("Cancel").clicked() {
                            out.push(Command::CloseListenDialog);
                        }
                    });
                });
            if !open {
                out.push(Command::CloseListenDialog);
            }
        }
        let Some(job) = &state.dialogs.live else {
            return;
        };
        ctx.request_repaint_after(REPAINT);
        let status = job.status();
        self.hold_at_first_missed(state, job, &status, out);
        let finished = job.has_finished() || job.ended();
        let mut stop = false;
        egui::Window::new("Live link")
            .collapsible(true)
            .resizable(false)
            .anchor(egui::Align2::RIGHT_TOP, egui::vec2(-12.0, 36.0))
            .show(&ctx, |ui| {
                ui.label(status.line());
                if status.peer.is_some() && status.steps > 0 {
                    ui.weak(format!("{} static boxes", status.statics));
                }
                follow_ui(ui, state, job, out);
                ui.checkbox(&mut self.pause_at_missed, "Pause at the first missed pair")
                    .on_hover_text(
                        "The views hold the step where the engine's broad phase first missed a \
                         pair (its pairs checked against its fat boxes as they arrive), while \
                         the engine and the recording go on.",
                    );
                if let Some(last) = status.refused.last() {
                    let n = status.refused_count;
                    ui.weak(format!(
                        "Refused {n} {} (not recorders, or a second engine while one is live); \
                         still listening.",
                        if n == 1 { "peer" } else { "peers" }
                    ))
                    .on_hover_text(status.refused.join("\n"));
                    ui.add(egui::Label::new(egui::RichText::new(last).weak().small()).wrap());
                }
                let label = if status.peer.is_some() {
                    "Stop and show"
                } else {
                    "Stop listening"
                };
                stop = ui
                    .add_enabled(!status.stopping, egui::Button::new(label))
                    .on_hover_text(
                        "Stop listening; the steps received so far of an engine streaming now \
                         open as a trace (its recorder counts the rest as lost and goes on). \
                         Sessions that ended are in File > Received sessions.",
                    )
                    .clicked();
            });
        if finished {
            out.push(Command::FinishLive);
        } else if stop {
            out.push(Command::StopListening);
        }
    }
}

/// While our side has a session of the received steps: "Follow the newest step", and a slider
/// to hold the view at any received step while the engine streams on.
fn follow_ui(ui: &mut egui::Ui, state: &State, job: &crate::live::LiveJob, out: &mut Vec<Command>) {
    let last = {
        let live = job.session();
        let Some(session) = live.as_ref() else {
            return;
        };
        session.recording().last_step()
    };
    let held = state.live_held.as_ref().map(|h| h.sim.step_index());
    ui.horizontal(|ui| {
        let mut follow = held.is_none();
        if ui
            .checkbox(&mut follow, "Follow the newest step")
            .on_hover_text(
                "Off: the views hold the step shown while the engine, the recording and our \
                 tree go on.",
            )
            .changed()
        {
            out.push(Command::LiveShow((!follow).then_some(last)));
        }
        let mut step = held.unwrap_or(last);
        if ui
            .add(egui::Slider::new(&mut step, 0..=last).text("step"))
            .on_hover_text("Hold the views at any received step our tree has stepped.")
            .changed()
        {
            out.push(Command::LiveShow(Some(step)));
        }
    });
    if let Some(at) = held {
        ui.weak(format!(
            "{} steps behind the newest",
            last.saturating_sub(at)
        ));
    }
}
