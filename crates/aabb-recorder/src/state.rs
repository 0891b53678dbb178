//! The receiving side's view of a stream: [`StreamState`] applies decoded frames in order,
//! checks the rules that span frames (frame order, step order, ids present or absent, static
//! against moving ids) and gives, for each STEP, the whole current set of boxes.

use std::io::Read;
use std::sync::Arc;

use crate::wire::{
    Bye, Decoder, EngineParts, Frame, Hello, KIND_HELLO, Limits, SECTION_FAT_BOXES, SECTION_PAIRS,
    StepFrame, WireBox, WireError, WireErrorKind,
};

/// What one STEP frame made of the set of moving boxes.
#[derive(Clone, Debug, PartialEq)]
pub struct StepUpdate {
    /// The recorder's step number.
    pub step: u64,
    /// Steps the recorder did not send between the previous STEP frame and this one (for
    /// the first, the steps before it: a recorder counts from 0).
    pub dropped_before: u64,
    /// Whether the frame was a keyframe.
    pub keyframe: bool,
    /// Ids that were not in the set before this step.
    pub appeared: u32,
    /// Ids whose box changed.
    pub moved: u32,
    /// Ids no longer in the set.
    pub gone: u32,
    /// The whole set of moving boxes after the step, sorted by id. Shared with the state: a
    /// step that changes nothing costs nothing, and the state copies the set only when it
    /// changes while a taker still holds it.
    pub boxes: Arc<Vec<WireBox>>,
    /// The engine's broad phase as the step's reserved sections gave it (each part `None`
    /// when not sent); every fat box's and pair's id is a box of the step (moving or static).
    pub engine: EngineParts,
}

/// A stream's state between frames: the handshake, the static boxes, the current set of
/// moving boxes (sorted by id) and where the stream is in its frame order.
///
/// [`StreamState::apply`] either applies a frame whole or refuses it and changes nothing, so
/// every step accepted before an error stays as it was.
pub struct StreamState {
    limits: Limits,
    hello: Option<Hello>,
    statics: Vec<WireBox>,
    static_seen: bool,
    boxes: Arc<Vec<WireBox>>,
    /// For each box of `boxes`, the last `generation` that touched it (moved or gone).
    stamps: Vec<u64>,
    generation: u64,
    last_step: Option<u64>,
    steps_received: u64,
    steps_dropped: u64,
    bye: Option<Bye>,
    /// The engine's parts of the last STEP (a section of length 0 repeats its part).
    last_parts: EngineParts,
    // Scratch space reused from step to step.
    moved_at: Vec<(usize, WireBox)>,
    gone_at: Vec<usize>,
}

impl StreamState {
    /// A state before any frame, refusing sets larger than `limits.max_step_boxes`.
    pub fn new(limits: Limits) -> Self {
        Self {
            limits,
            hello: None,
            statics: Vec::new(),
            static_seen: false,
            boxes: Arc::default(),
            stamps: Vec::new(),
            generation: 0,
            last_step: None,
            steps_received: 0,
            steps_dropped: 0,
            bye: None,
            last_parts: EngineParts::default(),
            moved_at: Vec::new(),
            gone_at: Vec::new(),
        }
    }

    /// The handshake, once received.
    pub fn hello(&self) -> Option<&Hello> {
        self.hello.as_ref()
    }

    /// The static boxes, sorted by id (empty when the stream sent none).
    pub fn statics(&self) -> &[WireBox] {
        &self.statics
    }

    /// The current set of moving boxes, sorted by id.
    pub fn boxes(&self) -> &[WireBox] {
        &self.boxes
    }

    /// The last step received.
    pub fn last_step(&self) -> Option<u64> {
        self.last_step
    }

    /// STEP frames received.
    pub fn steps_received(&self) -> u64 {
        self.steps_received
    }

    /// Steps the recorder dropped, as the gaps in the step numbers tell.
    pub fn steps_dropped(&self) -> u64 {
        self.steps_dropped
    }

