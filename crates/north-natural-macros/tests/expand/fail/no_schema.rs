use north_natural::natural;

#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
struct Verdict {
    ok: bool,
}

// Returns a `bool`, so only the writable binding is reported
// (`return_no_schema.rs` covers the success type).
#[natural]
async fn judge(text: String) -> north_natural::Result<bool> {
    let mut verdict = Verdict::default();
    "natural
    Judge <text> into <:verdict>.";
    Ok(verdict.ok)
}

fn main() {}
