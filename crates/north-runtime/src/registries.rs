//! The hosts of the package registries the user's tools are configured
//! with — npm, pip, cargo and go — read from those tools' own
//! configuration (never written into North's), for
//! `sandbox.network.registries`: one setting lets commands install
//! packages from where the user's tools already fetch them. Only the
//! user's own files and environment count: a project's `.npmrc` or
//! `.cargo/config.toml` is the repository's word, and a repository may
//! not open hosts for its commands.

use std::path::Path;

/// The registry hosts npm, pip, cargo and go use, from their
/// configuration files under `home` and `env`.
pub fn registry_hosts(home: Option<&Path>, env: impl Fn(&str) -> Option<String>) -> Vec<String> {
    let mut urls = npm(home, &env);
    urls.extend(pip(home, &env));
    urls.extend(cargo(home, &env));
    urls.extend(go(&env));
    let mut hosts: Vec<String> = urls.iter().filter_map(|u| host_of(u)).collect();
    hosts.sort();
    hosts.dedup();
    hosts
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_default()
}

/// npm: `registry=` and `@scope:registry=` in the `.npmrc` files, else
/// its default registry.
fn npm(home: Option<&Path>, env: &impl Fn(&str) -> Option<String>) -> Vec<String> {
    let files: Vec<String> = home.map(|h| read(&h.join(".npmrc"))).into_iter().collect();
    let urls: Vec<String> = files
        .iter()
        .flat_map(|text| assignments(text, |key| key == "registry" || key.ends_with(":registry")))
        .chain(env("npm_config_registry").or_else(|| env("NPM_CONFIG_REGISTRY")))
        .collect();
    if urls.is_empty() {
        vec!["https://registry.npmjs.org/".into()]
    } else {
        urls
    }
}

/// pip: `index-url` and `extra-index-url` in pip.conf, or the variables,
/// else PyPI and its file host.
fn pip(home: Option<&Path>, env: &impl Fn(&str) -> Option<String>) -> Vec<String> {
    let mut urls: Vec<String> = Vec::new();
    for file in home
        .map(|h| vec![h.join(".config/pip/pip.conf"), h.join(".pip/pip.conf")])
        .unwrap_or_default()
        .into_iter()
        .chain([std::path::PathBuf::from("/etc/pip.conf")])
    {
        urls.extend(assignments(&read(&file), |key| {
            key == "index-url" || key == "extra-index-url"
        }));
    }
    urls.extend(
        ["PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL"]
            .iter()
            .filter_map(|v| env(v)),
    );
    if urls.is_empty() {
        vec![
            "https://pypi.org/simple".into(),
            "https://files.pythonhosted.org/".into(),
        ]
    } else {
        urls
    }
}

