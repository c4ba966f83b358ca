//! The direct client against a scripted upstream on loopback: what it
//! writes, how it reads each framing, when it keeps a connection.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use http_body_util::BodyExt;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use super::*;

/// What the scripted upstream answers a request: these bytes, then it
/// closes the connection if `close`.
struct Script {
    bytes: Vec<u8>,
    close: bool,
}

/// An upstream on loopback that answers each request with the next
/// script, and keeps what it was sent.
struct Upstream {
    url: String,
    /// Connections accepted so far.
    accepted: Arc<AtomicUsize>,
    /// Each request as it came, head and body.
    seen: Arc<Mutex<Vec<Vec<u8>>>>,
    /// Connections that ended with the client closing them, not the
    /// upstream.
    closed_by_client: Arc<AtomicUsize>,
}

fn script(bytes: &[u8], close: bool) -> Script {
    Script {
        bytes: bytes.to_vec(),
        close,
    }
}

async fn upstream(scripts: Vec<Script>) -> Upstream {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let scripts = Arc::new(Mutex::new(VecDeque::from(scripts)));
    let accepted = Arc::new(AtomicUsize::new(0));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let closed_by_client = Arc::new(AtomicUsize::new(0));
    let (a, s, c) = (accepted.clone(), seen.clone(), closed_by_client.clone());
    tokio::spawn(async move {
        loop {
            let Ok((mut io, _)) = listener.accept().await else {
                return;
            };
            a.fetch_add(1, Ordering::SeqCst);
            let (scripts, seen, closed) = (scripts.clone(), s.clone(), c.clone());
            tokio::spawn(async move {
                let mut buf = Vec::new();
                loop {
                    let Some(request) = read_request(&mut io, &mut buf).await else {
                        closed.fetch_add(1, Ordering::SeqCst);
                        return;
                    };
                    seen.lock().unwrap().push(request);
                    let Some(next) = scripts.lock().unwrap().pop_front() else {
                        return;
                    };
                    io.write_all(&next.bytes).await.unwrap();
                    if next.close {
                        return;
                    }
                }
            });
        }
    });
    Upstream {
        url,
        accepted,
        seen,
        closed_by_client,
    }
}

/// One request (its head, and as many bytes as its `content-length`
/// says), `None` when the connection ends first.
async fn read_request(io: &mut tokio::net::TcpStream, buf: &mut Vec<u8>) -> Option<Vec<u8>> {
    loop {
        let mut slots = [httparse::EMPTY_HEADER; 64];
        let mut request = httparse::Request::new(&mut slots);
        if let Ok(httparse::Status::Complete(head)) = request.parse(buf) {
            let length = request
                .headers
                .iter()
                .find(|h| h.name.eq_ignore_ascii_case("content-length"))
                .map_or(0, |h| {
                    std::str::from_utf8(h.value).unwrap().parse().unwrap()
                });
            if buf.len() >= head + length {
                return Some(buf.drain(..head + length).collect());
            }
        }
        let mut more = [0u8; 4096];
        match io.read(&mut more).await {
            Ok(0) | Err(_) => return None,
            Ok(n) => buf.extend_from_slice(&more[..n]),
        }
    }
}

fn client(url: &str) -> Direct {
    Direct::new(&reqwest::Client::new(), url, Duration::from_secs(5))
        .unwrap()
        .expect("an http:// upstream")
}

async fn get(direct: &Direct) -> Result<(StatusCode, Vec<u8>), UpstreamError> {
    let reply = direct
        .send(&Method::GET, "/x", &HeaderMap::new(), None)
        .await?;
    let status = reply.status();
    let body = reply.into_body().collect().await?.to_bytes().to_vec();
    Ok((status, body))
}

#[tokio::test]
async fn a_request_is_written_as_the_upstream_reads_it() {
    let up = upstream(vec![script(b"HTTP/1.1 204 No Content\r\n\r\n", false)]).await;
    let url = up.url.replace("http://", "http://us%65r:p%40ss@") + "/prefix";
    let direct = client(&url);
    let mut headers = HeaderMap::new();
    headers.insert(header::HOST, HeaderValue::from_static("the-proxy"));
    headers.insert(header::CONTENT_LENGTH, HeaderValue::from_static("999"));
    headers.insert("x-key", HeaderValue::from_static("k"));
    let body = Bytes::from_static(b"{\"a\":1}");
    let reply = direct
        .send(&Method::POST, "/v1/chat?q=1", &headers, Some(body))
        .await
        .unwrap();
    assert_eq!(reply.status(), StatusCode::NO_CONTENT);
    let seen = up.seen.lock().unwrap().clone();
    let host = up.url.trim_start_matches("http://");
    let want = format!(
        "POST /prefix/v1/chat?q=1 HTTP/1.1\r\nhost: {host}\r\nx-key: k\r\n\
         authorization: Basic dXNlcjpwQHNz\r\ncontent-length: 7\r\n\r\n{{\"a\":1}}"
    );
    assert_eq!(seen, [want.into_bytes()]);
}

