//! The events of one feed, owned: [`Events`].
//!
//! Most chunks of a stream make one event or none (a token of text, a
//! piece of arguments), so the list keeps one event inline and moves to
//! the heap only from the second: [`Parser::feed`](crate::Parser::feed)
//! allocates nothing for a token-sized chunk, where a new `Vec` cost one
//! allocation and one free per chunk (`feed` ÷ the sink API on 4-byte
//! chunks: 2.26× with a new `Vec`, 1.57× with this list, in
//! `BENCHMARKS.md`).

use std::fmt;
use std::ops::{Deref, DerefMut};

use smallvec::SmallVec;

use crate::event::{Event, EventRef};
use crate::sink::{own, Sink};

/// The inline list: one event without allocating.
type Inline = SmallVec<[Event; 1]>;

/// Owned events in input order, as [`Parser::feed`](crate::Parser::feed)
/// returns them: a slice to read, an iterator to consume, a [`Sink`] to
/// add to (a delta continuing the last event is merged into it, as with a
/// `Vec<Event>`).
///
/// ```
/// use toolscan_core::{Event, Parser};
///
/// let mut p = Parser::for_format("hermes").unwrap();
/// let mut events = p.feed(b"Hi <tool_call>{\"name\": \"now\", \"arguments\": {}}</tool_call>");
/// assert_eq!(events[0], Event::Text { delta: "Hi ".into() });
/// events.extend(p.finish());
/// let names: Vec<String> = events
///     .into_iter()
///     .filter_map(|e| match e {
///         Event::ToolCallEnd { name, .. } => Some(name),
///         _ => None,
///     })
///     .collect();
/// assert_eq!(names, ["now"]);
/// ```
#[derive(Clone, Default, PartialEq)]
pub struct Events(Inline);

impl Events {
    /// No events.
    pub fn new() -> Events {
        Events(SmallVec::new())
    }

    /// Appends an event as it is (no merging; see the [`Sink`] impl for
    /// that).
    pub fn push(&mut self, event: Event) {
        self.0.push(event)
    }

    /// The events as a `Vec` (no copy when they already moved to the heap).
    pub fn into_vec(self) -> Vec<Event> {
        self.0.into_vec()
    }
}

impl Sink for Events {
    #[inline]
    fn event(&mut self, event: EventRef<'_>) {
        own(&mut self.0, event)
    }
}

impl Deref for Events {
    type Target = [Event];
    fn deref(&self) -> &[Event] {
        &self.0
    }
}

impl DerefMut for Events {
    fn deref_mut(&mut self) -> &mut [Event] {
        &mut self.0
    }
}

impl std::borrow::Borrow<[Event]> for Events {
    fn borrow(&self) -> &[Event] {
        &self.0
    }
}

impl fmt::Debug for Events {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl serde::Serialize for Events {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
    }
}

impl From<Events> for Vec<Event> {
    fn from(events: Events) -> Vec<Event> {
        events.into_vec()
    }
}

impl From<Vec<Event>> for Events {
    fn from(events: Vec<Event>) -> Events {
        Events(SmallVec::from_vec(events))
    }
}

impl FromIterator<Event> for Events {
    fn from_iter<I: IntoIterator<Item = Event>>(iter: I) -> Events {
        Events(iter.into_iter().collect())
    }
}

impl Extend<Event> for Events {
    fn extend<I: IntoIterator<Item = Event>>(&mut self, iter: I) {
        self.0.extend(iter)
    }
}

impl IntoIterator for Events {
    type Item = Event;
    type IntoIter = EventsIter;
    fn into_iter(self) -> EventsIter {
        EventsIter(self.0.into_iter())
    }
}

impl<'a> IntoIterator for &'a Events {
    type Item = &'a Event;
    type IntoIter = std::slice::Iter<'a, Event>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl PartialEq<Vec<Event>> for Events {
    fn eq(&self, other: &Vec<Event>) -> bool {
        self[..] == other[..]
    }
}

impl PartialEq<Events> for Vec<Event> {
    fn eq(&self, other: &Events) -> bool {
        self[..] == other[..]
    }
}

impl PartialEq<[Event]> for Events {
    fn eq(&self, other: &[Event]) -> bool {
        self[..] == *other
    }
}

impl<const N: usize> PartialEq<[Event; N]> for Events {
    fn eq(&self, other: &[Event; N]) -> bool {
        self[..] == other[..]
    }
}

/// The owning iterator of [`Events`].
pub struct EventsIter(smallvec::IntoIter<[Event; 1]>);

impl Iterator for EventsIter {
    type Item = Event;
    fn next(&mut self) -> Option<Event> {
        self.0.next()
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

impl DoubleEndedIterator for EventsIter {
    fn next_back(&mut self) -> Option<Event> {
        self.0.next_back()
    }
}

impl ExactSizeIterator for EventsIter {}

impl fmt::Debug for EventsIter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.0.as_slice()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_event_stays_inline_and_the_second_moves_to_the_heap() {
        let mut e = Events::new();
        e.event(EventRef::Text("a"));
        e.event(EventRef::Text("b"));
        assert!(!e.0.spilled(), "a merged delta is still one event");
        e.event(EventRef::Reasoning("c"));
        assert!(e.0.spilled());
        assert_eq!(
            e,
            vec![
                Event::Text { delta: "ab".into() },
                Event::Reasoning { delta: "c".into() }
            ]
        );
    }

    #[test]
    fn merges_as_a_vec_does() {
        let events = [
            EventRef::Text("a"),
            EventRef::ToolCallArgs {
                index: 0,
                delta: "{",
            },
            EventRef::ToolCallArgs {
                index: 0,
                delta: "}",
            },
            EventRef::ToolCallArgs {
                index: 1,
                delta: "{",
            },
            EventRef::Reasoning("r"),
            EventRef::Reasoning("s"),
        ];
        let (mut v, mut e) = (Vec::new(), Events::new());
        for ev in events {
            v.event(ev);
            e.event(ev);
        }
        assert_eq!(v.len(), 4);
        assert_eq!(e, v);
        assert_eq!(e.clone().into_vec(), v);
        assert_eq!(e.into_iter().rev().count(), 4);
    }
}
