//! Writes a seeded level-like box set as a box list (one box a line, `minx miny minz maxx maxy
//! maxz` in 3D, `minx miny maxx maxy` in 2D), the input of `aabb-debugger quality`:
//!
//! ```text
//! cargo run -p dynamic-aabb-tree --example level_boxes -- tiled  [SEED] > tiled.boxes
//! cargo run -p dynamic-aabb-tree --example level_boxes -- city   [SEED] > city.boxes
//! cargo run -p dynamic-aabb-tree --example level_boxes -- forest [SEED] > forest.boxes
//! cargo run -p dynamic-aabb-tree --example level_boxes -- pyramid       > pyramid.boxes
//! ```
//!
//! The sets (z is up, units are metres; the seed defaults to 1):
//!
//! - `tiled`: a dungeon floor of 48 x 48 unit tiles (flat boxes 0.1 thick) cut into rooms of
//!   8 x 8 tiles by walls of unit segments (0.2 thick, 3 high) with a door of two segments
//!   left out of every inner wall of a room, and up to 300 crates (cubes 0.5 to 1 wide) on
//!   random tiles off the wall lines; many flat boxes side by side.
//! - `city`: 14 x 14 blocks of 24 m with streets of 8 m between them (one flat road box a
//!   block side and one at each crossing); each block holds 2 to 4 x 2 to 4 lots with a
//!   building each (5 to 60 m high, the tallest tenth with a narrower tower on top), and a
//!   flat pavement box around each block.
//! - `forest`: 40 clumps of trees scattered on a 200 m square (clump centres uniform, trees
//!   normal around them, 8 m spread), 50 trees a clump: a trunk (0.3 to 0.6 m wide, 2 to 8 m
//!   high) and a canopy box (2 to 6 m wide) on top, a second, smaller canopy on a third of
//!   them; and a 20 x 20 grid of flat ground tiles of 10 m.
//! - `pyramid`: Box2D's pyramid of 33 unit boxes in 2D (rows of 8, 7, ..., 3, each shifted half
//!   a box right and resting on the one below), left to right, bottom to top.
//!
//! Each set is the same for the same seed on every machine (splitmix64, numbers printed with
//! Rust's shortest round-trip formatting).

#[path = "../tests/common/shared.rs"]
mod shared;

use shared::SplitMix;
use std::fmt::Write as _;
use std::io::Write as _;

/// A 3D box: min and max corners.
type Box3 = ([f32; 3], [f32; 3]);

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let seed = match args.get(1).map(|s| s.parse::<u64>()) {
        None => 1,
        Some(Ok(seed)) => seed,
        Some(Err(_)) => return usage("the seed must be a whole number"),
    };
    let mut rng = SplitMix(seed);
    let text = match args.first().map(String::as_str) {
        Some("tiled") => list_3d("tiled level", seed, &tiled(&mut rng)),
        Some("city") => list_3d("city", seed, &city(&mut rng)),
        Some("forest") => list_3d("forest", seed, &forest(&mut rng)),
        Some("pyramid") => pyramid(),
        _ => return usage("which set?"),
    };
    if let Err(e) = std::io::stdout().write_all(text.as_bytes()) {
        eprintln!("level_boxes: {e}");
        std::process::exit(1);
    }
}

/// Prints how to call the example and exits with code 2.
fn usage(what: &str) {
    eprintln!("level_boxes: {what}\nusage: level_boxes tiled|city|forest [SEED] | pyramid");
    std::process::exit(2);
}

/// A box from its min corner and its size.
fn sized(min: [f32; 3], size: [f32; 3]) -> Box3 {
    (min, [min[0] + size[0], min[1] + size[1], min[2] + size[2]])
}

/// The boxes as a box list, after a comment line naming the set.
fn list_3d(name: &str, seed: u64, boxes: &[Box3]) -> String {
    let mut out = format!("# {name}, seed {seed}: {} boxes\n", boxes.len());
    for (min, max) in boxes {
        let _ = writeln!(
            out,
            "{} {} {} {} {} {}",
            min[0], min[1], min[2], max[0], max[1], max[2]
        );
    }
    out
}

/// The tiled level (see the module docs).
fn tiled(rng: &mut SplitMix) -> Vec<Box3> {
    const SIDE: i32 = 48;
    const ROOM: i32 = 8;
    const WALL: f32 = 0.2;
    let mut boxes = Vec::new();
    for y in 0..SIDE {
        for x in 0..SIDE {
            boxes.push(sized([x as f32, y as f32, -0.1], [1.0, 1.0, 0.1]));
        }
    }
    // Walls along x = k * ROOM (vertical lines) and y = k * ROOM, one segment a tile; each
    // inner wall of a room has a door two segments wide at a random place.
    for line in 0..=SIDE / ROOM {
        let at = (line * ROOM) as f32 - WALL / 2.0;
        let inner = line > 0 && line < SIDE / ROOM;
        for horizontal in [false, true] {
            for room in 0..SIDE / ROOM {
                let door = if inner { rng.int(0, ROOM - 2) } else { -10 };
                for k in 0..ROOM {
                    if k == door || k == door + 1 {
                        continue;
                    }
                    let along = (room * ROOM + k) as f32;
                    boxes.push(if horizontal {
                        sized([along, at, 0.0], [1.0, WALL, 3.0])
                    } else {
                        sized([at, along, 0.0], [WALL, 1.0, 3.0])
                    });
                }
            }
        }
    }
    // Crates on about 300 tiles, off the walls.
    for _ in 0..300 {
        let (x, y) = (rng.int(0, SIDE - 1), rng.int(0, SIDE - 1));
        if x % ROOM == 0 || y % ROOM == 0 {
            continue;
        }
        let s = rng.uniform(0.5, 1.0);
        let (ox, oy) = (rng.uniform(0.0, 1.0 - s), rng.uniform(0.0, 1.0 - s));
        boxes.push(sized([x as f32 + ox, y as f32 + oy, 0.0], [s, s, s]));
    }
    boxes
}

