//! The one module that calls Box2D's C code: every `unsafe` block of the crate is here.
//!
//! Safety rests on three rules. The tree owns its `b2DynamicTree` alone (made by
//! `b2DynamicTree_Create`, freed once by `b2DynamicTree_Destroy` in `Drop`), so no other code
//! touches its memory. Every argument that Box2D would only `B2_ASSERT` (a proxy id, a box that
//! must be valid) is checked here first, so Box2D's asserts never fire. And nothing read from
//! the C node array is trusted: the node array is viewed as a slice of exactly
//! `nodeCapacity` nodes, and every index read from a node (child, parent) is checked against
//! that length before it is followed.

use crate::{Box2, Node, NodeKind, TreeError};
use boxdd_sys::ffi;
use glam::Vec2;
use std::ffi::c_void;

/// Box2D's `B2_NULL_INDEX`.
const NULL_INDEX: i32 = -1;
/// Box2D's `B2_TREE_STACK_SIZE`: its query keeps a stack of this many node ids and asserts
/// when a tree is deep enough to overflow it.
const TREE_STACK_SIZE: i32 = 1024;
/// Box2D's `B2_HUGE` at one length unit per meter: a box at least this wide or tall is
/// refused (`b2DynamicTree_MoveProxy` validates it).
pub(crate) const HUGE: f32 = 1.0e5;

/// Box2D's node flags (`b2TreeNodeFlags`).
const ALLOCATED: u16 = ffi::b2TreeNodeFlags_b2_allocatedNode as u16;
const ENLARGED: u16 = ffi::b2TreeNodeFlags_b2_enlargedNode as u16;
const LEAF: u16 = ffi::b2TreeNodeFlags_b2_leafNode as u16;

/// Box2D's `b2DynamicTree`, owned: created on `new`, destroyed on drop.
pub struct RawTree {
    raw: ffi::b2DynamicTree,
}

// SAFETY: the tree's memory (nodes and rebuild scratch) is owned by this value alone and Box2D
// keeps no global state about it (its allocator is the process's `aligned_alloc`), so moving it
// to another thread is sound. It is not `Sync`-shared: every mutation takes `&mut self`.
unsafe impl Send for RawTree {}

// SAFETY: `&RawTree` only reads (queries, node walk, statistics); Box2D's read functions
// (`b2DynamicTree_Query`, `GetHeight`, `GetAreaRatio`, ...) write nothing but their own stack.
unsafe impl Sync for RawTree {}

fn to_b2(b: &Box2) -> ffi::b2AABB {
    ffi::b2AABB {
        lowerBound: ffi::b2Vec2 {
            x: b.min.x,
            y: b.min.y,
        },
        upperBound: ffi::b2Vec2 {
            x: b.max.x,
            y: b.max.y,
        },
    }
}

fn from_b2(b: &ffi::b2AABB) -> Box2 {
    Box2 {
        min: Vec2::new(b.lowerBound.x, b.lowerBound.y),
        max: Vec2::new(b.upperBound.x, b.upperBound.y),
    }
}

/// Refuses a box Box2D would assert on: a number not finite, min above max, or a side of
/// [`HUGE`] or more.
pub(crate) fn check_box(b: &Box2) -> Result<(), TreeError> {
    let finite = b.min.is_finite() && b.max.is_finite();
    if !finite || b.min.x > b.max.x || b.min.y > b.max.y {
        return Err(TreeError::BadBox {
            min: b.min,
            max: b.max,
            reason: "a number is not finite or min > max",
        });
    }
    let size = b.max - b.min;
    if !(size.x < HUGE && size.y < HUGE) {
        return Err(TreeError::BadBox {
            min: b.min,
            max: b.max,
            reason: "a side is 100000 or more (Box2D's B2_HUGE)",
        });
    }
    Ok(())
}

/// The query callback Box2D calls: `context` is the `&mut F` of [`RawTree::query`].
unsafe extern "C" fn query_trampoline<F: FnMut(u32, u64) -> bool>(
    proxy_id: i32,
    user_data: u64,
    context: *mut c_void,
) -> bool {
    // SAFETY: `context` is the `&mut F` that `query` passed, alive for the whole call, and
    // Box2D calls back on the calling thread only, one call at a time.
    let visit = unsafe { &mut *context.cast::<F>() };
    // Box2D's proxy ids are node indices, never negative for a leaf it reports.
    visit(proxy_id as u32, user_data)
}

