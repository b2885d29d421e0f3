//! http.get with capability gating and a SQLite TTL cache (placeholder until implemented).

use std::path::PathBuf;

/// HTTP client with an optional on-disk cache, opened lazily.
pub struct HttpClient {
    cache_path: Option<PathBuf>,
}

impl HttpClient {
    /// A client caching into `cache_path` (no cache when None).
    pub fn new(cache_path: Option<PathBuf>) -> Self {
        HttpClient { cache_path }
    }

    /// Where the cache lives, if anywhere.
    pub fn cache_path(&self) -> Option<&std::path::Path> {
        self.cache_path.as_deref()
    }
}
