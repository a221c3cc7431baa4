//! The one cache type behind every per-backend cache (chunk metadata, decoded vectors,
//! planning sizes, sort keys, column kinds): least recently used entries go first once
//! the cache holds more entries, or more weight (bytes, say), than its bounds. Entries
//! are dropped for relations that change in `invalidation`. Pure: no PostgreSQL calls.

use lru::LruCache;
use std::cell::RefCell;
use std::hash::Hash;
use std::mem::ManuallyDrop;

/// A per-backend cache as its thread-local holds it: never dropped. A backend's memory
/// goes back to the operating system whole when it exits; dropping its caches there
/// freed every entry one by one, after the client had gone but on a core other
/// connections want (0.6 ms of each connection's exit after a scattered join on the 6M-row
/// join benchmark, perf).
pub type KeptForLife<T> = ManuallyDrop<RefCell<T>>;

pub const fn kept_for_life<T>(value: T) -> KeptForLife<T> {
    ManuallyDrop::new(RefCell::new(value))
}

pub struct BoundedCache<K: Hash + Eq, V> {
    entries: LruCache<K, (V, usize)>,
    max_entries: usize,
    weight: usize,
    max_weight: usize,
}

impl<K: Hash + Eq + Clone, V> BoundedCache<K, V> {
    /// A cache of at most `max_entries` entries (each weighing 1 unless given more).
    pub fn new(max_entries: usize) -> Self {
        Self::weighted(max_entries, usize::MAX)
    }

    /// A cache of at most `max_entries` entries whose weights add up to `max_weight`.
    pub fn weighted(max_entries: usize, max_weight: usize) -> Self {
        BoundedCache { entries: LruCache::unbounded(), max_entries, weight: 0, max_weight }
    }

    /// The entry of `key`, now the most recently used.
    pub fn get(&mut self, key: &K) -> Option<&V> {
        self.entries.get(key).map(|(v, _)| v)
    }

    /// The entry of `key` to change in place, now the most recently used.
    pub fn get_mut(&mut self, key: &K) -> Option<&mut V> {
        self.entries.get_mut(key).map(|(v, _)| v)
    }

    /// Stores `value` under `key` (weighing `weight`), then drops the least recently
    /// used other entries while the bounds are exceeded.
    pub fn insert_weighted(&mut self, key: K, value: V, weight: usize) {
        if let Some((_, old)) = self.entries.put(key.clone(), (value, weight)) {
            self.weight -= old;
        }
        self.weight += weight;
        self.shrink(&key);
    }

    pub fn insert(&mut self, key: K, value: V) {
        self.insert_weighted(key, value, 1);
    }

    /// The entry of `key`, made by `make` if there is none.
    pub fn get_or_insert_with(&mut self, key: K, make: impl FnOnce() -> V) -> &mut V {
        if self.entries.get(&key).is_none() {
            self.insert(key.clone(), make());
        }
        &mut self.entries.get_mut(&key).expect("just inserted").0
    }

    /// Counts `more` weight against `key`'s entry (a value that grew in place).
    pub fn add_weight(&mut self, key: &K, more: usize) {
        if let Some((_, w)) = self.entries.peek_mut(key) {
            *w += more;
            self.weight += more;
            self.shrink(key);
        }
    }

    /// Drops least recently used entries, never `keep`, until within bounds.
    fn shrink(&mut self, keep: &K) {
        while self.entries.len() > self.max_entries || self.weight > self.max_weight {
            let Some((k, _)) = self.entries.peek_lru() else { break };
            if k == keep {
                // The newest entry alone exceeds the bounds: keep it (its users hold it).
                if self.entries.len() == 1 {
                    break;
                }
                self.entries.promote(keep);
                continue;
            }
            if let Some((_, (_, w))) = self.entries.pop_lru() {
                self.weight -= w;
            }
        }
    }

    pub fn remove(&mut self, key: &K) {
        if let Some((_, w)) = self.entries.pop(key) {
            self.weight -= w;
        }
    }

    /// Keeps only the entries for which `keep` holds.
    pub fn retain(&mut self, mut keep: impl FnMut(&K, &V) -> bool) {
        let gone: Vec<K> =
            self.entries.iter().filter(|(k, (v, _))| !keep(k, v)).map(|(k, _)| k.clone()).collect();
        for k in &gone {
            self.remove(k);
        }
    }