impl RawTree {
    /// An empty tree with room for `proxy_capacity` proxies before its node pool grows.
    pub fn new(proxy_capacity: u32) -> Self {
        let capacity = i32::try_from(proxy_capacity.min(1 << 28)).unwrap_or(1 << 28);
        // SAFETY: `b2DynamicTree_Create` takes any capacity (it uses at least 16) and needs no
        // initialisation of Box2D (no world, no allocator hook: it falls back to
        // `aligned_alloc`).
        let raw = unsafe { ffi::b2DynamicTree_Create(capacity) };
        Self { raw }
    }

    /// The node array as Box2D holds it: exactly `nodeCapacity` nodes.
    fn nodes(&self) -> &[ffi::b2TreeNode] {
        let len = usize::try_from(self.raw.nodeCapacity).unwrap_or(0);
        if self.raw.nodes.is_null() || len == 0 {
            return &[];
        }
        // SAFETY: Box2D allocates `nodeCapacity` nodes at `nodes` (and zeroes or fills every
        // one), and the array only changes through `&mut self`, so it lives as long as the
        // borrow of `self`.
        unsafe { std::slice::from_raw_parts(self.raw.nodes, len) }
    }

    /// Node capacity (the length of the node array).
    pub fn capacity(&self) -> usize {
        self.nodes().len()
    }

    /// The allocated leaf at `proxy`, or [`TreeError::NoSuchProxy`].
    fn check_proxy(&self, proxy: u32) -> Result<&ffi::b2TreeNode, TreeError> {
        match self.nodes().get(proxy as usize) {
            Some(n) if n.flags & ALLOCATED != 0 && n.flags & LEAF != 0 => Ok(n),
            _ => Err(TreeError::NoSuchProxy(proxy)),
        }
    }

    /// `b2DynamicTree_CreateProxy`: the new proxy's id.
    pub fn create_proxy(
        &mut self,
        aabb: &Box2,
        category_bits: u64,
        user_data: u64,
    ) -> Result<u32, TreeError> {
        check_box(aabb)?;
        if self.raw.nodeCount > i32::MAX / 2 - 2 {
            return Err(TreeError::Full);
        }
        // SAFETY: the tree is alive and owned; the box is valid (checked above).
        let id = unsafe {
            ffi::b2DynamicTree_CreateProxy(&mut self.raw, to_b2(aabb), category_bits, user_data)
        };
        u32::try_from(id).map_err(|_| TreeError::NoSuchProxy(0))
    }

    /// `b2DynamicTree_DestroyProxy`.
    pub fn destroy_proxy(&mut self, proxy: u32) -> Result<(), TreeError> {
        self.check_proxy(proxy)?;
        // SAFETY: `proxy` is an allocated leaf of this tree (checked above).
        unsafe {
            ffi::b2DynamicTree_DestroyProxy(&mut self.raw, proxy as i32);
        }
        Ok(())
    }

    /// `b2DynamicTree_MoveProxy`: remove and reinsert with the new box.
    pub fn move_proxy(&mut self, proxy: u32, aabb: &Box2) -> Result<(), TreeError> {
        check_box(aabb)?;
        self.check_proxy(proxy)?;
        // SAFETY: `proxy` is an allocated leaf, the box is valid (both checked above).
        unsafe {
            ffi::b2DynamicTree_MoveProxy(&mut self.raw, proxy as i32, to_b2(aabb));
        }
        Ok(())
    }

    /// `b2DynamicTree_EnlargeProxy`: the leaf takes the new box, its ancestors grow to hold it
    /// and are flagged enlarged. Box2D requires that the old box not contain the new one.
    pub fn enlarge_proxy(&mut self, proxy: u32, aabb: &Box2) -> Result<(), TreeError> {
        check_box(aabb)?;
        let old = from_b2(&self.check_proxy(proxy)?.aabb);
        if old.contains(aabb) {
            return Err(TreeError::NotEnlarged(proxy));
        }
        // SAFETY: `proxy` is an allocated leaf, the box is valid and not inside the old one
        // (all checked above).
        unsafe {
            ffi::b2DynamicTree_EnlargeProxy(&mut self.raw, proxy as i32, to_b2(aabb));
        }
        Ok(())
    }

