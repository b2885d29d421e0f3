use north_natural::{ToolContext, tool};

#[tool]
fn undocumented(_ctx: &ToolContext, x: u32) -> u32 {
    x
}

/// Needs the context first.
#[tool]
fn no_context(x: u32) -> u32 {
    x
}

/// Bad name.
#[tool(name = "bad-name")]
fn bad_name(_ctx: &ToolContext) -> u32 {
    1
}

fn main() {}
