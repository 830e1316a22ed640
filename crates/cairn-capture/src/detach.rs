//! Starting the background worker so that the agent never waits for it: a new session (no
//! controlling terminal, its own process group), stdin closed, stdout and stderr appended to
//! cairn's log, and [`crate::INSIDE_ENV`] set so hooks of anything it starts do nothing.

use std::path::Path;
use std::process::{Command, Stdio};

/// Spawns `exe ARGS` detached in directory `dir`; returns its pid. The child is not waited for.
pub fn spawn_detached(
    exe: &Path,
    args: &[&std::ffi::OsStr],
    dir: &Path,
    log: &Path,
) -> std::io::Result<u32> {
    let out = crate::private_append(log)?;
    let err = out.try_clone()?;
    let mut cmd = Command::new(exe);
    cmd.args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::from(out))
        .stderr(Stdio::from(err))
        .env(crate::INSIDE_ENV, "1");
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        // SAFETY: setsid is async-signal-safe and touches no memory of the parent.
        unsafe {
            cmd.pre_exec(|| {
                if libc::setsid() == -1 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
    let child = cmd.spawn()?;
    Ok(child.id())
}
