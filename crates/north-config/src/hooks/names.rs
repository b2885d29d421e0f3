//! Claude Code's tool names beside North's, so a matcher written for
//! Claude Code (`Bash`, `Edit|Write`) picks the same calls here.

/// The Claude Code names of North tool `north`; empty when it has none.
pub fn claude_names(north: &str) -> &'static [&'static str] {
    match north {
        "shell_run" | "shell.exec" | "bash" => &["Bash"],
        "edit_replace_exact" | "edit_insert_at_line" => &["Edit"],
        "edit_apply_batch" => &["MultiEdit"],
        "edit_create_file" | "fs.write_text" | "write" => &["Write"],
        "read_file" | "read_readme" | "fs.read_text" | "read" => &["Read"],
        "search_text" => &["Grep"],
        "find_files" => &["Glob"],
        "list_root" | "fs.list_dir" => &["LS"],
        "http.get" | "web_fetch" => &["WebFetch"],
        "web_search" => &["WebSearch"],
        "agent" => &["Task"],
        _ => &[],
    }
}

/// `input` as a hook script written for Claude Code expects it: North's
/// arguments, plus `file_path` beside a `path` (Claude Code's edit and read
/// tools name the file so; `jq .tool_input.file_path` keeps working).
pub fn hook_tool_input(input: &serde_json::Value) -> serde_json::Value {
    let mut input = input.clone();
    if let Some(obj) = input.as_object_mut()
        && !obj.contains_key("file_path")
        && let Some(path) = obj.get("path").cloned()
    {
        obj.insert("file_path".into(), path);
    }
    input
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_claude_tool_name_the_issue_lists_has_a_north_counterpart() {
        let north = [
            "shell_run",
            "edit_replace_exact",
            "edit_apply_batch",
            "edit_create_file",
            "read_file",
            "search_text",
            "find_files",
            "http.get",
        ];
        let covered: Vec<&str> = north
            .iter()
            .flat_map(|n| claude_names(n))
            .copied()
            .collect();
        for claude in [
            "Bash",
            "Edit",
            "MultiEdit",
            "Write",
            "Read",
            "Grep",
            "Glob",
            "WebFetch",
        ] {
            assert!(covered.contains(&claude), "{claude}");
        }
        assert!(claude_names("mcp__git__status").is_empty());
    }

    #[test]
    fn a_path_is_also_given_as_file_path() {
        let v = hook_tool_input(&serde_json::json!({"path": "a.rs", "old": "x"}));
        assert_eq!(v["file_path"], "a.rs");
        assert_eq!(v["path"], "a.rs");
        let v = hook_tool_input(&serde_json::json!({"command": "ls"}));
        assert!(v.get("file_path").is_none());
    }
}