    /// The BYE, once received: the stream ended cleanly.
    pub fn bye(&self) -> Option<&Bye> {
        self.bye.as_ref()
    }

    /// Reads frames from `decoder` and applies them until a STEP: its update, `Ok(None)` at
    /// the end of the stream, or the first error.
    pub fn next_step<R: Read>(
        &mut self,
        decoder: &mut Decoder<R>,
    ) -> Result<Option<StepUpdate>, WireError> {
        while let Some(frame) = decoder.next_frame()? {
            if let Some(update) = self.apply(frame, decoder.frame_offset())? {
                return Ok(Some(update));
            }
        }
        Ok(None)
    }

    /// Applies one frame read at byte `offset`: a STEP gives its update, other frames
    /// `Ok(None)`. A refused frame changes nothing.
    pub fn apply(&mut self, frame: Frame, offset: u64) -> Result<Option<StepUpdate>, WireError> {
        let step = match &frame {
            Frame::Step(s) => Some(s.step),
            _ => None,
        };
        let err = |kind| WireError { offset, step, kind };
        if self.bye.is_some() {
            return Err(err(WireErrorKind::AfterBye(frame.kind())));
        }
        if self.hello.is_none() && frame.kind() != KIND_HELLO {
            return Err(err(WireErrorKind::BeforeHello(frame.kind())));
        }
        match frame {
            Frame::Hello(h) => {
                if self.hello.is_some() {
                    return Err(err(WireErrorKind::SecondHello));
                }
                h.check().map_err(err)?;
                self.hello = Some(h);
                Ok(None)
            }
            Frame::Static(mut boxes) => {
                if self.static_seen {
                    return Err(err(WireErrorKind::SecondStatic));
                }
                if self.last_step.is_some() {
                    return Err(err(WireErrorKind::StaticAfterStep));
                }
                if boxes.len() as u64 > u64::from(self.limits.max_static_boxes) {
                    return Err(err(WireErrorKind::OverLimit {
                        what: "static boxes",
                        count: boxes.len() as u64,
                        limit: self.limits.max_static_boxes,
                    }));
                }
                self.check_boxes(&boxes).map_err(err)?;
                boxes.sort_by_key(|b| b.id);
                if let Some(w) = boxes.windows(2).find(|w| w[0].id == w[1].id) {
                    return Err(err(WireErrorKind::DuplicateStaticId(w[0].id)));
                }
                self.statics = boxes;
                self.static_seen = true;
                Ok(None)
            }
            Frame::Step(s) => self.apply_step(s).map(Some).map_err(err),
            Frame::Bye(b) => {
                self.bye = Some(b);
                Ok(None)
            }
            Frame::Skipped { .. } => Ok(None),
        }
    }

    fn dims(&self) -> u8 {
        self.hello.as_ref().map_or(3, |h| h.dimensions)
    }

    /// The per-box rules, for frames that did not come through a [`Decoder`].
    fn check_boxes(&self, boxes: &[WireBox]) -> Result<(), WireErrorKind> {
        let dims = self.dims();
        boxes.iter().try_for_each(|b| b.check(dims))
    }

    fn is_static(&self, id: u32) -> bool {
        self.statics.binary_search_by_key(&id, |b| b.id).is_ok()
    }

