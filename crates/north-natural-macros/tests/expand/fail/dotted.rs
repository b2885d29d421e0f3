use north_natural::natural;

struct User {
    name: String,
}

#[natural]
async fn dotted(user: User) -> north_natural::Result<()> {
    let _ = &user.name;
    "natural
    Greet <user.name> warmly.";
    Ok(())
}

fn main() {}
