//! Box2D's tree through the safe API: random proxies created, moved, enlarged and destroyed
//! with `b2DynamicTree_Validate` after every operation (these tests build Box2D with
//! `BOX2D_VALIDATE`), queries equal to brute force as exact sets, the nodes read equal to
//! what `b2DynamicTree_GetHeight` and `GetAreaRatio` say, and the refusals.

use box2d_tree::{ALL_BITS, Box2, NodeKind, Tree, TreeError};
use glam::Vec2;
use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64;
use std::collections::BTreeMap;

/// A random box in `[0, 100]²`, sides 0 to 4.
fn random_box(rng: &mut Pcg64) -> Box2 {
    let c = Vec2::new(rng.random_range(0.0..100.0), rng.random_range(0.0..100.0));
    let h = Vec2::new(rng.random_range(0.0..2.0), rng.random_range(0.0..2.0));
    Box2::new(c - h, c + h)
}

/// The proxies a query reports, sorted, as `(proxy, user data)`.
fn queried(tree: &Tree, q: Box2, mask: u64) -> Vec<(u32, u64)> {
    let mut out = Vec::new();
    tree.query(q, mask, |p, u| {
        out.push((p, u));
        true
    })
    .expect("a shallow tree");
    out.sort_unstable();
    out
}

/// Checks the tree against the model (proxy -> (box, user data, category)): Box2D's own
/// validation, the proxy count, every leaf read from the nodes, the shape read from the
/// nodes against Box2D's height and area ratio (exactly), and one query against brute force.
fn check(tree: &Tree, model: &BTreeMap<u32, (Box2, u64, u64)>, rng: &mut Pcg64) {
    assert!(
        box2d_tree::validation_enabled(),
        "the tests build Box2D with BOX2D_VALIDATE"
    );
    tree.validate();
    assert_eq!(tree.proxy_count() as usize, model.len());
    let walked = tree.walk().expect("a sound tree");
    let mut leaves = BTreeMap::new();
    for (index, node) in &walked {
        match node.kind {
            NodeKind::Leaf { user_data } => {
                assert_eq!(node.height, 0);
                leaves.insert(*index, (node.aabb, user_data, node.category_bits));
            }
            NodeKind::Internal { child1, child2 } => {
                let (a, b) = (
                    tree.node(child1).expect("child"),
                    tree.node(child2).expect("child"),
                );
                assert!(node.aabb.contains(&a.aabb) && node.aabb.contains(&b.aabb));
                assert_eq!(node.height, 1 + a.height.max(b.height));
                assert_eq!(node.category_bits, a.category_bits | b.category_bits);
            }
        }
    }
    assert_eq!(&leaves, model, "the leaves read are the proxies made");
    let shape = tree.shape().expect("a sound tree");
    assert_eq!(
        shape.height,
        tree.height(),
        "height read = b2DynamicTree_GetHeight"
    );
    assert_eq!(
        shape.area_ratio.to_bits(),
        tree.area_ratio().to_bits(),
        "area ratio read ({}) = b2DynamicTree_GetAreaRatio ({})",
        shape.area_ratio,
        tree.area_ratio()
    );
    assert_eq!(shape.leaves, model.len());
    assert_eq!(shape.nodes as u32, tree.node_count());
    let q = {
        let b = random_box(rng);
        Box2::new(b.min - Vec2::splat(5.0), b.max + Vec2::splat(5.0))
    };
    for mask in [ALL_BITS, 2] {
        let expected: Vec<(u32, u64)> = model
            .iter()
            .filter(|(_, (b, _, cat))| b.overlaps(&q) && cat & mask != 0)
            .map(|(&p, &(_, u, _))| (p, u))
            .collect();
        assert_eq!(queried(tree, q, mask), expected, "query {q:?}, mask {mask}");
    }
}

/// 3,000 random operations (create, move, enlarge, destroy, partial and full rebuild) on up to
/// a few hundred proxies, checked after every one.
#[test]
fn random_operations_keep_the_tree_valid_and_queries_exact() {
    let mut rng = Pcg64::seed_from_u64(36);
    let mut tree = Tree::new();
    let mut model: BTreeMap<u32, (Box2, u64, u64)> = BTreeMap::new();
    let mut next_user = 1000u64;
    let (mut enlarged, mut rebuilt) = (0, 0);
    for op in 0..3000 {
        let roll = rng.random_range(0..100);
        let some_proxy = |rng: &mut Pcg64, model: &BTreeMap<u32, _>| {
            let k = rng.random_range(0..model.len());
            *model.keys().nth(k).expect("k < len")
        };
        if model.is_empty() || roll < 35 {
            let b = random_box(&mut rng);
            let cat = if rng.random_range(0..3) == 0 { 2 } else { 1 };
            let p = tree.create_proxy(b, cat, next_user).expect("a valid box");
            assert!(
                model.insert(p, (b, next_user, cat)).is_none(),
                "op {op}: id {p} reused"
            );
            next_user += 1;
        } else if roll < 55 {
            let p = some_proxy(&mut rng, &model);
            let b = random_box(&mut rng);
            tree.move_proxy(p, b).expect("a live proxy");
            model.get_mut(&p).expect("live").0 = b;
        } else if roll < 80 {
            let p = some_proxy(&mut rng, &model);
            let old = model[&p].0;
            // Box2D's new fat box: shifted, so not inside the old one.
            let shift = Vec2::new(rng.random_range(0.1..3.0), rng.random_range(-3.0..3.0));
            let b = Box2::new(old.min + shift, old.max + shift);
            tree.enlarge_proxy(p, b)
                .expect("a live proxy, a box not inside");
            model.get_mut(&p).expect("live").0 = b;
            enlarged += 1;
        } else if roll < 95 {
            let p = some_proxy(&mut rng, &model);
            tree.destroy_proxy(p).expect("a live proxy");
            model.remove(&p);
        } else {
            rebuilt += tree.rebuild(roll == 99);
        }
        check(&tree, &model, &mut rng);
    }
    assert!(
        enlarged > 500 && rebuilt > 100,
        "{enlarged} enlarged, {rebuilt} sorted"
    );
    assert!(model.len() > 100, "{} proxies at the end", model.len());
}

