//! The idle connections to the upstream, kept for the next request
//! ([`Pool`]).

use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use bytes::BytesMut;
use tokio::net::TcpStream;

/// How many idle connections are kept at most.
const MAX_IDLE: usize = 1024;
/// How long an idle connection is kept.
const KEEP_IDLE: Duration = Duration::from_secs(90);

/// A connection to the upstream and what was read from it and not yet
/// taken.
pub(crate) struct Conn {
    pub(crate) io: TcpStream,
    /// Bytes read and not yet consumed by the answer's head or body.
    pub(crate) buf: BytesMut,
}

/// Idle connections, the most recently used last (taken first: it is the
/// likeliest to be open still).
#[derive(Default)]
pub(crate) struct Pool {
    /// Each connection, at the end of an answer, with nothing of another
    /// unread; and when it was put here.
    idle: Mutex<Vec<(Conn, Instant)>>,
}

impl Pool {
    /// An idle connection that is still open and not too old, if any.
    pub(crate) fn take(&self) -> Option<Conn> {
        let mut idle = self.idle.lock().unwrap_or_else(PoisonError::into_inner);
        while let Some((conn, since)) = idle.pop() {
            if since.elapsed() < KEEP_IDLE && still_open(&conn.io) {
                return Some(conn);
            }
        }
        None
    }

    /// Keeps `conn` for the next request (dropped, so closed, if the pool
    /// is full).
    pub(crate) fn put(&self, conn: Conn) {
        debug_assert!(conn.buf.is_empty());
        let mut idle = self.idle.lock().unwrap_or_else(PoisonError::into_inner);
        if idle.len() < MAX_IDLE {
            idle.push((conn, Instant::now()));
        }
    }
}

/// Whether an idle connection is open, as far as the runtime knows: the
/// upstream closing it (or sending something unasked) has made it
/// readable. A close the runtime has not seen yet is caught when the
/// request fails on it, and the request sent again on a new connection.
fn still_open(io: &TcpStream) -> bool {
    let mut probe = [0u8; 1];
    matches!(io.try_read(&mut probe), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock)
}
