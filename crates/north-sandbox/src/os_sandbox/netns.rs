//! A child's own network namespace, bridged to North's proxy: the only way
//! out of it (the `net:<domain>` grants' network for commands).
//!
//! The namespace has a loopback interface and nothing else, so an
//! internet socket reaches no host but the child's own. A bridge process
//! — forked before the child confines itself, and killed with it —
//! listens on `127.0.0.1:`[`PROXY_PORT`] there and carries each connection
//! to the proxy's Unix socket outside, where North decides, host by host,
//! what may be reached. The proxy variables (`HTTP_PROXY`, `HTTPS_PROXY`,
//! `ALL_PROXY` and their lower-case forms) name it for the command.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};

use super::policy::PROXY_PORT;

/// Makes this namespace's one way out: the loopback up, the bridge to
/// `socket` started, the proxy and cache variables set for the command.
pub(super) fn bridge(socket: &Path) -> Result<(), String> {
    loopback_up()?;
    start_bridge(socket)?;
    set_proxy_env();
    set_cache_env(&std::env::temp_dir());
    Ok(())
}

/// Brings the namespace's loopback interface up (it starts down).
fn loopback_up() -> Result<(), String> {
    // SAFETY: a datagram socket for the interface ioctls, closed below;
    // `ifreq` is a plain C struct, zeroed then filled with the name.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
        if fd < 0 {
            return Err(std::io::Error::last_os_error().to_string());
        }
        let mut req: libc::ifreq = std::mem::zeroed();
        for (i, b) in b"lo\0".iter().enumerate() {
            req.ifr_name[i] = *b as libc::c_char;
        }
        let result = if libc::ioctl(fd, libc::SIOCGIFFLAGS, &mut req) < 0 {
            Err(std::io::Error::last_os_error().to_string())
        } else {
            req.ifr_ifru.ifru_flags |= libc::IFF_UP as libc::c_short;
            if libc::ioctl(fd, libc::SIOCSIFFLAGS, &req) < 0 {
                Err(std::io::Error::last_os_error().to_string())
            } else {
                Ok(())
            }
        };
        libc::close(fd);
        result
    }
}

/// Starts the bridge: binds the proxy port in this namespace and forks
/// the process that carries its connections to `socket`. It dies with
/// this process (the command, or the init above it).
fn start_bridge(socket: &Path) -> Result<(), String> {
    let listener = TcpListener::bind(("127.0.0.1", PROXY_PORT)).map_err(|e| e.to_string())?;
    // SAFETY: the launcher is single-threaded here (nothing has started a
    // thread before `north sandbox` confines itself), so fork is safe.
    let parent = unsafe { libc::getpid() };
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(std::io::Error::last_os_error().to_string());
    }
    if pid > 0 {
        // The command never holds the listener.
        drop(listener);
        return Ok(());
    }
    // SAFETY: prctl, open and dup2 with valid arguments only change this
    // process's flags and descriptors.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
        if libc::getppid() != parent {
            libc::_exit(0);
        }
        // The command's output pipes must close when it ends: the bridge
        // holds none of them.
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
        if null >= 0 {
            for fd in 0..3 {
                libc::dup2(null, fd);
            }
            libc::close(null);
        }
    }
    serve(&listener, socket);
    // SAFETY: ends the bridge without running the launcher's exit path.
    unsafe { libc::_exit(0) }
}

/// Carries each connection to the proxy, two threads a connection.
fn serve(listener: &TcpListener, socket: &Path) {
    for conn in listener.incoming() {
        let Ok(conn) = conn else { continue };
        let socket: PathBuf = socket.to_path_buf();
        let _ = std::thread::Builder::new()
            .name("bridge".into())
            .spawn(move || carry(conn, &socket));
    }
}

fn carry(conn: TcpStream, socket: &Path) {
    let Ok(proxy) = UnixStream::connect(socket) else {
        let mut conn = conn;
        let _ = conn.write_all(
            b"HTTP/1.1 502 Bad Gateway\r\nX-North-Denied: North's proxy is not running\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
        );
        return;
    };
    let (Ok(conn_back), Ok(proxy_back)) = (conn.try_clone(), proxy.try_clone()) else {
        return;
    };
    let up = std::thread::spawn(move || pump(conn, proxy, |p| p.shutdown(Shutdown::Write)));
    pump(proxy_back, conn_back, |c| c.shutdown(Shutdown::Write));
    let _ = up.join();
}

/// Copies `from` into `to` until `from` ends, then ends `to`'s writing.
fn pump<R: Read, W: Write>(mut from: R, mut to: W, end: impl FnOnce(&W) -> std::io::Result<()>) {
    let _ = std::io::copy(&mut from, &mut to);
    let _ = end(&to);
}

/// Names the proxy for the command: every common spelling. The only
/// exceptions are the namespace's own loopback names — a server the
/// command itself started is reached directly; a host the user's
/// `NO_PROXY` listed would be tried directly and fail, so it is replaced.
fn set_proxy_env() {
    let url = format!("http://127.0.0.1:{PROXY_PORT}");
    for var in [
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "http_proxy",
        "https_proxy",
        "all_proxy",
    ] {
        // SAFETY: the launcher is single-threaded until it executes the command.
        unsafe { std::env::set_var(var, &url) };
    }
    for var in ["NO_PROXY", "no_proxy"] {
        // SAFETY: as above.
        unsafe { std::env::set_var(var, "localhost,127.0.0.1,::1") };
    }
}

/// Package managers keep what they download in the command's own temp
/// dir: the user's caches stay read-only to commands (a command could
/// otherwise plant what the user's next install takes from them).
fn set_cache_env(temp: &Path) {
    for (var, dir) in [
        ("npm_config_cache", "npm-cache"),
        ("PIP_CACHE_DIR", "pip-cache"),
    ] {
        // SAFETY: the launcher is single-threaded until it executes the command.
        unsafe { std::env::set_var(var, temp.join(dir)) };
    }
}
