//! Tokens of one server on disk: a file in the user's state directory
//! (never the project), readable only by the user, replaced atomically.

use std::io::Write;
use std::path::{Path, PathBuf};

use rmcp::transport::auth::{AuthError, CredentialStore, StoredCredentials};
use serde::{Deserialize, Serialize};

/// What the file holds.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Record {
    /// The server's URL, so a file is never used for another endpoint.
    server_url: String,
    /// The client id, tokens and scopes (rmcp's own record).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    credentials: Option<StoredCredentials>,
    /// A secret the authorization server gave North when it registered,
    /// needed to refresh the tokens later.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    client_secret: Option<String>,
}

/// The token file of one server.
#[derive(Debug, Clone)]
pub struct TokenFile {
    path: PathBuf,
    server_url: String,
}

impl TokenFile {
    /// The file of server `name` at `url` under `dir`: one per name and
    /// URL, so changing a server's URL never sends its tokens elsewhere.
    pub fn new(dir: &Path, name: &str, url: &str) -> Self {
        use sha2::Digest;
        let hash = sha2::Sha256::digest(url.as_bytes());
        let tag: String = hash[..4].iter().map(|b| format!("{b:02x}")).collect();
        TokenFile {
            // The same characters as a tool name: safe in a file name too.
            path: dir.join(format!("{}-{tag}.json", north_protocol::wire_safe(name))),
            server_url: url.to_string(),
        }
    }

    /// Where the file is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn read(&self) -> Option<Record> {
        let text = std::fs::read_to_string(&self.path).ok()?;
        let record: Record = serde_json::from_str(&text).ok()?;
        (record.server_url == self.server_url).then_some(record)
    }

    fn write(&self, record: &Record) -> std::io::Result<()> {
        let dir = self.path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
        }
        let text = serde_json::to_string_pretty(record).map_err(std::io::Error::other)?;
        let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
        // NamedTempFile is created 0600 already; said again for clarity of
        // intent on platforms where it is not.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            tmp.as_file()
                .set_permissions(std::fs::Permissions::from_mode(0o600))?;
        }
        tmp.write_all(text.as_bytes())?;
        tmp.as_file().sync_all()?;
        tmp.persist(&self.path).map_err(|e| e.error)?;
        Ok(())
    }

    /// Whether tokens are stored (a login happened and was not undone).
    pub(crate) fn has_tokens(&self) -> bool {
        self.read()
            .and_then(|r| r.credentials)
            .is_some_and(|c| c.token_response.is_some())
    }

    /// The secret kept from a registration, if any.
    pub(crate) fn client_secret(&self) -> Option<String> {
        self.read().and_then(|r| r.client_secret)
    }

    /// Keeps `secret` (from a registration) with the tokens to come.
    pub(crate) fn set_client_secret(&self, secret: Option<String>) -> std::io::Result<()> {
        let mut record = self.read().unwrap_or_else(|| Record {
            server_url: self.server_url.clone(),
            ..Record::default()
        });
        record.client_secret = secret;
        self.write(&record)
    }

    /// Deletes the file; `Ok(false)` when there was none.
    pub fn remove(&self) -> std::io::Result<bool> {
        match std::fs::remove_file(&self.path) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(e),
        }
    }
}

fn store_error(e: impl std::fmt::Display) -> AuthError {
    AuthError::InternalError(format!("the token file could not be written: {e}"))
}

#[async_trait::async_trait]
impl CredentialStore for TokenFile {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        Ok(self.read().and_then(|r| r.credentials))
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        let mut record = self.read().unwrap_or_else(|| Record {
            server_url: self.server_url.clone(),
            ..Record::default()
        });
        record.credentials = Some(credentials);
        self.write(&record).map_err(store_error)
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.remove().map(|_| ()).map_err(store_error)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_file_is_private_and_bound_to_its_url() {
        let dir = tempfile::tempdir().unwrap();
        let file = TokenFile::new(dir.path(), "git hub", "https://mcp.example/mcp");
        assert!(
            file.path()
                .file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("git_hub-")
        );
        file.set_client_secret(Some("s3cret".into())).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(file.path()).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        assert_eq!(file.client_secret().as_deref(), Some("s3cret"));
        assert!(!file.has_tokens());
        let moved = TokenFile {
            path: file.path().to_path_buf(),
            server_url: "https://elsewhere.example/mcp".into(),
        };
        assert_eq!(moved.client_secret(), None, "another URL never reads it");
        assert!(file.remove().unwrap());
        assert!(!file.remove().unwrap());
    }
}
