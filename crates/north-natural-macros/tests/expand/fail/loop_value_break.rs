use north_natural::natural;

// The model's `break` has no value for a `loop` that is left with one.
#[natural]
async fn first_even(items: Vec<u32>) -> north_natural::Result<u32> {
    let mut i = 0;
    let found = loop {
        "natural
        Look at item {i}; stop when you are done.";
        if items[i] % 2 == 0 {
            break items[i];
        }
        i += 1;
    };
    Ok(found)
}

// Labeled: the value break names the loop.
#[natural]
async fn labeled(items: Vec<u32>) -> north_natural::Result<u32> {
    let found = 'search: loop {
        for item in &items {
            if *item > 3 {
                break 'search *item;
            }
        }
        "natural
        Nothing above 3 yet: decide whether to go on.";
    };
    Ok(found)
}

fn main() {}
