//! Unit tests of the tree's internals: the pool, the proxy table and its free list, retired
//! slots, the inline stack, local reinsertion's holding ancestor, the pair limit's state
//! after a stop, the split (parallel) pair walk, exact storage reservations, and every
//! configuration against brute force with the library's own segment test. What the public
//! API alone can show is tested in `tests/` (hand-checked cases in `tree_cases.rs`, random
//! sequences against a model in `tree_props.rs`).

use super::query::segment_enters;
use super::*;
use glam::{Vec2, Vec3};

/// The test helpers shared with the integration tests and the benchmark (one splitmix64).
#[path = "../tests/common/shared.rs"]
mod shared;

use shared::{SplitMix as Rng, b2, brute_pairs, rand_box, rand_vec};
/// The pair searches to test: on one thread, and split over rayon's pool when the `parallel`
/// feature is on.
const SPLIT: &[bool] = if cfg!(feature = "parallel") {
    &[false, true]
} else {
    &[false]
};

/// Every combination of the strategies, the rebuild methods and three optimization shares
/// taking turns along the list (so that each meets every insertion cost and balancing).
fn all_configs() -> Vec<TreeConfig> {
    TreeConfig::default()
        .every_combination()
        .into_iter()
        .enumerate()
        .map(|(i, c)| TreeConfig {
            rebuild: RebuildMethod::ALL[i % RebuildMethod::ALL.len()],
            optimize_share: [0.0, 0.05, 0.5][(i / RebuildMethod::ALL.len()) % 3],
            ..c
        })
        .collect()
}

/// Checks pairs and queries of `tree` against brute force.
fn check_against_brute<V: Vector>(tree: &mut DynamicTree<V, u32>, rng: &mut Rng, side: f32) {
    tree.update_pairs().expect("no pair limit");
    tree.validate().expect("valid after update_pairs");
    let expected = brute_pairs(tree);
    assert_eq!(tree.pairs(), expected.as_slice(), "pairs");
    let mut unsorted = tree.pairs_unsorted().collect::<Vec<_>>();
    unsorted.sort_unstable();
    assert_eq!(unsorted, expected, "unsorted pairs");
    let mut indices = tree.pair_indices().to_vec();
    indices.sort_unstable();
    let want: Vec<_> = expected.iter().map(|(a, b)| (a.index, b.index)).collect();
    assert_eq!(indices, want, "pair indices");
    // Box query.
    let q = rand_box::<V>(rng, side, side * 0.3);
    let mut got = Vec::new();
    tree.query_aabb(&q, |id| {
        got.push(id);
        true
    });
    got.sort_unstable();
    let want: Vec<_> = tree
        .proxies()
        .into_iter()
        .filter(|&id| tree.fat_aabb(id).expect("live").overlaps(&q))
        .collect();
    assert_eq!(got, want, "box query");
    // Point query.
    let p = rand_vec::<V>(rng, 0.0, side);
    let mut got = Vec::new();
    tree.query_point(p, |id| {
        got.push(id);
        true
    });
    got.sort_unstable();
    let want: Vec<_> = tree
        .proxies()
        .into_iter()
        .filter(|&id| tree.fat_aabb(id).expect("live").contains_point(p))
        .collect();
    assert_eq!(got, want, "point query");
    // Ray cast without clipping.
    let (o, e) = (rand_vec::<V>(rng, 0.0, side), rand_vec::<V>(rng, 0.0, side));
    let mut got = Vec::new();
    tree.ray_cast(o, e, 1.0, |id, t| {
        got.push((id, t));
        1.0
    });
    got.sort_by_key(|x| x.0);
    let want: Vec<_> = tree
        .proxies()
        .into_iter()
        .filter_map(|id| {
            segment_enters(o, e - o, &tree.fat_aabb(id).expect("live"), 1.0).map(|t| (id, t))
        })
        .collect();
    assert_eq!(got, want, "ray cast");
}

/// Random create / destroy / move / margin / rebuild / optimization sequence, validating after
/// every step.
fn random_ops<V: Vector>(config: TreeConfig, seed: u64, steps: usize) {
    let mut rng = Rng(seed);
    let side = 40.0;
    let mut tree = DynamicTree::<V, u32>::try_new(config).expect("config");
    let mut live: Vec<ProxyId> = Vec::new();
    for step in 0..steps {
        let op = rng.index(100);
        if op < 30 || live.len() < 5 {
            let b = rand_box::<V>(&mut rng, side, 4.0);
            let v = rand_vec::<V>(&mut rng, -2.0, 2.0);
            let id = tree.create_proxy(b, v, step as u32).expect("create");
            assert_eq!(tree.user_data(id), Ok(step as u32));
            live.push(id);
        } else if op < 45 {
            let k = rng.index(live.len());
            let id = live.swap_remove(k);
            tree.destroy_proxy(id).expect("destroy");
            assert_eq!(tree.destroy_proxy(id), Err(TreeError::StaleProxy(id)));
        } else if op < 90 {
            let k = rng.index(live.len());
            let id = live[k];
            let old = tree.tight_aabb(id).expect("live");
            let d = rand_vec::<V>(&mut rng, -0.3, 0.3);
            let moved = Aabb::new(old.min + d, old.max + d);
            let fat_before = tree.fat_aabb(id).expect("live");
            let reinserted = tree
                .move_proxy(id, moved, rand_vec::<V>(&mut rng, -2.0, 2.0))
                .expect("move");
            assert_eq!(reinserted, !fat_before.contains(&moved));
            if !reinserted {
                assert_eq!(tree.fat_aabb(id), Ok(fat_before));
            }
            assert!(tree.fat_aabb(id).expect("live").contains(&moved));
        } else if op < 93 {
            tree.set_margin(rng.uniform(0.0, 0.5)).expect("margin");
        } else if op < 95 {
            tree.set_velocity_lookahead(rng.uniform(0.0, 0.3))
                .expect("lookahead");
        } else if op < 96 {
            tree.rebuild();
        } else if op < 98 {
            tree.optimize(1 + rng.index(8));
        } else if op < 99 {
            tree.rebuild_partial();
        } else {
            let before = shape(&tree);
            tree.compact_layout();
            assert_eq!(shape(&tree), before, "the renumbering changed the tree");
        }
        if let Err(e) = tree.validate() {
            panic!("{config:?} seed {seed} step {step}: {e}");
        }
        assert_eq!(tree.len(), live.len());
        if step % 7 == 0 {
            check_against_brute(&mut tree, &mut rng, side);
        }
    }
    check_against_brute(&mut tree, &mut rng, side);
    let mut sorted = live.clone();
    sorted.sort_unstable();
    assert_eq!(tree.proxies(), sorted);
}

#[test]
fn every_configuration_matches_brute_force_2d() {
    for (k, config) in all_configs().into_iter().enumerate() {
        random_ops::<Vec2>(config, 1000 + k as u64, 400);
    }
}

#[test]
fn every_configuration_matches_brute_force_3d() {
    for (k, config) in all_configs().into_iter().enumerate() {
        random_ops::<Vec3>(config, 2000 + k as u64, 400);
    }
}

/// The layouts the docs quote (a node is 32 bytes in 2D, a proxy slot 52 with `u32` user
/// data), and `bytes` counts at least the nodes and slots in use.
#[test]
fn a_node_is_32_bytes_and_a_proxy_slot_52_in_2d() {
    assert_eq!(std::mem::size_of::<node::Node<Vec2>>(), 32);
    assert_eq!(std::mem::size_of::<ProxySlot<Vec2, u32>>(), 52);
    let mut tree = DynamicTree::<Vec2, u32>::new(TreeConfig {
        margin: 0.0,
        ..TreeConfig::default()
    });
    for (i, x) in [0.0, 1.0, 3.0].into_iter().enumerate() {
        tree.create_proxy(b2(x, 0.0, x + 1.0, 1.0), Vec2::ZERO, i as u32)
            .expect("create");
    }
    let s = tree.stats();
    assert_eq!((s.leaves, s.nodes), (3, 5));
    assert!(s.bytes >= 5 * 32 + 3 * std::mem::size_of::<ProxySlot<Vec2, u32>>());
}

#[test]
fn batch_creation_builds_one_tree_over_old_and_new_leaves() {
    for config in all_configs() {
        let mut rng = Rng(11);
        let mut tree = DynamicTree::<Vec2, u32>::new(config);
        // Some proxies one at a time, then two batches on top.
        let mut ids = Vec::new();
        for i in 0..30u32 {
            let b = rand_box::<Vec2>(&mut rng, 40.0, 3.0);
            ids.push(tree.create_proxy(b, Vec2::ZERO, i).expect("create"));
        }
        for batch in 0..2u32 {
            let items: Vec<_> = (0..200u32)
                .map(|i| {
                    let v = rand_vec::<Vec2>(&mut rng, -1.0, 1.0);
                    (
                        rand_box::<Vec2>(&mut rng, 40.0, 3.0),
                        v,
                        1000 * (batch + 1) + i,
                    )
                })
                .collect();
            let new = tree.create_proxies(&items).expect("batch");
            assert_eq!(new.len(), items.len());
            for (id, item) in new.iter().zip(&items) {
                assert_eq!(tree.user_data(*id), Ok(item.2), "handles in input order");
                assert_eq!(tree.tight_aabb(*id), Ok(item.0));
            }
            ids.extend(new);
            tree.validate().expect("valid after a batch");
            assert_eq!(tree.len(), ids.len());
            check_against_brute(&mut tree, &mut rng, 40.0);
        }
        // The tree carries on as usual: moves and destroys.
        for step in 0..20 {
            for (k, id) in ids.iter().enumerate() {
                if (k + step) % 3 == 0 {
                    let b = rand_box::<Vec2>(&mut rng, 40.0, 3.0);
                    tree.move_proxy(*id, b, Vec2::ZERO).expect("move");
                }
            }
            tree.validate().expect("valid after moves");
            check_against_brute(&mut tree, &mut rng, 40.0);
        }
    }
}

#[test]
fn batch_creation_reserves_exactly() {
    let mut tree = DynamicTree::<Vec2, u32>::new(TreeConfig::default());
    let items: Vec<_> = (0..1000u32)
        .map(|i| {
            let x = (i % 40) as f32 * 2.0;
            let y = (i / 40) as f32 * 2.0;
            (b2(x, y, x + 1.0, y + 1.0), Vec2::ZERO, i)
        })
        .collect();
    tree.create_proxies(&items).expect("batch");
    tree.validate().expect("valid");
    assert_eq!(tree.nodes.capacity(), 2 * 1000 - 1);
    assert_eq!(tree.proxies.capacity(), 1000);
    let s = tree.stats();
    assert_eq!((s.leaves, s.nodes), (1000, 1999));
    // Binned SAH over a grid: close to the least height.
    assert!(
        s.height <= s.min_height + 3,
        "height {} vs {}",
        s.height,
        s.min_height
    );
}

