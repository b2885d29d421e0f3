//! Keeps North's secrets inside North's process.
//!
//! At start-up, before any thread exists, every secret-looking variable is
//! moved into the in-memory vault of `north_secrets` and removed from the
//! process environment, so no child — started by any path, `north sandbox`
//! included — can inherit it. Its bytes in the original environment block,
//! which is what `/proc/<pid>/environ` shows, are zeroed as well. The process
//! is also marked non-dumpable, so other processes of the same user cannot
//! read its memory or `/proc` files. Root can; commands are kept from North's
//! memory by the OS sandbox (Landlock refuses ptrace-mode access, which
//! `/proc/<pid>/mem` needs, to processes outside the sandbox's domain).

use std::ffi::CStr;

use north_secrets::is_secret_name;

unsafe extern "C" {
    /// The C runtime's environment: at start-up it points into the block
    /// the kernel placed on the stack.
    static mut environ: *mut *mut libc::c_char;
}

/// What [`protect_process`] did, for the log.
pub static PROTECTION: std::sync::OnceLock<Protection> = std::sync::OnceLock::new();

/// What [`protect_process`] did.
#[derive(Debug, Default)]
pub struct Protection {
    /// Variables whose values were wiped from the original block.
    pub scrubbed: usize,
    /// Variables moved from the environment into the in-memory vault.
    pub sealed: usize,
    /// Whether the process is now non-dumpable.
    pub non_dumpable: bool,
}

/// Scrubs secrets from the original environment block and makes the
/// process non-dumpable. Must run first in `main`, while single-threaded.
pub fn protect_process() {
    // SAFETY: prctl with PR_SET_DUMPABLE and constant arguments has no
    // memory effects; a failure only leaves the process dumpable.
    let non_dumpable = unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) } == 0;
    let mut originals: Vec<(*mut u8, usize)> = Vec::new();
    // SAFETY: `environ` is a NULL-terminated array of NUL-terminated
    // strings owned by the C runtime. Nothing else runs yet (main's first
    // statement), so no other thread reads or changes it meanwhile.
    unsafe {
        let mut entry = environ;
        while !entry.is_null() && !(*entry).is_null() {
            let bytes = CStr::from_ptr(*entry).to_bytes();
            if let Some(eq) = bytes.iter().position(|b| *b == b'=') {
                let name = &bytes[..eq];
                if std::str::from_utf8(name).is_ok_and(is_secret_name) && eq + 1 < bytes.len() {
                    originals.push(((*entry).cast::<u8>().add(eq + 1), bytes.len() - eq - 1));
                }
            }
            entry = entry.add(1);
        }
    }
    // SAFETY: single-threaded (see above). The vault copies the values to
    // the heap and unsetenv drops the entries from `environ`, so the
    // original bytes are no longer referenced by anyone.
    let sealed = unsafe { north_secrets::seal_environment() };
    for (value, len) in &originals {
        // SAFETY: each pointer addresses `len` bytes of the original block,
        // which lives for the whole process and is writable (it is on the
        // initial stack); `environ` no longer points there.
        unsafe { std::ptr::write_bytes(*value, 0, *len) };
    }
    let _ = PROTECTION.set(Protection {
        scrubbed: originals.len(),
        sealed: sealed.moved,
        non_dumpable,
    });
}

/// Installs the key that marks North's own state (sessions, edit journals,
/// the card cache, memories) as this user's: kept in the user's config dir
/// (`state.key`, mode 0600, hidden from sandboxed commands), created on
/// first use. Without a config dir the key lives for this run only, so
/// nothing a repository ships can pass for North's state either way.
pub fn install_state_key() {
    let path = north_config::global_config_path().map(|p| p.with_file_name("state.key"));
    let key = match path.as_deref().map(north_tools::owner::load_or_create) {
        Some(Ok(key)) => key,
        Some(Err(e)) => {
            eprintln!(
                "north: warning: cannot use the state key {}: {e}; state from earlier runs is not recognised this run",
                path.as_deref()
                    .map(|p| p.display().to_string())
                    .unwrap_or_default()
            );
            ephemeral_key()
        }
        None => ephemeral_key(),
    };
    north_tools::owner::install(key);
}

fn ephemeral_key() -> [u8; 32] {
    use std::io::Read;
    let mut key = [0u8; 32];
    if std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut key))
        .is_err()
    {
        // The standard library seeds each RandomState from the OS.
        use std::hash::BuildHasher;
        for chunk in key.chunks_mut(8) {
            let word = std::collections::hash_map::RandomState::new().hash_one(chunk.as_ptr());
            chunk.copy_from_slice(&word.to_le_bytes()[..chunk.len()]);
        }
    }
    key
}
