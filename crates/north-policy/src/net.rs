//! Network capabilities (runtime-contracts §4).
//!
//! `http.get` is denied unless a capability allows the URL's host:
//! - `net` allows any host, unless a global allowlist is configured, in
//!   which case it allows only the allowlisted hosts;
//! - `net:<domain>` allows exactly that host and overrides the allowlist.
//!
//! Matching is strict: host names are compared whole, case-insensitively and
//! ignoring a trailing dot. Subdomains do not count — `net:example.com` does
//! not allow `api.example.com`; grant `net:api.example.com` for that. The
//! same holds for allowlist entries. IPv6 hosts are written without brackets
//! (`net:::1`). Ports are not part of the match.

use north_protocol::Capability;

/// The capabilities and allowlist a request is judged against.
#[derive(Debug, Clone, Copy)]
pub struct NetAccess<'a> {
    /// Granted capabilities (`net`, `net:<domain>`, and unrelated ones).
    pub capabilities: &'a [Capability],
    /// The global network allowlist, if configured.
    pub allowlist: Option<&'a [String]>,
    /// Loopback and private addresses need a grant naming them
    /// (`net:127.0.0.1`); `net` alone does not reach them (`web_fetch`).
    pub private_needs_grant: bool,
}

/// Which grant allowed a host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NetGrant {
    /// `net:<domain>` for exactly this host.
    Domain(String),
    /// `net`, with no allowlist configured.
    Any,
    /// `net`, and the host is on the allowlist.
    Allowlisted,
    /// `net:*.<domain>` (this pattern), for a host under that domain.
    Wildcard(String),
}

/// Why a host may not be reached.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NetDenied {
    /// Neither `net` nor `net:<host>` is granted.
    #[error("network access to {host} denied: grant the `net` or `net:{host}` capability")]
    NoCapability {
        /// The host.
        host: String,
    },
    /// The host is a loopback or private address, which only a grant
    /// naming it reaches.
    #[error(
        "{host} is a loopback or private address: reaching it needs a grant naming it (`net:{host}`), not just `net`"
    )]
    Private {
        /// The host.
        host: String,
    },
    /// `net` is granted but the host is not on the global allowlist.
    #[error(
        "network access to {host} denied: it is not on the network allowlist (`net` only allows allowlisted hosts); grant `net:{host}` to allow it"
    )]
    NotAllowlisted {
        /// The host.
        host: String,
    },
}

/// Lowercases, strips a trailing dot and IPv6 brackets.
pub fn normalize_host(host: &str) -> String {
    let host = host.trim();
    let host = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    host.strip_suffix('.').unwrap_or(host).to_ascii_lowercase()
}

/// Whether `host` (normalized) names this machine or a private network:
/// `localhost`, loopback, private, link-local, unique-local or unspecified
/// addresses.
pub fn is_private_host(host: &str) -> bool {
    if host == "localhost" || host.ends_with(".localhost") {
        return true;
    }
    match host.parse::<std::net::IpAddr>() {
        Ok(ip) => is_private_ip(ip),
        Err(_) => false,
    }
}

/// Whether `ip` is not a public unicast address: loopback, private,
/// link-local (the metadata services), shared (CGNAT), the IETF and
/// benchmarking blocks, reserved, multicast, unique-local or unspecified.
/// IPv6 forms that carry an IPv4 address (mapped, compatible, NAT64) are
/// judged by that address.
pub fn is_private_ip(ip: std::net::IpAddr) -> bool {
    match ip {
        std::net::IpAddr::V4(v4) => {
            let [a, b, c, _] = v4.octets();
            v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.is_multicast()
                || a == 0
                || a == 100 && (64..128).contains(&b)
                || a == 192 && b == 0 && c == 0
                || a == 198 && (18..20).contains(&b)
                || a >= 240
        }
        std::net::IpAddr::V6(v6) => {
            let s = v6.segments();
            let embedded = || {
                let o = v6.octets();
                std::net::Ipv4Addr::new(o[12], o[13], o[14], o[15])
            };
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_private_ip(std::net::IpAddr::V4(v4));
            }
            // IPv4-compatible (::a.b.c.d) and NAT64 (64:ff9b::/96).
            if s[..6] == [0; 6] && !v6.is_loopback() && !v6.is_unspecified()
                || s[..6] == [0x64, 0xff9b, 0, 0, 0, 0]
            {
                return is_private_ip(std::net::IpAddr::V4(embedded()));
            }
            v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (s[0] & 0xfe00) == 0xfc00
                || (s[0] & 0xffc0) == 0xfe80
                || (s[0] & 0xffc0) == 0xfec0
        }
    }
}