#[test]
fn local_reinsertion_searches_under_the_lowest_ancestor_that_holds_the_box() {
    // Two far clusters of eight; a leaf moving to the other end of its cluster is held by an
    // ancestor three or more levels up, below the root, and stays under it.
    let mut tree = DynamicTree::<Vec2, u32>::new(TreeConfig {
        update: UpdateMode::LocalReinsert,
        ..TreeConfig::default()
    });
    let mut ids = Vec::new();
    for i in 0..8u32 {
        let x = i as f32 * 2.0;
        ids.push(
            tree.create_proxy(b2(x, 0.0, x + 1.0, 1.0), Vec2::ZERO, i)
                .expect("create"),
        );
        ids.push(
            tree.create_proxy(b2(x + 100.0, 0.0, x + 101.0, 1.0), Vec2::ZERO, 100 + i)
                .expect("create"),
        );
    }
    let leaf = tree.proxies[ids[0].index as usize].leaf;
    let tight = b2(13.0, 0.0, 14.0, 1.0);
    let fat = fat_box(&tight, Vec2::ZERO, 0.1, 0.0);
    let (holder, levels) = tree.holding_ancestor(leaf, &fat);
    assert_ne!(holder, NULL);
    assert_ne!(
        holder, tree.root,
        "a move inside the cluster is held below the root"
    );
    assert!(levels > 2, "held {levels} levels up: not a refit in place");
    assert!(tree.nodes[holder as usize].aabb.contains(&fat));
    // It is the lowest: no ancestor below it holds the box.
    let mut index = tree.nodes[leaf as usize].parent;
    for _ in 1..levels {
        assert!(!tree.nodes[index as usize].aabb.contains(&fat));
        index = tree.nodes[index as usize].parent;
    }
    assert_eq!(index, holder);
    assert!(tree.move_proxy(ids[0], tight, Vec2::ZERO).expect("move"));
    tree.validate().expect("valid");
    // The leaf was reinserted under the holder.
    let mut index = tree.nodes[leaf as usize].parent;
    while index != NULL && index != holder {
        index = tree.nodes[index as usize].parent;
    }
    assert_eq!(index, holder, "the leaf stayed under the holder");
    // A move out past both clusters is held by nothing, the root included: the search starts
    // from the root.
    let far = b2(500.0, 0.0, 501.0, 1.0);
    assert_eq!(
        tree.holding_ancestor(leaf, &fat_box(&far, Vec2::ZERO, 0.1, 0.0)),
        (NULL, 0)
    );
    assert!(tree.move_proxy(ids[0], far, Vec2::ZERO).expect("move"));
    tree.validate().expect("valid");
    tree.update_pairs().expect("no pair limit");
    assert_eq!(tree.pairs(), brute_pairs(&tree).as_slice());
}

#[test]
fn local_reinsertion_keeps_a_leaf_in_place_when_its_grandparent_holds_the_new_box() {
    let mut tree = DynamicTree::<Vec2, u32>::new(TreeConfig {
        update: UpdateMode::LocalReinsert,
        ..TreeConfig::default()
    });
    let ids: Vec<_> = (0..16u32)
        .map(|i| {
            let x = i as f32 * 2.0;
            tree.create_proxy(b2(x, 0.0, x + 1.0, 1.0), Vec2::ZERO, i)
                .expect("create")
        })
        .collect();
    tree.update_pairs().expect("no pair limit");
    let leaf = tree.proxies[ids[5].index as usize].leaf;
    let parent = tree.nodes[leaf as usize].parent;
    let grandparent = tree.nodes[parent as usize].parent;
    let before = tree.nodes[grandparent as usize].aabb;
    // A move of 0.15 to the right: out of the fat box, still inside the grandparent's box.
    let tight = b2(10.15, 0.0, 11.15, 1.0);
    let fat = fat_box(&tight, Vec2::ZERO, 0.1, 0.0);
    assert!(!tree.nodes[parent as usize].aabb.contains(&fat));
    assert!(before.contains(&fat));
    assert!(tree.move_proxy(ids[5], tight, Vec2::ZERO).expect("move"));
    assert_eq!(tree.fat_aabb(ids[5]), Ok(fat));
    assert_eq!(
        tree.nodes[leaf as usize].parent, parent,
        "the leaf kept its place"
    );
    assert_eq!(tree.nodes[parent as usize].parent, grandparent);
    assert_eq!(
        tree.nodes[grandparent as usize].aabb, before,
        "no growth above"
    );
    tree.validate().expect("valid");
    tree.update_pairs().expect("no pair limit");
    assert_eq!(tree.pairs(), brute_pairs(&tree).as_slice());
    // A jump far away is a reinsertion: the leaf gets a new sibling (its parent node may be
    // the same one, taken back from the free list).
    let sibling_of = |tree: &DynamicTree<Vec2, u32>| {
        let p = &tree.nodes[tree.nodes[leaf as usize].parent as usize];
        if p.child1 == leaf { p.child2 } else { p.child1 }
    };
    let sibling = sibling_of(&tree);
    assert!(
        tree.move_proxy(ids[5], b2(100.0, 0.0, 101.0, 1.0), Vec2::ZERO)
            .expect("move")
    );
    assert_ne!(sibling_of(&tree), sibling);
    tree.validate().expect("valid");
    tree.update_pairs().expect("no pair limit");
    assert_eq!(tree.pairs(), brute_pairs(&tree).as_slice());
}

/// The work counts of a few hand-followed operations: a containment test per move, the
/// ancestors tested, the removal, the sibling search and the walk up of a move out of the
/// fat box, and one test of two leaves per pair search of a two-leaf tree.
#[test]
fn work_counts_follow_each_update_and_pair_search() {
    let mut tree = DynamicTree::<Vec2, u32>::new(TreeConfig::default());
    let a = tree
        .create_proxy(b2(0.0, 0.0, 1.0, 1.0), Vec2::ZERO, 0)
        .expect("a");
    // The first leaf becomes the root: nothing visited.
    assert_eq!(tree.work(), WorkCounts::default());
    tree.create_proxy(b2(0.5, 0.5, 2.0, 2.0), Vec2::ZERO, 1)
        .expect("b");
    // The sibling search looks at the root (a leaf); the walk up refits the new parent.
    let created = WorkCounts {
        update_node_visits: 2,
        update_leaf_visits: 1,
        ..WorkCounts::default()
    };
    assert_eq!(tree.work(), created);
    tree.update_pairs().expect("no limit");
    // The root against itself: its two leaves tested once.
    let paired = WorkCounts {
        pair_node_visits: 1,
        pair_leaf_visits: 1,
        ..created
    };
    assert_eq!(tree.work(), paired);
    // Inside the fat box: the containment test alone.
    assert!(
        !tree
            .move_proxy(a, b2(0.05, 0.0, 1.05, 1.0), Vec2::ZERO)
            .expect("move")
    );
    assert_eq!(tree.work().update_node_visits, 3);
    assert_eq!(tree.work().update_leaf_visits, 2);
    // Out of it, far: the containment test (1), the root tested as holder (1), the removal's
    // parent and sibling (2), the sibling search from the new root, a leaf (1), the walk up
    // from the new parent (1).
    assert!(
        tree.move_proxy(a, b2(10.0, 10.0, 11.0, 11.0), Vec2::ZERO)
            .expect("move")
    );
    tree.update_pairs().expect("no limit");
    let moved = WorkCounts {
        update_node_visits: 9,
        update_leaf_visits: 4,
        pair_node_visits: 2,
        pair_leaf_visits: 2,
    };
    assert_eq!(tree.work(), moved);
    assert_eq!(moved.node_visits(), 11);
    assert_eq!(
        moved.since(&paired),
        WorkCounts {
            update_node_visits: 7,
            update_leaf_visits: 3,
            pair_node_visits: 1,
            pair_leaf_visits: 1,
        }
    );
    assert_eq!(tree.take_work(), moved);
    assert_eq!(tree.work(), WorkCounts::default());
    // Nothing moved: the next search does nothing and counts nothing.
    tree.update_pairs().expect("no limit");
    assert_eq!(tree.work(), WorkCounts::default());
}

#[test]
fn the_inline_stack_spills_past_its_room_and_pops_in_lifo_order() {
    let mut stack = super::node::InlineStack::<(u32, u32), 4>::new();
    for i in 0..10u32 {
        stack.push((i, i + 1));
    }
    let popped: Vec<_> = std::iter::from_fn(|| stack.pop()).collect();
    let want: Vec<_> = (0..10u32).rev().map(|i| (i, i + 1)).collect();
    assert_eq!(popped, want);
    assert_eq!(stack.pop(), None);
    // Pushing after a spill drained still works from the fixed part.
    stack.push((7, 8));
    assert_eq!(stack.pop(), Some((7, 8)));
}

/// Steps a pair of identical trees, one finding pairs on one thread and one on rayon's pool:
/// after each step both report the same pairs (those of brute force), the same tests counted
/// and the same `recomputed`. Sizes from empty to past the parallel split and past the
/// moved-traversal threshold; steps where a few move (the pruned walk) and where most do.
#[test]
#[cfg(feature = "parallel")]
fn parallel_pairs_equal_the_single_thread_ones() {
    let mut rng = Rng(11);
    for pairs in [
        PairMethod::SelfTraversal,
        PairMethod::MovedTraversal,
        PairMethod::MovedQueries,
    ] {
        for (balancing, n) in [
            (Balancing::Rotations, 0),
            (Balancing::Rotations, 1),
            (Balancing::Rotations, 2),
            (Balancing::Rotations, 3),
            (Balancing::None, 70),
            (Balancing::Rotations, 3000),
        ] {
            let config = TreeConfig {
                pairs,
                balancing,
                ..TreeConfig::default()
            };
            let mut one = DynamicTree::<Vec2, u32>::new(config);
            let items: Vec<_> = (0..n as u32)
                .map(|i| (rand_box::<Vec2>(&mut rng, 160.0, 3.0), Vec2::ZERO, i))
                .collect();
            let mut ids = one.create_proxies(&items).expect("batch");
            let mut par = one.clone();
            let what = format!("{pairs:?} {balancing:?} n = {n}");
            for step in 0..6usize {
                // Steps 0, 2, 4: the first pair update and a few moves; 1, 3, 5: most move.
                let moving = if step % 2 == 0 { n / 50 + 1 } else { n * 3 / 4 };
                for _ in 0..moving.min(n) {
                    let (k, b) = (rng.index(n), rand_box::<Vec2>(&mut rng, 160.0, 3.0));
                    for t in [&mut one, &mut par] {
                        t.move_proxy(ids[k], b, Vec2::ZERO).expect("move");
                    }
                }
                if n > 0 && step == 2 {
                    // One goes and one comes, in the slot just freed.
                    let k = rng.index(n);
                    let b = rand_box::<Vec2>(&mut rng, 160.0, 3.0);
                    let mut new = Vec::new();
                    for t in [&mut one, &mut par] {
                        t.destroy_proxy(ids[k]).expect("destroy");
                        new.push(t.create_proxy(b, Vec2::ZERO, 99_999).expect("create"));
                    }
                    assert_eq!(new[0], new[1], "{what}");
                    ids[k] = new[0];
                }
                // Split whatever the size (`update_pairs_parallel` would not, below
                // PARALLEL_MIN_LEAVES).
                let (u1, u2) = (
                    one.update_pairs().expect("no pair limit"),
                    par.update_pairs_on(true).expect("no pair limit"),
                );
                assert_eq!(u1, u2, "{what}, step {step}: recomputed and tests");
                assert_eq!(one.work(), par.work(), "{what}, step {step}: work counts");
                assert_eq!(one.pairs(), par.pairs(), "{what}, step {step}");
                assert_eq!(par.pairs(), brute_pairs(&par).as_slice(), "{what}");
                par.validate().expect("valid");
            }
        }
    }
}

/// A pile of equal boxes under the split walk: every one of the 600 * 599 / 2 pairs, once.
#[test]
#[cfg(feature = "parallel")]
fn parallel_pairs_of_a_pile_of_equal_boxes() {
    let mut tree = DynamicTree::<Vec2, u32>::new(TreeConfig {
        pairs: PairMethod::SelfTraversal,
        ..TreeConfig::default()
    });
    let items: Vec<_> = (0..600u32)
        .map(|i| (b2(0.0, 0.0, 1.0, 1.0), Vec2::ZERO, i))
        .collect();
    tree.create_proxies(&items).expect("batch");
    tree.update_pairs_on(true).expect("no pair limit");
    assert_eq!(tree.pair_count(), 600 * 599 / 2);
    assert_eq!(tree.pairs(), brute_pairs(&tree).as_slice());
}

