//! The shutdown's first step for the connections ([`Draining`]): once it
//! begins, each connection finishes the request it serves and closes; an
//! idle one closes at once.
//!
//! hyper-util's `GracefulShutdown` does the same with a `Notified` future
//! it polls at every wake of the connection (about 190 instructions an
//! upstream event, under callgrind). Here a connection reads the
//! [`Cut`](crate::cut::Cut) flag at each poll, and polls its watch only
//! when its task's waker changed.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use crate::cut::CutWatch;

/// A connection that can be asked to finish its request and close.
pub(crate) trait Drain: Future {
    fn drain(self: Pin<&mut Self>);
}

impl<I, S, B> Drain for hyper::server::conn::http1::Connection<I, S>
where
    S: hyper::service::HttpService<hyper::body::Incoming, ResBody = B>,
    S::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    I: hyper::rt::Read + hyper::rt::Write + Unpin,
    B: hyper::body::Body + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    fn drain(self: Pin<&mut Self>) {
        self.graceful_shutdown();
    }
}

/// `conn`, drained once `watch` sees the shutdown begin.
pub(crate) struct Draining<C> {
    conn: Pin<Box<C>>,
    watch: CutWatch,
    /// `conn` was asked to drain.
    draining: bool,
}

impl<C: Drain> Draining<C> {
    pub(crate) fn new(conn: C, watch: CutWatch) -> Draining<C> {
        Draining {
            conn: Box::pin(conn),
            watch,
            draining: false,
        }
    }
}

impl<C: Drain> Future for Draining<C> {
    type Output = C::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<C::Output> {
        let this = self.get_mut();
        if !this.draining && this.watch.poll_cut(cx) {
            this.draining = true;
            this.conn.as_mut().drain();
        }
        this.conn.as_mut().poll(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cut::Cut;

    /// A connection that ends once drained.
    struct Conn {
        drained: bool,
    }

    impl Future for Conn {
        type Output = &'static str;
        fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<&'static str> {
            if self.drained {
                Poll::Ready("drained")
            } else {
                Poll::Pending
            }
        }
    }

    impl Drain for Conn {
        fn drain(mut self: Pin<&mut Self>) {
            self.drained = true;
        }
    }

    #[tokio::test]
    async fn a_connection_is_drained_when_the_shutdown_begins_and_not_before() {
        let begun = Cut::default();
        let mut conn = Draining::new(Conn { drained: false }, begun.watch());
        assert!(futures_util::poll!(&mut conn).is_pending());
        assert!(futures_util::poll!(&mut conn).is_pending());
        begun.cancel();
        assert_eq!(conn.await, "drained");
    }
}
