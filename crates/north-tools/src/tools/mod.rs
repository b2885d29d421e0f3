//! The built-in tools and the registries (profiles) that group them.
//!
//! One implementation per capability; the North names, the runtime-contracts
//! names and the mesh names are thin profiles over it.

mod code;
mod context;
mod nav;
mod profiles;
mod read;
mod search;
mod write;

use std::sync::Arc;

use crate::net::tools::HttpGet;
use crate::shell::tools::{Bash, ShellExec, ShellRun};
use crate::tool::{Registry, Typed};
use north_policy::MeshPolicy;

pub use code::CodeTool;
pub use context::{HotfilesArgs, language_of};
pub use nav::{FindFilesArgs, LineRange, NoArgs, ReadFileArgs};
pub use profiles::{ListDirArgs, MESH_MAX_OUTPUT, MeshReadArgs, ReadTextArgs, file_role};
pub use search::{Hit, SearchArgs, SearchError, search};
pub use write::{MeshWriteArgs, WriteTextArgs};

use write::{EditTool, WriteKind};

/// The North tool set (spec §6): list_root, find_files, search_text,
/// read_file, read_readme, detect_languages, hotfiles, the four edit tools,
/// shell_run and its background companions shell_output and shell_kill.
pub fn north_tools() -> Registry {
    let mut r = Registry::new();
    r.register(Typed::tool(nav::ListRoot));
    r.register(Typed::tool(nav::FindFiles));
    r.register(Typed::tool(search::SearchText));
    r.register(Typed::tool(nav::ReadFile));
    r.register(Typed::tool(nav::ReadReadme));
    r.register(Typed::tool(context::DetectLanguages));
    r.register(Typed::tool(context::Hotfiles));
    r.register(EditTool::tool(WriteKind::Replace));
    r.register(EditTool::tool(WriteKind::Insert));
    r.register(EditTool::tool(WriteKind::Create));
    r.register(EditTool::tool(WriteKind::Batch));
    r.register(Arc::new(ShellRun::new()));
    r.register(Arc::new(crate::shell::bgtools::ShellOutput::new()));
    r.register(Arc::new(crate::shell::bgtools::ShellKill::new()));
    r
}

/// The runtime-contracts profile: fs.read_text, fs.list_dir, fs.write_text,
/// shell.exec and http.get.
pub fn contracts_tools() -> Registry {
    let mut r = Registry::new();
    r.register(Typed::tool(profiles::FsReadText));
    r.register(Typed::tool(profiles::FsListDir));
    r.register(EditTool::tool(WriteKind::FsWriteText));
    r.register(Arc::new(ShellExec::new()));
    r.register(Arc::new(HttpGet::new()));
    r
}

/// The mesh profile: read, write and bash under the default (balanced) policy.
pub fn mesh_tools() -> Registry {
    mesh_tools_with(&MeshPolicy::default())
}

/// The mesh profile under `policy`: `read` refuses files over
/// `max_file_size`, `write` refuses when `write_enabled` is false, `bash`
/// runs only allowed commands.
pub fn mesh_tools_with(policy: &MeshPolicy) -> Registry {
    let mut r = Registry::new();
    r.register(Typed::tool(profiles::MeshRead {
        max_file_size: policy.max_file_size,
    }));
    r.register(EditTool::mesh_write(policy.write_enabled));
    r.register(Arc::new(Bash::with_policy(policy.clone())));
    r
}

/// Every tool of every profile (names do not collide): what `north tool` offers.
pub fn all_tools() -> Registry {
    let mut r = north_tools();
    r.register(Arc::new(crate::net::fetch::WebFetch::new()));
    r.extend(&contracts_tools());
    r.extend(&mesh_tools());
    r
}
