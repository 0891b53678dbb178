//! The tree view's layouts: where each drawn node sits in layout space (x in leaf slots, y in
//! depth levels), for the node-link diagram or the icicle, with folded branches standing for
//! their subtrees; and the folding itself, kept by keys that survive the tree's steps.

use eframe::egui;

use crate::prefs::{TREE_DEPTH_ALL, TreeLayoutKind};
use crate::snapshot::Snapshot;
use egui::vec2;
use std::collections::{BTreeSet, VecDeque};

/// Marks an empty entry of the layout's per-node tables.
const NONE: u32 = u32::MAX;

/// A branch's name for folding that survives the tree's steps (its `NodeId` is reused): the
/// smallest sphere id below it and how many leaves lie below. Unique within one tree: two
/// nodes over the same smallest leaf lie on one path from the root, and an ancestor has more
/// leaves than any of its descendants.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FoldKey {
    /// The smallest sphere id below the branch.
    pub first_sphere: u32,
    /// How many leaves lie below it.
    pub leaves: u32,
}

/// Which branches are folded: those at [`Folding::depth`] and deeper unless opened, and
/// those folded one by one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Folding {
    /// Branches this deep and deeper are folded unless opened (`u32::MAX`: none).
    pub depth: u32,
    /// Branches folded one by one.
    pub folded: BTreeSet<FoldKey>,
    /// Branches at or below `depth` opened one by one.
    pub opened: BTreeSet<FoldKey>,
}

impl Default for Folding {
    fn default() -> Self {
        Folding::to_depth(u32::MAX)
    }
}

impl Folding {
    /// Every branch at `depth` and deeper folded, nothing else.
    #[must_use]
    pub fn to_depth(depth: u32) -> Folding {
        Folding {
            depth,
            folded: BTreeSet::new(),
            opened: BTreeSet::new(),
        }
    }

    /// The folding for a collapse depth preference ([`TREE_DEPTH_ALL`] and above fold
    /// nothing; 0 counts as 1, so the root stays open).
    #[must_use]
    pub fn depth_of_pref(pref: u32) -> u32 {
        if pref >= TREE_DEPTH_ALL {
            u32::MAX
        } else {
            pref.max(1)
        }
    }

    /// True when the branch `key` at `depth` is folded.
    #[must_use]
    pub fn is_folded(&self, key: FoldKey, depth: u32) -> bool {
        self.folded.contains(&key) || (depth >= self.depth && !self.opened.contains(&key))
    }

    /// Folds (`fold`) or opens the branch `key` at `depth`.
    pub fn set(&mut self, key: FoldKey, depth: u32, fold: bool) {
        if fold {
            self.opened.remove(&key);
            if depth < self.depth {
                self.folded.insert(key);
            }
        } else {
            self.folded.remove(&key);
            if depth >= self.depth {
                self.opened.insert(key);
            }
        }
    }
}

/// One drawn node of the diagram.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LayoutItem {
    /// Index in [`Snapshot::nodes`].
    pub node: usize,
    /// Position in layout space: x in leaf slots, y in depth levels (the node's centre).
    pub pos: egui::Vec2,
    /// Width in layout space: 1 in the node-link diagram, the leaves below in the icicle.
    pub span: f32,
    /// Layout index of the parent.
    pub parent: Option<usize>,
    /// Layout index of the first item of this node's subtree (items come children first, so
    /// a subtree's items are `first..=` its own index).
    pub first: usize,
    /// For a folded branch: how many leaves it hides (else 0).
    pub hidden_leaves: u32,
}

impl LayoutItem {
    /// The icicle cell in layout space: the node's span wide, one level high.
    #[must_use]
    pub fn cell(&self) -> egui::Rect {
        egui::Rect::from_center_size(self.pos.to_pos2(), vec2(self.span, 1.0))
    }
}

