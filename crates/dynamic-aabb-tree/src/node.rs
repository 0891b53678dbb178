//! The node pool: compact index-linked nodes, the free list threaded through unused nodes, the
//! proxy table, and the small fixed-size-with-spill stack the queries walk with.

use super::{Aabb, DynamicTree, TreeError, Vector};

/// The "no node" / "no proxy" link.
pub(crate) const NULL: u32 = u32::MAX;

/// The most live proxies a tree holds: `n` proxies take `2n - 1` nodes, and [`alloc_node`]
/// hands out indices below `NULL - 1`.
///
/// [`alloc_node`]: DynamicTree::alloc_node
pub(crate) const MAX_PROXIES: usize = (NULL as usize) / 2 - 1;

/// Bit of [`Node::meta`] set on a node in the free list.
const FREE: u32 = 1 << 31;
/// Bit of [`Node::meta`] set on a branch whose box was grown in place by an enlarged leaf
/// (cleared by a partial rebuild).
const ENLARGED: u32 = 1 << 30;
/// Bit of [`Node::meta`] set, while pairs are found from the move buffer, on each moved leaf
/// and every node above one (clear at all other times).
const DIRTY: u32 = 1 << 29;
/// Bits of [`Node::meta`] that hold the height.
const HEIGHT_MASK: u32 = DIRTY - 1;

/// One node: 32 bytes in 2D (box 16 + four `u32`), 40 in 3D.
///
/// A leaf has `child2 == NULL` and `child1` = its proxy's slot index. A free node has the
/// `FREE` bit set and `parent` = the next free node.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Node<V> {
    /// The fat box of a leaf; a box holding both children for a branch.
    pub aabb: Aabb<V>,
    /// Parent node (`NULL` for the root); the next free node when free.
    pub parent: u32,
    /// First child of a branch; the proxy slot of a leaf.
    pub child1: u32,
    /// Second child of a branch; `NULL` for a leaf.
    pub child2: u32,
    /// Height (bits 0..29), `DIRTY` (bit 29), `ENLARGED` (bit 30), `FREE` (bit 31).
    meta: u32,
}

impl<V: Vector> Node<V> {
    /// A leaf for proxy slot `proxy`.
    #[inline]
    pub fn leaf(aabb: Aabb<V>, proxy: u32) -> Self {
        Self {
            aabb,
            parent: NULL,
            child1: proxy,
            child2: NULL,
            meta: 0,
        }
    }

    /// True for a leaf.
    #[inline]
    pub fn is_leaf(&self) -> bool {
        self.child2 == NULL
    }

    /// Makes the node a blank free one (no children, no flags; `parent` is left for the
    /// free list's link).
    #[inline]
    pub fn mark_free(&mut self) {
        self.child1 = NULL;
        self.child2 = NULL;
        self.meta = FREE;
    }

    /// True for a node in the free list.
    #[inline]
    pub fn is_free(&self) -> bool {
        self.meta & FREE != 0
    }

    /// Height (leaves 0).
    #[inline]
    pub fn height(&self) -> u32 {
        self.meta & HEIGHT_MASK
    }

    /// Sets the height, keeping the flags.
    #[inline]
    pub fn set_height(&mut self, height: u32) {
        self.meta = (self.meta & !HEIGHT_MASK) | (height & HEIGHT_MASK);
    }

    /// True when a moved leaf is at or under this node (only while pairs are being found).
    #[inline]
    pub fn is_dirty(&self) -> bool {
        self.meta & DIRTY != 0
    }

    /// Sets or clears the dirty flag.
    #[inline]
    pub fn set_dirty(&mut self, on: bool) {
        if on {
            self.meta |= DIRTY;
        } else {
            self.meta &= !DIRTY;
        }
    }

    /// The height and the enlarged flag: what a branch's refit reads of its children.
    #[inline]
    pub fn fit_bits(&self) -> u32 {
        self.meta & (HEIGHT_MASK | ENLARGED)
    }

    /// Sets the height and the enlarged flag to `bits` (from [`Node::fit_bits`] or
    /// [`parent_fit_bits`]), keeping the other flags.
    #[inline]
    pub fn set_fit_bits(&mut self, bits: u32) {
        self.meta = (self.meta & !(HEIGHT_MASK | ENLARGED)) | bits;
    }

    /// True when the box was grown in place since the last rebuild.
    #[inline]
    pub fn is_enlarged(&self) -> bool {
        self.meta & ENLARGED != 0
    }

    /// Sets or clears the enlarged flag.
    #[inline]
    pub fn set_enlarged(&mut self, on: bool) {
        if on {
            self.meta |= ENLARGED;
        } else {
            self.meta &= !ENLARGED;
        }
    }
}

/// The [`Node::fit_bits`] of a branch over children with fit bits `a` and `b`: one above the
/// higher, enlarged when either is (what [`DynamicTree::refit_node`] makes).
#[inline]
pub(crate) fn parent_fit_bits(a: u32, b: u32) -> u32 {
    (1 + (a & HEIGHT_MASK).max(b & HEIGHT_MASK)) | ((a | b) & ENLARGED)
}

/// Bit of [`ProxySlot::state`]: the slot holds a live proxy.
pub(crate) const ALIVE: u32 = 1 << 31;
/// Bit of [`ProxySlot::state`]: the proxy is in the move buffer.
pub(crate) const MOVED: u32 = 1 << 30;
/// Bits of [`ProxySlot::state`] that hold the generation.
pub(crate) const GENERATION_MASK: u32 = MOVED - 1;
/// The generation of a retired slot: a destroy that would give a slot this generation retires
/// it instead (it is never reused), so proxies get generations `0..RETIRED` and a stale handle
/// never matches a later proxy.
pub(crate) const RETIRED: u32 = GENERATION_MASK;

