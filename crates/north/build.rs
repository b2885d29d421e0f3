//! How the release binary is linked. Most of a short session's memory is the
//! executable's own pages, so two link options keep what a session touches
//! small (README, "Performance"):
//!
//! - the code a short session runs placed together first (`hot.ld`, written
//!   by `scripts/orderfile.sh`): the kernel maps an executable 64 KB around
//!   each page touched, so scattered hot code costs the whole text;
//! - relative relocations packed (DT_RELR): 1.2 MB of `.rela.dyn` become
//!   15 KB, read at every start; needs glibc 2.36, probed on the build
//!   machine.
//!
//! `NORTH_LINK_MAP=FILE` also writes the linker's map, which
//! `scripts/orderfile.sh` reads. Only release builds for Linux/glibc with no
//! linker chosen by the user; every other build links as cargo would.

use std::env;
use std::path::Path;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=hot.ld");
    println!("cargo:rerun-if-env-changed=NORTH_LINK_MAP");
    println!("cargo:rerun-if-env-changed=NORTH_PLAIN_LINK");
    let var = |name: &str| env::var(name).unwrap_or_default();
    let target = var("TARGET");
    // A linker chosen in the user's config or flags may not read a linker
    // script (mold does not); NORTH_PLAIN_LINK=1 opts out by hand.
    let own_linker = env::var_os("RUSTC_LINKER").is_none()
        && !var("CARGO_ENCODED_RUSTFLAGS").contains("linker")
        && !var("CARGO_ENCODED_RUSTFLAGS").contains("fuse-ld")
        && env::var_os("NORTH_PLAIN_LINK").is_none();
    if var("PROFILE") != "release" || !target.ends_with("-linux-gnu") || !own_linker {
        return;
    }
    // The probe reads this machine's glibc, which is the target's only when
    // not cross-compiling.
    if var("HOST") == target && glibc_at_least(2, 36) {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
    // Rust's own linker (lld) is the default only on x86_64.
    let hot = Path::new(&var("CARGO_MANIFEST_DIR")).join("hot.ld");
    if target == "x86_64-unknown-linux-gnu" && hot.is_file() {
        println!("cargo:rustc-link-arg-bins=-Wl,-T,{}", hot.display());
    }
    if let Some(map) = env::var_os("NORTH_LINK_MAP") {
        println!(
            "cargo:rustc-link-arg-bins=-Wl,-Map={}",
            map.to_string_lossy()
        );
    }
}

/// The build machine's glibc, as `getconf` reports it ("glibc 2.36").
fn glibc_at_least(major: u32, minor: u32) -> bool {
    let Ok(out) = Command::new("getconf").arg("GNU_LIBC_VERSION").output() else {
        return false;
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let Some(version) = text.trim().strip_prefix("glibc ") else {
        return false;
    };
    let mut parts = version.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
    let found = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    found >= (major, minor)
}
