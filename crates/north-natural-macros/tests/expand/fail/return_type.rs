use north_natural::natural;

#[natural]
async fn plain(x: u32) -> u32 {
    "natural
    Look at <x>.";
    x
}

#[derive(Debug)]
struct MyError;

#[natural]
async fn no_from(x: u32) -> Result<u32, MyError> {
    "natural
    Look at <x>.";
    Ok(x)
}

fn main() {}
