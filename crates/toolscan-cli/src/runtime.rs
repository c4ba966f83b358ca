//! The async runtime the servers (`proxy`, `replay`) and the bench run
//! on, and the servers' listeners.

use crate::failure::Failure;

/// The runtime a server (`proxy`, `replay`) runs on: `workers` threads,
/// by default as many as the machine has cores. One worker is a
/// current-thread runtime: its tasks never move between threads, which
/// takes 650–750 instructions off each upstream event the proxy relays
/// (callgrind, `scripts/proxy-instructions.sh`).
pub fn server_runtime(
    workers: Option<std::num::NonZeroUsize>,
) -> Result<tokio::runtime::Runtime, Failure> {
    let mut builder = match workers.map(std::num::NonZeroUsize::get) {
        Some(1) => tokio::runtime::Builder::new_current_thread(),
        Some(n) => {
            let mut b = tokio::runtime::Builder::new_multi_thread();
            b.worker_threads(n);
            b
        }
        None => tokio::runtime::Builder::new_multi_thread(),
    };
    builder
        .enable_all()
        .build()
        .map_err(|e| Failure::Usage(format!("cannot start the async runtime: {e}")))
}

/// A listener on `addr`, or the usage error that says why not.
pub async fn listen(addr: &str) -> Result<tokio::net::TcpListener, Failure> {
    tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| Failure::Usage(format!("cannot listen on `{addr}`: {e}")))
}
