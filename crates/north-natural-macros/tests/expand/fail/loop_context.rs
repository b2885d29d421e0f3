use north_natural::natural;

#[natural]
async fn in_closure(items: Vec<u32>) -> north_natural::Result<()> {
    for item in items {
        let check = || {
            "natural
            Decide about the item.";
        };
        check();
    }
    Ok(())
}

fn main() {}
