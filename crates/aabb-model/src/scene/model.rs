//! The file form of a scene (format 1): serde structs whose field names are the file's, with
//! unknown fields refused, vectors of 2 or 3 numbers, and the conversion to and from [`Scene`].

use super::{FORMAT_VERSION, Generate, Scene, SceneError, Sphere, StaticBox, ViewSettings};
use crate::tree::{Aabb, TreeConfig};
use glam::Vec3;
use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::ser::{SerializeTuple, Serializer};
use serde::{Deserialize, Serialize};
use std::fmt;

/// The default `dt` when a file leaves it out: one 60th of a second.
pub(crate) const DEFAULT_DT_SECS: f32 = 1.0 / 60.0;

/// A vector as written in a file: 2 or 3 numbers (RON tuple `(1.0, 2.0)`, JSON array).
/// The length is checked against `dimensions` after parsing, so the message can say where.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct FileVec(pub Vec<f32>);

impl FileVec {
    /// The first `dims` components of `v`.
    pub fn from_vec3(v: Vec3, dims: u8) -> Self {
        Self(v.to_array()[..usize::from(dims.clamp(2, 3))].to_vec())
    }
}

impl Serialize for FileVec {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut t = serializer.serialize_tuple(self.0.len())?;
        for x in &self.0 {
            t.serialize_element(x)?;
        }
        t.end()
    }
}

impl<'de> Deserialize<'de> for FileVec {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = FileVec;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a vector of 2 or 3 numbers, like (1.0, 2.0)")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<FileVec, A::Error> {
                let mut out = Vec::new();
                while let Some(x) = seq.next_element::<f32>()? {
                    if out.len() == 8 {
                        return Err(de::Error::invalid_length(9, &self));
                    }
                    out.push(x);
                }
                Ok(FileVec(out))
            }
        }
        deserializer.deserialize_tuple(3, V)
    }
}

/// `label: "5"` in a file (a plain string), `Option<String>` in the model.
fn label_de<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    String::deserialize(d).map(Some)
}

fn label_ser<S: Serializer>(label: &Option<String>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(label.as_deref().unwrap_or_default())
}

/// `velocity: (1.0, 0.0)` in a file (a plain vector), optional in the file form.
fn velocity_de<'de, D: Deserializer<'de>>(d: D) -> Result<Option<FileVec>, D::Error> {
    FileVec::deserialize(d).map(Some)
}

/// Writes `velocity` the way [`velocity_de`] reads it: the bare vector, not `Some(..)`.
fn velocity_ser<S: Serializer>(v: &Option<FileVec>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(v) => v.serialize(s),
        None => s.serialize_none(),
    }
}

/// `disappear_at`: accepts `None`, `Some(30)` or a bare `30` (and JSON `null` or `30`).
fn optional_step_de<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    struct V;
    impl<'de> Visitor<'de> for V {
        type Value = Option<u64>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a step number >= 0, or None")
        }
        fn visit_none<E: de::Error>(self) -> Result<Option<u64>, E> {
            Ok(None)
        }
        fn visit_unit<E: de::Error>(self) -> Result<Option<u64>, E> {
            Ok(None)
        }
        fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<Option<u64>, D2::Error> {
            u64::deserialize(d).map(Some)
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<Option<u64>, E> {
            Ok(Some(v))
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<Option<u64>, E> {
            u64::try_from(v)
                .map(Some)
                .map_err(|_| E::invalid_value(de::Unexpected::Signed(v), &self))
        }
    }
    d.deserialize_any(V)
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

fn default_dt() -> f32 {
    DEFAULT_DT_SECS
}

/// The whole file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename = "scene", deny_unknown_fields)]
pub(crate) struct SceneFile {
    pub format_version: u32,
    #[serde(default)]
    pub name: String,
    pub dimensions: u8,
    pub world: WorldFile,
    #[serde(default = "default_dt")]
    pub dt: f32,
    #[serde(default)]
    pub tree: TreeConfig,
    #[serde(default)]
    pub spheres: Vec<SphereFile>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub boxes: Vec<BoxFile>,
    #[serde(default)]
    pub generate: Option<GenerateFile>,
    #[serde(default)]
    pub view: Option<ViewSettings>,
}

/// `world: (min: (..), max: (..))`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename = "world", deny_unknown_fields)]
pub(crate) struct WorldFile {
    pub min: FileVec,
    pub max: FileVec,
}

/// One listed sphere.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename = "sphere", deny_unknown_fields)]
pub(crate) struct SphereFile {
    pub id: u32,
    #[serde(
        default,
        deserialize_with = "label_de",
        serialize_with = "label_ser",
        skip_serializing_if = "Option::is_none"
    )]
    pub label: Option<String>,
    pub center: FileVec,
    pub radius: f32,
    #[serde(
        default,
        deserialize_with = "velocity_de",
        serialize_with = "velocity_ser",
        skip_serializing_if = "Option::is_none"
    )]
    pub velocity: Option<FileVec>,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub appear_at: u64,
    #[serde(
        default,
        deserialize_with = "optional_step_de",
        skip_serializing_if = "Option::is_none"
    )]
    pub disappear_at: Option<u64>,
}

/// One static box: `(id: 3, min: (0.0, 0.0), max: (4.0, 1.0))`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename = "box", deny_unknown_fields)]
pub(crate) struct BoxFile {
    pub id: u32,
    pub min: FileVec,
    pub max: FileVec,
}