/// `with_capacity` past the most proxies the `u32` node indices allow is an error (no
/// capacity-overflow panic, no abort on a 256 GB allocation); a normal capacity reserves the
/// nodes and slots of that many proxies exactly.
#[test]
fn with_capacity_refuses_room_past_the_index_limit() {
    type Tree = DynamicTree<Vec2, u32>;
    let max = Tree::MAX_PROXIES;
    assert_eq!(max, (1 << 31) - 2, "2 * max - 1 nodes fit below NULL - 1");
    for requested in [usize::MAX, 1 << 32, u32::MAX as usize, max + 1] {
        let got = Tree::with_capacity(TreeConfig::default(), requested).map(|_| ());
        assert_eq!(got, Err(TreeError::CapacityTooLarge { requested, max }));
    }
    assert_eq!(
        TreeError::CapacityTooLarge {
            requested: 1 << 32,
            max
        }
        .to_string(),
        "room for 4294967296 proxies asked; a tree holds at most 2147483646"
    );
    // The largest allowed asks for about 210 GB: an allocation failure is an error (a
    // system that overcommits memory may hand out the room untouched).
    match Tree::with_capacity(TreeConfig::default(), max) {
        Ok(tree) => {
            assert!(tree.is_empty());
            tree.validate().expect("valid");
        }
        Err(e) => assert_eq!(e, TreeError::AllocationFailed { requested: max }),
    }
    // A bad setting is still refused.
    assert!(matches!(
        Tree::with_capacity(
            TreeConfig {
                margin: -1.0,
                ..TreeConfig::default()
            },
            10
        ),
        Err(TreeError::InvalidSetting { .. })
    ));
    // A normal capacity: exact room, no growth while it fills.
    let mut tree = Tree::with_capacity(TreeConfig::default(), 100).expect("room for 100");
    assert_eq!((tree.nodes.capacity(), tree.proxies.capacity()), (199, 100));
    for i in 0..100u32 {
        let x = i as f32;
        tree.create_proxy(b2(x, 0.0, x + 0.5, 1.0), Vec2::ZERO, i)
            .expect("create");
        tree.validate().expect("valid");
    }
    assert_eq!((tree.nodes.capacity(), tree.proxies.capacity()), (199, 100));
    assert_eq!(tree.len(), 100);
    assert!(Tree::with_capacity(TreeConfig::default(), 0).is_ok());
}

/// The free-slot list, walked: every slot index on it.
fn free_slots<V: Vector>(tree: &DynamicTree<V, u32>) -> Vec<u32> {
    let mut out = Vec::new();
    let mut index = tree.free_proxy;
    while index != NULL {
        out.push(index);
        index = tree.proxies[index as usize].leaf;
    }
    out
}

/// Checks that `id` is refused by every call that takes a handle.
fn assert_stale<V: Vector>(tree: &mut DynamicTree<V, u32>, id: ProxyId) {
    let stale = Err(TreeError::StaleProxy(id));
    assert!(!tree.contains(id), "{id:?}");
    assert_eq!(tree.user_data(id), stale);
    assert_eq!(tree.fat_aabb(id), stale.clone().map(|_| Aabb::default()));
    assert_eq!(tree.tight_aabb(id), stale.clone().map(|_| Aabb::default()));
    assert_eq!(tree.leaf_of(id), stale.clone().map(|_| NodeId(0)));
    let b = Aabb::new(V::splat(0.0), V::splat(1.0));
    assert_eq!(
        tree.move_proxy(id, b, V::splat(0.0)),
        stale.clone().map(|_| false)
    );
    assert_eq!(tree.destroy_proxy(id), stale);
}

/// A slot whose generations are used up is retired, not wrapped: every old handle of it stays
/// stale, the slot is never reused, and the tree (validate, proxies, stats, pairs, rebuilds,
/// batches) treats it as neither live nor free.
#[test]
fn a_slot_whose_generations_run_out_is_retired_and_never_reused() {
    use super::node::{GENERATION_MASK, RETIRED};
    assert_eq!(RETIRED, (1 << 30) - 1);
    for config in [
        PairMethod::SelfTraversal,
        PairMethod::MovedQueries,
        PairMethod::MovedTraversal,
    ]
    .into_iter()
    .flat_map(|pairs| {
        UpdateMode::ALL.into_iter().map(move |update| TreeConfig {
            pairs,
            update,
            ..TreeConfig::default()
        })
    }) {
        let what = format!("{config:?}");
        let mut tree = DynamicTree::<Vec2, u32>::new(config);
        let first = tree
            .create_proxy(b2(0.0, 0.0, 1.0, 1.0), Vec2::ZERO, 0)
            .expect("create");
        let other = tree
            .create_proxy(b2(0.5, 0.5, 1.5, 1.5), Vec2::ZERO, 1)
            .expect("create");
        let slot = first.index;
        // Three proxies from the end of the slot's generations.
        let g0 = RETIRED - 3;
        let s = &mut tree.proxies[slot as usize];
        s.state = (s.state & !GENERATION_MASK) | g0;
        tree.validate().expect("valid");
        let mut id = ProxyId {
            index: slot,
            generation: g0,
        };
        assert_eq!(tree.user_data(id), Ok(0), "{what}");
        let mut old = vec![first];
        // Destroy and create across the end: generations g0, g0 + 1, g0 + 2 = RETIRED - 1
        // (the last a proxy gets), then the slot is retired.
        for k in 1..=3u32 {
            if k == 2 {
                tree.update_pairs().expect("no pair limit");
                assert_eq!(tree.pairs(), &[(id, other)], "{what}");
            }
            assert_eq!(tree.destroy_proxy(id), Ok(k - 1), "{what}");
            tree.validate().expect("valid after destroy");
            old.push(id);
            let new = tree
                .create_proxy(b2(0.2, 0.2, 1.2, 1.2), Vec2::ZERO, k)
                .expect("create");
            tree.validate().expect("valid after create");
            if k < 3 {
                assert_eq!(
                    new,
                    ProxyId {
                        index: slot,
                        generation: g0 + k
                    },
                    "{what}"
                );
            } else {
                // The slot is retired: the new proxy took a fresh slot.
                assert_eq!(new.index, 2, "{what}");
                assert_eq!(new.generation, 0, "{what}");
                assert!(tree.proxies[slot as usize].is_retired(), "{what}");
                assert!(!tree.proxies[slot as usize].is_alive(), "{what}");
                assert_eq!(tree.retired, 1, "{what}");
            }
            id = new;
        }
        assert_eq!(old.last().map(|p| p.generation), Some(RETIRED - 1));
        for &stale in &old {
            assert_stale(&mut tree, stale);
        }
        // A handle naming the retired generation itself, never handed out, is refused too.
        assert_stale(
            &mut tree,
            ProxyId {
                index: slot,
                generation: RETIRED,
            },
        );
        assert!(!free_slots(&tree).contains(&slot), "{what}");
        assert_eq!(tree.proxies(), vec![other, id], "{what}");
        assert_eq!((tree.len(), tree.stats().leaves), (2, 2), "{what}");
        // The retired slot was in the move buffer: the update clears its bit and drops it.
        tree.update_pairs().expect("no pair limit");
        assert!(!tree.proxies[slot as usize].is_moved(), "{what}");
        assert!(tree.moved.is_empty(), "{what}");
        assert_eq!(tree.pairs(), brute_pairs(&tree).as_slice(), "{what}");
        assert_eq!(tree.pairs(), &[(other, id)], "{what}");
        // Churn: destroy and create, one at a time and in a batch; the slot stays retired.
        for round in 0..4u32 {
            let x = round as f32;
            let batch: Vec<_> = (0..3u32)
                .map(|i| {
                    (
                        b2(x, i as f32, x + 1.0, i as f32 + 1.0),
                        Vec2::ZERO,
                        100 + i,
                    )
                })
                .collect();
            let made = tree.create_proxies(&batch).expect("batch");
            tree.validate().expect("valid after batch");
            let single = tree
                .create_proxy(b2(x, 0.5, x + 1.0, 1.5), Vec2::ZERO, 200)
                .expect("create");
            tree.validate().expect("valid after create");
            assert!(
                made.iter().chain([&single]).all(|p| p.index != slot),
                "{what}: the retired slot was reused"
            );
            tree.rebuild();
            tree.validate().expect("valid after rebuild");
            tree.rebuild_partial();
            tree.validate().expect("valid after partial rebuild");
            tree.update_pairs().expect("no pair limit");
            assert_eq!(tree.pairs(), brute_pairs(&tree).as_slice(), "{what}");
            for p in made.into_iter().chain([single]) {
                tree.destroy_proxy(p).expect("destroy");
                tree.validate().expect("valid after destroy");
            }
        }
        assert_eq!(tree.retired, 1, "{what}");
        assert!(tree.proxies[slot as usize].is_retired(), "{what}");
        assert!(!free_slots(&tree).contains(&slot), "{what}");
        assert!(tree.bytes() >= tree.proxies.len() * std::mem::size_of::<ProxySlot<Vec2, u32>>());
        for &stale in &old {
            assert_stale(&mut tree, stale);
        }
        // Put back on the free list by hand, validate finds it.
        let mut broken = tree.clone();
        broken.proxies[slot as usize].leaf = broken.free_proxy;
        broken.free_proxy = slot;
        assert!(broken.validate().is_err(), "{what}");
    }
}

/// A box that holds the point (1, 1): every two of them overlap.
fn pile_box(rng: &mut Rng) -> Aabb<Vec2> {
    let min = rand_vec::<Vec2>(rng, 0.0, 1.0);
    let max = rand_vec::<Vec2>(rng, 1.0, 2.0);
    Aabb::new(min, max)
}

/// Checks that the pairs of `tree` are every pair of the proxies in slots `0..n` and that
/// brute force says the same, without sorting (a debug-build sort of 45,000 pairs costs more
/// than the rest of a configuration's run).
fn assert_every_pair_of_the_first<V: Vector>(tree: &DynamicTree<V, u32>, n: usize, what: &str) {
    let mut seen = vec![false; n * n];
    for &(a, b) in tree.pair_indices() {
        let (a, b) = (a as usize, b as usize);
        assert!(a < b && b < n, "{what}: pair ({a}, {b})");
        assert!(!seen[a * n + b], "{what}: pair ({a}, {b}) twice");
        seen[a * n + b] = true;
    }
    assert_eq!(tree.pair_count(), n * (n - 1) / 2, "{what}");
    let brute = brute_pairs(tree);
    assert_eq!(brute.len(), n * (n - 1) / 2, "{what}: brute force");
    assert!(
        brute.iter().all(|(_, b)| (b.index as usize) < n),
        "{what}: brute force"
    );
}

/// The state after an update stopped at the pair limit: valid, no pairs, the move buffer and
/// its bits and the dirty flags cleared, a full recompute next, the pair storage small.
fn assert_stopped_at_limit<V: Vector>(tree: &DynamicTree<V, u32>, limit: usize, what: &str) {
    if let Err(e) = tree.validate() {
        panic!("{what}: {e}");
    }
    assert_eq!(tree.pair_count(), 0, "{what}");
    assert!(tree.pairs().is_empty(), "{what}");
    assert_eq!(tree.pairs_unsorted().count(), 0, "{what}");
    assert!(tree.pair_indices().is_empty(), "{what}");
    assert!(tree.moved.is_empty(), "{what}: move buffer");
    assert!(tree.proxies.iter().all(|s| !s.is_moved()), "{what}: MOVED");
    assert!(tree.nodes.iter().all(|n| !n.is_dirty()), "{what}: DIRTY");
    assert!(
        tree.pairs_full,
        "{what}: the next update recomputes every pair"
    );
    assert!(
        tree.pairs.capacity() < 10 * limit.max(100),
        "{what}: pair storage {} for a limit of {limit}",
        tree.pairs.capacity()
    );
}

