//! Command policy: the project allowlist, the mesh policy.json, and a shell-command checker (in progress).