#[tokio::test]
async fn each_framing_is_read_and_the_connection_kept_when_it_may() {
    let up = upstream(vec![
        script(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", false),
        script(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n",
            false,
        ),
        script(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\ncontent-length: 2\r\n\r\nok", false),
        script(b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 3\r\n\r\nbye", true),
        script(b"HTTP/1.1 200 OK\r\n\r\nuntil the close", true),
        script(b"HTTP/1.0 200 OK\r\nContent-Length: 3\r\n\r\none", false),
        script(b"HTTP/1.1 200 OK\r\ncontent-length: 4\r\n\r\nlast", false),
    ])
    .await;
    let direct = client(&up.url);
    let want: [(u16, &[u8], usize); 7] = [
        (200, b"hello", 1),
        (200, b"abcde", 1),
        (201, b"ok", 1),
        (200, b"bye", 1),
        // `Connection: close`: a new connection.
        (200, b"until the close", 2),
        // Delimited by the close: a new one again.
        (200, b"one", 3),
        // HTTP/1.0 without keep-alive: and again.
        (200, b"last", 4),
    ];
    for (status, body, connections) in want {
        let (got_status, got_body) = get(&direct).await.unwrap();
        assert_eq!((got_status.as_u16(), &got_body[..]), (status, body));
        assert_eq!(up.accepted.load(Ordering::SeqCst), connections);
    }
}

#[tokio::test]
async fn a_kept_connection_the_upstream_closed_is_replaced() {
    // The upstream closes the connection after an answer that did not say
    // so: the next request finds it closed and goes on a new one.
    let up = upstream(vec![
        script(b"HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\na", true),
        script(b"HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\nb", false),
    ])
    .await;
    let direct = client(&up.url);
    assert_eq!(get(&direct).await.unwrap().1, b"a");
    // Before the runtime saw the close, and after it.
    assert_eq!(get(&direct).await.unwrap().1, b"b");
    assert_eq!(up.accepted.load(Ordering::SeqCst), 2);
    assert_eq!(
        up.seen.lock().unwrap().len(),
        2,
        "each request was answered once"
    );
}

#[tokio::test]
async fn a_request_a_kept_connection_ends_unanswered_is_sent_again_on_a_new_one() {
    // The kept connection looks open; the upstream closes it when the
    // request comes, without a byte of answer.
    let up = upstream(vec![
        script(b"HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\na", false),
        script(b"", true),
        script(b"HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\nb", false),
    ])
    .await;
    let direct = client(&up.url);
    assert_eq!(get(&direct).await.unwrap().1, b"a");
    assert_eq!(get(&direct).await.unwrap().1, b"b");
    assert_eq!(up.accepted.load(Ordering::SeqCst), 2);
    assert_eq!(
        up.seen.lock().unwrap().len(),
        3,
        "the second request went twice"
    );
}

#[tokio::test]
async fn what_is_not_an_answer_is_an_error_and_a_dropped_body_closes_its_connection() {
    let huge = format!("HTTP/1.1 200 OK\r\nx: {}\r\n\r\n", "a".repeat(70_000));
    let up = upstream(vec![
        script(b"hello there\r\n\r\n", true),
        script(huge.as_bytes(), true),
        script(
            b"HTTP/1.1 200 OK\r\ncontent-length: 1\r\ncontent-length: 2\r\n\r\n",
            true,
        ),
        script(
            b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nab",
            true,
        ),
        script(
            b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nthe start",
            false,
        ),
        script(b"", true),
    ])
    .await;
    let direct = client(&up.url);
    let why = |r: Result<(StatusCode, Vec<u8>), UpstreamError>| r.unwrap_err().to_string();
    assert_eq!(
        why(get(&direct).await),
        "the upstream's answer is not HTTP/1.1"
    );
    assert_eq!(
        why(get(&direct).await),
        "the upstream's answer has a head larger than 64 KiB"
    );
    assert_eq!(why(get(&direct).await), "Content-Length values that differ");
    assert_eq!(
        why(get(&direct).await),
        "the upstream closed the connection before the answer's end"
    );
    let reply = direct
        .send(&Method::GET, "/x", &HeaderMap::new(), None)
        .await
        .unwrap();
    let closed = up.closed_by_client.load(Ordering::SeqCst);
    drop(reply);
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(
        up.closed_by_client.load(Ordering::SeqCst),
        closed + 1,
        "dropping the body closes its connection"
    );
    // The upstream closes a new connection without a word.
    let e = get(&direct).await.unwrap_err();
    assert!(matches!(e, UpstreamError::Io(_)), "{e:?}");
    assert_eq!(
        e.to_string(),
        "the connection failed: the upstream closed the connection before answering"
    );
}

#[tokio::test]
async fn an_upstream_nobody_listens_on_cannot_be_connected_to() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    let e = get(&client(&url)).await.unwrap_err();
    assert!(matches!(e, UpstreamError::Connect(_)), "{e:?}");
    assert!(!e.is_timeout());
}

#[test]
fn only_an_http_upstream_has_a_direct_client() {
    let reqwest = reqwest::Client::new();
    let none = Direct::new(&reqwest, "https://h", Duration::from_secs(1)).unwrap();
    assert!(none.is_none());
    let v6 = client("http://[::1]:8080/p/");
    assert_eq!((v6.host.as_str(), v6.port), ("::1", 8080));
    assert_eq!(v6.host_header, "[::1]:8080");
    assert_eq!(v6.prefix, "/p");
    let default_port = client("http://h");
    assert_eq!((default_port.port, default_port.prefix.as_str()), (80, ""));
    assert_eq!(default_port.host_header, "h");
}