/// The diagram's layout for one state of the tree and one folding.
#[derive(Clone, Debug, Default)]
pub struct TreeLayout {
    /// Drawn nodes, children before parents (depth-first, left to right).
    pub items: Vec<LayoutItem>,
    /// Leaf slots used (the layout's width).
    pub width: f32,
    /// Depth levels shown.
    pub levels: u32,
    /// How it was laid out.
    pub kind: TreeLayoutKind,
    item_of_node: Vec<u32>,
    /// Per snapshot node, the drawn item that stands for it: its own, or its folded
    /// ancestor's ([`TreeLayout::item_for`]).
    drawn_for: Vec<u32>,
    leaves_below: Vec<u32>,
    first_sphere: Vec<u32>,
    /// Breadth-first rank of each branch among the branches (empty unless named).
    branch_rank: Vec<u32>,
    /// Scratch of [`TreeLayout::recompute`]: each node's x, the depth-first stack and the
    /// breadth-first queue.
    x_of: Vec<f32>,
    stack: Vec<(usize, bool)>,
    queue: VecDeque<usize>,
}

impl TreeLayout {
    /// Lays out `snap`'s tree as a node-link diagram, folding branches at depth `collapse` and
    /// deeper.
    #[must_use]
    pub fn compute(snap: &Snapshot, collapse: u32) -> TreeLayout {
        let mut out = TreeLayout::default();
        out.recompute(
            snap,
            &Folding::to_depth(collapse),
            TreeLayoutKind::NodeLink,
            false,
        );
        out
    }

    /// Lays `snap`'s tree out into this layout's buffers (a playing scene lays the tree out
    /// every frame). Node-link: leaves and folded branches take one slot each, left to right
    /// in depth-first order, and a branch sits above the middle of its children. Icicle: each
    /// node is as wide as its leaves, over its children. `names`: rank the branches
    /// breadth-first for [`TreeLayout::branch_name`].
    pub fn recompute(
        &mut self,
        snap: &Snapshot,
        folding: &Folding,
        kind: TreeLayoutKind,
        names: bool,
    ) {
        let n = snap.nodes.len();
        self.kind = kind;
        self.items.clear();
        self.item_of_node.clear();
        self.item_of_node.resize(n, NONE);
        self.drawn_for.clear();
        self.leaves_below.clear();
        self.leaves_below.resize(n, 0);
        self.first_sphere.clear();
        self.first_sphere.resize(n, NONE);
        self.width = 0.0;
        self.levels = 0;
        // Parents come before children: one pass backwards sums the leaves.
        for i in (0..n).rev() {
            let node = &snap.nodes[i];
            if node.children.is_none() {
                self.leaves_below[i] = 1;
                self.first_sphere[i] = node.sphere.unwrap_or(NONE);
            }
            if let Some(p) = node.parent {
                self.leaves_below[p] += self.leaves_below[i];
                self.first_sphere[p] = self.first_sphere[p].min(self.first_sphere[i]);
            }
        }
        self.rank_branches(snap, names);
        if n == 0 {
            return;
        }
        let icicle = kind == TreeLayoutKind::Icicle;
        let x_of = &mut self.x_of;
        x_of.clear();
        x_of.resize(n, 0.0);
        let mut slot = 0.0f32;
        let mut levels = 0;
        let stack = &mut self.stack;
        stack.clear();
        stack.push((0usize, false));
        while let Some((i, visited)) = stack.pop() {
            let node = &snap.nodes[i];
            let leaves = self.leaves_below[i];
            let key = FoldKey {
                first_sphere: self.first_sphere[i],
                leaves,
            };
            let folded = node.children.is_some() && folding.is_folded(key, node.depth);
            let hidden_leaves;
            match node.children {
                Some([a, b]) if !folded => {
                    if !visited {
                        stack.push((i, true));
                        stack.push((b, false));
                        stack.push((a, false));
                        continue;
                    }
                    x_of[i] = 0.5 * (x_of[a] + x_of[b]);
                    if icicle {
                        // The middle of its leaves, not of its children's middles.
                        let left = x_of[a] - 0.5 * self.leaves_below[a] as f32;
                        x_of[i] = left + 0.5 * leaves as f32;
                    }
                    hidden_leaves = 0;
                }
                _ => {
                    let span = if icicle { leaves as f32 } else { 1.0 };
                    x_of[i] = slot + 0.5 * span - 0.5;
                    slot += span;
                    hidden_leaves = if folded { leaves } else { 0 };
                }
            }
            levels = levels.max(node.depth + 1);
            let first = match node.children {
                Some([a, _]) if hidden_leaves == 0 => {
                    self.items[self.item_of_node[a] as usize].first
                }
                _ => self.items.len(),
            };
            self.item_of_node[i] = self.items.len() as u32;
            self.items.push(LayoutItem {
                node: i,
                pos: vec2(x_of[i], node.depth as f32),
                span: if icicle { leaves as f32 } else { 1.0 },
                parent: None,
                first,
                hidden_leaves,
            });
        }
        for k in 0..self.items.len() {
            let node = self.items[k].node;
            self.items[k].parent = snap.nodes[node]
                .parent
                .map(|p| self.item_of_node[p])
                .filter(|&p| p != NONE)
                .map(|p| p as usize);
        }
        // Parents come before children: one pass forwards hands each hidden node its folded
        // ancestor's item, so that finding the item of any node takes one read, not a walk up
        // (the first step of a scene inserts every leaf, and each is looked up: a walk would
        // take as long as the tree is deep, and a tree of 100,000 boxes alike is a list).
        self.drawn_for.resize(n, NONE);
        for i in 0..n {
            let own = self.item_of_node[i];
            self.drawn_for[i] = if own != NONE {
                own
            } else {
                snap.nodes[i].parent.map_or(NONE, |p| self.drawn_for[p])
            };
        }
        self.width = slot;
        self.levels = levels;
    }

