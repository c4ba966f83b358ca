//! `toolscan health URL`: one `GET`; exit 0 when the answer is 2xx within
//! `--timeout`, 1 otherwise (unreachable, timed out, any other status),
//! with the reason on stderr. The container's `HEALTHCHECK` runs it, in an
//! image with no shell nor curl.

use std::time::Duration;

use crate::args::HealthArgs;
use crate::failure::Failure;

/// Asks `args.url`.
pub fn run(args: &HealthArgs) -> Result<(), Failure> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::Failed(format!("cannot start the async runtime: {e}")))?;
    let timeout = Duration::from_secs_f64(args.timeout);
    let client = reqwest::Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(timeout)
        .build()
        .map_err(|e| Failure::Failed(format!("cannot build the HTTP client: {e}")))?;
    let url = &args.url;
    let answer = runtime.block_on(async { client.get(url).send().await });
    match answer {
        Ok(r) if r.status().is_success() => Ok(()),
        Ok(r) => Err(Failure::Failed(format!("{url} answered {}", r.status()))),
        Err(e) if e.is_timeout() => Err(Failure::Failed(format!(
            "{url} did not answer within {} s",
            args.timeout
        ))),
        Err(e) => Err(Failure::Failed(format!("cannot reach {url}: {e}"))),
    }
}