    fn apply_step(&mut self, mut s: StepFrame) -> Result<StepUpdate, WireErrorKind> {
        if let Some(previous) = self.last_step
            && s.step <= previous
        {
            return Err(WireErrorKind::StepOrder { previous });
        }
        if self.last_step.is_none() && !s.keyframe {
            return Err(WireErrorKind::FirstStepNotKeyframe);
        }
        let total = (s.appeared.len() + s.moved.len() + s.gone.len()) as u64;
        let limit = self.limits.max_step_boxes;
        if total > u64::from(limit) {
            return Err(WireErrorKind::OverLimit {
                what: "boxes in a step",
                count: total,
                limit,
            });
        }
        self.check_boxes(&s.appeared)?;
        self.check_boxes(&s.moved)?;
        s.appeared.sort_by_key(|b| b.id);
        if let Some(w) = s.appeared.windows(2).find(|w| w[0].id == w[1].id) {
            return Err(WireErrorKind::DuplicateId(w[0].id));
        }
        if let Some(b) = s.appeared.iter().find(|b| self.is_static(b.id)) {
            return Err(WireErrorKind::StaticId(b.id));
        }
        let engine = self.engine_parts(&s)?;
        let (appeared, moved, gone) = if s.keyframe {
            if !s.moved.is_empty() || !s.gone.is_empty() {
                return Err(WireErrorKind::KeyframeWithChanges);
            }
            let counts = diff_counts(&self.boxes, &s.appeared);
            self.boxes = Arc::new(s.appeared);
            self.stamps.clear();
            self.stamps.resize(self.boxes.len(), 0);
            counts
        } else {
            self.apply_delta(&s)?
        };
        let dropped_before = match self.last_step {
            Some(previous) => s.step - previous - 1,
            None => s.step,
        };
        self.last_step = Some(s.step);
        self.steps_received += 1;
        self.last_parts = engine.clone();
        self.steps_dropped += dropped_before;
        Ok(StepUpdate {
            step: s.step,
            dropped_before,
            keyframe: s.keyframe,
            appeared,
            moved,
            gone,
            boxes: Arc::clone(&self.boxes),
            engine,
        })
    }

    /// Decodes the step's reserved sections and checks that every fat box's and pair's id is
    /// a box of the step once applied (`s.appeared` is sorted), a fat box at most once.
    fn engine_parts(&self, s: &StepFrame) -> Result<EngineParts, WireErrorKind> {
        let parts =
            EngineParts::from_sections(&s.sections, self.dims(), &self.limits, &self.last_parts)?;
        if parts.fat_boxes.is_none() && parts.pairs.is_none() {
            return Ok(parts);
        }
        let mut gone = s.gone.clone();
        gone.sort_unstable();
        let present = |id: u32| {
            self.is_static(id)
                || s.appeared.binary_search_by_key(&id, |b| b.id).is_ok()
                || (!s.keyframe
                    && self.boxes.binary_search_by_key(&id, |b| b.id).is_ok()
                    && gone.binary_search(&id).is_err())
        };
        let unknown = |tag: u8, what: String, id: u32| WireErrorKind::Section {
            tag,
            detail: format!("{what}: id {id} is not a box of the step"),
        };
        if let Some(fat) = &parts.fat_boxes {
            if let Some(b) = fat.iter().find(|b| !present(b.id)) {
                return Err(unknown(
                    SECTION_FAT_BOXES,
                    format!("the fat box of id {}", b.id),
                    b.id,
                ));
            }
            let mut ids: Vec<u32> = fat.iter().map(|b| b.id).collect();
            ids.sort_unstable();
            if let Some(w) = ids.windows(2).find(|w| w[0] == w[1]) {
                return Err(WireErrorKind::Section {
                    tag: SECTION_FAT_BOXES,
                    detail: format!("id {} twice", w[0]),
                });
            }
        }
        if let Some(pairs) = &parts.pairs {
            for &[a, b] in pairs {
                for id in [a, b] {
                    if !present(id) {
                        return Err(unknown(SECTION_PAIRS, format!("pair ({a}, {b})"), id));
                    }
                }
            }
        }
        Ok(parts)
    }