/// The city (see the module docs).
fn city(rng: &mut SplitMix) -> Vec<Box3> {
    const BLOCKS: i32 = 14;
    const BLOCK: f32 = 24.0;
    const STREET: f32 = 8.0;
    const PAVEMENT: f32 = 2.0;
    let pitch = BLOCK + STREET;
    let mut boxes = Vec::new();
    for by in 0..BLOCKS {
        for bx in 0..BLOCKS {
            let (x0, y0) = (bx as f32 * pitch, by as f32 * pitch);
            // Roads: the street east and north of the block, and their crossing.
            boxes.push(sized([x0 + BLOCK, y0, -0.2], [STREET, BLOCK, 0.2]));
            boxes.push(sized([x0, y0 + BLOCK, -0.2], [BLOCK, STREET, 0.2]));
            boxes.push(sized([x0 + BLOCK, y0 + BLOCK, -0.2], [STREET, STREET, 0.2]));
            // The pavement, one flat box under the block.
            boxes.push(sized([x0, y0, -0.1], [BLOCK, BLOCK, 0.1]));
            // Lots and their buildings.
            let (nx, ny) = (rng.int(2, 4), rng.int(2, 4));
            let inner = BLOCK - 2.0 * PAVEMENT;
            let (lx, ly) = (inner / nx as f32, inner / ny as f32);
            for j in 0..ny {
                for i in 0..nx {
                    let gap = rng.uniform(0.5, 2.0);
                    let min = [
                        x0 + PAVEMENT + i as f32 * lx + gap / 2.0,
                        y0 + PAVEMENT + j as f32 * ly + gap / 2.0,
                        0.0,
                    ];
                    let height = rng.uniform(5.0, 60.0);
                    let (w, d) = (lx - gap, ly - gap);
                    boxes.push(sized(min, [w, d, height]));
                    if height > 54.5 {
                        let tower = rng.uniform(10.0, 40.0);
                        let (tw, td) = (w * 0.5, d * 0.5);
                        let tmin = [min[0] + (w - tw) / 2.0, min[1] + (d - td) / 2.0, height];
                        boxes.push(sized(tmin, [tw, td, tower]));
                    }
                }
            }
        }
    }
    boxes
}

/// A normal sample (Box-Muller) of mean 0 and deviation 1.
fn normal(rng: &mut SplitMix) -> f32 {
    let u = rng.uniform(f32::EPSILON, 1.0);
    let v = rng.uniform(0.0, 1.0);
    (-2.0 * u.ln()).sqrt() * (std::f32::consts::TAU * v).cos()
}

/// The forest (see the module docs).
fn forest(rng: &mut SplitMix) -> Vec<Box3> {
    const SIDE: f32 = 200.0;
    let mut boxes = Vec::new();
    for j in 0..20 {
        for i in 0..20 {
            boxes.push(sized(
                [i as f32 * 10.0, j as f32 * 10.0, -0.2],
                [10.0, 10.0, 0.2],
            ));
        }
    }
    for _ in 0..40 {
        let (cx, cy) = (
            rng.uniform(10.0, SIDE - 10.0),
            rng.uniform(10.0, SIDE - 10.0),
        );
        for _ in 0..50 {
            let x = (cx + 8.0 * normal(rng)).clamp(1.0, SIDE - 1.0);
            let y = (cy + 8.0 * normal(rng)).clamp(1.0, SIDE - 1.0);
            let trunk = rng.uniform(0.3, 0.6);
            let height = rng.uniform(2.0, 8.0);
            boxes.push(sized(
                [x - trunk / 2.0, y - trunk / 2.0, 0.0],
                [trunk, trunk, height],
            ));
            let crown = rng.uniform(2.0, 6.0);
            let depth = rng.uniform(1.5, 4.0);
            let base = height - 0.5;
            boxes.push(sized(
                [x - crown / 2.0, y - crown / 2.0, base],
                [crown, crown, depth],
            ));
            if rng.index(3) == 0 {
                let top = crown * 0.6;
                boxes.push(sized(
                    [x - top / 2.0, y - top / 2.0, base + depth],
                    [top, top, depth * 0.6],
                ));
            }
        }
    }
    boxes
}

/// Box2D's pyramid as a 2D box list.
fn pyramid() -> String {
    let mut out = String::from("# Box2D's pyramid: 33 unit boxes, left to right, bottom to top\n");
    for row in 0..6u8 {
        for i in 0..(8 - row) {
            let x = 0.5 * f32::from(row) + f32::from(i);
            let y = f32::from(row);
            let _ = writeln!(out, "{x} {y} {} {}", x + 1.0, y + 1.0);
        }
    }
    out
}
