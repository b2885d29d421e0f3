//! Turning what went wrong on the wire into words for the user: provider
//! error bodies, reqwest errors with their causes, and URLs fit to print.

use serde_json::Value;

use crate::decode::excerpt;

/// Extracts `(type, message)` from an Anthropic- or OpenAI-shaped error body.
pub(crate) fn error_from_body(body: &str) -> (Option<String>, String) {
    let Ok(v) = serde_json::from_str::<Value>(body) else {
        let text = body.trim();
        return (
            None,
            if text.is_empty() {
                "(empty body)".to_string()
            } else {
                excerpt(text)
            },
        );
    };
    match v.get("error") {
        Some(Value::Object(e)) => (
            e.get("type")
                .and_then(Value::as_str)
                .map(str::to_string)
                .or_else(|| e.get("code").and_then(Value::as_str).map(str::to_string)),
            e.get("message")
                .and_then(Value::as_str)
                .map(str::to_string)
                .unwrap_or_else(|| excerpt(body)),
        ),
        Some(Value::String(s)) => (None, s.clone()),
        _ => (
            None,
            v.get("message")
                .and_then(Value::as_str)
                .map(str::to_string)
                .unwrap_or_else(|| excerpt(body)),
        ),
    }
}

/// A reqwest error with its causes, without the URL (the caller names it).
pub(crate) fn describe(err: reqwest::Error) -> String {
    let err = err.without_url();
    let mut msg = err.to_string();
    let mut source = std::error::Error::source(&err);
    while let Some(s) = source {
        let text = s.to_string();
        if !msg.contains(&text) {
            msg.push_str(": ");
            msg.push_str(&text);
        }
        source = s.source();
    }
    msg
}

/// `url` fit for an error message: no user info (a password can live
/// there), no query string.
pub(crate) fn printable_url(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
    let (authority, path) = match rest.find('/') {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let path = path.split(['?', '#']).next().unwrap_or_default();
    if scheme.is_empty() {
        format!("{host}{path}")
    } else {
        format!("{scheme}://{host}{path}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printable_urls_drop_credentials_and_queries() {
        assert_eq!(
            printable_url("http://user:pw@127.0.0.1:8080/v1/chat/completions?key=x"),
            "http://127.0.0.1:8080/v1/chat/completions"
        );
        assert_eq!(
            printable_url("https://api.anthropic.com/v1/messages"),
            "https://api.anthropic.com/v1/messages"
        );
    }
}
