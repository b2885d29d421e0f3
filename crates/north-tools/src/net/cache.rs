//! The http.get response cache: one SQLite table keyed by URL.

use std::path::Path;

use rusqlite::{Connection, OptionalExtension, params};

/// A cached response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CachedResponse {
    pub final_url: String,
    pub status: u16,
    pub content_type: Option<String>,
    pub body: Vec<u8>,
    pub truncated: bool,
    /// Unix time in milliseconds.
    pub fetched_at_ms: i64,
}

/// An open cache database.
pub(crate) struct Cache {
    conn: Connection,
}

impl Cache {
    /// Opens (creating it and its directory if needed) the cache at `path`.
    pub(crate) fn open(path: &Path) -> rusqlite::Result<Self> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            // A fresh project has no `.north/` yet; without it the cache
            // would silently be off.
            std::fs::create_dir_all(dir).map_err(|e| {
                rusqlite::Error::SqliteFailure(
                    rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_CANTOPEN),
                    Some(format!("cannot create {}: {e}", dir.display())),
                )
            })?;
        }
        let conn = Connection::open(path)?;
        conn.busy_timeout(std::time::Duration::from_secs(2))?;
        conn.execute_batch(
            "PRAGMA journal_mode = WAL;
             CREATE TABLE IF NOT EXISTS http_cache (
                 url TEXT PRIMARY KEY,
                 final_url TEXT NOT NULL,
                 status INTEGER NOT NULL,
                 content_type TEXT,
                 body BLOB NOT NULL,
                 truncated INTEGER NOT NULL,
                 fetched_at_ms INTEGER NOT NULL
             );",
        )?;
        Ok(Cache { conn })
    }

    /// The entry for `url`, fresh or not.
    pub(crate) fn get(&self, url: &str) -> rusqlite::Result<Option<CachedResponse>> {
        self.conn
            .query_row(
                "SELECT final_url, status, content_type, body, truncated, fetched_at_ms
                 FROM http_cache WHERE url = ?1",
                params![url],
                |row| {
                    Ok(CachedResponse {
                        final_url: row.get(0)?,
                        status: row.get(1)?,
                        content_type: row.get(2)?,
                        body: row.get(3)?,
                        truncated: row.get(4)?,
                        fetched_at_ms: row.get(5)?,
                    })
                },
            )
            .optional()
    }

    /// Stores (replacing) the entry for `url`.
    pub(crate) fn put(&self, url: &str, response: &CachedResponse) -> rusqlite::Result<()> {
        self.conn.execute(
            "INSERT OR REPLACE INTO http_cache
                 (url, final_url, status, content_type, body, truncated, fetched_at_ms)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![
                url,
                response.final_url,
                response.status,
                response.content_type,
                response.body,
                response.truncated,
                response.fetched_at_ms
            ],
        )?;
        Ok(())
    }
}