    /// Ranks the branches breadth-first from the root, left child first (or forgets the
    /// ranks when `names` is off).
    fn rank_branches(&mut self, snap: &Snapshot, names: bool) {
        self.branch_rank.clear();
        if !names || snap.nodes.is_empty() {
            return;
        }
        self.branch_rank.resize(snap.nodes.len(), NONE);
        let mut rank = 0;
        self.queue.clear();
        self.queue.push_back(0);
        while let Some(i) = self.queue.pop_front() {
            if let Some([a, b]) = snap.nodes[i].children {
                self.branch_rank[i] = rank;
                rank += 1;
                self.queue.extend([a, b]);
            }
        }
    }

    /// The layout position of a snapshot node, when it is drawn.
    #[must_use]
    pub fn position_of(&self, node: usize) -> Option<egui::Vec2> {
        self.item_of(node).map(|k| self.items[k].pos)
    }

    /// The layout index of a snapshot node, when it is drawn.
    #[must_use]
    pub fn item_of(&self, node: usize) -> Option<usize> {
        let k = *self.item_of_node.get(node)?;
        (k != NONE).then_some(k as usize)
    }

    /// How many leaves lie below a snapshot node.
    #[must_use]
    pub fn leaves_below(&self, node: usize) -> u32 {
        self.leaves_below.get(node).copied().unwrap_or(0)
    }

    /// The folding key of a snapshot node (`None` for no such node).
    #[must_use]
    pub fn key_of(&self, node: usize) -> Option<FoldKey> {
        Some(FoldKey {
            first_sphere: *self.first_sphere.get(node)?,
            leaves: self.leaves_below(node),
        })
    }

    /// A branch's name when the branches are named: `a`, `b`, ... `z`, `aa`, `ab`, ... in
    /// breadth-first order from the root.
    #[must_use]
    pub fn branch_name(&self, node: usize) -> Option<String> {
        let rank = *self.branch_rank.get(node)?;
        (rank != NONE).then(|| letters(rank))
    }

    /// The drawn item that stands for a snapshot node: its own, or the folded ancestor's
    /// hiding it (`None` for no such node).
    #[must_use]
    pub fn item_for(&self, node: usize) -> Option<usize> {
        let k = *self.drawn_for.get(node)?;
        (k != NONE).then_some(k as usize)
    }