impl NetAccess<'_> {
    /// Whether `host` may be reached, and by which grant.
    pub fn check(&self, host: &str) -> Result<NetGrant, NetDenied> {
        let host = normalize_host(host);
        let denied_host = host.clone();
        if host.is_empty() {
            return Err(NetDenied::NoCapability { host: denied_host });
        }
        let domain_grant = self.capabilities.iter().any(|c| {
            c.host()
                .is_some_and(|d| !d.trim().is_empty() && normalize_host(d) == host)
        });
        if domain_grant {
            return Ok(NetGrant::Domain(host));
        }
        // `net:*.example.org`: any name under the domain, never an address
        // and never a private name (only a grant naming one reaches it).
        let wildcard = self.capabilities.iter().find_map(|c| {
            let pattern = normalize_host(c.host()?);
            let suffix = pattern.strip_prefix('*')?;
            (suffix.starts_with('.')
                && suffix.len() > 1
                && host.ends_with(suffix)
                && host.parse::<std::net::IpAddr>().is_err())
            .then_some(pattern)
        });
        if let Some(pattern) = wildcard {
            if self.private_needs_grant && is_private_host(&host) {
                return Err(NetDenied::Private { host: denied_host });
            }
            return Ok(NetGrant::Wildcard(pattern));
        }
        if !self.capabilities.contains(&Capability::Net) {
            return Err(NetDenied::NoCapability { host: denied_host });
        }
        if self.private_needs_grant && is_private_host(&host) {
            return Err(NetDenied::Private { host: denied_host });
        }
        match self.allowlist {
            None => Ok(NetGrant::Any),
            Some(list) if list.iter().any(|d| normalize_host(d) == host) => {
                Ok(NetGrant::Allowlisted)
            }
            Some(_) => Err(NetDenied::NotAllowlisted { host: denied_host }),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_wildcard_grant_reaches_names_under_its_domain_only() {
        let caps: Vec<Capability> = vec!["net:*.example.org".parse().unwrap()];
        let access = NetAccess {
            capabilities: &caps,
            allowlist: None,
            private_needs_grant: true,
        };
        assert_eq!(
            access.check("api.example.org"),
            Ok(NetGrant::Wildcard("*.example.org".into()))
        );
        assert!(access.check("a.b.example.org").is_ok());
        assert!(
            access.check("example.org").is_err(),
            "the domain itself is not under it"
        );
        assert!(access.check("evilexample.org").is_err());
        let loopback: Vec<Capability> = vec![
            "net:*.0.0.1".parse().unwrap(),
            "net:*.localhost".parse().unwrap(),
        ];
        let access = NetAccess {
            capabilities: &loopback,
            allowlist: None,
            private_needs_grant: true,
        };
        assert!(
            access.check("127.0.0.1").is_err(),
            "an address is never a name under a domain"
        );
        assert!(
            access.check("db.localhost").is_err(),
            "a private name needs a grant naming it"
        );
    }

    fn caps(list: &[&str]) -> Vec<Capability> {
        list.iter().map(|s| Capability::lenient(s)).collect()
    }

    #[test]
    fn the_contract_rules() {
        let none = caps(&[]);
        let net = caps(&["net"]);
        let scoped = caps(&["net:Example.COM."]);
        let allow = vec!["docs.rs".to_string()];
        let check = |c: &[Capability], a: Option<&[String]>, h: &str| {
            NetAccess {
                capabilities: c,
                allowlist: a,
                private_needs_grant: false,
            }
            .check(h)
        };
        assert!(check(&none, None, "example.com").is_err());
        assert_eq!(check(&net, None, "example.com"), Ok(NetGrant::Any));
        assert!(matches!(
            check(&net, Some(&allow), "example.com"),
            Err(NetDenied::NotAllowlisted { .. })
        ));
        assert_eq!(
            check(&net, Some(&allow), "DOCS.rs"),
            Ok(NetGrant::Allowlisted)
        );
        assert_eq!(
            check(&scoped, Some(&allow), "example.com"),
            Ok(NetGrant::Domain("example.com".into()))
        );
        assert!(check(&scoped, None, "api.example.com").is_err());
        assert!(check(&scoped, None, "example.com.evil.org").is_err());
        assert!(check(&caps(&["net:"]), None, "").is_err());
        assert_eq!(normalize_host("[::1]"), "::1");
    }

    #[test]
    fn private_addresses_need_a_grant_naming_them_when_asked() {
        let net = caps(&["net"]);
        let local = caps(&["net", "net:127.0.0.1"]);
        let strict = |c: &[Capability], h: &str| {
            NetAccess {
                capabilities: c,
                allowlist: None,
                private_needs_grant: true,
            }
            .check(h)
        };
        for host in [
            "127.0.0.1",
            "localhost",
            "10.1.2.3",
            "192.168.1.1",
            "169.254.169.254",
            "::1",
            "::ffff:127.0.0.1",
            "fd00::1",
            "0.0.0.0",
        ] {
            assert!(
                matches!(strict(&net, host), Err(NetDenied::Private { .. })),
                "{host}"
            );
        }
        assert!(strict(&net, "example.com").is_ok());
        assert!(strict(&net, "8.8.8.8").is_ok());
        assert_eq!(
            strict(&local, "127.0.0.1"),
            Ok(NetGrant::Domain("127.0.0.1".into()))
        );
    }
}
