//! The error an [`EventStream`](crate::EventStream) yields.

use std::error::Error;
use std::fmt;

/// Why an [`EventStream`](crate::EventStream) yielded an error instead of an
/// event.
///
/// Bad model output is never an error (it becomes text plus a
/// [`Diagnostic`](toolscan_core::Diagnostic)); only the byte stream itself
/// can fail.
///
/// The inner error is kept typed, not boxed: match on it, or reach it
/// through [`Error::source`]. Following the usual convention for wrapping
/// errors, the [`Display`](fmt::Display) text does not repeat the inner
/// error's message; print the [`source`](Error::source) chain (as `anyhow`'s
/// `{:#}` does) to see both.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum StreamError<E> {
    /// The inner stream of byte chunks yielded this error. The event stream
    /// ends after it.
    Transport(E),
}

impl<E> StreamError<E> {
    /// The transport error, if this is one.
    pub fn as_transport(&self) -> Option<&E> {
        match self {
            StreamError::Transport(e) => Some(e),
        }
    }

    /// The transport error, if this is one, by value.
    pub fn into_transport(self) -> Option<E> {
        match self {
            StreamError::Transport(e) => Some(e),
        }
    }
}

impl<E> fmt::Display for StreamError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StreamError::Transport(_) => f.write_str("the stream of response bytes failed"),
        }
    }
}

impl<E: Error + 'static> Error for StreamError<E> {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        match self {
            StreamError::Transport(e) => Some(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io;

    #[test]
    fn source_is_the_typed_transport_error() {
        let err = StreamError::Transport(io::Error::new(io::ErrorKind::ConnectionReset, "reset"));
        let source = err.source().and_then(|s| s.downcast_ref::<io::Error>());
        assert_eq!(
            source.map(io::Error::kind),
            Some(io::ErrorKind::ConnectionReset)
        );
        assert_eq!(err.to_string(), "the stream of response bytes failed");
        assert_eq!(
            err.into_transport().map(|e| e.to_string()),
            Some("reset".to_string())
        );
    }

    #[test]
    fn usable_as_a_boxed_error() {
        let err: Box<dyn Error + Send + Sync> =
            Box::new(StreamError::Transport(io::Error::other("boom")));
        assert!(err.source().is_some());
    }

    #[test]
    fn as_transport_borrows() {
        let err = StreamError::Transport(7_u8);
        assert_eq!(err.as_transport(), Some(&7));
        assert!(format!("{err:?}").contains("Transport(7)"));
    }
}