/// Every configuration, on one thread and split: 290 boxes that overlap one another (41,905
/// pairs) and 10 far away. A limit of 1,000 stops the update with `PairLimit` and leaves a
/// consistent tree; without the limit the next update is brute force. Then the 10 join the
/// pile (44,850 pairs): one below that count (the kept pairs count) fails, exactly that count
/// succeeds.
#[test]
fn the_pair_limit_stops_every_configuration_and_the_next_update_recovers() {
    const PILE: usize = 290;
    const ALL: usize = 300;
    let after = ALL * (ALL - 1) / 2;
    assert_eq!(
        DynamicTree::<Vec2, u32>::new(TreeConfig::default()).pair_limit(),
        usize::MAX
    );
    assert_eq!(
        TreeError::PairLimit { limit: 1000 }.to_string(),
        "more than 1000 candidate pairs"
    );
    for (k, config) in all_configs().into_iter().enumerate() {
        for &parallel in SPLIT {
            let what = format!("{config:?}, parallel {parallel}");
            let mut rng = Rng(7000 + k as u64);
            let mut tree = DynamicTree::<Vec2, u32>::new(config);
            let mut ids = Vec::new();
            for i in 0..ALL {
                let b = if i < PILE {
                    pile_box(&mut rng)
                } else {
                    let x = 100.0 + 3.0 * i as f32;
                    b2(x, 0.0, x + 1.0, 1.0)
                };
                ids.push(tree.create_proxy(b, Vec2::ZERO, i as u32).expect("create"));
                tree.validate().expect("valid after create");
            }
            // No limit.
            tree.update_pairs_on(parallel).expect("no pair limit");
            assert_every_pair_of_the_first(&tree, PILE, &what);
            // A limit below the current count: the next update recomputes (nothing moved)
            // and stops.
            tree.set_pair_limit(1000);
            assert_eq!(tree.pair_limit(), 1000);
            assert_eq!(
                tree.update_pairs_on(parallel),
                Err(TreeError::PairLimit { limit: 1000 }),
                "{what}"
            );
            assert_stopped_at_limit(&tree, 1000, &what);
            // Still over: the full recompute stops again.
            assert_eq!(
                tree.update_pairs_on(parallel),
                Err(TreeError::PairLimit { limit: 1000 }),
                "{what}"
            );
            assert_stopped_at_limit(&tree, 1000, &what);
            // No limit: every pair again.
            tree.set_pair_limit(usize::MAX);
            let u = tree.update_pairs_on(parallel).expect("no pair limit");
            assert!(u.recomputed, "{what}");
            tree.validate().expect("valid");
            assert_every_pair_of_the_first(&tree, PILE, &what);
            // The far ten join the pile.
            for &id in &ids[PILE..] {
                tree.move_proxy(id, pile_box(&mut rng), Vec2::ZERO)
                    .expect("move");
                tree.validate().expect("valid after move");
            }
            let mut exact = tree.clone();
            // The kept 41,905 pairs count: one under the new total fails.
            tree.set_pair_limit(after - 1);
            assert_eq!(
                tree.update_pairs_on(parallel),
                Err(TreeError::PairLimit { limit: after - 1 }),
                "{what}"
            );
            assert_stopped_at_limit(&tree, after - 1, &what);
            // The limit is inclusive: exactly the count succeeds, from the kept pairs...
            exact.set_pair_limit(after);
            assert!(
                exact
                    .update_pairs_on(parallel)
                    .expect("at the limit")
                    .recomputed
            );
            exact.validate().expect("valid");
            assert_every_pair_of_the_first(&exact, ALL, &what);
            // ... and from scratch after the failure.
            tree.set_pair_limit(after);
            assert!(
                tree.update_pairs_on(parallel)
                    .expect("at the limit")
                    .recomputed
            );
            tree.validate().expect("valid");
            assert_every_pair_of_the_first(&tree, ALL, &what);
            // Nothing changed: nothing recomputed, the set kept.
            assert!(
                !tree
                    .update_pairs_on(parallel)
                    .expect("unchanged")
                    .recomputed
            );
            assert_eq!(tree.pair_count(), after, "{what}");
        }
    }
}

/// 3,000 equal boxes (4,498,500 pairs) under a limit of 10,000: every pair method, on one
/// thread and split, stops early: the pair storage stays near the limit.
#[test]
fn a_walk_that_would_find_millions_of_pairs_stops_at_the_limit() {
    const N: u32 = 3000;
    const LIMIT: usize = 10_000;
    let items: Vec<_> = (0..N)
        .map(|i| (b2(0.0, 0.0, 1.0, 1.0), Vec2::ZERO, i))
        .collect();
    for pairs in PairMethod::ALL {
        for &parallel in SPLIT {
            let what = format!("{pairs:?}, parallel {parallel}");
            let mut tree = DynamicTree::<Vec2, u32>::new(TreeConfig {
                pairs,
                ..TreeConfig::default()
            });
            tree.create_proxies(&items).expect("batch");
            tree.set_pair_limit(LIMIT);
            assert_eq!(
                tree.update_pairs_on(parallel),
                Err(TreeError::PairLimit { limit: LIMIT }),
                "{what}"
            );
            assert_stopped_at_limit(&tree, LIMIT, &what);
            assert!(tree.pairs.capacity() < 2 * LIMIT + 64, "{what}");
            // The full recompute the error asks for stops too.
            assert_eq!(
                tree.update_pairs_on(parallel),
                Err(TreeError::PairLimit { limit: LIMIT }),
                "{what}"
            );
            assert_stopped_at_limit(&tree, LIMIT, &what);
        }
    }
}

/// `MovedTraversal` on a tree large enough for the walk cut down to the moved proxies: the
/// pairs kept count towards the limit, a failure clears the dirty flags and the move buffer,
/// a limit of exactly the count succeeds; on one thread and split.
#[test]
fn the_pair_limit_counts_the_kept_pairs_of_the_moved_traversal() {
    let mut rng = Rng(77);
    // A grid of 3,000 unit boxes at spacing 1 (each touches its neighbours).
    let items: Vec<_> = (0..3000u32)
        .map(|i| {
            let (x, y) = ((i % 60) as f32, (i / 60) as f32);
            (b2(x, y, x + 1.0, y + 1.0), Vec2::ZERO, i)
        })
        .collect();
    for &parallel in SPLIT {
        let what = format!("parallel {parallel}");
        let mut tree = DynamicTree::<Vec2, u32>::new(TreeConfig {
            pairs: PairMethod::MovedTraversal,
            ..TreeConfig::default()
        });
        let ids = tree.create_proxies(&items).expect("batch");
        let full = tree.update_pairs_on(parallel).expect("no pair limit");
        let kept = tree.pair_count();
        assert_eq!(tree.pairs(), brute_pairs(&tree).as_slice(), "{what}");
        // Forty move into a pile far away: few moved, so the cut-down walk runs.
        for k in 0..40 {
            let b = pile_box(&mut rng);
            let far = Aabb::new(b.min + Vec2::splat(500.0), b.max + Vec2::splat(500.0));
            tree.move_proxy(ids[k * 71], far, Vec2::ZERO).expect("move");
        }
        tree.validate().expect("valid");
        let mut free = tree.clone();
        let u = free.update_pairs_on(parallel).expect("no pair limit");
        assert!(
            u.stats.node_visits < full.stats.node_visits / 2,
            "{what}: the walk cut down to the moved proxies ran"
        );
        let count = free.pair_count();
        assert_eq!(free.pairs(), brute_pairs(&free).as_slice(), "{what}");
        // The forty lose their grid pairs and gain the 780 among them.
        assert!(
            count > kept / 2 && count < kept + 780,
            "{what}: most pairs are kept"
        );
        // One under the count: stops, after keeping most of the pairs.
        let mut over = tree.clone();
        over.set_pair_limit(count - 1);
        assert_eq!(
            over.update_pairs_on(parallel),
            Err(TreeError::PairLimit { limit: count - 1 }),
            "{what}"
        );
        assert_stopped_at_limit(&over, count - 1, &what);
        over.set_pair_limit(usize::MAX);
        over.update_pairs_on(parallel).expect("no pair limit");
        over.validate().expect("valid");
        assert_eq!(over.pairs(), free.pairs(), "{what}");
        // Exactly the count: the cut-down walk succeeds.
        tree.set_pair_limit(count);
        let u = tree.update_pairs_on(parallel).expect("at the limit");
        assert!(u.stats.node_visits < full.stats.node_visits / 2, "{what}");
        tree.validate().expect("valid");
        assert!(tree.nodes.iter().all(|n| !n.is_dirty()), "{what}");
        assert_eq!(tree.pairs(), free.pairs(), "{what}");
    }
}

/// A limit of 0: a tree without overlaps updates; one overlap is one too many.
#[test]
fn a_pair_limit_of_zero_allows_only_no_pairs() {
    let mut tree = DynamicTree::<Vec2, u32>::new(TreeConfig::default());
    tree.set_pair_limit(0);
    assert!(!tree.update_pairs().expect("empty").recomputed);
    let a = tree
        .create_proxy(b2(0.0, 0.0, 1.0, 1.0), Vec2::ZERO, 0)
        .expect("create");
    tree.create_proxy(b2(5.0, 5.0, 6.0, 6.0), Vec2::ZERO, 1)
        .expect("create");
    assert!(tree.update_pairs().expect("no overlap").recomputed);
    assert_eq!(tree.pair_count(), 0);
    tree.move_proxy(a, b2(4.5, 4.5, 5.5, 5.5), Vec2::ZERO)
        .expect("move");
    assert_eq!(tree.update_pairs(), Err(TreeError::PairLimit { limit: 0 }));
    assert_stopped_at_limit(&tree, 0, "limit 0");
    tree.set_pair_limit(1);
    tree.update_pairs().expect("one pair");
    assert_eq!(tree.pairs(), brute_pairs(&tree).as_slice());
    assert_eq!(tree.pair_count(), 1);
}

/// The SAH cost of making `sibling` the new box's sibling, in `f64`: the new parent's measure
/// plus the growth of every ancestor.
fn sibling_cost<V: Vector>(tree: &DynamicTree<V, u32>, sibling: u32, d: &Aabb<V>) -> f64 {
    let mut cost = tree.nodes[sibling as usize].aabb.union(d).half_area_f64();
    let mut a = tree.nodes[sibling as usize].parent;
    while a != NULL {
        let node = &tree.nodes[a as usize];
        cost += node.aabb.union(d).half_area_f64() - node.aabb.half_area_f64();
        a = node.parent;
    }
    cost
}

/// The exact search's sibling costs the least of every node's (brute force), and never more
/// than the one Box2D v3's descent picks; its queue keeps its room between insertions.
fn exact_search_finds_the_least_cost<V: Vector>(seed: u64) {
    let mut rng = Rng(seed);
    for balancing in Balancing::ALL {
        let mut tree = DynamicTree::<V, u32>::new(TreeConfig {
            margin: 0.0,
            insertion: InsertionCost::ExactSurfaceArea,
            balancing,
            ..TreeConfig::default()
        });
        for i in 0..200u32 {
            let d = rand_box::<V>(&mut rng, 50.0, 4.0);
            if tree.root != NULL {
                let (exact, _) = tree.find_best_sibling_exact(&d, tree.root);
                let (approx, _) = tree.find_best_sibling(&d, tree.root);
                let mut least = f64::MAX;
                tree.walk(|id, _, _| least = least.min(sibling_cost(&tree, id.0, &d)));
                let got = sibling_cost(&tree, exact, &d);
                let tolerance = 1e-4 * least.max(1.0);
                assert!(
                    got <= least + tolerance,
                    "{balancing:?} {i}: {got} > {least}"
                );
                assert!(got <= sibling_cost(&tree, approx, &d) + tolerance);
            }
            tree.create_proxy(d, V::default(), i).expect("create");
            tree.validate().expect("valid");
        }
        let room = tree.sibling_queue.capacity();
        assert!(room > 0);
        let d = rand_box::<V>(&mut rng, 50.0, 4.0);
        tree.create_proxy(d, V::default(), 999).expect("create");
        assert_eq!(tree.sibling_queue.capacity(), room, "no new allocation");
    }
}

#[test]
fn exact_search_finds_the_least_cost_2d() {
    exact_search_finds_the_least_cost::<Vec2>(17);
}

