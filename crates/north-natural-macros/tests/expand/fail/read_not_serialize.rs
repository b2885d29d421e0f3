use north_natural::natural;

/// Not `Serialize`: the model cannot be shown its value.
struct Connection {
    host: String,
}

#[natural]
async fn inspect(connection: Connection) -> north_natural::Result<()> {
    let _ = &connection.host;
    "natural
    Look at <connection>.";
    Ok(())
}

fn main() {}
