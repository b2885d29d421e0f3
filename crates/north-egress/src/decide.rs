//! The rule a host is judged by, and the resolution of a host to the
//! addresses a connection may use.

use std::net::{IpAddr, SocketAddr};

use crate::Rules;
use north_policy::net::{is_private_ip, normalize_host};
use north_policy::{NetAccess, NetGrant};

/// Whether `host` (normalized) is `pattern` or, for `*.<domain>`, a name
/// under the domain.
fn matches(pattern: &str, host: &str) -> bool {
    let pattern = normalize_host(pattern);
    match pattern.strip_prefix('*') {
        Some(suffix) if suffix.starts_with('.') => host.ends_with(suffix),
        _ => pattern == host,
    }
}

/// Why a host may not be reached, said as the command's tool shows it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{reason}")]
pub struct Refusal {
    /// The host asked for.
    pub host: String,
    /// What refused it, and the grant that would allow it.
    pub reason: String,
    /// Whether a person may be asked to allow it (no grant covered it;
    /// never a denied host, an address no lookup found, or a failed
    /// connection).
    pub askable: bool,
}

/// Whether `host` may be reached under `rules`, and by which grant: a
/// denied host never; else North's rule for every fetcher, with private
/// addresses reached only under a grant that names them.
pub fn decide(rules: &Rules, host: &str) -> Result<NetGrant, Refusal> {
    let name = normalize_host(host);
    if let Some(reason) = not_a_host(&name) {
        return Err(Refusal {
            host: name.clone(),
            reason: format!("North's sandbox proxy refused it: {reason}"),
            askable: false,
        });
    }
    if let Some(pattern) = rules.deny.iter().find(|p| matches(p, &name)) {
        return Err(Refusal {
            host: name.clone(),
            reason: format!(
                "North's sandbox proxy refused it: {name} is denied by `sandbox.network.deny` (`{pattern}`), whatever grants it"
            ),
            askable: false,
        });
    }
    let access = NetAccess {
        capabilities: &rules.grants,
        allowlist: None,
        private_needs_grant: true,
    };
    access.check(host).map_err(|denied| Refusal {
        host: normalize_host(host),
        reason: format!("North's sandbox proxy refused it: {denied}"),
        askable: true,
    })
}

/// Why `name` (normalized) is no host to ask for: a pattern (`*`), or an
/// address written other than canonically (`2130706433`, `0x7f.1`,
/// `127.1`), which a lookup would turn into an address no check saw
/// written — a name's last label is never all digits.
fn not_a_host(name: &str) -> Option<String> {
    if name.contains('*') {
        return Some(format!("`{name}` is a pattern, not a host"));
    }
    let last = name.rsplit('.').next().unwrap_or(name);
    let numeric = !last.is_empty()
        && (last.bytes().all(|b| b.is_ascii_digit())
            || last.starts_with("0x") && last[2..].bytes().all(|b| b.is_ascii_hexdigit()));
    (numeric && name.parse::<IpAddr>().is_err())
        .then(|| format!("`{name}` is an address written other than canonically; write it as one"))
}