#[test]
fn exact_search_finds_the_least_cost_3d() {
    exact_search_finds_the_least_cost::<Vec3>(18);
}

/// The tree as the walk sees it, node ids left out: (depth, box, height, proxy) of each node
/// in walk order (child 1 before child 2).
fn shape<V: Vector>(tree: &DynamicTree<V, u32>) -> Vec<(u32, Aabb<V>, u32, Option<ProxyId>)> {
    let mut out = Vec::new();
    tree.walk(|_, view, depth| out.push((depth, view.aabb, view.height, view.proxy)));
    out
}

/// A tree built by insertions, then moved about and thinned out: its pool is scattered and
/// its free list long.
fn scattered_tree(seed: u64) -> (DynamicTree<Vec2, u32>, Vec<ProxyId>) {
    let mut rng = Rng(seed);
    let mut tree = DynamicTree::<Vec2, u32>::new(TreeConfig::default());
    let mut live: Vec<ProxyId> = (0..300u32)
        .map(|i| {
            let b = rand_box::<Vec2>(&mut rng, 60.0, 3.0);
            tree.create_proxy(b, Vec2::ZERO, i).expect("create")
        })
        .collect();
    for _ in 0..600 {
        let id = live[rng.index(live.len())];
        let old = tree.tight_aabb(id).expect("live");
        let d = rand_vec::<Vec2>(&mut rng, -2.0, 2.0);
        tree.move_proxy(id, Aabb::new(old.min + d, old.max + d), Vec2::ZERO)
            .expect("move");
    }
    for _ in 0..60 {
        let id = live.swap_remove(rng.index(live.len()));
        tree.destroy_proxy(id).expect("destroy");
    }
    (tree, live)
}

/// The renumbering keeps the tree (shape, boxes, handles, pairs) and puts the pool in walk
/// order: the root first, each branch's children side by side after it, the free nodes
/// last; the tree then takes insertions and removals as before.
#[test]
fn compact_layout_keeps_the_tree_and_orders_the_pool() {
    let (mut tree, mut live) = scattered_tree(17);
    tree.update_pairs().expect("no limit");
    let pairs = tree.pairs().to_vec();
    let before = shape(&tree);
    let boxes: Vec<_> = live.iter().map(|&id| tree.fat_aabb(id)).collect();
    tree.compact_layout();
    tree.validate().expect("valid after the renumbering");
    assert_eq!(shape(&tree), before);
    let after: Vec<_> = live.iter().map(|&id| tree.fat_aabb(id)).collect();
    assert_eq!(after, boxes);
    assert_eq!(tree.root(), Some(NodeId(0)));
    // Walk order: the nodes in use are 0..in_use, each branch's children are adjacent and
    // after it, and the walk meets them in index order of first children.
    let mut in_use = 0u32;
    let mut firsts = Vec::new();
    tree.walk(|id, view, _| {
        in_use += 1;
        if let Some([c1, c2]) = view.children {
            assert_eq!(c2.0, c1.0 + 1, "siblings side by side");
            assert!(c1.0 > id.0);
            firsts.push(c1.0);
        }
    });
    assert!(
        firsts.windows(2).all(|w| w[0] < w[1]),
        "children in walk order"
    );
    tree.walk(|id, _, _| assert!(id.0 < in_use));
    // The same pairs, found again from scratch.
    tree.set_pair_method(PairMethod::SelfTraversal);
    tree.update_pairs().expect("no limit");
    assert_eq!(tree.pairs(), pairs.as_slice());
    // Insertions use the free list; removals give back to it.
    let mut rng = Rng(5);
    for i in 0..80u32 {
        let b = rand_box::<Vec2>(&mut rng, 60.0, 3.0);
        live.push(tree.create_proxy(b, Vec2::ZERO, 1000 + i).expect("create"));
        tree.validate().expect("valid");
    }
    for _ in 0..80 {
        let id = live.swap_remove(rng.index(live.len()));
        tree.destroy_proxy(id).expect("destroy");
        tree.validate().expect("valid");
    }
}

/// Recorded rotations name nodes; the renumbering renumbers them with the nodes.
#[test]
fn compact_layout_renumbers_recorded_rotations() {
    let mut tree = DynamicTree::<Vec2, u32>::new(TreeConfig::default());
    tree.set_recording(true);
    // A row inserted left to right makes the rotations rotate.
    for i in 0..64u32 {
        let x = i as f32 * 2.0;
        tree.create_proxy(b2(x, 0.0, x + 1.0, 1.0), Vec2::ZERO, i)
            .expect("create");
    }
    // Each rotated node, by the proxies under it (which the renumbering keeps).
    let under = |tree: &DynamicTree<Vec2, u32>, node: NodeId| {
        let mut found = Vec::new();
        let mut stack = vec![node];
        while let Some(n) = stack.pop() {
            let view = tree.node(n).expect("a node in use");
            match (view.children, view.proxy) {
                (Some([a, b]), _) => stack.extend([a, b]),
                (None, Some(p)) => found.push(p),
                (None, None) => unreachable!("a leaf has a proxy"),
            }
        }
        found.sort_unstable();
        found
    };
    let rotations = |tree: &DynamicTree<Vec2, u32>| -> Vec<NodeId> {
        tree.events
            .iter()
            .filter_map(|e| match e {
                TreeEvent::Rotate { node } => Some(*node),
                _ => None,
            })
            .collect()
    };
    let nodes = rotations(&tree);
    // Only the rotations whose node is still a branch with those proxies can be compared;
    // the last ones are.
    let last: Vec<NodeId> = nodes.iter().rev().take(5).copied().collect();
    let sets: Vec<_> = last.iter().map(|&n| under(&tree, n)).collect();
    tree.compact_layout();
    let renumbered = rotations(&tree);
    assert_eq!(renumbered.len(), nodes.len());
    assert_ne!(renumbered, nodes, "the pool was out of walk order");
    let last_after: Vec<NodeId> = renumbered.iter().rev().take(5).copied().collect();
    let sets_after: Vec<_> = last_after.iter().map(|&n| under(&tree, n)).collect();
    assert_eq!(sets_after, sets);
}

/// What [`observable`] gives: structure hash, proxies, count, pairs, next handles.
type Observed = (
    u64,
    Vec<ProxyId>,
    usize,
    Vec<(ProxyId, ProxyId)>,
    Vec<ProxyId>,
);

/// What a tree shows through its interface, for comparing two trees: the pool and the
/// links (the structure hash), the proxies, the counts, and what the next pair update and
/// the next creations give (handles from the free lists, in order).
fn observable(mut tree: DynamicTree<Vec2, u32>) -> Observed {
    let hash = tree.structure_hash();
    let proxies = tree.proxies();
    let len = tree.len();
    tree.update_pairs().expect("no limit");
    let pairs = tree.pairs().to_vec();
    let next: Vec<ProxyId> = (0..100u32)
        .map(|i| {
            let x = i as f32;
            tree.create_proxy(b2(x, 70.0, x + 0.5, 70.5), Vec2::ZERO, i)
                .expect("create")
        })
        .collect();
    tree.validate().expect("valid");
    (hash, proxies, len, pairs, next)
}

/// A batch refused part-way leaves the tree as it was: pool, proxies, free lists and move
/// buffer, so the next update finds the same pairs and the next proxies get the same
/// handles.
#[test]
fn a_refused_batch_leaves_the_tree_as_it_was() {
    let (mut tree, _) = scattered_tree(23);
    let before = tree.clone();
    let items: Vec<_> = (0..40u32)
        .map(|i| {
            let x = i as f32 * 3.0;
            let b = if i == 31 {
                Aabb::new(Vec2::new(f32::NAN, 0.0), Vec2::ONE)
            } else {
                b2(x, 0.0, x + 1.0, 1.0)
            };
            (b, Vec2::ZERO, i)
        })
        .collect();
    let err = tree.create_proxies(&items).expect_err("item 31 is NaN");
    assert_eq!(
        err,
        TreeError::InBatch {
            index: 31,
            error: Box::new(TreeError::NonFinite)
        }
    );
    tree.validate().expect("valid");
    assert_eq!(observable(tree), observable(before));
    // The same for a batch into an empty tree.
    let mut empty = DynamicTree::<Vec2, u32>::new(TreeConfig::default());
    assert!(empty.create_proxies(&items).is_err());
    assert_eq!(
        observable(empty.clone()),
        observable(DynamicTree::new(TreeConfig::default()))
    );
    // And the good batch then goes in whole.
    let good: Vec<_> = items.iter().filter(|it| it.2 != 31).copied().collect();
    let ids = empty.create_proxies(&good).expect("finite");
    empty.validate().expect("valid");
    assert_eq!(ids.len(), 39);
    empty.update_pairs().expect("no limit");
    assert_eq!(empty.pair_count(), 0, "boxes 3 apart, 1 wide, margin 0.1");
}

/// Once reinsertions have taken as many nodes from the free list as there are leaves, a pair
/// update puts the pool back in walk order; a tree small enough for the cache is left alone.
#[test]
fn pair_updates_compact_a_scattered_pool() {
    let (mut small, _) = scattered_tree(29);
    // 300 creations and many reinsertions took far more nodes than the 240 leaves.
    let root = small.root();
    assert_ne!(root, Some(NodeId(0)));
    small.update_pairs().expect("no limit");
    assert_eq!(
        small.root(),
        root,
        "under LAYOUT_MIN_LEAVES: not renumbered"
    );
    // A large one, inserted one by one: scattered, then renumbered by the pair update.
    let n = layout::LAYOUT_MIN_LEAVES + 100;
    let mut rng = Rng(31);
    // No optimization pass, which would change the shape before the renumbering.
    let mut tree = DynamicTree::<Vec2, u32>::new(TreeConfig {
        optimize_share: 0.0,
        ..TreeConfig::default()
    });
    for i in 0..n {
        let b = rand_box::<Vec2>(&mut rng, 600.0, 3.0);
        tree.create_proxy(b, Vec2::ZERO, i as u32).expect("create");
    }
    assert_ne!(tree.root(), Some(NodeId(0)));
    let before = shape(&tree);
    tree.update_pairs().expect("no limit");
    assert_eq!(tree.root(), Some(NodeId(0)));
    assert!(shape(&tree) == before, "the renumbering changed the tree");
    tree.validate().expect("valid");
    // A batch of that size is built in walk order.
    let items: Vec<_> = (0..n)
        .map(|i| (rand_box::<Vec2>(&mut rng, 600.0, 3.0), Vec2::ZERO, i as u32))
        .collect();
    let mut batch = DynamicTree::<Vec2, u32>::new(TreeConfig::default());
    batch.create_proxies(&items).expect("finite");
    assert_eq!(batch.root(), Some(NodeId(0)));
    batch.validate().expect("valid");
}

/// A tree with no branch below its root costs +0 (no branch summed), never -0, which a
/// readout would print as "-0.00"; so does an empty tree and a single leaf.
#[test]
fn a_tree_with_no_branch_below_the_root_costs_plus_zero() {
    let mut tree: DynamicTree<Vec2, u32> = DynamicTree::new(TreeConfig::default());
    assert!(tree.sah_cost().is_sign_positive() && tree.sah_cost() == 0.0);
    let boxes = [
        Aabb::new(Vec2::ZERO, Vec2::ONE),
        Aabb::new(Vec2::splat(2.0), Vec2::splat(3.0)),
    ];
    for (i, b) in boxes.iter().enumerate() {
        tree.create_proxy(*b, Vec2::ZERO, i as u32)
            .expect("valid box");
        assert_eq!(tree.stats().leaves, i + 1);
        let cost = tree.sah_cost();
        assert!(
            cost == 0.0 && cost.is_sign_positive(),
            "{} leaves: {cost}",
            i + 1
        );
    }
}

