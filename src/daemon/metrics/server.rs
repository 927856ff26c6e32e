//! The HTTP side of the endpoint: hyper 1 (HTTP/1.1 only) on a
//! current-thread tokio runtime, bounded against slow and hostile clients.
//!
//! * at most [`Limits::max_conns`] connections at once; one more is closed
//!   as soon as it is accepted (counted as refused);
//! * the request head must arrive within [`Limits::header_timeout`] and
//!   fit in [`Limits::max_head`] bytes (larger: 431 and close); a request
//!   body is never read;
//! * one request per connection (no keep-alive), and the whole connection
//!   lives at most [`Limits::deadline`] (a client that never reads its
//!   response is dropped then; counted as timed out);
//! * the exposition is rendered at most once per [`Limits::cache_for`]
//!   (on a blocking-pool thread, one render at a time); requests in
//!   between get the cached text, so a scrape storm reads the control
//!   state no more often than that.
//!
//! `GET /metrics` answers the exposition; any other path 404, another
//! method on `/metrics` 405.

use super::collect::EndpointCounters;
use super::render::CONTENT_TYPE;
use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::header::{ALLOW, CONTENT_TYPE as CT};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use std::convert::Infallible;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::net::TcpListener;
use tokio::sync::{Mutex, Notify, Semaphore};

/// What renders the exposition (called off the runtime's thread).
pub type RenderFn = Arc<dyn Fn() -> String + Send + Sync>;

/// The endpoint's bounds.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Connections served at once.
    pub max_conns: usize,
    /// Time for the request head to arrive.
    pub header_timeout: Duration,
    /// Longest life of a connection.
    pub deadline: Duration,
    /// Largest request head, bytes (hyper's read buffer; at least 8192).
    pub max_head: usize,
    /// How long a rendered exposition is served again.
    pub cache_for: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_conns: 64,
            header_timeout: Duration::from_secs(3),
            deadline: Duration::from_secs(10),
            max_head: 16 * 1024,
            cache_for: Duration::from_millis(500),
        }
    }
}

/// The exposition, rendered at most once per period.
struct Cache {
    render: RenderFn,
    cache_for: Duration,
    text: Mutex<Option<(Instant, Bytes)>>,
}

impl Cache {
    /// The cached text, or a new one when it is older than the period.
    /// One render at a time: concurrent requests wait for it (without a
    /// thread each) and take its result. `None`: the render failed.
    async fn get(&self) -> Option<Bytes> {
        let mut g = self.text.lock().await;
        if let Some((at, text)) = &*g {
            if at.elapsed() < self.cache_for {
                return Some(text.clone());
            }
        }
        let render = Arc::clone(&self.render);
        let text = Bytes::from(tokio::task::spawn_blocking(move || render()).await.ok()?);
        *g = Some((Instant::now(), text.clone()));
        Some(text)
    }
}

fn reply(status: StatusCode, body: impl Into<Bytes>) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(body.into()));
    *r.status_mut() = status;
    r
}

async fn handle(
    req: Request<Incoming>,
    cache: Arc<Cache>,
    counters: Arc<EndpointCounters>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    counters.requests.fetch_add(1, Relaxed);
    if req.uri().path() != "/metrics" {
        return Ok(reply(
            StatusCode::NOT_FOUND,
            "not found: the metrics are at /metrics\n",
        ));
    }
    if req.method() != Method::GET {
        let mut r = reply(
            StatusCode::METHOD_NOT_ALLOWED,
            "method not allowed: GET /metrics\n",
        );
        r.headers_mut()
            .insert(ALLOW, hyper::header::HeaderValue::from_static("GET"));
        return Ok(r);
    }
    Ok(match cache.get().await {
        Some(text) => {
            let mut r = reply(StatusCode::OK, text);
            r.headers_mut()
                .insert(CT, hyper::header::HeaderValue::from_static(CONTENT_TYPE));
            r
        }
        None => reply(
            StatusCode::INTERNAL_SERVER_ERROR,
            "the exposition could not be rendered\n",
        ),
    })
}

/// Serve `listener` until `stop` is notified.
pub async fn serve(
    listener: TcpListener,
    render: RenderFn,
    limits: Limits,
    counters: Arc<EndpointCounters>,
    stop: Arc<Notify>,
) {
    let cache = Arc::new(Cache {
        render,
        cache_for: limits.cache_for,
        text: Mutex::new(None),
    });
    let slots = Arc::new(Semaphore::new(limits.max_conns));
    loop {
        let accepted = tokio::select! {
            a = listener.accept() => a,
            _ = stop.notified() => break,
        };
        let stream = match accepted {
            Ok((s, _)) => s,
            // out of file descriptors, a connection reset before accept:
            // wait a little rather than spin
            Err(_) => {
                tokio::time::sleep(Duration::from_millis(20)).await;
                continue;
            }
        };
        let Ok(permit) = Arc::clone(&slots).try_acquire_owned() else {
            counters.refused.fetch_add(1, Relaxed);
            drop(stream);
            continue;
        };
        let _ = stream.set_nodelay(true);
        let (cache, counters) = (Arc::clone(&cache), Arc::clone(&counters));
        tokio::spawn(async move {
            let _permit = permit;
            let c2 = Arc::clone(&counters);
            let service = hyper::service::service_fn(move |req| {
                handle(req, Arc::clone(&cache), Arc::clone(&c2))
            });
            let conn = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(limits.header_timeout)
                .keep_alive(false)
                .max_buf_size(limits.max_head.max(8192))
                .serve_connection(TokioIo::new(stream), service);
            if tokio::time::timeout(limits.deadline, conn).await.is_err() {
                counters.timed_out.fetch_add(1, Relaxed);
            }
        });
    }
}
