//! placeholder
/// Options.
#[derive(Debug, Clone)]
pub struct ServeOptions;
/// Serve.
pub async fn serve(_o: ServeOptions) -> std::io::Result<()> {
    Ok(())
}