/// A large batch into a new tree is built straight in walk order: node for node the tree
/// (boxes, links, heights, leaves' slots) that a batch into a used tree builds and then
/// renumbers, with the same pairs; valid; in 2D and 3D, below and above the size from which
/// the build splits by Morton code. A used tree (one proxy made and destroyed) takes the
/// other path: leaves first, build, renumbering.
#[test]
fn a_large_batch_into_a_new_tree_is_built_in_walk_order() {
    fn check<V: Vector>(n: usize, seed: u64) {
        let mut rng = Rng(seed);
        let items: Vec<(Aabb<V>, V, u32)> = (0..n)
            .map(|i| (rand_box::<V>(&mut rng, 400.0, 3.0), V::default(), i as u32))
            .collect();
        let config = TreeConfig::default();
        let mut new: DynamicTree<V, u32> = DynamicTree::new(config);
        new.create_proxies(&items).expect("valid boxes");
        let mut used: DynamicTree<V, u32> = DynamicTree::new(config);
        let id = used
            .create_proxy(items[0].0, V::default(), 0)
            .expect("valid");
        used.destroy_proxy(id).expect("live");
        used.create_proxies(&items).expect("valid boxes");
        assert_eq!(new.validate(), Ok(()));
        assert_eq!(used.validate(), Ok(()));
        assert_eq!(new.nodes.len(), 2 * n - 1);
        assert_eq!(used.nodes.len(), 2 * n - 1);
        assert_eq!(new.root, 0);
        for i in 0..2 * n as u32 - 1 {
            let (a, b) = (new.nodes[i as usize], used.nodes[i as usize]);
            assert_eq!(
                (a.aabb, a.parent, a.child1, a.child2, a.height()),
                (b.aabb, b.parent, b.child1, b.child2, b.height()),
                "node {i} of {n}"
            );
        }
        for slot in 0..n {
            assert_eq!(
                new.proxies[slot].leaf, used.proxies[slot].leaf,
                "slot {slot}"
            );
        }
        new.update_pairs().expect("pairs");
        used.update_pairs().expect("pairs");
        let mut a = new.pair_indices().to_vec();
        let mut b = used.pair_indices().to_vec();
        a.sort_unstable();
        b.sort_unstable();
        assert!(!a.is_empty());
        assert_eq!(a, b);
    }
    check::<Vec2>(20_000, 1);
    check::<Vec3>(17_000, 2);
    check::<Vec2>(70_000, 3);
}

/// A large batch into a new tree refused at its last item leaves the tree new (no proxy,
/// no node, the same next handle), and the same batch without the bad item then builds the
/// tree a new tree builds.
#[test]
fn a_refused_large_batch_into_a_new_tree_leaves_it_new() {
    let n = 20_000;
    let mut rng = Rng(5);
    let mut items: Vec<(Aabb<Vec2>, Vec2, u32)> = (0..n)
        .map(|i| (rand_box::<Vec2>(&mut rng, 400.0, 3.0), Vec2::ZERO, i as u32))
        .collect();
    let good = items.clone();
    items[n - 1].0.min.x = f32::NAN;
    let mut tree: DynamicTree<Vec2, u32> = DynamicTree::new(TreeConfig::default());
    match tree.create_proxies(&items) {
        Err(TreeError::InBatch { index, .. }) => assert_eq!(index, n - 1),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        (tree.len(), tree.nodes.len(), tree.proxies.len()),
        (0, 0, 0)
    );
    assert_eq!(tree.root, NULL);
    let ids = tree.create_proxies(&good).expect("valid boxes");
    let mut new: DynamicTree<Vec2, u32> = DynamicTree::new(TreeConfig::default());
    assert_eq!(ids, new.create_proxies(&good).expect("valid boxes"));
    assert_eq!(tree.validate(), Ok(()));
    for i in 0..2 * n - 1 {
        let (a, b) = (tree.nodes[i], new.nodes[i]);
        assert_eq!(
            (a.aabb, a.parent, a.child1, a.child2),
            (b.aabb, b.parent, b.child1, b.child2)
        );
    }
}

/// `n` random 2D boxes (side `side`, sizes up to `size`) as batch items, user data = index.
fn random_items(rng: &mut Rng, n: u32, side: f32, size: f32) -> Vec<(Aabb<Vec2>, Vec2, u32)> {
    (0..n)
        .map(|i| (rand_box::<Vec2>(rng, side, size), Vec2::ZERO, i))
        .collect()
}

/// The interleaved flagging of the moved traversal flags exactly the moved leaves and their
/// ancestors, each once, whatever the number of leaves against the climbs side by side
/// (fewer, as many, more; leaves that share every ancestor, all of them, none), and clearing
/// what it pushed leaves no flag.
#[test]
fn the_moved_leaves_and_their_ancestors_are_flagged_once_each() {
    use super::pairs::{CLIMBS, clear_dirty, mark_dirty_above};
    let mut rng = Rng(2024);
    let mut tree = DynamicTree::<Vec2, u32>::new(TreeConfig::default());
    tree.create_proxies(&random_items(&mut rng, 500, 100.0, 3.0))
        .expect("batch");
    // A few single insertions too, so that the pool is not in walk order.
    for i in 500..540u32 {
        let b = rand_box::<Vec2>(&mut rng, 100.0, 3.0);
        tree.create_proxy(b, Vec2::ZERO, i).expect("insert");
    }
    let leaves: Vec<u32> = (0..tree.nodes.len() as u32)
        .filter(|&i| !tree.nodes[i as usize].is_free() && tree.nodes[i as usize].is_leaf())
        .collect();
    assert_eq!(leaves.len(), 540);
    // Siblings (one parent: the second climb stops at once), a run of neighbours, every leaf.
    let sibling_pair = {
        let parent = tree.nodes[leaves[0] as usize].parent;
        let p = &tree.nodes[parent as usize];
        vec![p.child1, p.child2]
    };
    let mut sets: Vec<Vec<u32>> = vec![Vec::new(), sibling_pair, leaves.clone()];
    for count in [1, CLIMBS - 1, CLIMBS, CLIMBS + 1, 3 * CLIMBS + 5, 200] {
        let mut set = leaves.clone();
        // A seeded shuffle, then the first `count`.
        for k in (1..set.len()).rev() {
            set.swap(k, rng.index(k + 1));
        }
        set.truncate(count);
        sets.push(set);
    }
    for set in &sets {
        // Expected: every node on the way from each leaf to the root.
        let mut want = vec![false; tree.nodes.len()];
        for &leaf in set {
            let mut i = leaf;
            while i != node::NULL {
                want[i as usize] = true;
                i = tree.nodes[i as usize].parent;
            }
        }
        let mut marked = Vec::new();
        mark_dirty_above(&mut tree.nodes, set.iter().copied(), &mut marked);
        let mut pushed = marked.clone();
        pushed.sort_unstable();
        let expected: Vec<u32> = (0..tree.nodes.len() as u32)
            .filter(|&i| want[i as usize])
            .collect();
        assert_eq!(
            pushed,
            expected,
            "{} leaves: each flagged node pushed once",
            set.len()
        );
        for (i, n) in tree.nodes.iter().enumerate() {
            assert_eq!(n.is_dirty(), want[i], "{} leaves: node {i}", set.len());
        }
        clear_dirty(&mut tree.nodes, &marked);
        assert!(
            tree.nodes.iter().all(|n| !n.is_dirty()),
            "{} leaves",
            set.len()
        );
        tree.validate().expect("valid");
    }
}

/// Two chains of nested boxes (each box holds every earlier one of its chain), offset so that
/// every box of one overlaps every box of the other: inserted one by one without balancing,
/// the tree is hundreds of levels deep, far past the depth at which the pair walk sets pairs
/// aside for later. Every pair comes out once (brute force), on one thread and split, from
/// scratch and after a few moves, and a limit stops the walk with the tree left clean.
#[test]
fn a_tree_hundreds_of_levels_deep_gives_every_pair() {
    const PER_CHAIN: u32 = 200;
    for pairs in [PairMethod::SelfTraversal, PairMethod::MovedTraversal] {
        let mut tree = DynamicTree::<Vec2, u32>::new(TreeConfig {
            pairs,
            balancing: Balancing::None,
            ..TreeConfig::default()
        });
        let mut ids = Vec::new();
        for i in 0..PER_CHAIN {
            let r = 1.0 + i as f32;
            for (chain, cx) in [(0, 0.0f32), (1, 0.5)] {
                let b = b2(cx - r, -r, cx + r, r);
                ids.push(
                    tree.create_proxy(b, Vec2::ZERO, 2 * i + chain)
                        .expect("insert"),
                );
            }
        }
        let height = tree.stats().height;
        assert!(height >= 150, "{pairs:?}: height {height}");
        let n = 2 * PER_CHAIN as usize;
        for &parallel in SPLIT {
            let mut t = tree.clone();
            t.update_pairs_on(parallel).expect("no pair limit");
            assert_eq!(
                t.pair_count(),
                n * (n - 1) / 2,
                "{pairs:?} parallel {parallel}"
            );
            assert_eq!(t.pairs(), brute_pairs(&t).as_slice(), "{pairs:?}");
        }
        tree.update_pairs().expect("no pair limit");
        // A few of the innermost move far away (their pairs go) and one comes back.
        for (k, &id) in ids.iter().take(5).enumerate() {
            let x = 1000.0 + 10.0 * k as f32;
            tree.move_proxy(id, b2(x, 0.0, x + 1.0, 1.0), Vec2::ZERO)
                .expect("move");
        }
        tree.update_pairs().expect("no pair limit");
        tree.validate().expect("valid");
        assert_eq!(tree.pair_count(), (n - 5) * (n - 6) / 2, "{pairs:?}");
        assert_eq!(tree.pairs(), brute_pairs(&tree).as_slice(), "{pairs:?}");
        // Moved once more with a limit below the count: the walk stops, nothing is held.
        tree.move_proxy(ids[0], b2(0.0, 0.0, 1.0, 1.0), Vec2::ZERO)
            .expect("move");
        tree.set_pair_limit(1000);
        assert_eq!(
            tree.update_pairs(),
            Err(TreeError::PairLimit { limit: 1000 }),
            "{pairs:?}"
        );
        assert_eq!(tree.pair_count(), 0, "{pairs:?}");
        assert!(tree.nodes.iter().all(|n| !n.is_dirty()), "{pairs:?}: DIRTY");
        tree.validate().expect("valid");
        tree.set_pair_limit(usize::MAX);
        tree.update_pairs().expect("no pair limit");
        assert_eq!(tree.pairs(), brute_pairs(&tree).as_slice(), "{pairs:?}");
    }
}

/// Reading ahead for moves takes any handles without a panic: leaving and staying proxies
/// (more than the climbs side by side), a destroyed one, a slot reused since, a tree of one
/// leaf (the root, no parent), an empty tree. (It borrows the tree immutably, so it cannot
/// change it.)
#[test]
fn reading_ahead_for_moves_takes_any_handle() {
    let mut rng = Rng(31);
    let mut tree = DynamicTree::<Vec2, u32>::new(TreeConfig::default());
    let nowhere = ProxyId {
        index: 5,
        generation: 0,
    };
    tree.warm_moves([(nowhere, b2(0.0, 0.0, 1.0, 1.0))]);
    let only = tree
        .create_proxy(b2(0.0, 0.0, 1.0, 1.0), Vec2::ZERO, 0)
        .expect("create");
    tree.warm_moves([(only, b2(50.0, 50.0, 51.0, 51.0))]);
    let mut ids = tree
        .create_proxies(&random_items(&mut rng, 399, 200.0, 4.0))
        .expect("batch");
    ids.insert(0, only);
    let gone = ids[7];
    tree.destroy_proxy(gone).expect("destroy");
    let reused = tree
        .create_proxy(b2(0.0, 0.0, 1.0, 1.0), Vec2::ZERO, 999)
        .expect("create");
    assert_eq!(reused.index, gone.index, "the slot is reused");
    // Half leave their fat boxes, half stay; the stale handle asks for a far box.
    let moves: Vec<(ProxyId, Aabb<Vec2>)> = ids
        .iter()
        .enumerate()
        .map(|(k, &id)| {
            let tight = tree.tight_aabb(id).unwrap_or(b2(0.0, 0.0, 1.0, 1.0));
            let shift = if k % 2 == 0 { 50.0 } else { 0.0 };
            (
                id,
                Aabb::new(
                    tight.min + Vec2::splat(shift),
                    tight.max + Vec2::splat(shift),
                ),
            )
        })
        .collect();
    tree.warm_moves(moves.iter().copied());
    tree.warm_moves(std::iter::empty());
    tree.validate().expect("valid");
}

