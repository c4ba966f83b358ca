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

use crate::event::{Event, EventRef};
use crate::sink::{own, Sink};

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
#[derive(Clone, Default)]
pub struct Events(List);

/// The list's shapes. A token-sized chunk makes one event or none, which
/// stay in place (no allocation, one word written for an empty list);
/// from the second event on they are all on the heap, so that they always
/// make one slice.
#[derive(Clone, Default)]
enum List {
    #[default]
    Empty,
    One(Event),
    Many(Vec<Event>),
}

impl Events {
    /// No events.
    pub fn new() -> Events {
        Events(List::Empty)
    }

    /// Appends an event as it is (no merging; see the [`Sink`] impl for
    /// that).
    pub fn push(&mut self, event: Event) {
        match &mut self.0 {
            List::Empty => self.0 = List::One(event),
            List::Many(many) => many.push(event),
            List::One(_) => self.spill(|many| many.push(event)),
        }
    }

    /// Moves the list to the heap (the event held in place first) and
    /// hands it to `add`, to take a second event.
    fn spill(&mut self, add: impl FnOnce(&mut Vec<Event>)) {
        let mut many = match std::mem::take(&mut self.0) {
            List::Empty => Vec::new(),
            List::One(first) => {
                let mut many = Vec::with_capacity(4);
                many.push(first);
                many
            }
            List::Many(many) => many,
        };
        add(&mut many);
        self.0 = List::Many(many);
    }

    /// The events as a `Vec` (no copy when they already moved to the heap).
    pub fn into_vec(self) -> Vec<Event> {
        match self.0 {
            List::Empty => Vec::new(),
            List::One(first) => vec![first],
            List::Many(many) => many,
        }
    }
}

impl Sink for Events {
    #[inline]
    fn event(&mut self, event: EventRef<'_>) {
        match &mut self.0 {
            // The first event of a feed, built in its place: most
            // token-sized chunks make exactly one.
            List::Empty => {
                self.0 = List::One(match event {
                    EventRef::Text(t) => Event::Text { delta: t.into() },
                    e => e.to_owned(),
                })
            }
            List::One(last) => {
                if !merge(last, event) {
                    self.spill(|many| own(many, event))
                }
            }
            List::Many(many) => own(many, event),
        }
    }
}

/// Adds `event` to `last` when it continues it (a delta of the same kind,
/// of the same call); says whether it did.
#[inline]
fn merge(last: &mut Event, event: EventRef<'_>) -> bool {
    match (last, event) {
        (Event::Text { delta }, EventRef::Text(t))
        | (Event::Reasoning { delta }, EventRef::Reasoning(t)) => delta.push_str(t),
        (Event::ToolCallArgs { index: i, delta }, EventRef::ToolCallArgs { index, delta: d })
            if *i == index =>
        {
            delta.push_str(d)
        }
        _ => return false,
    }
    true
}

impl Deref for Events {
    type Target = [Event];
    #[inline]
    fn deref(&self) -> &[Event] {
        match &self.0 {
            List::Empty => &[],
            List::One(first) => std::slice::from_ref(first),
            List::Many(many) => many,
        }
    }
}

impl DerefMut for Events {
    #[inline]
    fn deref_mut(&mut self) -> &mut [Event] {
        match &mut self.0 {
            List::Empty => &mut [],
            List::One(first) => std::slice::from_mut(first),
            List::Many(many) => many,
        }
    }
}

impl PartialEq for Events {
    fn eq(&self, other: &Events) -> bool {
        self[..] == other[..]
    }
}

impl std::borrow::Borrow<[Event]> for Events {
    fn borrow(&self) -> &[Event] {
        self
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
        Events(List::Many(events))
    }
}

impl FromIterator<Event> for Events {
    fn from_iter<I: IntoIterator<Item = Event>>(iter: I) -> Events {
        let mut events = Events::new();
        events.extend(iter);
        events
    }
}

impl Extend<Event> for Events {
    fn extend<I: IntoIterator<Item = Event>>(&mut self, iter: I) {
        for event in iter {
            self.push(event);
        }
    }
}

impl IntoIterator for Events {
    type Item = Event;
    type IntoIter = EventsIter;
    #[inline]
    fn into_iter(self) -> EventsIter {
        EventsIter(match self.0 {
            List::Empty => Iter::Done,
            List::One(first) => Iter::One(first),
            List::Many(many) => Iter::Many(many.into_iter()),
        })
    }
}

impl<'a> IntoIterator for &'a Events {
    type Item = &'a Event;
    type IntoIter = std::slice::Iter<'a, Event>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
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
pub struct EventsIter(Iter);

/// The list's shapes, as an iterator: one event to take out of its place,
/// the heap list's own iterator, or nothing left.
enum Iter {
    Done,
    One(Event),
    Many(std::vec::IntoIter<Event>),
}

impl Iter {
    /// The event held in place, taken out (`Done` from then on).
    #[inline]
    fn take_one(&mut self) -> Option<Event> {
        match std::mem::replace(self, Iter::Done) {
            Iter::One(event) => Some(event),
            other => {
                *self = other;
                None
            }
        }
    }
}

impl Iterator for EventsIter {
    type Item = Event;
    #[inline]
    fn next(&mut self) -> Option<Event> {
        match &mut self.0 {
            Iter::Done => None,
            Iter::One(_) => self.0.take_one(),
            Iter::Many(many) => many.next(),
        }
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = match &self.0 {
            Iter::Done => 0,
            Iter::One(_) => 1,
            Iter::Many(many) => many.len(),
        };
        (n, Some(n))
    }
}

impl DoubleEndedIterator for EventsIter {
    fn next_back(&mut self) -> Option<Event> {
        match &mut self.0 {
            Iter::Done => None,
            Iter::One(_) => self.0.take_one(),
            Iter::Many(many) => many.next_back(),
        }
    }
}

impl ExactSizeIterator for EventsIter {}

impl fmt::Debug for EventsIter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let events: &[Event] = match &self.0 {
            Iter::Done => &[],
            Iter::One(event) => std::slice::from_ref(event),
            Iter::Many(many) => many.as_slice(),
        };
        f.debug_list().entries(events).finish()
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
        assert!(
            matches!(e.0, List::One(_)),
            "a merged delta is still one event, in place"
        );
        e.event(EventRef::Reasoning("c"));
        assert!(matches!(&e.0, List::Many(many) if many.len() == 2));
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
