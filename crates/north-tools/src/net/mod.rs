//! `http.get` with capability gating and a SQLite TTL cache
//! (runtime-contracts §4).
//!
//! [`HttpClient`] fetches `http`/`https` URLs with timeouts and a bounded
//! body, checking every host — including each redirect target — against a
//! [`NetAccess`] (the `net` / `net:<domain>` capabilities and the global
//! allowlist). Successful responses are cached by URL in SQLite; a fresh
//! entry (younger than the TTL) is returned without a request. Both the HTTP
//! client and the cache are opened lazily on first use.

mod cache;
pub mod fetch;
mod resolve;
pub mod search;
pub mod tools;

use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use reqwest::Url;

use cache::{Cache, CachedResponse};
use north_policy::{NetAccess, NetDenied, NetGrant};

/// Limits and defaults of an [`HttpClient`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpConfig {
    /// How long a cached response stays fresh.
    pub ttl: Duration,
    /// Most body bytes kept; longer bodies are cut and marked truncated.
    pub max_body_bytes: usize,
    /// Whole-request timeout (connect, headers and body).
    pub timeout: Duration,
    /// Connection timeout.
    pub connect_timeout: Duration,
    /// Most redirects followed (each target is checked like the first URL).
    pub max_redirects: usize,
    /// Use the `HTTP(S)_PROXY` environment variables.
    pub use_env_proxy: bool,
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            ttl: Duration::from_secs(3600),
            max_body_bytes: 1024 * 1024,
            timeout: Duration::from_secs(20),
            connect_timeout: Duration::from_secs(10),
            max_redirects: 5,
            use_env_proxy: true,
        }
    }
}

/// A fetched (or cached) response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpResponse {
    /// The URL requested.
    pub url: String,
    /// The URL the body came from, after redirects.
    pub final_url: String,
    /// HTTP status code.
    pub status: u16,
    /// The `Content-Type` header, if any.
    pub content_type: Option<String>,
    /// The body, at most `max_body_bytes`.
    pub body: Vec<u8>,
    /// The body was longer than `max_body_bytes` and was cut.
    pub truncated: bool,
    /// Served from the cache without a request.
    pub from_cache: bool,
    /// When the response was fetched.
    pub fetched_at: SystemTime,
}