/// `move_within_fat` takes a move that stays inside the fat box as `move_proxy` does (same
/// tight box, velocity, work counts and tree), and leaves everything as it was for a move
/// that leaves the fat box, a NaN, an inverted box or a non-finite velocity (for
/// `move_proxy` to move or refuse); a stale handle is an error.
#[test]
fn a_move_within_the_fat_box_is_the_move_proxy_makes() {
    let mut rng = Rng(12);
    let mut tree = DynamicTree::<Vec2, u32>::new(TreeConfig::default());
    let ids = tree
        .create_proxies(&random_items(&mut rng, 50, 40.0, 2.0))
        .expect("batch");
    let id = ids[3];
    let tight = tree.tight_aabb(id).expect("live");
    let inside = Aabb::new(tight.min + Vec2::splat(0.05), tight.max + Vec2::splat(0.05));
    let mut other = tree.clone();
    assert_eq!(tree.move_within_fat(id, inside, Vec2::X), Ok(true));
    assert_eq!(other.move_proxy(id, inside, Vec2::X), Ok(false));
    assert_eq!(tree.tight_aabb(id), Ok(inside));
    assert_eq!(tree.velocity(id), Ok(Vec2::X));
    assert_eq!(tree.work(), other.work());
    assert_eq!(tree.structure_hash(), other.structure_hash());
    let (hash, work) = (tree.structure_hash(), tree.work());
    let far = Aabb::new(tight.min + Vec2::splat(30.0), tight.max + Vec2::splat(30.0));
    let nan = Aabb::new(Vec2::new(f32::NAN, 0.0), inside.max);
    let inverted = Aabb::new(inside.max, inside.min);
    for (b, v) in [
        (far, Vec2::ZERO),
        (nan, Vec2::ZERO),
        (inverted, Vec2::ZERO),
        (inside, Vec2::new(f32::INFINITY, 0.0)),
    ] {
        assert_eq!(tree.move_within_fat(id, b, v), Ok(false), "{b:?} {v:?}");
        assert_eq!(tree.tight_aabb(id), Ok(inside));
        assert_eq!(tree.velocity(id), Ok(Vec2::X));
        assert_eq!((tree.structure_hash(), tree.work()), (hash, work));
    }
    tree.destroy_proxy(id).expect("destroy");
    assert_eq!(
        tree.move_within_fat(id, inside, Vec2::ZERO),
        Err(TreeError::StaleProxy(id))
    );
    tree.validate().expect("valid");
}

/// One move of a batch: a handle, its new tight box and velocity.
type Move = (ProxyId, Aabb<Vec2>, Vec2);

/// Every proxy's tight box, velocity and fat box, in handle order.
fn proxy_states(tree: &DynamicTree<Vec2, u32>) -> Vec<(ProxyId, Aabb<Vec2>, Vec2, Aabb<Vec2>)> {
    tree.proxies()
        .into_iter()
        .map(|id| {
            let tight = tree.tight_aabb(id).expect("live");
            let velocity = tree.velocity(id).expect("live");
            (id, tight, velocity, tree.fat_aabb(id).expect("live"))
        })
        .collect()
}

/// Moves of every proxy of `ids` (in an order that depends on `step`) by a random shift of
/// up to `reach` a side: with margin 0.1, some stay in their fat boxes and some leave.
fn random_moves(
    tree: &DynamicTree<Vec2, u32>,
    ids: &[ProxyId],
    rng: &mut Rng,
    reach: f32,
    step: usize,
) -> Vec<Move> {
    let mut moves: Vec<_> = ids
        .iter()
        .map(|&id| {
            let tight = tree.tight_aabb(id).expect("live");
            let d = rand_vec::<Vec2>(rng, -reach, reach);
            (id, Aabb::new(tight.min + d, tight.max + d), d * 60.0)
        })
        .collect();
    if step % 2 == 1 {
        moves.reverse();
    }
    moves
}

/// The settings the batch tests run under: every update mode, and one with a look-ahead.
fn batch_configs() -> impl Iterator<Item = (usize, TreeConfig)> {
    [
        UpdateMode::LocalReinsert,
        UpdateMode::Reinsert,
        UpdateMode::EnlargeAndRebuild,
        UpdateMode::LocalReinsert,
    ]
    .into_iter()
    .enumerate()
    .map(|(c, update)| {
        let config = TreeConfig {
            update,
            velocity_lookahead: if c == 3 { 0.02 } else { 0.0 },
            ..TreeConfig::default()
        };
        (c, config)
    })
}

/// `moves` made with `move_proxy` one by one; the positions of those that reinserted.
fn moved_one_by_one(one: &mut DynamicTree<Vec2, u32>, moves: &[Move]) -> Vec<usize> {
    (0..moves.len())
        .filter(|&k| {
            let (id, tight, velocity) = moves[k];
            one.move_proxy(id, tight, velocity).expect("valid move")
        })
        .collect()
}

/// After a step, the batch's tree is the one moved one by one: valid, the same structure,
/// boxes, velocities, work counts and events, and (after a pair update of each) the same
/// pairs and structure.
fn assert_batch_is_one_by_one(
    batch: &mut DynamicTree<Vec2, u32>,
    one: &mut DynamicTree<Vec2, u32>,
    step: usize,
) {
    batch.validate().expect("valid after a batch");
    assert_eq!(batch.structure_hash(), one.structure_hash(), "step {step}");
    assert_eq!(proxy_states(batch), proxy_states(one), "step {step}");
    assert_eq!(batch.work(), one.work(), "step {step}");
    assert_eq!(batch.take_events(), one.take_events(), "step {step}");
    one.update_pairs().expect("no limit");
    batch.update_pairs().expect("no limit");
    assert_eq!(batch.pairs(), one.pairs(), "step {step}");
    assert_eq!(batch.structure_hash(), one.structure_hash(), "step {step}");
}

/// A batch of moves is the moves one by one: for every update mode (and with a look-ahead),
/// over 30 steps of random moves, the same reinserted items, the same tree (structure hash),
/// tight and fat boxes, velocities, work counts, events and pairs, and the tree valid.
#[test]
fn a_batch_of_moves_is_the_moves_one_by_one() {
    for (c, config) in batch_configs() {
        let mut rng = Rng(41 + c as u64);
        let mut one = DynamicTree::<Vec2, u32>::new(config);
        one.set_recording(true);
        let mut ids = one
            .create_proxies(&random_items(&mut rng, 300, 100.0, 3.0))
            .expect("batch");
        // A slot destroyed and used again: handles of another generation in the batch.
        one.destroy_proxy(ids[10]).expect("destroy");
        ids[10] = one
            .create_proxy(b2(5.0, 5.0, 6.0, 6.0), Vec2::ZERO, 10)
            .expect("create");
        assert_eq!(ids[10].generation, 1);
        one.update_pairs().expect("no limit");
        let _ = one.take_events();
        let mut batch = one.clone();
        let (mut stayed, mut left) = (0, 0);
        for step in 0..30 {
            let moves = random_moves(&one, &ids, &mut rng, 0.15, step);
            let expected = moved_one_by_one(&mut one, &moves);
            let mut got = Vec::new();
            let count = batch
                .move_proxies_with(moves.len(), |k| moves[k], |k| got.push(k))
                .expect("valid batch");
            assert_eq!(got, expected, "step {step}: reinserted items");
            assert_eq!(count, expected.len());
            left += count;
            stayed += moves.len() - count;
            assert_batch_is_one_by_one(&mut batch, &mut one, step);
        }
        assert!(
            stayed > 500 && left > 500,
            "{config:?}: {stayed} stayed, {left} left"
        );
    }
    // An empty batch changes nothing.
    let mut tree = DynamicTree::<Vec2, u32>::new(TreeConfig::default());
    let ids = tree
        .create_proxies(&random_items(&mut Rng(5), 20, 30.0, 2.0))
        .expect("batch");
    tree.update_pairs().expect("no limit");
    let before = tree.clone();
    assert_eq!(
        tree.move_proxies_with(
            0,
            |k| (ids[k], b2(0.0, 0.0, 1.0, 1.0), Vec2::ZERO),
            |_| { unreachable!("no item") }
        ),
        Ok(0)
    );
    assert!(!tree.update_pairs().expect("no limit").recomputed);
    assert_eq!(observable(tree), observable(before));
}

/// A batch of moves with one bad item is refused whole, naming the item and its error (as
/// `move_proxy` would give it; a handle given twice is refused too), and leaves the tree as
/// it was: pool, proxies' boxes and velocities, work counts, events, move buffer (so the
/// next update finds the same pairs). The good batch then goes in as the moves one by one.
#[test]
fn a_refused_batch_of_moves_leaves_the_tree_as_it_was() {
    let mut rng = Rng(77);
    let config = TreeConfig {
        velocity_lookahead: 4.0,
        ..TreeConfig::default()
    };
    let mut tree = DynamicTree::<Vec2, u32>::new(config);
    let ids = tree
        .create_proxies(&random_items(&mut rng, 200, 80.0, 3.0))
        .expect("batch");
    let gone = tree
        .create_proxy(b2(1.0, 1.0, 2.0, 2.0), Vec2::ZERO, 999)
        .expect("create");
    tree.destroy_proxy(gone).expect("destroy");
    tree.update_pairs().expect("no limit");
    tree.set_recording(true);
    // Moves whose first 60 leave their fat boxes (before any bad item), the rest stay.
    let good: Vec<_> = ids
        .iter()
        .enumerate()
        .map(|(k, &id)| {
            let tight = tree.tight_aabb(id).expect("live");
            let d = Vec2::splat(if k < 60 { 0.5 } else { 0.01 });
            (id, Aabb::new(tight.min + d, tight.max + d), Vec2::X)
        })
        .collect();
    let inside = good[150].1;
    let nan = Aabb::new(Vec2::new(f32::NAN, 0.0), inside.max);
    let far = Aabb::new(
        inside.min + Vec2::splat(20.0),
        inside.max + Vec2::splat(20.0),
    );
    let never = ProxyId {
        index: 5000,
        generation: 0,
    };
    let cases: [(usize, Move, TreeError); 7] = [
        (150, (gone, inside, Vec2::X), TreeError::StaleProxy(gone)),
        (150, (never, inside, Vec2::X), TreeError::StaleProxy(never)),
        (150, good[3], TreeError::DuplicateInBatch(ids[3])),
        (150, (ids[150], nan, Vec2::X), TreeError::NonFinite),
        (
            150,
            (ids[150], Aabb::new(inside.max, inside.min), Vec2::X),
            TreeError::Inverted,
        ),
        (
            150,
            (ids[150], inside, Vec2::new(f32::INFINITY, 0.0)),
            TreeError::NonFinite,
        ),
        // A fat box stretched by the look-ahead past f32.
        (
            150,
            (ids[150], far, Vec2::new(f32::MAX, 0.0)),
            TreeError::NonFinite,
        ),
    ];
    for (at, bad, error) in cases {
        let before = tree.clone();
        let mut moves = good.clone();
        moves[at] = bad;
        let mut called = 0;
        let refused = tree.move_proxies_with(moves.len(), |k| moves[k], |_| called += 1);
        assert_eq!(
            refused,
            Err(TreeError::InBatch {
                index: at,
                error: Box::new(error.clone())
            }),
            "{bad:?}"
        );
        assert_eq!(called, 0);
        // `move_proxy` refuses the item alike (a handle twice is only wrong in a batch).
        if !matches!(error, TreeError::DuplicateInBatch(_)) {
            assert_eq!(tree.clone().move_proxy(bad.0, bad.1, bad.2), Err(error));
        }
        tree.validate().expect("valid after a refused batch");
        assert_eq!(proxy_states(&tree), proxy_states(&before));
        assert_eq!(tree.work(), before.work());
        assert!(tree.take_events().is_empty());
        assert_eq!(observable(tree.clone()), observable(before));
    }
    let mut one = tree.clone();
    let expected: Vec<usize> = good
        .iter()
        .enumerate()
        .filter(|&(_, &(id, tight, velocity))| one.move_proxy(id, tight, velocity).expect("valid"))
        .map(|(k, _)| k)
        .collect();
    assert_eq!(expected, (0..60).collect::<Vec<_>>());
    let mut got = Vec::new();
    assert_eq!(
        tree.move_proxies_with(good.len(), |k| good[k], |k| got.push(k)),
        Ok(60)
    );
    assert_eq!(got, expected);
    tree.validate().expect("valid");
    assert_eq!(proxy_states(&tree), proxy_states(&one));
    assert_eq!(tree.take_events(), one.take_events());
    assert_eq!(observable(tree), observable(one));
}

