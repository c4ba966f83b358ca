//! The responses kept for `previous_response_id`: the last N, each for a
//! while (a TTL), in this process's memory only.
//!
//! A response kept here is its conversation: the input items of every turn
//! up to it and their output items; its items that have an `id` are found
//! by it too (for `item_reference` input items). A turn holds its own items and a link
//! to the turn it continued, so a long conversation is kept once, not
//! once per response. Not shared between replicas: behind a load balancer,
//! a `previous_response_id` works only when the request reaches the
//! process that answered the previous one (sticky sessions), and nothing
//! survives a restart.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

/// One kept turn of a conversation: its items and the turn before it.
#[derive(Debug)]
pub(crate) struct Turn {
    /// The turn it continued (`previous_response_id`), if any.
    parent: Option<Arc<Turn>>,
    /// This turn's input items, then its output items (Responses items).
    items: Vec<Value>,
}

impl Turn {
    /// The conversation up to and including this turn: every turn's items,
    /// the first turn's first.
    pub(crate) fn history(self: &Arc<Turn>) -> Vec<Value> {
        let mut turns = Vec::new();
        let mut at = Some(self);
        while let Some(turn) = at {
            turns.push(turn);
            at = turn.parent.as_ref();
        }
        turns
            .iter()
            .rev()
            .flat_map(|t| t.items.iter().cloned())
            .collect()
    }
}

impl Drop for Turn {
    /// Unlinks a chain of turns one by one: the default drop would recurse
    /// once per turn of a long conversation.
    fn drop(&mut self) {
        let mut parent = self.parent.take();
        while let Some(p) = parent {
            match Arc::try_unwrap(p) {
                Ok(mut turn) => parent = turn.parent.take(),
                Err(_) => break,
            }
        }
    }
}

/// A kept response.
#[derive(Debug)]
struct Kept {
    /// When it was kept.
    at: Instant,
    turn: Arc<Turn>,
}

#[derive(Debug, Default)]
struct Inner {
    by_id: HashMap<String, Kept>,
    /// Ids in the order they were kept: the oldest first (every response
    /// has the same TTL, so the oldest expires first).
    order: VecDeque<String>,
    /// Every kept item that has an `id` (`msg_…`, `fc_…`, `rs_…`, and the
    /// client's own): the turn that holds it (the latest, when several
    /// do), for `item_reference`s. Only items of kept turns are in it.
    items: HashMap<String, (Instant, Arc<Turn>, usize)>,
}

impl Inner {
    fn insert(&mut self, id: String, kept: Kept, evicted: &mut Vec<Arc<Turn>>) {
        for (i, item) in kept.turn.items.iter().enumerate() {
            if let Some(item_id) = item.get("id").and_then(Value::as_str) {
                let entry = (kept.at, Arc::clone(&kept.turn), i);
                self.items.insert(item_id.to_owned(), entry);
            }
        }
        if let Some(old) = self.by_id.insert(id.clone(), kept) {
            self.order.retain(|k| *k != id);
            self.unindex(&old.turn);
            evicted.push(old.turn);
        }
        self.order.push_back(id);
    }

    fn remove_oldest(&mut self, evicted: &mut Vec<Arc<Turn>>) {
        if let Some(id) = self.order.pop_front() {
            if let Some(k) = self.by_id.remove(&id) {
                self.unindex(&k.turn);
                evicted.push(k.turn);
            }
        }
    }

    /// Drops the items of `turn` from the item index (those another turn
    /// holds since stay).
    fn unindex(&mut self, turn: &Arc<Turn>) {
        for item in &turn.items {
            if let Some(item_id) = item.get("id").and_then(Value::as_str) {
                if self
                    .items
                    .get(item_id)
                    .is_some_and(|(_, t, _)| Arc::ptr_eq(t, turn))
                {
                    self.items.remove(item_id);
                }
            }
        }
    }
}

/// The last `capacity` responses, each kept for `ttl`, by response id.
/// Thread-safe; one per process (see the [module](self) on replicas).
#[derive(Debug)]
pub(crate) struct ResponseStore {
    /// The most responses kept; a new one evicts the oldest beyond it.
    capacity: usize,
    /// How long a response is kept.
    ttl: Duration,
    inner: Mutex<Inner>,
}

impl ResponseStore {
    /// A store of at most `capacity` responses (at least 1), each kept for
    /// `ttl`.
    pub(crate) fn new(capacity: usize, ttl: Duration) -> ResponseStore {
        ResponseStore {
            capacity: capacity.max(1),
            ttl,
            inner: Mutex::new(Inner::default()),
        }
    }

    /// Keeps response `id`: its turn's `items` (input, then output) after
    /// the conversation `parent` (the turn it continued, if any).
    pub(crate) fn put(&self, id: String, parent: Option<Arc<Turn>>, items: Vec<Value>) {
        self.put_at(id, parent, items, Instant::now());
    }

    /// The conversation of response `id`, if it is kept.
    pub(crate) fn get(&self, id: &str) -> Option<Arc<Turn>> {
        self.get_at(id, Instant::now())
    }