/// `generate: Some((count: .., radius: (min, max), speed: (min, max), seed: .., density: ..))`
/// (`density` optional).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename = "generate", deny_unknown_fields)]
pub(crate) struct GenerateFile {
    pub count: u32,
    pub radius: (f32, f32),
    pub speed: (f32, f32),
    pub seed: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub density: Option<f32>,
}

/// Just `format_version`, read leniently first so a newer file gets the right message.
#[derive(Deserialize)]
pub(crate) struct VersionProbe {
    #[serde(default)]
    pub format_version: u32,
}

/// Formats numbers the way messages show them: `(3, 4)`.
pub(crate) fn fmt_numbers(xs: &[f32]) -> String {
    let parts: Vec<String> = xs.iter().map(|&x| crate::text::short_f32(x)).collect();
    format!("({})", parts.join(", "))
}

/// A file vector as a `Vec3` after checking it has `dims` numbers; `what` names it.
fn to_vec3(v: &FileVec, dims: u8, what: &str) -> Result<Vec3, String> {
    if v.0.len() != usize::from(dims) {
        return Err(format!(
            "{what} must have {dims} numbers (dimensions is {dims}), got {} {}",
            v.0.len(),
            fmt_numbers(&v.0)
        ));
    }
    let mut a = [0.0; 3];
    a[..v.0.len()].copy_from_slice(&v.0);
    Ok(Vec3::from_array(a))
}

impl SceneFile {
    /// The model, after checking `dimensions` and every vector's length. Other rules are
    /// [`Scene::validate`]'s.
    pub fn into_scene(self, file: &str) -> Result<Scene, SceneError> {
        let invalid = |message: String| SceneError::Invalid {
            file: file.to_owned(),
            message,
        };
        if self.format_version > FORMAT_VERSION {
            return Err(invalid(newer_message(self.format_version)));
        }
        let dims = self.dimensions;
        if dims != 2 && dims != 3 {
            return Err(invalid(format!("dimensions must be 2 or 3, got {dims}")));
        }
        let world = Aabb::new(
            to_vec3(&self.world.min, dims, "world.min").map_err(invalid)?,
            to_vec3(&self.world.max, dims, "world.max").map_err(invalid)?,
        );
        let mut spheres = Vec::with_capacity(self.spheres.len());
        for (i, s) in self.spheres.into_iter().enumerate() {
            let at = |e: String| invalid(format!("spheres[{i}] (id {}): {e}", s.id));
            let center = to_vec3(&s.center, dims, "center").map_err(at)?;
            let velocity = match &s.velocity {
                Some(v) => to_vec3(v, dims, "velocity").map_err(at)?,
                None => Vec3::ZERO,
            };
            spheres.push(Sphere {
                id: s.id,
                label: s.label,
                center,
                radius: s.radius,
                velocity,
                appear_at: s.appear_at,
                disappear_at: s.disappear_at,
            });
        }
        let mut boxes = Vec::with_capacity(self.boxes.len());
        for (i, b) in self.boxes.iter().enumerate() {
            let at = |e: String| invalid(format!("boxes[{i}] (id {}): {e}", b.id));
            boxes.push(StaticBox {
                id: b.id,
                min: to_vec3(&b.min, dims, "min").map_err(at)?,
                max: to_vec3(&b.max, dims, "max").map_err(at)?,
            });
        }
        Ok(Scene {
            format_version: self.format_version,
            name: self.name,
            dimensions: dims,
            world,
            dt: self.dt,
            tree: self.tree,
            spheres,
            boxes,
            generate: self.generate.map(|g| Generate {
                count: g.count,
                radius: g.radius,
                speed: g.speed,
                seed: g.seed,
                density: g.density,
            }),
            view: self.view,
        })
    }

    /// The file form of a scene (vectors cut to `dimensions` numbers).
    pub fn from_scene(scene: &Scene) -> Self {
        let dims = scene.dimensions;
        Self {
            format_version: FORMAT_VERSION,
            name: scene.name.clone(),
            dimensions: dims,
            world: WorldFile {
                min: FileVec::from_vec3(scene.world.min, dims),
                max: FileVec::from_vec3(scene.world.max, dims),
            },
            dt: scene.dt,
            tree: scene.tree,
            spheres: scene
                .spheres
                .iter()
                .map(|s| SphereFile {
                    id: s.id,
                    label: s.label.clone(),
                    center: FileVec::from_vec3(s.center, dims),
                    radius: s.radius,
                    velocity: Some(FileVec::from_vec3(s.velocity, dims)),
                    appear_at: s.appear_at,
                    disappear_at: s.disappear_at,
                })
                .collect(),
            boxes: scene
                .boxes
                .iter()
                .map(|b| BoxFile {
                    id: b.id,
                    min: FileVec::from_vec3(b.min, dims),
                    max: FileVec::from_vec3(b.max, dims),
                })
                .collect(),
            generate: scene.generate.map(|g| GenerateFile {
                count: g.count,
                radius: g.radius,
                speed: g.speed,
                seed: g.seed,
                density: g.density,
            }),
            view: scene.view.clone(),
        }
    }
}

/// The message for a file newer than this build.
pub(crate) fn newer_message(version: u32) -> String {
    format!(
        "this file needs a newer aabb-debugger (format_version {version}; this build reads \
         format_version {FORMAT_VERSION})"
    )
}
