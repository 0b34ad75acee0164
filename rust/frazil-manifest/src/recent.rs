//! A few recent results of work that a table's files repeat: its manifests are written alike, so
//! a scan of a thousand small manifests would otherwise parse the same Avro schema and resolve
//! the same read plan a thousand times (more work than decoding a one-entry manifest).

use std::collections::VecDeque;
use std::sync::Mutex;

/// Up to `capacity` (key, value) pairs, the most recently used first.
pub(crate) struct Recent<K, V> {
    slots: Mutex<VecDeque<(K, V)>>,
    capacity: usize,
}

impl<K, V: Clone> Recent<K, V> {
    pub(crate) const fn new(capacity: usize) -> Self {
        Recent {
            slots: Mutex::new(VecDeque::new()),
            capacity,
        }
    }

    /// The value of the first key `matches` accepts, moved to the front; else `make`'s, kept
    /// (the least recently used pair is dropped when full). `make` runs outside the lock: two
    /// threads may both make a value, and both keep it, which costs a slot, not a wrong answer.
    pub(crate) fn get_or_make<E>(
        &self,
        matches: impl Fn(&K) -> bool,
        make: impl FnOnce() -> Result<(K, V), E>,
    ) -> Result<V, E> {
        {
            // a panic elsewhere while holding the lock leaves a usable list (no invariant spans
            // two statements)
            let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(i) = slots.iter().position(|(k, _)| matches(k)) {
                let hit = slots.remove(i).expect("position is in range");
                let value = hit.1.clone();
                slots.push_front(hit);
                return Ok(value);
            }
        }
        let (key, value) = make()?;
        let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        slots.push_front((key, value.clone()));
        slots.truncate(self.capacity);
        Ok(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_most_recent() {
        let recent: Recent<u32, u32> = Recent::new(2);
        let made = std::cell::Cell::new(0);
        let get = |k: u32| {
            recent
                .get_or_make(
                    |x| *x == k,
                    || {
                        made.set(made.get() + 1);
                        Ok::<_, ()>((k, k * 10))
                    },
                )
                .unwrap()
        };
        assert_eq!((get(1), get(2), get(1)), (10, 20, 10));
        assert_eq!(made.get(), 2);
        get(3); // drops 2, the least recently used
        assert_eq!((get(1), made.get()), (10, 3));
        assert_eq!((get(2), made.get()), (20, 4));
        // an error is returned and nothing kept
        let e = recent.get_or_make(|x| *x == 9, || Err::<(u32, u32), _>("no"));
        assert_eq!(e, Err("no"));
        assert_eq!((get(2), made.get()), (20, 4));
    }
}
