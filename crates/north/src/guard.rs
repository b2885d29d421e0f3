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
