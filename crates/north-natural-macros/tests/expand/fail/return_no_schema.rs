use north_natural::natural;

/// Deserialize but no `JsonSchema`: the model cannot be shown what to return.
#[derive(Debug, serde::Deserialize)]
struct Verdict {
    ok: bool,
}

// Two blocks, one error: it is reported at the return type.
#[natural]
async fn judge(text: String) -> north_natural::Result<Verdict> {
    "natural
    Judge <text>.";
    "natural
    Judge <text> again and return the verdict.";
    Ok(Verdict { ok: true })
}

fn main() {}
