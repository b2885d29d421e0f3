use std::sync::Arc;

use north_natural::{Configuration, Environment, StubBackend};

fn main() {
    // The spec requires all four fields: each missing one is named.
    let _no_memory = Environment::builder()
        .configuration(Configuration::default())
        .workspace_root(".")
        .backend(Arc::new(StubBackend::new([])))
        .build();
    let _nothing_but_a_backend = Environment::builder()
        .backend(Arc::new(StubBackend::new([])))
        .build();
}
