//! `validate()`: checks every structural invariant of the tree and its proxy table.

use super::node::NULL;
use super::{DynamicTree, ValidationError, Vector};

/// A validation error at `node`.
fn broken(node: u32, what: impl Into<String>) -> ValidationError {
    ValidationError {
        node,
        what: what.into(),
    }
}

impl<V: Vector, T: Copy> DynamicTree<V, T> {
    /// Checks every invariant: parent/child links, heights (`1 + max` of the children), every
    /// branch box contains its children's, only leaves hold proxies, each leaf's fat box
    /// contains its proxy's tight box, the proxy table and the leaves name each other, nodes
    /// in use + free nodes = pool size, and the free lists are sound (no retired proxy slot in
    /// the free-slot list; live + free + retired slots = table size).
    pub fn validate(&self) -> Result<(), ValidationError> {
        let len = self.nodes.len();
        // Stage 1: the free-node list (acyclic, flagged, counted).
        let mut free = 0usize;
        let mut index = self.free_node;
        while index != NULL {
            let Some(node) = self.nodes.get(index as usize) else {
                return Err(broken(index, "free list points outside the pool"));
            };
            if !node.is_free() {
                return Err(broken(index, "node in the free list is not marked free"));
            }
            free += 1;
            if free > len {
                return Err(broken(index, "free list has a cycle"));
            }
            index = node.parent;
        }
        if free != self.free_nodes as usize {
            return Err(broken(
                NULL,
                format!(
                    "free list holds {free} nodes, count says {}",
                    self.free_nodes
                ),
            ));
        }
        let marked_free = self.nodes.iter().filter(|n| n.is_free()).count();
        if marked_free != free {
            return Err(broken(
                NULL,
                format!("{marked_free} nodes marked free but {free} in the free list"),
            ));
        }

        // Stage 2: walk the tree from the root.
        let mut in_use = 0usize;
        let mut leaves = 0usize;
        let mut seen = vec![false; len];
        if self.root != NULL {
            if self.root as usize >= len {
                return Err(broken(self.root, "root outside the pool"));
            }
            if self.nodes[self.root as usize].parent != NULL {
                return Err(broken(self.root, "root has a parent"));
            }
            let mut stack = vec![self.root];
            while let Some(index) = stack.pop() {
                let i = index as usize;
                if seen[i] {
                    return Err(broken(index, "node reached twice"));
                }
                seen[i] = true;
                in_use += 1;
                let node = &self.nodes[i];
                if node.is_free() {
                    return Err(broken(index, "free node linked into the tree"));
                }
                if node.is_leaf() {
                    leaves += 1;
                    if node.height() != 0 {
                        return Err(broken(index, "leaf height is not 0"));
                    }
                    let Some(slot) = self.proxies.get(node.child1 as usize) else {
                        return Err(broken(index, "leaf names a proxy outside the table"));
                    };
                    if !slot.is_alive() {
                        return Err(broken(index, "leaf names a destroyed proxy"));
                    }
                    if slot.leaf != index {
                        return Err(broken(index, "leaf's proxy names another leaf"));
                    }
                    if !node.aabb.contains(&slot.tight) {
                        return Err(broken(index, "fat box does not contain the tight box"));
                    }
                    continue;
                }
                for child in [node.child1, node.child2] {
                    let Some(c) = self.nodes.get(child as usize) else {
                        return Err(broken(index, "child outside the pool"));
                    };
                    if c.parent != index {
                        return Err(broken(child, "child's parent link is wrong"));
                    }
                    if !node.aabb.contains(&c.aabb) {
                        return Err(broken(index, "box does not contain a child's box"));
                    }
                    stack.push(child);
                }
                let h1 = self.nodes[node.child1 as usize].height();
                let h2 = self.nodes[node.child2 as usize].height();
                if node.height() != 1 + h1.max(h2) {
                    return Err(broken(
                        index,
                        format!("height {} but children {h1} and {h2}", node.height()),
                    ));
                }
            }
        }
        if in_use + free != len {
            return Err(broken(
                NULL,
                format!("{in_use} nodes in use + {free} free != pool of {len}"),
            ));
        }

        // Stage 3: the proxy table against the leaves, and its free list.
        let mut live = 0usize;
        for (i, slot) in self.proxies.iter().enumerate() {
            if !slot.is_alive() {
                continue;
            }
            live += 1;
            let leaf = slot.leaf as usize;
            if leaf >= len || !seen[leaf] || !self.nodes[leaf].is_leaf() {
                return Err(broken(
                    slot.leaf,
                    format!("proxy {i}'s leaf is not in the tree"),
                ));
            }
            if self.nodes[leaf].child1 as usize != i {
                return Err(broken(
                    slot.leaf,
                    format!("proxy {i}'s leaf names another proxy"),
                ));
            }
            if self.nodes[leaf].aabb != slot.fat {
                return Err(broken(
                    slot.leaf,
                    format!("proxy {i}'s fat box differs from its leaf's"),
                ));
            }
        }
        if live != leaves || live != self.live as usize {
            return Err(broken(
                NULL,
                format!(
                    "{live} live proxies, {leaves} leaves, count says {}",
                    self.live
                ),
            ));
        }
        let mut free_slots = 0usize;
        let mut index = self.free_proxy;
        while index != NULL {
            let Some(slot) = self.proxies.get(index as usize) else {
                return Err(broken(NULL, "proxy free list points outside the table"));
            };
            if slot.is_alive() {
                return Err(broken(NULL, format!("live proxy {index} in the free list")));
            }
            if slot.is_retired() {
                return Err(broken(
                    NULL,
                    format!("retired slot {index} in the free list"),
                ));
            }
            free_slots += 1;
            if free_slots > self.proxies.len() {
                return Err(broken(NULL, "proxy free list has a cycle"));
            }
            index = slot.leaf;
        }
        // Retired slots: not alive, not in the free list (checked above), counted.
        let retired = self.proxies.iter().filter(|s| s.is_retired()).count();
        if retired != self.retired as usize {
            return Err(broken(
                NULL,
                format!("{retired} retired proxy slots, count says {}", self.retired),
            ));
        }
        // The free list holds distinct slots, none live or retired: with the counts adding up
        // every other slot is in it.
        if free_slots + live + retired != self.proxies.len() {
            return Err(broken(
                NULL,
                format!(
                    "{live} live + {free_slots} free + {retired} retired proxy slots != table \
                     of {}",
                    self.proxies.len()
                ),
            ));
        }
        Ok(())
    }
}