    /// Checks a delta against the set before it, then applies it; `s.appeared` is sorted.
    fn apply_delta(&mut self, s: &StepFrame) -> Result<(u32, u32, u32), WireErrorKind> {
        self.generation += 1;
        let generation = self.generation;
        let mut moved_at = std::mem::take(&mut self.moved_at);
        let mut gone_at = std::mem::take(&mut self.gone_at);
        moved_at.clear();
        gone_at.clear();
        let mut hint = 0;
        for b in &s.moved {
            let i = self
                .find(b.id, &mut hint)
                .ok_or(WireErrorKind::NotPresent {
                    list: "moved",
                    id: b.id,
                })?;
            if self.stamps[i] == generation {
                return Err(WireErrorKind::DuplicateId(b.id));
            }
            self.stamps[i] = generation;
            moved_at.push((i, *b));
        }
        hint = 0;
        for &id in &s.gone {
            let i = self
                .find(id, &mut hint)
                .ok_or(WireErrorKind::NotPresent { list: "gone", id })?;
            if self.stamps[i] == generation {
                return Err(WireErrorKind::DuplicateId(id));
            }
            self.stamps[i] = generation;
            gone_at.push(i);
        }
        hint = 0;
        for b in &s.appeared {
            if let Some(i) = self.find(b.id, &mut hint) {
                return Err(if self.stamps[i] == generation {
                    WireErrorKind::DuplicateId(b.id)
                } else {
                    WireErrorKind::AlreadyPresent(b.id)
                });
            }
        }
        let size = self.boxes.len() + s.appeared.len() - s.gone.len();
        if size as u64 > u64::from(self.limits.max_step_boxes) {
            return Err(WireErrorKind::OverLimit {
                what: "moving boxes",
                count: size as u64,
                limit: self.limits.max_step_boxes,
            });
        }
        // Everything is checked: apply.
        if !moved_at.is_empty() {
            // In place, unless the last step's taker still holds the set.
            let boxes = Arc::make_mut(&mut self.boxes);
            for &(i, b) in &moved_at {
                boxes[i] = b;
            }
        }
        if !gone_at.is_empty() || !s.appeared.is_empty() {
            gone_at.sort_unstable();
            let mut merged = Vec::with_capacity(size);
            let mut gone = gone_at.iter().peekable();
            let mut new = s.appeared.iter().peekable();
            for (i, b) in self.boxes.iter().enumerate() {
                if gone.peek() == Some(&&i) {
                    gone.next();
                    continue;
                }
                while let Some(a) = new.next_if(|a| a.id < b.id) {
                    merged.push(*a);
                }
                merged.push(*b);
            }
            merged.extend(new.copied());
            self.boxes = Arc::new(merged);
            self.stamps.clear();
            self.stamps.resize(self.boxes.len(), 0);
        }
        let counts = (
            s.appeared.len() as u32,
            moved_at.len() as u32,
            gone_at.len() as u32,
        );
        self.moved_at = moved_at;
        self.gone_at = gone_at;
        Ok(counts)
    }

    /// The index of `id` in the set; `hint` (the index after the last found) makes ids in
    /// ascending order cost O(1) each.
    fn find(&self, id: u32, hint: &mut usize) -> Option<usize> {
        let boxes = &self.boxes;
        let start = if *hint < boxes.len() && boxes[*hint].id <= id {
            *hint
        } else {
            0
        };
        // Gallop from `start`, then search the bracket found.
        let mut lo = start;
        let mut step = 1;
        let mut hi = start;
        while hi < boxes.len() && boxes[hi].id < id {
            lo = hi;
            hi = start + step;
            step *= 2;
        }
        let hi = hi.min(boxes.len());
        let i = lo + boxes[lo..hi].partition_point(|b| b.id < id);
        if i < boxes.len() && boxes[i].id == id {
            *hint = i + 1;
            Some(i)
        } else {
            None
        }
    }
}

/// How a keyframe `new` changes `old` (both sorted by id): ids appeared, moved, gone.
fn diff_counts(old: &[WireBox], new: &[WireBox]) -> (u32, u32, u32) {
    let (mut appeared, mut moved, mut gone) = (0, 0, 0);
    let (mut i, mut j) = (0, 0);
    while i < old.len() || j < new.len() {
        match (old.get(i), new.get(j)) {
            (Some(a), Some(b)) if a.id == b.id => {
                if !a.same_bits(b) {
                    moved += 1;
                }
                i += 1;
                j += 1;
            }
            (Some(a), Some(b)) if a.id < b.id => {
                gone += 1;
                i += 1;
            }
            (Some(_), None) => {
                gone += 1;
                i += 1;
            }
            _ => {
                appeared += 1;
                j += 1;
            }
        }
    }
    (appeared, moved, gone)
}
