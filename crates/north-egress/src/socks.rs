//! SOCKS5 on the proxy's port, for the tools that speak only it
//! (`ALL_PROXY=socks5h://…`): `CONNECT` without authentication, to a name
//! or an address, judged by the same rule as HTTP. A refusal is SOCKS's
//! "not allowed by ruleset"; its reason goes to the log.

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::UnixStream;

use crate::head::Target;

/// The first byte of a SOCKS5 greeting.
pub(crate) const VERSION: u8 = 5;

/// Why a SOCKS5 request cannot be served.
#[derive(Debug)]
pub(crate) enum SocksError {
    /// The connection ended or failed mid-request.
    Io,
    /// Not a request this proxy serves (a command other than CONNECT, an
    /// address type it does not know, no method without authentication).
    Unsupported(u8),
}

impl From<std::io::Error> for SocksError {
    fn from(_: std::io::Error) -> Self {
        SocksError::Io
    }
}

/// Reads the greeting (its version byte already read) and the request;
/// the target asked for. Answers the greeting (no authentication) on the
/// way.
pub(crate) async fn request(conn: &mut UnixStream) -> Result<Target, SocksError> {
    let mut count = [0u8; 1];
    conn.read_exact(&mut count).await?;
    let mut methods = vec![0u8; usize::from(count[0])];
    conn.read_exact(&mut methods).await?;
    if !methods.contains(&0) {
        conn.write_all(&[VERSION, 0xff]).await?;
        return Err(SocksError::Unsupported(1));
    }
    conn.write_all(&[VERSION, 0]).await?;
    let mut req = [0u8; 4];
    conn.read_exact(&mut req).await?;
    if req[0] != VERSION || req[1] != 1 {
        // Only CONNECT: "command not supported".
        return Err(SocksError::Unsupported(7));
    }
    let host = match req[3] {
        1 => {
            let mut v4 = [0u8; 4];
            conn.read_exact(&mut v4).await?;
            std::net::Ipv4Addr::from(v4).to_string()
        }
        3 => {
            let mut len = [0u8; 1];
            conn.read_exact(&mut len).await?;
            let mut name = vec![0u8; usize::from(len[0])];
            conn.read_exact(&mut name).await?;
            String::from_utf8(name).map_err(|_| SocksError::Unsupported(8))?
        }
        4 => {
            let mut v6 = [0u8; 16];
            conn.read_exact(&mut v6).await?;
            std::net::Ipv6Addr::from(v6).to_string()
        }
        _ => return Err(SocksError::Unsupported(8)),
    };
    let mut port = [0u8; 2];
    conn.read_exact(&mut port).await?;
    Ok(Target::Tunnel {
        host,
        port: u16::from_be_bytes(port),
    })
}

/// The reply to a request: `code` 0 for success, 2 for "not allowed by
/// ruleset", 5 for "refused", …; the bound address is left empty.
pub(crate) async fn reply(conn: &mut UnixStream, code: u8) -> std::io::Result<()> {
    conn.write_all(&[VERSION, code, 0, 1, 0, 0, 0, 0, 0, 0])
        .await
}