/// One slot of the proxy table: what the tree knows about a user object besides its leaf
/// (52 bytes in 2D with `u32` user data).
#[derive(Clone, Copy, Debug)]
pub(crate) struct ProxySlot<V, T> {
    /// The leaf's fat box, a copy of the leaf node's: `move_proxy`'s test of the tight box
    /// against it reads the proxy table in handle order instead of the node pool, which is in
    /// walk order ([`DynamicTree::compact_layout`]).
    pub fat: Aabb<V>,
    /// The tight box last given.
    pub tight: Aabb<V>,
    /// The velocity last given.
    pub velocity: V,
    /// User data (of the last proxy when the slot is free; never handed out then).
    pub user: T,
    /// The leaf node; the next free slot when the slot is free; `NULL` when retired.
    pub leaf: u32,
    /// Generation (bits 0..30, bumped each time the slot's proxy is destroyed; [`RETIRED`]
    /// once the slot is retired), `MOVED` (bit 30), `ALIVE` (bit 31).
    pub state: u32,
}

impl<V, T> ProxySlot<V, T> {
    /// True when the slot holds a live proxy.
    #[inline]
    pub fn is_alive(&self) -> bool {
        self.state & ALIVE != 0
    }

    /// True when the proxy is in the move buffer.
    #[inline]
    pub fn is_moved(&self) -> bool {
        self.state & MOVED != 0
    }

    /// The slot's generation.
    #[inline]
    pub fn generation(&self) -> u32 {
        self.state & GENERATION_MASK
    }

    /// True when the slot is retired: its generations are used up, it holds no proxy and is
    /// never put back on the free list.
    #[inline]
    pub fn is_retired(&self) -> bool {
        self.state & (ALIVE | GENERATION_MASK) == RETIRED
    }
}

/// A LIFO stack that lives on the call stack and spills to the heap only past `N` pending
/// items: walks never allocate on a sane tree, and the compiler keeps its length in a register
/// (a `Vec` behind a `&mut` it cannot, when the loop also pushes to another `Vec`).
pub(crate) struct InlineStack<T, const N: usize> {
    fixed: [T; N],
    len: usize,
    spill: Vec<T>,
}

/// The stack of pending nodes of a query.
pub(crate) type NodeStack = InlineStack<u32, 64>;

impl<T: Copy + Default, const N: usize> InlineStack<T, N> {
    /// An empty stack.
    #[inline]
    pub fn new() -> Self {
        Self {
            fixed: [T::default(); N],
            len: 0,
            spill: Vec::new(),
        }
    }

    /// Pushes an item.
    #[inline]
    pub fn push(&mut self, item: T) {
        if self.len < N {
            self.fixed[self.len] = item;
            self.len += 1;
        } else {
            self.spill.push(item);
        }
    }

    /// Pops the last item pushed.
    #[inline]
    pub fn pop(&mut self) -> Option<T> {
        if let Some(n) = self.spill.pop() {
            return Some(n);
        }
        if self.len == 0 {
            return None;
        }
        self.len -= 1;
        Some(self.fixed[self.len])
    }
}

impl<V: Vector, T: Copy> DynamicTree<V, T> {
    /// Takes a node from the free list (or grows the pool) and makes it a leaf-shaped blank.
    pub(crate) fn alloc_node(&mut self) -> Result<u32, TreeError> {
        let blank = Node::leaf(Aabb::default(), NULL);
        self.allocs_since_layout += 1;
        if self.free_node != NULL {
            let index = self.free_node;
            let node = &mut self.nodes[index as usize];
            self.free_node = node.parent;
            self.free_nodes -= 1;
            *node = blank;
            return Ok(index);
        }
        let index = self.nodes.len();
        if index >= (NULL - 1) as usize {
            return Err(TreeError::Full(self.live as usize));
        }
        self.nodes.push(blank);
        Ok(index as u32)
    }

    /// Gives the leaf of proxy slot `slot` the fat box `fat` (the node's and the slot's copy).
    #[inline]
    pub(crate) fn set_leaf_box(&mut self, leaf: u32, slot: u32, fat: Aabb<V>) {
        self.nodes[leaf as usize].aabb = fat;
        self.proxies[slot as usize].fat = fat;
    }

    /// Returns a node to the free list.
    pub(crate) fn free_node(&mut self, index: u32) {
        let node = &mut self.nodes[index as usize];
        node.parent = self.free_node;
        node.mark_free();
        self.free_node = index;
        self.free_nodes += 1;
    }

    /// Points `old`'s parent (or the root) at `new` instead, and `new` at that parent.
    #[inline]
    pub(crate) fn replace_child(&mut self, parent: u32, old: u32, new: u32) {
        self.nodes[new as usize].parent = parent;
        if parent == NULL {
            self.root = new;
        } else {
            let p = &mut self.nodes[parent as usize];
            if p.child1 == old {
                p.child1 = new;
            } else {
                debug_assert_eq!(p.child2, old);
                p.child2 = new;
            }
        }
    }

    /// Recomputes a branch's box and height from its children; it stays flagged enlarged only
    /// when a child is.
    #[inline]
    pub(crate) fn refit_node(&mut self, index: u32) {
        let node = self.nodes[index as usize];
        let a = &self.nodes[node.child1 as usize];
        let b = &self.nodes[node.child2 as usize];
        let aabb = a.aabb.union(&b.aabb);
        let bits = parent_fit_bits(a.fit_bits(), b.fit_bits());
        let node = &mut self.nodes[index as usize];
        node.aabb = aabb;
        node.set_fit_bits(bits);
    }
}
