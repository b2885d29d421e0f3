use north_natural::natural;

#[natural]
async fn unknown(text: String) -> north_natural::Result<()> {
    "natural
    Summarize <txet>.";
    Ok(())
}

#[natural]
async fn declared_later() -> north_natural::Result<()> {
    "natural
    Set <:late>.";
    let mut late = 1;
    late += 1;
    Ok(())
}

#[natural]
async fn out_of_scope() -> north_natural::Result<()> {
    {
        let mut inner = 1;
        inner += 1;
    }
    "natural
    Read <inner>.";
    Ok(())
}

#[natural]
async fn memory_is_not_writable() -> north_natural::Result<()> {
    "natural
    Put it in <:memory>.";
    Ok(())
}

fn main() {}
