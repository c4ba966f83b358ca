//! One Responses stream event, as the translator and the passthrough
//! write it.

use std::borrow::Cow;

use serde_json::Value;

/// One Responses stream event: its name (its `type`) and its JSON, which
/// carries `type` and `sequence_number`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Event {
    /// The event's `type`, also its SSE `event:` name (the upstream's own,
    /// for events the passthrough passes on).
    pub(crate) name: Cow<'static, str>,
    /// The event object.
    pub(crate) data: Value,
}