    /// `b2DynamicTree_Rebuild`: the number of boxes sorted.
    pub fn rebuild(&mut self, full_build: bool) -> u32 {
        // SAFETY: the tree is alive and owned; Box2D rebuilds any valid tree (empty too).
        let sorted = unsafe { ffi::b2DynamicTree_Rebuild(&mut self.raw, full_build) };
        u32::try_from(sorted).unwrap_or(0)
    }

    /// `b2DynamicTree_Query` with `mask_bits`: `visit(proxy, user_data)` for each leaf whose box
    /// overlaps `aabb` and whose category bits meet the mask; it returns false to stop.
    /// Refused when the tree is too deep for Box2D's query stack.
    pub fn query<F: FnMut(u32, u64) -> bool>(
        &self,
        aabb: &Box2,
        mask_bits: u64,
        mut visit: F,
    ) -> Result<(), TreeError> {
        let height = self.height();
        if height >= TREE_STACK_SIZE as u32 - 2 {
            return Err(TreeError::TooDeep(height));
        }
        let context: *mut F = &mut visit;
        // SAFETY: the tree is alive; the callback is `query_trampoline::<F>` and its context a
        // `&mut F` that outlives the call; the tree's height leaves Box2D's stack room.
        unsafe {
            ffi::b2DynamicTree_Query(
                &self.raw,
                to_b2(aabb),
                mask_bits,
                Some(query_trampoline::<F>),
                context.cast::<c_void>(),
            );
        }
        Ok(())
    }

    /// `b2DynamicTree_GetHeight`.
    pub fn height(&self) -> u32 {
        // SAFETY: the tree is alive; this reads the root node (Box2D checks for an empty tree).
        let h = unsafe { ffi::b2DynamicTree_GetHeight(&self.raw) };
        u32::try_from(h).unwrap_or(0)
    }

    /// `b2DynamicTree_GetAreaRatio`.
    pub fn area_ratio(&self) -> f32 {
        // SAFETY: the tree is alive; this reads every node below `nodeCapacity`.
        unsafe { ffi::b2DynamicTree_GetAreaRatio(&self.raw) }
    }

    /// `b2DynamicTree_GetProxyCount`.
    pub fn proxy_count(&self) -> u32 {
        // SAFETY: the tree is alive; this reads one field.
        let n = unsafe { ffi::b2DynamicTree_GetProxyCount(&self.raw) };
        u32::try_from(n).unwrap_or(0)
    }

    /// `b2DynamicTree_GetByteCount`.
    pub fn byte_count(&self) -> usize {
        // SAFETY: the tree is alive; this reads its capacities.
        let n = unsafe { ffi::b2DynamicTree_GetByteCount(&self.raw) };
        usize::try_from(n).unwrap_or(0)
    }

    /// `b2DynamicTree_Validate`: Box2D's own check of links, heights, boxes and the free list.
    /// It asserts (and aborts the process) on a broken tree, and does nothing unless Box2D
    /// was built with `BOX2D_VALIDATE` (boxdd-sys's `validate` feature).
    pub fn validate(&self) {
        // SAFETY: the tree is alive and only read.
        unsafe {
            ffi::b2DynamicTree_Validate(&self.raw);
        }
    }

    /// The root's index, `None` for an empty tree or a root index outside the node array.
    pub fn root(&self) -> Option<u32> {
        let root = self.raw.root;
        (root != NULL_INDEX && usize::try_from(root).is_ok_and(|r| r < self.capacity()))
            .then_some(root as u32)
    }

