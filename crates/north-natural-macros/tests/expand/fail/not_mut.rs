use north_natural::natural;

#[natural]
async fn classify(text: String) -> north_natural::Result<String> {
    let label = String::new();
    "natural
    Classify <text> into <:label>.";
    Ok(label)
}

fn main() {}
