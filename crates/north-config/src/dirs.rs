//! Where North keeps its global files (XDG base directories).

use std::path::PathBuf;

/// The global config path: `$XDG_CONFIG_HOME/north/config.json` (default `~/.config`).
pub fn global_config_path() -> Option<PathBuf> {
    use etcetera::BaseStrategy;
    etcetera::base_strategy::Xdg::new()
        .ok()
        .map(|x| x.config_dir().join("north").join("config.json"))
}

/// The global state dir: `$XDG_STATE_HOME/north` (default `~/.local/state`), for the log.
pub fn state_dir() -> Option<PathBuf> {
    use etcetera::BaseStrategy;
    etcetera::base_strategy::Xdg::new()
        .ok()
        .and_then(|x| x.state_dir())
        .map(|d| d.join("north"))
}

/// The global data dir: `$XDG_DATA_HOME/north` (default `~/.local/share`), for global memory.
pub fn data_dir() -> Option<PathBuf> {
    use etcetera::BaseStrategy;
    etcetera::base_strategy::Xdg::new()
        .ok()
        .map(|x| x.data_dir().join("north"))
}

/// The user's runtime dir for North: `$XDG_RUNTIME_DIR/north`, else a
/// directory of the user's own under the temp dir; for `north serve`'s
/// socket and token.
pub fn runtime_dir() -> PathBuf {
    use etcetera::BaseStrategy;
    etcetera::base_strategy::Xdg::new()
        .ok()
        .and_then(|x| x.runtime_dir())
        .map(|d| d.join("north"))
        .unwrap_or_else(|| {
            // /proc/self belongs to the process's user.
            use std::os::unix::fs::MetadataExt;
            let uid = std::fs::metadata("/proc/self").map_or(0, |m| m.uid());
            std::env::temp_dir().join(format!("north-{uid}"))
        })
}