    /// The kept item whose `id` is `id` (an `item_reference`'s), if any.
    pub(crate) fn item(&self, id: &str) -> Option<Value> {
        self.item_at(id, Instant::now())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // A panic while holding the lock leaves the maps consistent (each
        // change is one insert or remove): the poison is ignored.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn put_at(&self, id: String, parent: Option<Arc<Turn>>, items: Vec<Value>, now: Instant) {
        let turn = Arc::new(Turn { parent, items });
        let mut evicted = Vec::new();
        {
            let mut inner = self.lock();
            self.expire(&mut inner, now, &mut evicted);
            inner.insert(id, Kept { at: now, turn }, &mut evicted);
            while inner.order.len() > self.capacity {
                inner.remove_oldest(&mut evicted);
            }
        }
        // Freed outside the lock.
        drop(evicted);
    }

    fn get_at(&self, id: &str, now: Instant) -> Option<Arc<Turn>> {
        let inner = self.lock();
        let kept = inner.by_id.get(id)?;
        (now.saturating_duration_since(kept.at) < self.ttl).then(|| Arc::clone(&kept.turn))
    }

    fn item_at(&self, id: &str, now: Instant) -> Option<Value> {
        let inner = self.lock();
        let (at, turn, i) = inner.items.get(id)?;
        if now.saturating_duration_since(*at) >= self.ttl {
            return None;
        }
        turn.items.get(*i).cloned()
    }

    /// Drops the responses older than the TTL at `now`.
    fn expire(&self, inner: &mut Inner, now: Instant, evicted: &mut Vec<Arc<Turn>>) {
        while let Some(oldest) = inner.order.front() {
            let expired = inner
                .by_id
                .get(oldest)
                .is_none_or(|k| now.saturating_duration_since(k.at) >= self.ttl);
            if !expired {
                break;
            }
            inner.remove_oldest(evicted);
        }
    }

    /// How many responses are kept (expired ones not yet dropped count).
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.lock().by_id.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_kept_response_gives_its_whole_conversation() {
        let store = ResponseStore::new(4, Duration::from_secs(60));
        store.put("resp_1".into(), None, vec![json!("in1"), json!("out1")]);
        let first = store.get("resp_1");
        store.put("resp_2".into(), first, vec![json!("in2"), json!("out2")]);
        let history = store.get("resp_2").map(|t| t.history());
        assert_eq!(
            history,
            Some(vec![
                json!("in1"),
                json!("out1"),
                json!("in2"),
                json!("out2")
            ])
        );
        assert!(store.get("resp_3").is_none());
    }

    #[test]
    fn the_oldest_response_is_evicted_beyond_the_capacity() {
        let store = ResponseStore::new(2, Duration::from_secs(60));
        for i in 0..3 {
            store.put(format!("resp_{i}"), None, vec![json!(i)]);
        }
        assert_eq!(store.len(), 2);
        assert!(store.get("resp_0").is_none());
        assert!(store.get("resp_1").is_some() && store.get("resp_2").is_some());
    }

    #[test]
    fn a_response_older_than_the_ttl_is_gone() {
        let store = ResponseStore::new(8, Duration::from_secs(10));
        let t0 = Instant::now();
        store.put_at("resp_a".into(), None, vec![json!(1)], t0);
        assert!(store
            .get_at("resp_a", t0 + Duration::from_secs(9))
            .is_some());
        assert!(store
            .get_at("resp_a", t0 + Duration::from_secs(10))
            .is_none());
        // The next keep drops it.
        store.put_at("resp_b".into(), None, vec![], t0 + Duration::from_secs(11));
        assert_eq!(store.len(), 1);
    }

    #[test]
    fn an_evicted_turn_stays_in_the_conversations_that_continue_it() {
        let store = ResponseStore::new(1, Duration::from_secs(60));
        store.put("resp_1".into(), None, vec![json!(1)]);
        let first = store.get("resp_1");
        store.put("resp_2".into(), first, vec![json!(2)]);
        assert!(store.get("resp_1").is_none());
        let history = store.get("resp_2").map(|t| t.history());
        assert_eq!(history, Some(vec![json!(1), json!(2)]));
    }

    #[test]
    fn a_long_conversation_is_dropped_without_recursing() {
        let mut turn: Option<Arc<Turn>> = None;
        for _ in 0..200_000 {
            turn = Some(Arc::new(Turn {
                parent: turn,
                items: Vec::new(),
            }));
        }
        drop(turn);
    }

    #[test]
    fn kept_items_are_found_by_their_id_until_their_response_goes() {
        let store = ResponseStore::new(1, Duration::from_secs(60));
        let call = json!({"type": "function_call", "id": "fc_1", "call_id": "c", "name": "f",
            "arguments": "{}"});
        store.put(
            "resp_1".into(),
            None,
            vec![json!({"role": "user", "content": "x"}), call.clone()],
        );
        assert_eq!(store.item("fc_1"), Some(call));
        assert_eq!(store.item("fc_2"), None);
        store.put("resp_2".into(), None, vec![]);
        assert_eq!(store.item("fc_1"), None);
    }
}