    /// The layout-space box around the subtree drawn under item `k` (its nodes' centres in
    /// the node-link diagram, its cells in the icicle).
    #[must_use]
    pub fn subtree_extent(&self, k: usize) -> egui::Rect {
        let Some(item) = self.items.get(k) else {
            return egui::Rect::NOTHING;
        };
        let mut out = egui::Rect::NOTHING;
        for it in &self.items[item.first..=k] {
            if self.kind == TreeLayoutKind::Icicle {
                out = out.union(it.cell());
            } else {
                out.extend_with(it.pos.to_pos2());
            }
        }
        out
    }
}

/// `a` for 0, ... `z` for 25, then `aa`, `ab`, ... (as spreadsheet columns, in lowercase).
#[must_use]
pub fn letters(rank: u32) -> String {
    let mut n = u64::from(rank) + 1;
    let mut out = Vec::new();
    while n > 0 {
        n -= 1;
        out.push(b'a' + (n % 26) as u8);
        n /= 26;
    }
    out.reverse();
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::camera::WorldRect;
    use crate::snapshot::NodeItem;
    use crate::tree::NodeId;
    use glam::Vec2;

    fn node(id: u32, depth: u32, parent: Option<usize>, children: Option<[usize; 2]>) -> NodeItem {
        NodeItem {
            id: NodeId(id),
            rect: WorldRect::new(Vec2::ZERO, Vec2::ONE),
            depth,
            height: 0,
            parent,
            children,
            sphere: children.is_none().then_some(id),
            proxy: None,
        }
    }

    /// root(0) -> [a(1) -> [l2, l3], l4]
    fn small() -> Snapshot {
        Snapshot {
            nodes: vec![
                node(0, 0, None, Some([1, 4])),
                node(1, 1, Some(0), Some([2, 3])),
                node(2, 2, Some(1), None),
                node(3, 2, Some(1), None),
                node(4, 1, Some(0), None),
            ],
            max_depth: 2,
            ..Snapshot::default()
        }
    }

    #[test]
    fn leaves_take_slots_and_parents_sit_between_children() {
        let layout = TreeLayout::compute(&small(), 10);
        assert_eq!(layout.width, 3.0);
        assert_eq!(layout.levels, 3);
        assert_eq!(layout.position_of(2), Some(vec2(0.0, 2.0)));
        assert_eq!(layout.position_of(3), Some(vec2(1.0, 2.0)));
        assert_eq!(layout.position_of(1), Some(vec2(0.5, 1.0)));
        assert_eq!(layout.position_of(4), Some(vec2(2.0, 1.0)));
        assert_eq!(layout.position_of(0), Some(vec2(1.25, 0.0)));
        assert_eq!(layout.leaves_below(0), 3);
    }

    #[test]
    fn the_snapshot_counts_the_leaves_the_layout_counts() {
        let snap = small();
        let layout = TreeLayout::compute(&snap, 10);
        for i in 0..snap.nodes.len() {
            assert_eq!(snap.leaves_below(i), layout.leaves_below(i), "node {i}");
        }
        assert_eq!(snap.leaves_below(snap.nodes.len()), 0);
    }

    #[test]
    fn a_recomputed_layout_is_a_fresh_one() {
        let snap = small();
        let mut kept = TreeLayout::default();
        kept.recompute(&snap, &Folding::to_depth(1), TreeLayoutKind::Icicle, true);
        kept.recompute(
            &snap,
            &Folding::to_depth(10),
            TreeLayoutKind::NodeLink,
            false,
        );
        let fresh = TreeLayout::compute(&snap, 10);
        assert_eq!(kept.items, fresh.items);
        assert_eq!((kept.width, kept.levels), (fresh.width, fresh.levels));
        assert_eq!(kept.item_of_node, fresh.item_of_node);
        assert_eq!(kept.drawn_for, fresh.drawn_for);
        assert_eq!(kept.leaves_below, fresh.leaves_below);
        assert_eq!(kept.first_sphere, fresh.first_sphere);
        assert_eq!(kept.branch_rank, fresh.branch_rank);
        kept.recompute(
            &Snapshot::default(),
            &Folding::default(),
            TreeLayoutKind::NodeLink,
            false,
        );
        assert!(kept.items.is_empty() && kept.width == 0.0 && kept.levels == 0);
        assert_eq!(kept.position_of(0), None);
        assert_eq!(kept.item_for(0), None);
    }

    /// A list (each branch a leaf and a branch), `depth` branches deep, in the snapshot's
    /// order (parents first): what boxes all alike make.
    fn list(depth: u32) -> Snapshot {
        let mut nodes = Vec::new();
        let mut id = 0;
        let mut parent = None;
        for d in 0..depth {
            let at = nodes.len();
            nodes.push(node(id, d, parent, Some([at + 1, at + 2])));
            nodes.push(node(id + 1, d + 1, Some(at), None));
            id += 2;
            parent = Some(at);
        }
        nodes.push(node(id, depth, parent, None));
        Snapshot {
            nodes,
            max_depth: depth,
            ..Snapshot::default()
        }
    }

    /// The item standing for every node is its own, or its nearest drawn ancestor's (what a
    /// walk up the parents finds), on every folding of the small tree and of a deep list,
    /// whose hidden nodes all map to the one folded branch.
    #[test]
    fn every_node_maps_to_its_nearest_drawn_ancestor() {
        let walk = |layout: &TreeLayout, snap: &Snapshot, mut i: usize| loop {
            if let Some(k) = layout.item_of(i) {
                return Some(k);
            }
            i = snap.nodes[i].parent?;
        };
        for snap in [small(), list(3), list(2_000)] {
            for collapse in [0, 1, 2, 3, 10, u32::MAX] {
                for kind in [TreeLayoutKind::NodeLink, TreeLayoutKind::Icicle] {
                    let mut layout = TreeLayout::default();
                    layout.recompute(&snap, &Folding::to_depth(collapse), kind, false);
                    for i in 0..snap.nodes.len() {
                        assert_eq!(layout.item_for(i), walk(&layout, &snap, i), "node {i}");
                    }
                    assert_eq!(layout.item_for(snap.nodes.len()), None);
                }
            }
        }
        let snap = list(2_000);
        let layout = TreeLayout::compute(&snap, 3);
        let folded = layout
            .item_of(6)
            .expect("the branch at depth 3 is drawn, folded");
        assert_eq!(layout.items[folded].hidden_leaves, 1_998);
        assert_eq!(layout.item_for(snap.nodes.len() - 1), Some(folded));
    }

    #[test]
    fn collapsing_hides_deeper_nodes_and_counts_them() {
        let snap = small();
        let layout = TreeLayout::compute(&snap, 1);
        assert_eq!(layout.items.len(), 3);
        assert_eq!(layout.position_of(2), None);
        let k = layout.item_for(2).expect("collapsed ancestor");
        assert_eq!(layout.items[k].node, 1);
        assert_eq!(layout.items[k].hidden_leaves, 2);
    }

    #[test]
    fn folding_by_key_hides_the_subtree_and_counts_its_leaves() {
        let snap = small();
        let mut folding = Folding::default();
        let mut layout = TreeLayout::default();
        let key = FoldKey {
            first_sphere: 2,
            leaves: 2,
        };
        assert_eq!(layout_key(&snap, 1), Some(key));
        folding.set(key, 1, true);
        assert!(folding.is_folded(key, 1));
        layout.recompute(&snap, &folding, TreeLayoutKind::NodeLink, false);
        assert_eq!(layout.items.len(), 3);
        assert_eq!(layout.position_of(2), None);
        assert_eq!(layout.position_of(1), Some(vec2(0.0, 1.0)));
        assert_eq!(
            layout.items[layout.item_of(1).expect("drawn")].hidden_leaves,
            2
        );
        folding.set(key, 1, false);
        assert_eq!(folding, Folding::default());
        // Opened below the depth limit: kept open while its siblings' depth stays folded.
        let mut folding = Folding::to_depth(1);
        folding.set(key, 1, false);
        assert!(!folding.is_folded(key, 1));
        assert!(folding.is_folded(
            FoldKey {
                first_sphere: 9,
                leaves: 3
            },
            2
        ));
        assert_eq!(Folding::depth_of_pref(TREE_DEPTH_ALL), u32::MAX);
        assert_eq!(Folding::depth_of_pref(0), 1);
    }

    fn layout_key(snap: &Snapshot, node: usize) -> Option<FoldKey> {
        TreeLayout::compute(snap, 10).key_of(node)
    }

    #[test]
    fn icicle_cells_are_as_wide_as_their_leaves_and_nest() {
        let snap = small();
        let mut layout = TreeLayout::default();
        layout.recompute(&snap, &Folding::default(), TreeLayoutKind::Icicle, false);
        assert_eq!(layout.width, 3.0);
        let cell =
            |layout: &TreeLayout, i: usize| layout.items[layout.item_of(i).expect("drawn")].cell();
        let r = |x0: f32, y0: f32, x1: f32, y1: f32| {
            egui::Rect::from_min_max(egui::pos2(x0, y0), egui::pos2(x1, y1))
        };
        assert_eq!(cell(&layout, 0), r(-0.5, -0.5, 2.5, 0.5));
        assert_eq!(cell(&layout, 1), r(-0.5, 0.5, 1.5, 1.5));
        assert_eq!(cell(&layout, 2), r(-0.5, 1.5, 0.5, 2.5));
        assert_eq!(cell(&layout, 3), r(0.5, 1.5, 1.5, 2.5));
        assert_eq!(cell(&layout, 4), r(1.5, 0.5, 2.5, 1.5));
        assert_eq!(
            layout.subtree_extent(layout.item_of(1).expect("drawn")),
            r(-0.5, 0.5, 1.5, 2.5)
        );
        // Folded, a branch keeps its width.
        let mut folding = Folding::default();
        folding.set(layout.key_of(1).expect("a node"), 1, true);
        layout.recompute(&snap, &folding, TreeLayoutKind::Icicle, false);
        assert_eq!(layout.items.len(), 3);
        assert_eq!(cell(&layout, 1), r(-0.5, 0.5, 1.5, 1.5));
        assert_eq!(cell(&layout, 4), r(1.5, 0.5, 2.5, 1.5));
    }

    #[test]
    fn branches_are_named_breadth_first() {
        // root(0) -> [b1 -> [l2, b3 -> [l4, l5]], b6 -> [l7, l8]]
        let snap = Snapshot {
            nodes: vec![
                node(0, 0, None, Some([1, 6])),
                node(1, 1, Some(0), Some([2, 3])),
                node(2, 2, Some(1), None),
                node(3, 2, Some(1), Some([4, 5])),
                node(4, 3, Some(3), None),
                node(5, 3, Some(3), None),
                node(6, 1, Some(0), Some([7, 8])),
                node(7, 2, Some(6), None),
                node(8, 2, Some(6), None),
            ],
            max_depth: 3,
            ..Snapshot::default()
        };
        let mut layout = TreeLayout::default();
        layout.recompute(&snap, &Folding::default(), TreeLayoutKind::NodeLink, true);
        let names: Vec<Option<String>> = (0..9).map(|i| layout.branch_name(i)).collect();
        let s = |t: &str| Some(t.to_owned());
        assert_eq!(
            names,
            vec![s("a"), s("b"), None, s("d"), None, None, s("c"), None, None]
        );
        layout.recompute(&snap, &Folding::default(), TreeLayoutKind::NodeLink, false);
        assert_eq!(layout.branch_name(0), None);
        assert_eq!(
            [0, 25, 26, 27, 701, 702].map(letters),
            ["a", "z", "aa", "ab", "zz", "aaa"].map(str::to_owned)
        );
    }
}
