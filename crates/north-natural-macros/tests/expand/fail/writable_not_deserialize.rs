use north_natural::natural;

/// Serialize only: a writable binding also needs `Deserialize` and `JsonSchema`.
#[derive(Debug, Default, serde::Serialize)]
struct Draft {
    text: String,
}

#[natural]
async fn write(topic: String) -> north_natural::Result<String> {
    let mut draft = Draft::default();
    "natural
    Write about <topic> into <:draft>.";
    Ok(draft.text)
}

fn main() {}
