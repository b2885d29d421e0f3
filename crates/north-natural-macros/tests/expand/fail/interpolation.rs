use north_natural::natural;

#[natural]
async fn unknown_name(name: String) -> north_natural::Result<()> {
    "natural
    Greet {nmae}.";
    Ok(())
}

#[natural]
async fn not_an_identifier(name: String) -> north_natural::Result<()> {
    "natural
    Answer with {\"json\": true}.";
    Ok(())
}

#[natural]
async fn unmatched(name: String) -> north_natural::Result<()> {
    "natural
    A lone } brace.";
    Ok(())
}

fn main() {}
