//! The x32 gate: on x86_64 the kernel accepts x32 system calls (numbers
//! with bit 30 set) under the same architecture tag, so a filter keyed on
//! 64-bit numbers would let `socket` and `ptrace` through by their x32
//! numbers. This second filter refuses every call with that bit. Unknown
//! architectures are already killed by the main filter's own check.

/// The x32 bit of a system call number.
#[cfg(target_arch = "x86_64")]
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

/// Installs the gate (a no-op where there is no x32 ABI).
pub(super) fn install() -> Result<(), String> {
    #[cfg(target_arch = "x86_64")]
    {
        use seccompiler::sock_filter;
        // BPF_LD | BPF_W | BPF_ABS: load seccomp_data.nr (offset 0).
        const LD_W_ABS: u16 = 0x20;
        // BPF_JMP | BPF_JSET | BPF_K.
        const JMP_JSET_K: u16 = 0x45;
        // BPF_RET | BPF_K.
        const RET_K: u16 = 0x06;
        let program = vec![
            sock_filter {
                code: LD_W_ABS,
                jt: 0,
                jf: 0,
                k: 0,
            },
            sock_filter {
                code: JMP_JSET_K,
                jt: 0,
                jf: 1,
                k: X32_SYSCALL_BIT,
            },
            sock_filter {
                code: RET_K,
                jt: 0,
                jf: 0,
                k: libc::SECCOMP_RET_ERRNO | libc::EPERM as u32,
            },
            sock_filter {
                code: RET_K,
                jt: 0,
                jf: 0,
                k: libc::SECCOMP_RET_ALLOW,
            },
        ];
        seccompiler::apply_filter(&program).map_err(|e| e.to_string())
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        Ok(())
    }
}
