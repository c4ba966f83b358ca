//! The async runtime the servers (`proxy`, `replay`) and the bench run
//! on, and the servers' listeners.

use crate::failure::Failure;

/// The multi-threaded runtime the servers (`proxy`, `replay`) run on.
pub fn server_runtime() -> Result<tokio::runtime::Runtime, Failure> {
    tokio::runtime::Builder::new_multi_thread()
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