    pub fn clear(&mut self) {
        self.entries.clear();
        self.weight = 0;
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// A cache bounded by weight whose lookups touch as little memory as can be: one hash
/// probe, the entries kept in the hash table itself (a reference bit set, CLOCK-style,
/// where an LRU list would relink its neighbours). For caches looked up per row with
/// entries scattered over much memory (the fetch cache); eviction approximates least
/// recently used.
pub struct ClockCache<K: Hash + Eq, V> {
    entries: hashbrown::HashMap<K, ClockEntry<V>>,
    /// The keys in the order the clock hand passes them.
    ring: std::collections::VecDeque<K>,
    weight: usize,
    max_weight: usize,
}

struct ClockEntry<V> {
    value: V,
    weight: usize,
    referenced: bool,
}

impl<K: Hash + Eq + Clone, V> ClockCache<K, V> {
    pub fn new(max_weight: usize) -> Self {
        Self::with_capacity(max_weight, 0)
    }

    /// A cache with room for `entries` entries before it first grows: a new
    /// connection's first index scan reaches hundreds of stripes, and growing by
    /// doubling copied the table and the ring each time into memory never touched.
    pub fn with_capacity(max_weight: usize, entries: usize) -> Self {
        ClockCache {
            entries: hashbrown::HashMap::with_capacity(entries),
            ring: std::collections::VecDeque::with_capacity(entries),
            weight: 0,
            max_weight,
        }
    }

    /// Changes the weight bound (entries past it go at the next insertion).
    pub fn set_max_weight(&mut self, max_weight: usize) {
        self.max_weight = max_weight;
    }

    /// The entry of `key`, marked as used.
    pub fn get(&mut self, key: &K) -> Option<&V> {
        let entry = self.entries.get_mut(key)?;
        entry.referenced = true;
        Some(&entry.value)
    }

    /// The entry of `key`, not marked as used.
    pub fn peek(&self, key: &K) -> Option<&V> {
        self.entries.get(key).map(|e| &e.value)
    }

    /// The entry of `key` to change in place, marked as used.
    pub fn get_mut(&mut self, key: &K) -> Option<&mut V> {
        let entry = self.entries.get_mut(key)?;
        entry.referenced = true;
        Some(&mut entry.value)
    }

    /// Counts `less` weight off `key`'s entry (a value that shrank in place).
    pub fn remove_weight(&mut self, key: &K, less: usize) {
        let Some(entry) = self.entries.get_mut(key) else { return };
        let less = less.min(entry.weight);
        entry.weight -= less;
        self.weight -= less;
    }

    /// Counts `more` weight against `key`'s entry (a value that grew in place), then
    /// lets other entries go until the cache fits its bound again (the entry alone may
    /// stay heavier than it).
    pub fn add_weight(&mut self, key: &K, more: usize) {
        let Some(entry) = self.entries.get_mut(key) else { return };
        entry.weight += more;
        self.weight += more;
        while self.weight > self.max_weight && self.entries.len() > 1 {
            self.evict_one_but(Some(key));
        }
    }

    /// Stores `value` under `key` (weighing `weight`; a key already there keeps its
    /// entry), first letting entries go, those not used since the hand last passed
    /// them, until it fits. A value alone heavier than the bound is still stored.
    pub fn insert(&mut self, key: K, value: V, weight: usize) {
        if self.entries.contains_key(&key) {
            return;
        }
        while self.weight + weight > self.max_weight && !self.entries.is_empty() {
            self.evict_one_but(None);
        }
        self.ring.push_back(key.clone());
        self.entries.insert(key, ClockEntry { value, weight, referenced: false });
        self.weight += weight;
    }

    /// Lets the first entry the hand finds unused since it last passed go, never
    /// `keep`'s (some other entry must be there).
    fn evict_one_but(&mut self, keep: Option<&K>) {
        while let Some(key) = self.ring.pop_front() {
            let Some(entry) = self.entries.get_mut(&key) else { continue };
            if entry.referenced || keep == Some(&key) {
                entry.referenced = false;
                self.ring.push_back(key);
                continue;
            }
            let gone = self.entries.remove(&key).expect("found above");
            self.weight -= gone.weight;
            return;
        }
    }

    pub fn clear(&mut self) {
        self.entries.clear();
        self.ring.clear();
        self.weight = 0;
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn weight(&self) -> usize {
        self.weight
    }
}

/// Caches kept per relation (by OID), bounded at this many relations.
pub const RELATIONS: usize = 1024;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_cache_keeps_what_is_used_within_its_weight() {
        let mut c = ClockCache::new(100);
        for k in 0..10 {
            c.insert(k, k * 10, 10);
        }
        assert_eq!((c.len(), c.weight()), (10, 100));
        // 0..5 are used; the next insertions let unused ones go first.
        for k in 0..5 {
            assert_eq!(c.get(&k), Some(&(k * 10)));
        }
        c.insert(10, 100, 10);
        c.insert(11, 110, 10);
        assert_eq!((c.len(), c.weight()), (10, 100));
        for k in 0..5 {
            assert!(c.get(&k).is_some(), "{k} was used and stays");
        }
        assert_eq!(c.get(&10), Some(&100));
        assert_eq!(c.peek(&11), Some(&110));
        assert_eq!((5..10).filter(|k| c.get(k).is_none()).count(), 2);
        // A key already there keeps its entry; a heavy value still goes in, alone.
        c.insert(10, 0, 10);
        assert_eq!(c.get(&10), Some(&100));
        c.insert(99, 990, 500);
        assert_eq!((c.len(), c.get(&99)), (1, Some(&990)));
        c.set_max_weight(1000);
        c.insert(1, 1, 1);
        assert_eq!(c.len(), 2);
        c.clear();
        assert!(c.is_empty() && c.weight() == 0 && c.get(&1).is_none());
    }

    #[test]
    fn clock_cache_entries_grow_in_place_and_push_others_out() {
        let mut c = ClockCache::new(100);
        for k in 0..5 {
            c.insert(k, vec![k], 20);
        }
        c.get_mut(&2).unwrap().push(7);
        c.add_weight(&2, 30);
        // 130 > 100: unused entries go, never the one that grew.
        assert_eq!(c.get(&2), Some(&vec![2, 7]));
        assert_eq!((c.len(), c.weight()), (3, 90));
        // Alone heavier than the bound, it still stays.
        c.add_weight(&2, 500);
        assert_eq!((c.len(), c.weight()), (1, 550));
        assert_eq!(c.peek(&2), Some(&vec![2, 7]));
        // Growing a missing key changes nothing.
        c.add_weight(&9, 10);
        assert_eq!(c.weight(), 550);
        c.remove_weight(&2, 100);
        assert_eq!(c.weight(), 450);
        c.remove_weight(&2, 1000);
        assert_eq!(c.weight(), 0);
    }

    #[test]
    fn least_recently_used_entries_go_first_by_count_and_by_weight() {
        let mut c = BoundedCache::new(2);
        c.insert(1, "a");
        c.insert(2, "b");
        assert_eq!(c.get(&1), Some(&"a")); // 2 is now the least recently used
        c.insert(3, "c");
        assert_eq!(c.get(&2), None);
        assert_eq!(c.get(&1), Some(&"a"));
        assert_eq!(c.get(&3), Some(&"c"));

        let mut w = BoundedCache::weighted(10, 100);
        w.insert_weighted(1, (), 40);
        w.insert_weighted(2, (), 40);
        w.add_weight(&1, 30); // 110 > 100: 1 grew (it is in use), so the other one goes
        assert_eq!(w.get(&2), None);
        assert_eq!(w.get(&1), Some(&()));
        assert_eq!(w.len(), 1);
        w.insert_weighted(3, (), 500); // alone over the bound: kept, the others go
        assert_eq!(w.get(&1), None);
        assert_eq!(w.get(&3), Some(&()));
        w.retain(|k, _| *k != 3);
        assert!(w.is_empty());
        w.insert_weighted(4, (), 10);
        w.remove(&4);
        w.insert_weighted(5, (), 100);
        assert_eq!(w.get(&5), Some(&()));
    }
}