/// cargo: sources and registries in `.cargo/config.toml`, and crates.io's
/// index and downloads.
fn cargo(home: Option<&Path>, env: &impl Fn(&str) -> Option<String>) -> Vec<String> {
    let cargo_home = env("CARGO_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| home.map(|h| h.join(".cargo")));
    let mut urls: Vec<String> = Vec::new();
    for file in cargo_home
        .iter()
        .flat_map(|c| [c.join("config.toml"), c.join("config")])
    {
        urls.extend(assignments(&read(&file), |key| {
            key == "registry" || key == "index"
        }));
    }
    urls.extend([
        "https://index.crates.io/".into(),
        "https://static.crates.io/".into(),
    ]);
    urls
}

/// go: the module proxy and checksum database.
fn go(env: &impl Fn(&str) -> Option<String>) -> Vec<String> {
    let mut urls: Vec<String> = match env("GOPROXY") {
        Some(list) => list.split([',', '|']).map(str::to_string).collect(),
        None => vec!["https://proxy.golang.org".into()],
    };
    // `GOSUMDB`: `off`, a name, or `name+key [url]`.
    match env("GOSUMDB").as_deref().map(str::trim) {
        Some("off") => {}
        Some(db) if !db.is_empty() => {
            let url = db.split_whitespace().nth(1).map(str::to_string);
            let name = db.split(['+', ' ']).next().unwrap_or_default();
            urls.push(url.unwrap_or_else(|| format!("https://{name}")));
        }
        _ => urls.push("https://sum.golang.org".into()),
    }
    urls
}

/// The values of `key = value` lines whose key `wanted` accepts (quotes
/// taken off): enough of npmrc, ini and toml for a URL.
fn assignments(text: &str, wanted: impl Fn(&str) -> bool) -> Vec<String> {
    text.lines()
        .filter_map(|line| {
            let line = line.trim();
            if line.starts_with(['#', ';', '[']) {
                return None;
            }
            let (key, value) = line.split_once('=')?;
            wanted(key.trim())
                .then(|| value.trim().trim_matches(['"', '\'']).to_string())
                .filter(|v| v.contains("://"))
        })
        .collect()
}

/// The host of a URL (`sparse+https://index.example/` too).
fn host_of(url: &str) -> Option<String> {
    let (_, rest) = url.trim().split_once("://")?;
    let authority = rest.split(['/', '?', '#']).next()?;
    let authority = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = match authority.strip_prefix('[') {
        Some(v6) => v6.split(']').next()?,
        None => authority.split(':').next()?,
    };
    (!host.is_empty()).then(|| host.to_ascii_lowercase())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn hosts_come_from_each_tools_own_configuration_else_its_default() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let project = dir.path().join("p");
        std::fs::create_dir_all(home.join(".cargo")).unwrap();
        std::fs::create_dir_all(&project).unwrap();
        std::fs::write(
            home.join(".npmrc"),
            "registry=https://npm.corp.example/api/\n@acme:registry=https://acme.example/npm/\n//npm.corp.example/:_authToken=SECRET\n",
        )
        .unwrap();
        std::fs::write(
            home.join(".cargo/config.toml"),
            "[source.crates-io]\nreplace-with = \"mirror\"\n[source.mirror]\nregistry = \"sparse+https://cargo.mirror.example/index/\"\n",
        )
        .unwrap();
        let env = |k: &str| match k {
            "PIP_INDEX_URL" => Some("https://user:pw@pypi.mirror.example:8443/simple".to_string()),
            "GOSUMDB" => Some("off".to_string()),
            _ => None,
        };
        // A project's own files are the repository's word: never read.
        std::fs::write(project.join(".npmrc"), "registry=https://evil.example/\n").unwrap();
        std::fs::create_dir_all(project.join(".cargo")).unwrap();
        std::fs::write(
            project.join(".cargo/config.toml"),
            "[source.x]\nregistry = \"sparse+https://evil2.example/\"\n",
        )
        .unwrap();
        let hosts = registry_hosts(Some(&home), env);
        assert!(!hosts.iter().any(|h| h.starts_with("evil")), "{hosts:?}");
        for host in [
            "npm.corp.example",
            "acme.example",
            "pypi.mirror.example",
            "cargo.mirror.example",
            "index.crates.io",
            "proxy.golang.org",
        ] {
            assert!(hosts.contains(&host.to_string()), "{host}: {hosts:?}");
        }
        assert!(
            !hosts.contains(&"registry.npmjs.org".to_string()),
            "npm is configured: {hosts:?}"
        );
        assert!(!hosts.iter().any(|h| h.contains("SECRET")));
        assert!(
            !hosts.contains(&"off".to_string()) && !hosts.contains(&"sum.golang.org".to_string()),
            "GOSUMDB=off asks for none: {hosts:?}"
        );
        // Nothing configured: each tool's default.
        let hosts = registry_hosts(None, |_| None);
        for host in [
            "registry.npmjs.org",
            "pypi.org",
            "files.pythonhosted.org",
            "static.crates.io",
        ] {
            assert!(hosts.contains(&host.to_string()), "{host}: {hosts:?}");
        }
    }
}
