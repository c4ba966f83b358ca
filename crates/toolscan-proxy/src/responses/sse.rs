//! One Responses stream event as SSE bytes.

use super::event::Event;

/// Appends `event` to `out` as one SSE event:
/// `event: NAME\ndata: JSON\n\n` (the JSON is written on one line: serde
/// escapes every newline inside strings).
pub(crate) fn write(event: &Event, out: &mut Vec<u8>) {
    out.extend_from_slice(b"event: ");
    out.extend_from_slice(event.name.as_bytes());
    out.extend_from_slice(b"\ndata: ");
    // Writing a `Value` into a `Vec` cannot fail.
    let _ = serde_json::to_writer(&mut *out, &event.data);
    out.extend_from_slice(b"\n\n");
}

/// `event` as SSE bytes (see [`write()`]).
#[cfg(test)]
pub(crate) fn to_bytes(event: &Event) -> bytes::Bytes {
    let mut out = Vec::with_capacity(128);
    write(event, &mut out);
    out.into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_event_is_one_event_line_and_one_data_line() {
        let event = Event {
            name: "response.output_text.delta".into(),
            data: json!({"type": "response.output_text.delta", "delta": "a\nb"}),
        };
        let bytes = to_bytes(&event);
        let text = std::str::from_utf8(&bytes).unwrap_or_default();
        let data = text
            .strip_prefix("event: response.output_text.delta\ndata: ")
            .and_then(|t| t.strip_suffix("\n\n"));
        let parsed = data.and_then(|d| serde_json::from_str::<serde_json::Value>(d).ok());
        assert_eq!(parsed, Some(event.data), "{text}");
        assert_eq!(bytes.iter().filter(|&&b| b == b'\n').count(), 3);
    }
}