/// The addresses `host` resolves to, each checked: a private one (a name
/// pointing at loopback, the metadata service, the LAN) only when `grant`
/// names the host exactly. The connection is made to these, never after a
/// second lookup.
pub async fn resolve(host: &str, port: u16, grant: &NetGrant) -> Result<Vec<SocketAddr>, Refusal> {
    let name = normalize_host(host);
    let addrs: Vec<SocketAddr> = match name.parse::<IpAddr>() {
        Ok(ip) => vec![SocketAddr::new(ip, port)],
        Err(_) => tokio::net::lookup_host((name.as_str(), port))
            .await
            .map_err(|e| Refusal {
                host: name.clone(),
                reason: format!("North's sandbox proxy could not resolve {name}: {e}"),
                askable: false,
            })?
            .collect(),
    };
    let named = matches!(grant, NetGrant::Domain(d) if *d == name);
    if let Some(private) = addrs.iter().find(|a| is_private_ip(a.ip()))
        && !named
    {
        return Err(Refusal {
            host: name.clone(),
            reason: format!(
                "North's sandbox proxy refused it: {name} resolves to {}, a loopback or private address, which only a grant naming it reaches (`net:{name}`)",
                private.ip()
            ),
            askable: true,
        });
    }
    if addrs.is_empty() {
        return Err(Refusal {
            host: name.clone(),
            reason: format!("North's sandbox proxy found no address for {name}"),
            askable: false,
        });
    }
    Ok(addrs)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    use north_protocol::Capability;

    fn grants(list: &[&str]) -> Rules {
        Rules {
            grants: list
                .iter()
                .map(|g| g.parse::<Capability>().unwrap())
                .collect(),
            deny: Vec::new(),
        }
    }

    #[test]
    fn patterns_and_odd_spellings_of_addresses_are_not_hosts() {
        let rules = grants(&["net", "net:*.corp.example", "net:2130706433"]);
        for host in [
            "*.corp.example",
            "2130706433",
            "0x7f.1",
            "127.1",
            "0177.0.0.1",
        ] {
            let refused = decide(&rules, host).unwrap_err();
            assert!(!refused.askable, "{host}");
        }
        assert!(decide(&grants(&["net:127.0.0.1"]), "127.0.0.1").is_ok());
        assert!(decide(&grants(&["net:a1.example"]), "a1.example").is_ok());
    }

    #[test]
    fn a_denied_host_is_refused_whatever_grants_it() {
        let mut rules = grants(&["net", "net:uploads.example.org", "net:*.example.org"]);
        rules.deny = vec!["uploads.example.org".into(), "*.paste.example".into()];
        for host in [
            "uploads.example.org",
            "UPLOADS.example.org.",
            "a.paste.example",
        ] {
            let refused = decide(&rules, host).unwrap_err();
            assert!(refused.reason.contains("sandbox.network.deny"), "{refused}");
        }
        assert!(decide(&rules, "api.example.org").is_ok());
    }

    #[test]
    fn a_host_needs_a_grant_and_a_private_one_a_grant_naming_it() {
        let g = grants(&["net:registry.example.test", "net:*.mirror.test"]);
        assert!(decide(&g, "registry.example.test").is_ok());
        assert!(decide(&g, "a.mirror.test").is_ok());
        let refused = decide(&g, "other.test").unwrap_err();
        assert!(refused.reason.contains("net:other.test"), "{refused}");
        // `net` alone never reaches loopback or the metadata service.
        let all = grants(&["net"]);
        for host in [
            "127.0.0.1",
            "169.254.169.254",
            "::ffff:127.0.0.1",
            "[::1]",
            "localhost",
        ] {
            assert!(decide(&all, host).is_err(), "{host}");
        }
        assert!(decide(&grants(&["net:127.0.0.1"]), "127.0.0.1").is_ok());
    }

    #[tokio::test]
    async fn a_name_that_resolves_to_loopback_is_refused_unless_named() {
        // `localhost` resolves to loopback: reached by `net` or a wildcard,
        // it is refused; named, it is reached.
        for grant in [NetGrant::Any, NetGrant::Wildcard("*.example.test".into())] {
            let refused = resolve("localhost", 80, &grant).await.unwrap_err();
            assert!(refused.reason.contains("loopback or private"), "{refused}");
        }
        let named = decide(&grants(&["net:localhost"]), "localhost").unwrap();
        assert!(resolve("localhost", 80, &named).await.is_ok());
        let literal = decide(&grants(&["net:127.0.0.1"]), "127.0.0.1").unwrap();
        assert_eq!(
            resolve("127.0.0.1", 8080, &literal).await.unwrap(),
            vec!["127.0.0.1:8080".parse().unwrap()]
        );
    }
}