/// After enlargements, nodes are flagged enlarged; a partial rebuild clears every flag and
/// keeps the proxies, their ids and boxes.
#[test]
fn enlarge_flags_nodes_and_a_partial_rebuild_clears_them() {
    let mut rng = Pcg64::seed_from_u64(5);
    let mut tree = Tree::new();
    let mut model = BTreeMap::new();
    for u in 0..200u64 {
        let b = random_box(&mut rng);
        model.insert(tree.create_proxy(b, 1, u).expect("valid"), (b, u, 1));
    }
    let ids: Vec<u32> = model.keys().copied().take(40).collect();
    for &p in &ids {
        let old = model[&p].0;
        let b = Box2::new(old.min + Vec2::splat(0.5), old.max + Vec2::splat(0.5));
        tree.enlarge_proxy(p, b).expect("live");
        model.get_mut(&p).expect("live").0 = b;
    }
    let flagged = |t: &Tree| {
        t.walk()
            .expect("sound")
            .iter()
            .filter(|(_, n)| n.enlarged)
            .count()
    };
    assert!(flagged(&tree) >= 40, "{} flagged", flagged(&tree));
    check(&tree, &model, &mut rng);
    assert!(tree.rebuild(false) > 0);
    assert_eq!(flagged(&tree), 0);
    check(&tree, &model, &mut rng);
}

/// A clone holds the same nodes at the same indices and, given the same operations, makes
/// the same proxy ids and the same nodes, also past the point where the pool grows.
#[test]
fn a_clone_steps_exactly_as_the_original() {
    let mut rng = Pcg64::seed_from_u64(9);
    let mut a = Tree::new();
    for u in 0..23u64 {
        a.create_proxy(random_box(&mut rng), 1, u).expect("valid");
    }
    a.destroy_proxy(3).ok();
    let mut b = a.clone();
    assert_eq!(a.walk(), b.walk());
    for u in 100..400u64 {
        let bx = random_box(&mut rng);
        let pa = a.create_proxy(bx, 1, u).expect("valid");
        let pb = b.create_proxy(bx, 1, u).expect("valid");
        assert_eq!(pa, pb, "proxy {u}");
        if u % 7 == 0 {
            a.destroy_proxy(pa).expect("live");
            b.destroy_proxy(pb).expect("live");
        }
        if u % 50 == 0 {
            assert_eq!(a.rebuild(false), b.rebuild(false));
        }
    }
    b.validate();
    assert_eq!(a.walk(), b.walk());
    assert_eq!(a.height(), b.height());
}

/// Bad boxes and proxy ids are refused with an error, and the tree is unchanged.
#[test]
fn bad_input_is_refused_not_asserted() {
    let mut tree = Tree::new();
    let b = Box2::new(Vec2::ZERO, Vec2::ONE);
    let p = tree.create_proxy(b, 1, 7).expect("valid");
    let nan = Box2::new(Vec2::new(f32::NAN, 0.0), Vec2::ONE);
    assert!(matches!(
        tree.create_proxy(nan, 1, 8),
        Err(TreeError::BadBox { .. })
    ));
    let inverted = Box2::new(Vec2::ONE, Vec2::ZERO);
    assert!(matches!(
        tree.move_proxy(p, inverted),
        Err(TreeError::BadBox { .. })
    ));
    let huge = Box2::new(Vec2::ZERO, Vec2::new(2.0e5, 1.0));
    assert!(matches!(
        tree.create_proxy(huge, 1, 8),
        Err(TreeError::BadBox { .. })
    ));
    assert_eq!(
        tree.destroy_proxy(p + 1),
        Err(TreeError::NoSuchProxy(p + 1))
    );
    assert_eq!(
        tree.destroy_proxy(1_000_000),
        Err(TreeError::NoSuchProxy(1_000_000))
    );
    assert_eq!(
        tree.move_proxy(u32::MAX, b),
        Err(TreeError::NoSuchProxy(u32::MAX))
    );
    let inside = Box2::new(Vec2::splat(0.25), Vec2::splat(0.75));
    assert_eq!(
        tree.enlarge_proxy(p, inside),
        Err(TreeError::NotEnlarged(p))
    );
    assert!(matches!(
        tree.node(1_000_000),
        Err(TreeError::BadNode { .. })
    ));
    assert_eq!(tree.proxy_count(), 1);
    tree.destroy_proxy(p).expect("live");
    assert_eq!(tree.destroy_proxy(p), Err(TreeError::NoSuchProxy(p)));
    assert_eq!(tree.root(), None);
    assert_eq!(tree.walk(), Ok(Vec::new()));
    assert_eq!(tree.height(), 0);
    assert_eq!(tree.area_ratio(), 0.0);
    tree.validate();
    assert!(tree.byte_count() > 0);
}