/// A [`MoveBatch`] moved step after step is the moves one by one: for every update mode, over
/// 30 steps of random moves, with proxies created and destroyed between steps (the batch is
/// then made anew, and its handles checked again), in one run and in runs with reading
/// ahead, the same reinserted items, tree, boxes, velocities, work counts, events and pairs.
#[test]
fn a_move_batch_is_the_moves_one_by_one() {
    for (c, config) in batch_configs() {
        let mut rng = Rng(141 + c as u64);
        let mut one = DynamicTree::<Vec2, u32>::new(config);
        one.set_recording(true);
        // 300 proxies: the batch goes in runs, reading ahead (from 250 in the unit tests);
        // 200: in one run.
        let n = if c == 1 { 200 } else { 300 };
        let mut ids = one
            .create_proxies(&random_items(&mut rng, n, 100.0, 3.0))
            .expect("batch");
        one.update_pairs().expect("no limit");
        let _ = one.take_events();
        let mut batch_tree = one.clone();
        let (mut stayed, mut left) = (0, 0);
        let mut handles = MoveBatch::new(ids.clone());
        for step in 0..30 {
            // Every seventh step a proxy goes and another comes, in both trees alike.
            if step % 7 == 6 {
                let gone = ids.remove(step % ids.len());
                one.destroy_proxy(gone).expect("destroy");
                batch_tree.destroy_proxy(gone).expect("destroy");
                let made = one
                    .create_proxy(b2(5.0, 5.0, 6.0, 6.0), Vec2::ZERO, 1000 + step as u32)
                    .expect("create");
                assert_eq!(
                    batch_tree.create_proxy(b2(5.0, 5.0, 6.0, 6.0), Vec2::ZERO, 1000 + step as u32),
                    Ok(made)
                );
                ids.push(made);
                handles = MoveBatch::new(ids.clone());
            }
            let moves = random_moves(&one, &ids, &mut rng, 0.15, 0);
            let expected = moved_one_by_one(&mut one, &moves);
            let mut got = Vec::new();
            let count = batch_tree
                .move_batch_with(&mut handles, |k| (moves[k].1, moves[k].2), |k| got.push(k))
                .expect("valid batch");
            assert_eq!(got, expected, "step {step}: reinserted items");
            assert_eq!(count, expected.len());
            left += count;
            stayed += moves.len() - count;
            assert_batch_is_one_by_one(&mut batch_tree, &mut one, step);
        }
        assert!(
            stayed > 500 && left > 500,
            "{config:?}: {stayed} stayed, {left} left"
        );
    }
    // An empty batch changes nothing.
    let mut tree = DynamicTree::<Vec2, u32>::new(TreeConfig::default());
    tree.create_proxies(&random_items(&mut Rng(5), 20, 30.0, 2.0))
        .expect("batch");
    tree.update_pairs().expect("no limit");
    let before = tree.clone();
    assert_eq!(
        tree.move_batch_with(
            &mut MoveBatch::default(),
            |_| unreachable!("no item"),
            |_| unreachable!("no item")
        ),
        Ok(0)
    );
    assert!(!tree.update_pairs().expect("no limit").recomputed);
    assert_eq!(observable(tree), observable(before));
}

/// A [`MoveBatch`] whose handles are bad is refused before anything moves, naming the first
/// bad handle: a destroyed proxy, a handle given twice, a slot never made; also a batch
/// checked against one tree and then used on a copy that destroyed one of its proxies, or on
/// the tree it was copied from when the batch names a proxy only the copy made.
#[test]
fn a_move_batch_with_bad_handles_moves_nothing() {
    let mut rng = Rng(78);
    let mut tree = DynamicTree::<Vec2, u32>::new(TreeConfig::default());
    let ids = tree
        .create_proxies(&random_items(&mut rng, 120, 60.0, 3.0))
        .expect("batch");
    tree.update_pairs().expect("no limit");
    let shifted = |tree: &DynamicTree<Vec2, u32>, id: ProxyId| {
        let tight = tree.tight_aabb(id).unwrap_or(b2(0.0, 0.0, 1.0, 1.0));
        let d = Vec2::splat(0.5);
        (Aabb::new(tight.min + d, tight.max + d), Vec2::X)
    };
    let never = ProxyId {
        index: 5000,
        generation: 0,
    };
    let mut gone_tree = tree.clone();
    gone_tree.destroy_proxy(ids[40]).expect("destroy");
    for (at, bad, error) in [
        (0, never, TreeError::StaleProxy(never)),
        (70, ids[3], TreeError::DuplicateInBatch(ids[3])),
        (119, never, TreeError::StaleProxy(never)),
    ] {
        let mut handles = ids.clone();
        handles[at] = bad;
        let mut batch = MoveBatch::new(handles);
        let before = tree.clone();
        let mut moved = tree.clone();
        let ids_now = batch.ids().to_vec();
        let refused = moved.move_batch_with(
            &mut batch,
            |k| shifted(&before, ids_now[k]),
            |_| unreachable!("nothing moves"),
        );
        assert_eq!(
            refused,
            Err(TreeError::InBatch {
                index: at,
                error: Box::new(error)
            })
        );
        assert_eq!(proxy_states(&moved), proxy_states(&before));
        assert_eq!(moved.work(), before.work());
        assert_eq!(observable(moved), observable(before));
    }
    // Checked against the tree, then used on a copy that destroyed proxy 40.
    let mut batch = MoveBatch::new(ids.clone());
    let mut checked = tree.clone();
    checked
        .move_batch_with(&mut batch, |k| shifted(&tree, ids[k]), |_| {})
        .expect("good handles");
    let before = gone_tree.clone();
    assert_eq!(
        gone_tree.move_batch_with(&mut batch, |k| shifted(&before, ids[k]), |_| {}),
        Err(TreeError::InBatch {
            index: 40,
            error: Box::new(TreeError::StaleProxy(ids[40]))
        })
    );
    assert_eq!(proxy_states(&gone_tree), proxy_states(&before));
    // Checked against a copy that made a proxy, then used on the tree without it.
    let mut grown = tree.clone();
    let extra = grown
        .create_proxy(b2(1.0, 1.0, 2.0, 2.0), Vec2::ZERO, 999)
        .expect("create");
    let mut all = ids.clone();
    all.push(extra);
    let mut batch = MoveBatch::new(all.clone());
    let grown_before = grown.clone();
    grown
        .move_batch_with(&mut batch, |k| shifted(&grown_before, all[k]), |_| {})
        .expect("good handles");
    let before = tree.clone();
    assert_eq!(
        tree.move_batch_with(&mut batch, |k| shifted(&before, all[k]), |_| {}),
        Err(TreeError::InBatch {
            index: 120,
            error: Box::new(TreeError::StaleProxy(extra))
        })
    );
    assert_eq!(observable(tree), observable(before));
}

/// A [`MoveBatch`] with a bad box or velocity at item `k` makes the moves before it, exactly
/// as `move_proxy` one by one, and none after it; the tree stays valid, and the next good
/// batch goes in as the moves one by one.
#[test]
fn a_move_batch_with_a_bad_box_makes_the_moves_before_it() {
    // 200 proxies: one run; 400: runs of 16 with reading ahead (from 250 in the unit tests).
    for n in [200, 400] {
        a_move_batch_with_a_bad_box_of(n);
    }
}

fn a_move_batch_with_a_bad_box_of(n: u32) {
    let mut rng = Rng(79);
    let config = TreeConfig {
        velocity_lookahead: 4.0,
        ..TreeConfig::default()
    };
    let mut start = DynamicTree::<Vec2, u32>::new(config);
    let ids = start
        .create_proxies(&random_items(&mut rng, n, 80.0, 3.0))
        .expect("batch");
    start.update_pairs().expect("no limit");
    start.set_recording(true);
    // The first 60 leave their fat boxes, the rest stay.
    let good: Vec<(Aabb<Vec2>, Vec2)> = ids
        .iter()
        .enumerate()
        .map(|(k, &id)| {
            let tight = start.tight_aabb(id).expect("live");
            let d = Vec2::splat(if k < 60 { 0.5 } else { 0.01 });
            (Aabb::new(tight.min + d, tight.max + d), Vec2::X)
        })
        .collect();
    let nan = Aabb::new(Vec2::new(f32::NAN, 0.0), Vec2::ONE);
    let far = Aabb::new(good[150].0.min + 20.0, good[150].0.max + 20.0);
    for (at, bad, error) in [
        (150, (nan, Vec2::X), TreeError::NonFinite),
        (30, (nan, Vec2::X), TreeError::NonFinite),
        (
            0,
            (good[0].0, Vec2::new(f32::NAN, 0.0)),
            TreeError::NonFinite,
        ),
        (
            150,
            (Aabb::new(good[150].0.max, good[150].0.min), Vec2::X),
            TreeError::Inverted,
        ),
        (150, (far, Vec2::new(f32::MAX, 0.0)), TreeError::NonFinite),
    ] {
        let mut moves = good.clone();
        moves[at] = bad;
        let mut one = start.clone();
        let expected: Vec<usize> = (0..at)
            .filter(|&k| {
                one.move_proxy(ids[k], moves[k].0, moves[k].1)
                    .expect("good")
            })
            .collect();
        assert_eq!(expected, (0..at.min(60)).collect::<Vec<_>>());
        assert_eq!(
            one.clone().move_proxy(ids[at], bad.0, bad.1),
            Err(error.clone())
        );
        let mut tree = start.clone();
        let mut batch = MoveBatch::new(ids.clone());
        let mut got = Vec::new();
        assert_eq!(
            tree.move_batch_with(&mut batch, |k| moves[k], |k| got.push(k)),
            Err(TreeError::InBatch {
                index: at,
                error: Box::new(error)
            })
        );
        assert_eq!(got, expected);
        tree.validate().expect("valid after a refused item");
        assert_eq!(proxy_states(&tree), proxy_states(&one), "{n}: at {at}");
        assert_eq!(tree.work(), one.work());
        assert_eq!(tree.take_events(), one.take_events());
        assert_eq!(observable(tree.clone()), observable(one.clone()));
        // The good batch goes in after it as one by one.
        let mut got = Vec::new();
        let count = tree
            .move_batch_with(&mut batch, |k| good[k], |k| got.push(k))
            .expect("good");
        let expected: Vec<usize> = (0..good.len())
            .filter(|&k| one.move_proxy(ids[k], good[k].0, good[k].1).expect("good"))
            .collect();
        assert_eq!((got, count), (expected.clone(), expected.len()));
        assert_eq!(proxy_states(&tree), proxy_states(&one));
        assert_eq!(observable(tree), observable(one));
    }
}
