use north_natural::natural;

#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
struct Verdict {
    ok: bool,
}

#[natural]
async fn judge(text: String) -> north_natural::Result<Verdict> {
    let mut verdict = Verdict::default();
    "natural
    Judge <text> into <:verdict>.";
    Ok(verdict)
}

fn main() {}
