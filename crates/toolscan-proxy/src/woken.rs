//! A streamed response body that is polled again only after it woke its
//! task.
//!
//! hyper's connection loop polls a response body up to three times for
//! each frame it sends: once for the frame, once more right after it
//! (nothing yet: `Pending`), and, when the flush of that frame went
//! through, a third time, again `Pending`. Each poll goes down every
//! layer of a streamed answer (the access count, the relay, the SSE
//! rewrite, the line guard, the idle timer, the upstream framing) to the
//! upstream socket, which is not ready. [`Woken`] gives the layers below
//! it a waker of its own, which notes the wake before it wakes the task:
//! a body that said `Pending` and has not woken since is `Pending` without
//! being polled, as an executor does not poll a task nobody woke.

use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

use futures_util::task::AtomicWaker;
use hyper::body::{Body, Frame, SizeHint};

/// `inner`, polled only when it may have something: on the first poll,
/// after a poll that was ready, or after it woke its task.
pub(crate) struct Woken<B> {
    inner: B,
    /// What `waker` wakes: the flag it sets and the task to wake.
    wakes: Arc<Wakes>,
    /// The waker `inner` is polled with (made from `wakes`, once).
    waker: Waker,
    /// The last poll of `inner` was `Pending`: it is polled again when
    /// `wakes.woken` says it woke since.
    pending: bool,
}

/// The shared side of the waker `inner` holds.
struct Wakes {
    /// `inner` woke since the flag was last cleared (just before a poll).
    woken: AtomicBool,
    /// The task polling the body (the latest waker it was polled with).
    task: AtomicWaker,
}

impl Wake for Wakes {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.woken.store(true, Ordering::Release);
        self.task.wake();
    }
}

impl<B> Woken<B> {
    pub(crate) fn new(inner: B) -> Woken<B> {
        let wakes = Arc::new(Wakes {
            woken: AtomicBool::new(false),
            task: AtomicWaker::new(),
        });
        Woken {
            inner,
            waker: Waker::from(wakes.clone()),
            wakes,
            pending: false,
        }
    }
}

impl<B: Body + Unpin> Body for Woken<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<B::Data>, B::Error>>> {
        let this = self.get_mut();
        // First the task to wake, then the flag: a wake after this point
        // wakes this task, one before it set the flag.
        this.wakes.task.register(cx.waker());
        let woken = this.wakes.woken.swap(false, Ordering::Acquire);
        if this.pending && !woken {
            return Poll::Pending;
        }
        let polled = Pin::new(&mut this.inner).poll_frame(&mut Context::from_waker(&this.waker));
        this.pending = polled.is_pending();
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;
    use std::sync::Mutex;

    use bytes::Bytes;

    /// A body that gives its queued frames, one a poll, and is `Pending`
    /// when the queue is empty (keeping the waker, woken by `push`); it
    /// counts its polls.
    #[derive(Clone, Default)]
    struct Queue(Arc<Mutex<Queued>>);

    /// A [`Queue`]'s frames, the waker of its last `Pending`, its polls.
    #[derive(Default)]
    struct Queued(VecDeque<&'static str>, Option<Waker>, usize);

    impl Queue {
        fn push(&self, frame: &'static str) {
            let waker = {
                let Ok(mut q) = self.0.lock() else {
                    panic!("poisoned")
                };
                q.0.push_back(frame);
                q.1.take()
            };
            if let Some(w) = waker {
                w.wake();
            }
        }

        fn polls(&self) -> usize {
            self.0.lock().map_or(0, |q| q.2)
        }
    }

    impl Body for Queue {
        type Data = Bytes;
        type Error = std::convert::Infallible;

        fn poll_frame(
            self: Pin<&mut Self>,
            cx: &mut Context<'_>,
        ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
            let Ok(mut q) = self.0.lock() else {
                panic!("poisoned")
            };
            q.2 += 1;
            match q.0.pop_front() {
                Some(f) => Poll::Ready(Some(Ok(Frame::data(Bytes::from_static(f.as_bytes()))))),
                None => {
                    q.1 = Some(cx.waker().clone());
                    Poll::Pending
                }
            }
        }
    }

    /// The task's waker: counts its wakes.
    #[derive(Default)]
    struct Count(std::sync::atomic::AtomicUsize);

    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn poll(body: &mut Woken<Queue>, task: &Waker) -> Option<&'static str> {
        match Pin::new(body).poll_frame(&mut Context::from_waker(task)) {
            Poll::Ready(Some(Ok(f))) => {
                let data = f.into_data().ok()?;
                Some(if &data[..] == b"a" { "a" } else { "b" })
            }
            Poll::Pending => None,
            Poll::Ready(other) => panic!("{:?}", other.map(|r| r.is_ok())),
        }
    }

    #[test]
    fn a_pending_body_is_polled_again_only_once_it_woke_and_its_wake_reaches_the_task() {
        let queue = Queue::default();
        let count = Arc::new(Count::default());
        let task = Waker::from(count.clone());
        let mut body = Woken::new(queue.clone());
        // (outcome of a poll, polls of the inner body after it, task wakes)
        queue.push("a");
        assert_eq!(poll(&mut body, &task), Some("a"));
        assert_eq!(queue.polls(), 1);
        // Right after a frame: polled, nothing there.
        assert_eq!(poll(&mut body, &task), None);
        assert_eq!(queue.polls(), 2);
        // Not woken since: not polled.
        assert_eq!(poll(&mut body, &task), None);
        assert_eq!(poll(&mut body, &task), None);
        assert_eq!(queue.polls(), 2);
        // The inner body wakes: the task is woken, and the next poll
        // reaches the inner body.
        queue.push("b");
        assert_eq!(count.0.load(Ordering::SeqCst), 1);
        assert_eq!(poll(&mut body, &task), Some("b"));
        assert_eq!(queue.polls(), 3);
    }

    #[test]
    fn a_wake_between_two_polls_by_different_tasks_wakes_the_latest() {
        let queue = Queue::default();
        let (first, second) = (Arc::new(Count::default()), Arc::new(Count::default()));
        let mut body = Woken::new(queue.clone());
        assert_eq!(poll(&mut body, &Waker::from(first.clone())), None);
        assert_eq!(poll(&mut body, &Waker::from(second.clone())), None);
        queue.push("a");
        assert_eq!(first.0.load(Ordering::SeqCst), 0);
        assert_eq!(second.0.load(Ordering::SeqCst), 1);
        assert_eq!(poll(&mut body, &Waker::from(second)), Some("a"));
    }
}