/// Why a fetch failed.
#[derive(Debug, thiserror::Error)]
pub enum NetError {
    /// The URL does not parse.
    #[error("invalid URL `{url}`: {reason}")]
    InvalidUrl {
        /// The URL.
        url: String,
        /// The parse error.
        reason: String,
    },
    /// Only `http` and `https` are fetched.
    #[error("unsupported URL scheme `{0}`: only http and https are allowed")]
    Scheme(String),
    /// The URL has no host.
    #[error("URL `{0}` has no host")]
    NoHost(String),
    /// No capability allows the host.
    #[error("{0}")]
    Denied(#[from] NetDenied),
    /// More redirects than allowed.
    #[error("too many redirects (more than {0})")]
    TooManyRedirects(usize),
    /// A redirect without a usable `Location`.
    #[error("redirect from {0} has no valid Location header")]
    BadRedirect(String),
    /// The request timed out.
    #[error("request to {url} timed out")]
    Timeout {
        /// The URL.
        url: String,
    },
    /// The request failed (connection, TLS, protocol).
    #[error("request to {url} failed: {reason}")]
    Request {
        /// The URL.
        url: String,
        /// What failed.
        reason: String,
    },
    /// The HTTP client could not be built.
    #[error("cannot create the HTTP client: {0}")]
    Client(String),
}

type Clock = Arc<dyn Fn() -> SystemTime + Send + Sync>;

/// HTTP client with an optional on-disk cache, opened lazily.
pub struct HttpClient {
    cache_path: Option<PathBuf>,
    config: HttpConfig,
    client: OnceLock<Result<reqwest::Client, String>>,
    cache: Mutex<CacheSlot>,
    clock: Clock,
    /// The answers each hop was checked against.
    pins: resolve::Pins,
}

enum CacheSlot {
    Unopened,
    Open(Cache),
    /// Opening failed once; requests go uncached rather than failing.
    Unavailable,
}

fn unix_ms(t: SystemTime) -> i64 {
    t.duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

fn from_unix_ms(ms: i64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(u64::try_from(ms).unwrap_or(0))
}

impl HttpClient {
    /// A client caching into `cache_path` (no cache when None).
    pub fn new(cache_path: Option<PathBuf>) -> Self {
        HttpClient::with_config(cache_path, HttpConfig::default())
    }

    /// A client with explicit limits.
    pub fn with_config(cache_path: Option<PathBuf>, config: HttpConfig) -> Self {
        HttpClient {
            cache_path,
            config,
            client: OnceLock::new(),
            cache: Mutex::new(CacheSlot::Unopened),
            clock: Arc::new(SystemTime::now),
            pins: resolve::Pins::default(),
        }
    }

    /// Replaces the clock used for cache freshness (tests move time with it).
    pub fn with_clock(mut self, clock: impl Fn() -> SystemTime + Send + Sync + 'static) -> Self {
        self.clock = Arc::new(clock);
        self
    }

    /// The client's limits.
    pub fn config(&self) -> &HttpConfig {
        &self.config
    }

    fn client(&self) -> Result<&reqwest::Client, NetError> {
        let built = self.client.get_or_init(|| {
            let mut builder = reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .timeout(self.config.timeout)
                .connect_timeout(self.config.connect_timeout)
                .user_agent(concat!("north/", env!("CARGO_PKG_VERSION")))
                // Names resolve to the answers the fetch checked, once.
                .dns_resolver(Arc::new(self.pins.clone()));
            if !self.config.use_env_proxy {
                builder = builder.no_proxy();
            }
            builder.build().map_err(|e| e.to_string())
        });
        built.as_ref().map_err(|e| NetError::Client(e.clone()))
    }

    fn with_cache<T>(&self, f: impl FnOnce(&Cache) -> rusqlite::Result<T>) -> Option<T> {
        let path = self.cache_path.as_ref()?;
        let mut slot = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        if matches!(*slot, CacheSlot::Unopened) {
            *slot = match Cache::open(path) {
                Ok(cache) => CacheSlot::Open(cache),
                Err(e) => {
                    tracing::warn!("http cache {} unavailable: {e}", path.display());
                    CacheSlot::Unavailable
                }
            };
        }
        match &*slot {
            CacheSlot::Open(cache) => match f(cache) {
                Ok(value) => Some(value),
                Err(e) => {
                    tracing::warn!("http cache {}: {e}", path.display());
                    None
                }
            },
            _ => None,
        }
    }

    /// Fetches `url` if `access` allows its host (and every redirect's).
    ///
    /// With `use_cache`, a fresh cached response is returned without a
    /// request; either way a successful (2xx) response is stored.
    pub async fn get(
        &self,
        url: &str,
        use_cache: bool,
        access: &NetAccess<'_>,
    ) -> Result<HttpResponse, NetError> {
        let max_age = use_cache.then_some(self.config.ttl);
        self.get_fresh(url, max_age, access).await
    }

    /// As [`HttpClient::get`], a cached response served only while younger
    /// than `max_age` (None: always fetched).
    pub(crate) async fn get_fresh(
        &self,
        url: &str,
        max_age: Option<Duration>,
        access: &NetAccess<'_>,
    ) -> Result<HttpResponse, NetError> {
        let parsed = check_url(url, access)?;
        let key = parsed.to_string();
        if let Some(max_age) = max_age {
            let now = unix_ms((self.clock)());
            let ttl = i64::try_from(max_age.as_millis()).unwrap_or(i64::MAX);
            if let Some(Some(hit)) = self.with_cache(|c| c.get(&key))
                && hit.fetched_at_ms <= now
                && now < hit.fetched_at_ms.saturating_add(ttl)
            {
                return Ok(HttpResponse {
                    url: url.to_owned(),
                    final_url: hit.final_url,
                    status: hit.status,
                    content_type: hit.content_type,
                    body: hit.body,
                    truncated: hit.truncated,
                    from_cache: true,
                    fetched_at: from_unix_ms(hit.fetched_at_ms),
                });
            }
        }
        let fetched = self.fetch(parsed, access).await?;
        let fetched_at = (self.clock)();
        if (200..300).contains(&fetched.status) {
            let entry = CachedResponse {
                final_url: fetched.final_url.clone(),
                status: fetched.status,
                content_type: fetched.content_type.clone(),
                body: fetched.body.clone(),
                truncated: fetched.truncated,
                fetched_at_ms: unix_ms(fetched_at),
            };
            self.with_cache(|c| c.put(&key, &entry));
        }
        Ok(HttpResponse {
            url: url.to_owned(),
            fetched_at,
            ..fetched
        })
    }

    async fn fetch(&self, mut url: Url, access: &NetAccess<'_>) -> Result<HttpResponse, NetError> {
        let client = self.client()?;
        let mut redirects = 0;
        loop {
            let shown = url.to_string();
            let request_error = |e: reqwest::Error| {
                if e.is_timeout() {
                    NetError::Timeout { url: shown.clone() }
                } else {
                    NetError::Request {
                        url: shown.clone(),
                        reason: error_chain(&e),
                    }
                }
            };
            self.pin(&url, access, redirects == 0).await?;
            let mut response = client
                .get(url.clone())
                .send()
                .await
                .map_err(request_error)?;
            let status = response.status();
            if status.is_redirection()
                && let Some(location) = response.headers().get(reqwest::header::LOCATION)
            {
                redirects += 1;
                if redirects > self.config.max_redirects {
                    return Err(NetError::TooManyRedirects(self.config.max_redirects));
                }
                let next = location
                    .to_str()
                    .ok()
                    .and_then(|l| url.join(l).ok())
                    .ok_or_else(|| NetError::BadRedirect(shown.clone()))?;
                url = check_url(next.as_str(), access)?;
                continue;
            }
            let content_type = response
                .headers()
                .get(reqwest::header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            let max = self.config.max_body_bytes;
            let mut body = Vec::new();
            let mut truncated = false;
            while let Some(chunk) = response.chunk().await.map_err(request_error)? {
                let room = max - body.len();
                if chunk.len() > room {
                    body.extend_from_slice(&chunk[..room]);
                    truncated = true;
                    break;
                }
                body.extend_from_slice(&chunk);
            }
            return Ok(HttpResponse {
                url: shown.clone(),
                final_url: shown,
                status: status.as_u16(),
                content_type,
                body,
                truncated,
                from_cache: false,
                fetched_at: SystemTime::now(),
            });
        }
    }
}

impl HttpClient {
    /// Resolves the host of `url` once, refuses a name with a loopback,
    /// private or metadata answer unless a grant names that host, and pins
    /// the checked answers for the connection (see [`resolve`]).
    async fn pin(
        &self,
        url: &Url,
        access: &NetAccess<'_>,
        first_hop: bool,
    ) -> Result<(), NetError> {
        let host = north_policy::net::normalize_host(url.host_str().unwrap_or_default());
        // A private answer is allowed where a grant names the host, or for
        // the endpoint the user configured itself (the SearXNG URL) — never
        // for where that endpoint redirects.
        let named = matches!(access.check(&host), Ok(NetGrant::Domain(_)))
            || (first_hop && !access.private_needs_grant);
        if !named && north_policy::net::is_private_host(&host) {
            return Err(NetError::Denied(NetDenied::Private { host }));
        }
        let port = url.port_or_known_default().unwrap_or(80);
        match self.pins.check(&host, port, named).await {
            Ok(()) => Ok(()),
            Err(resolve::PinError::Private) => Err(NetError::Denied(NetDenied::Private { host })),
            // Behind a proxy the user configured, names may resolve only
            // there: the proxy connects, and decides.
            Err(resolve::PinError::Lookup(_)) if self.behind_proxy(url) => Ok(()),
            Err(resolve::PinError::Lookup(reason)) => Err(NetError::Request {
                url: url.to_string(),
                reason: format!("cannot resolve {host}: {reason}"),
            }),
        }
    }
}

impl HttpClient {
    /// Whether requests for `url` go through a proxy from the environment.
    fn behind_proxy(&self, url: &Url) -> bool {
        if !self.config.use_env_proxy {
            return false;
        }
        let names: &[&str] = match url.scheme() {
            "https" => &["HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"],
            _ => &["HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"],
        };
        names
            .iter()
            .any(|n| std::env::var_os(n).is_some_and(|v| !v.is_empty()))
    }
}

/// Parses `url` the one way North reads a URL, for the approval and the
/// fetch alike (the `url` crate's WHATWG parser: `http://evil.com\\@good.com/`
/// is evil.com to both): http(s) only, with a host.
pub(crate) fn parse_http_url(url: &str) -> Result<Url, NetError> {
    let parsed = Url::parse(url).map_err(|e| NetError::InvalidUrl {
        url: url.to_owned(),
        reason: e.to_string(),
    })?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(NetError::Scheme(parsed.scheme().to_owned()));
    }
    if parsed.host_str().is_none_or(str::is_empty) {
        return Err(NetError::NoHost(url.to_owned()));
    }
    Ok(parsed)
}

/// The host a fetch of `url` would contact, as a grant names it: what the
/// user is asked about is what [`HttpClient`] checks and connects to.
pub fn url_host(url: &str) -> Result<String, NetError> {
    let parsed = parse_http_url(url)?;
    Ok(north_policy::net::normalize_host(
        parsed.host_str().unwrap_or_default(),
    ))
}

/// Parses `url` and checks its host.
pub(crate) fn check_url(url: &str, access: &NetAccess<'_>) -> Result<Url, NetError> {
    let parsed = parse_http_url(url)?;
    access.check(parsed.host_str().unwrap_or_default())?;
    Ok(parsed)
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}