    /// Node `index` as read from the C array; an error when the index is outside it or the node
    /// is not allocated, or a child or parent index it holds is outside the array.
    pub fn node(&self, index: u32) -> Result<Node, TreeError> {
        let nodes = self.nodes();
        let bad = |what: &'static str| TreeError::BadNode { index, what };
        let n = nodes
            .get(index as usize)
            .ok_or(bad("index outside the node array"))?;
        if n.flags & ALLOCATED == 0 {
            return Err(bad("not allocated"));
        }
        let in_range = |i: i32| usize::try_from(i).is_ok_and(|i| i < nodes.len());
        // SAFETY: both union members are plain integers (any bit pattern is valid); which one
        // is meant is told by the flags, and every index is range-checked before use.
        let (parent, children, user_data) = unsafe {
            (
                n.__bindgen_anon_2.parent,
                n.__bindgen_anon_1.children,
                n.__bindgen_anon_1.userData,
            )
        };
        let parent = match parent {
            NULL_INDEX => None,
            p if in_range(p) => Some(p as u32),
            _ => return Err(bad("parent index outside the node array")),
        };
        let kind = if n.flags & LEAF != 0 {
            NodeKind::Leaf { user_data }
        } else if in_range(children.child1) && in_range(children.child2) {
            NodeKind::Internal {
                child1: children.child1 as u32,
                child2: children.child2 as u32,
            }
        } else {
            return Err(bad("child index outside the node array"));
        };
        Ok(Node {
            aabb: from_b2(&n.aabb),
            category_bits: n.categoryBits,
            parent,
            kind,
            height: n.height,
            enlarged: n.flags & ENLARGED != 0,
        })
    }

    /// Allocated nodes, as Box2D counts them.
    pub fn node_count(&self) -> u32 {
        u32::try_from(self.raw.nodeCount).unwrap_or(0)
    }

    /// A deep copy: the same nodes at the same indices and the same free list, so that the
    /// copy allocates the same node ids as the original from here on.
    pub fn deep_clone(&self) -> Self {
        let nodes = self.nodes();
        let cap = nodes.len();
        // Create gives 2 * max(p, 16) - 1 nodes: ask for enough to hold `cap`.
        let proxies = u32::try_from(cap.div_ceil(2) + 1).unwrap_or(u32::MAX);
        let mut copy = Self::new(proxies);
        let copy_cap = usize::try_from(copy.raw.nodeCapacity).unwrap_or(0);
        if cap == 0 || copy_cap < cap {
            return copy;
        }
        // SAFETY: the copy's array holds `copy_cap >= cap` nodes, the original's `cap`; they
        // do not overlap (two allocations).
        unsafe {
            std::ptr::copy_nonoverlapping(self.raw.nodes, copy.raw.nodes, cap);
        }
        copy.raw.root = self.raw.root;
        copy.raw.nodeCount = self.raw.nodeCount;
        copy.raw.proxyCount = self.raw.proxyCount;
        // The copy's nodes past `cap` go at the end of the free list, in index order: the
        // original takes the same indices once it grows its pool.
        let extra: Vec<i32> = (cap..copy_cap)
            .filter_map(|i| i32::try_from(i).ok())
            .collect();
        let mut head = self.raw.freeList;
        if let Some(&first) = extra.first() {
            if head == NULL_INDEX {
                head = first;
            } else {
                // Walk the copy's free list to its end (at most `cap` links, each checked).
                let mut at = head;
                for _ in 0..cap {
                    let Some(next) = usize::try_from(at).ok().filter(|&i| i < cap) else {
                        break;
                    };
                    // SAFETY: `next` < cap <= copy_cap; the free node's union holds `next`.
                    let link = unsafe { copy.slot(next).__bindgen_anon_2.next };
                    if link == NULL_INDEX {
                        copy.slot(next).__bindgen_anon_2.next = first;
                        break;
                    }
                    at = link;
                }
            }
            for (k, &i) in extra.iter().enumerate() {
                let next = extra.get(k + 1).copied().unwrap_or(NULL_INDEX);
                copy.slot(i as usize).__bindgen_anon_2.next = next;
            }
        }
        copy.raw.freeList = head;
        copy
    }

    /// A node of the array for writing (the deep copy's free list only).
    fn slot(&mut self, index: usize) -> &mut ffi::b2TreeNode {
        let len = usize::try_from(self.raw.nodeCapacity).unwrap_or(0);
        assert!(index < len, "node {index} outside the array of {len}");
        // SAFETY: `index` < `nodeCapacity` (asserted); the array is owned and borrowed mutably.
        unsafe { &mut *self.raw.nodes.add(index) }
    }
}

impl Drop for RawTree {
    fn drop(&mut self) {
        // SAFETY: made by `b2DynamicTree_Create` (or a deep copy of one, with the same
        // allocations' ownership) and destroyed only here, once.
        unsafe {
            ffi::b2DynamicTree_Destroy(&mut self.raw);
        }
    }
}
