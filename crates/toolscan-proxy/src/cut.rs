//! The shutdown's cut of the streams still open at the end of the grace
//! period ([`Cut`]), and a stream's watch on it ([`CutWatch`]), cheap
//! enough to look at on every poll of a stream: a flag read, where polling
//! a cancellation future takes its lock each time.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};

/// Cuts the open streams once: [`Cut::cancel`] sets the flag, then wakes
/// every stream's watch.
#[derive(Clone, Debug, Default)]
pub(crate) struct Cut {
    /// Wakes the watches.
    token: CancellationToken,
    /// Set (before `token` is cancelled) once the streams are cut.
    flag: Arc<AtomicBool>,
}

impl Cut {
    /// Cuts the streams: each sees it at its next poll, and each waiting
    /// one is woken.
    pub(crate) fn cancel(&self) {
        self.flag.store(true, Ordering::Release);
        self.token.cancel();
    }

    /// Whether the streams are cut.
    pub(crate) fn is_cut(&self) -> bool {
        self.flag.load(Ordering::Acquire)
    }

    /// A stream's watch.
    pub(crate) fn watch(&self) -> CutWatch {
        CutWatch {
            cut: self.clone(),
            wait: Box::pin(self.token.clone().cancelled_owned()),
            registered: None,
        }
    }
}

/// One stream's watch on the cut.
pub(crate) struct CutWatch {
    cut: Cut,
    /// Holds the waker of the task that polls the stream.
    wait: Pin<Box<WaitForCancellationFutureOwned>>,
    /// The waker `wait` was last polled with: polled again only for
    /// another one (a stream is polled by one task, so once).
    registered: Option<Waker>,
}

impl CutWatch {
    /// Whether the streams are cut; if not, the task polling with `cx` is
    /// woken when they are.
    pub(crate) fn poll_cut(&mut self, cx: &mut Context<'_>) -> bool {
        if self.cut.is_cut() {
            return true;
        }
        if self
            .registered
            .as_ref()
            .is_some_and(|w| w.will_wake(cx.waker()))
        {
            return false;
        }
        self.registered = Some(cx.waker().clone());
        matches!(self.wait.as_mut().poll(cx), Poll::Ready(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use std::task::Wake;

    struct Count(AtomicUsize);
    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[test]
    fn a_watched_stream_is_woken_once_by_the_cut_and_then_sees_it() {
        let cut = Cut::default();
        let mut watch = cut.watch();
        let count = Arc::new(Count(AtomicUsize::new(0)));
        let waker = Waker::from(count.clone());
        let mut cx = Context::from_waker(&waker);
        assert!(!watch.poll_cut(&mut cx));
        // Polled again by the same task: not cut, nothing registered anew.
        assert!(!watch.poll_cut(&mut cx));
        cut.cancel();
        assert_eq!(count.0.load(Ordering::SeqCst), 1);
        assert!(watch.poll_cut(&mut cx));
        assert!(cut.is_cut());
    }

    #[test]
    fn a_watch_polled_by_another_task_wakes_that_task() {
        let cut = Cut::default();
        let mut watch = cut.watch();
        let first = Arc::new(Count(AtomicUsize::new(0)));
        let second = Arc::new(Count(AtomicUsize::new(0)));
        let w1 = Waker::from(first.clone());
        let w2 = Waker::from(second.clone());
        assert!(!watch.poll_cut(&mut Context::from_waker(&w1)));
        assert!(!watch.poll_cut(&mut Context::from_waker(&w2)));
        cut.cancel();
        assert_eq!(second.0.load(Ordering::SeqCst), 1);
        assert_eq!(first.0.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn a_watch_made_after_the_cut_sees_it_at_once() {
        let cut = Cut::default();
        cut.cancel();
        let mut watch = cut.watch();
        let waker = Waker::from(Arc::new(Count(AtomicUsize::new(0))));
        assert!(watch.poll_cut(&mut Context::from_waker(&waker)));
    }
}
