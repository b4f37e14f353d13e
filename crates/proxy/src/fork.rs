//! Starting SQL processes by forking a warmed-up parent instead of
//! exec'ing the binary for each one.
//!
//! A pooled SQL process that is exec'd (`strata sql --pool`) pays, every
//! time, for loading and relocating a large binary and for building the
//! built-in catalog data every tenant shares (15-20 ms on an idle machine,
//! far more when a burst of wake-ups shares two cores with the clients).
//! The fork server (`strata sql --fork-server`) pays for that once: a
//! single-threaded process that has warmed up and then forks one child per
//! request. A child goes on as `strata sql --pool` does after its warm-up
//! (it says `ready` and waits for its [`crate::control::Bind`]), sharing
//! the server's pages until it writes them. It starts its threads (its
//! runtime, and with them thread-local random generators: cancel keys,
//! SCRAM nonces) only after the fork, so children share no random state.
//!
//! The protocol, on the server's standard input (one end of a unix socket
//! pair the proxy made):
//! - the server writes `ready\n` once it has warmed up;
//! - per request the proxy sends one byte with two descriptors attached,
//!   the read end of the child's stdin pipe and the write end of its
//!   stdout pipe; the server answers one line, `pid N` with a pidfd of the
//!   child attached, or `error MESSAGE`.
//!
//! The child is the server's, not the proxy's: the proxy watches it (the
//! pidfd is readable once it exits) and kills it through the pidfd, which
//! cannot name a recycled pid; the server reaps its children. The server
//! exits when the proxy closes its end of the pair (so with the proxy).
//! When the server cannot be reached, or dies, the proxy starts another
//! once and otherwise exec's ([`Process::exec`]).
//!
//! A fork server runs the binary it was started from, so one whose binary
//! file was replaced since ([`BinaryId`]) is replaced before its next fork:
//! a rolling restart (`strata tenant drain --all`) after an upgrade of the
//! binary moves sessions onto processes of the new one.

use std::io::{self, IoSlice, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use nix::sys::socket::{sendmsg, ControlMessage, MsgFlags};
use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncRead, AsyncWrite, BufReader, Interest};
use tokio::net::UnixStream;
use wire::handoff::{recv, recv_fds};

/// Builds a command (the binary supplies `strata sql ...`).
pub type CommandFactory = Arc<dyn Fn() -> Command + Send + Sync>;

/// How long the fork server may take to warm up, and to answer a request.
const SERVER_TIMEOUT: Duration = Duration::from_secs(30);

/// After a fork server failed to start, launches exec for this long before
/// one is tried again.
const RETRY_AFTER: Duration = Duration::from_secs(30);

/// Which file a program path names, to notice that the binary was
/// replaced (an upgrade) since a process was started from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BinaryId {
    dev: u64,
    ino: u64,
    mtime: (i64, i64),
}

impl BinaryId {
    /// The file `cmd` would run now (None for a program found on PATH, or
    /// missing: then nothing is compared).
    pub fn of(cmd: &Command) -> Option<BinaryId> {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::metadata(cmd.get_program()).ok()?;
        Some(BinaryId { dev: m.dev(), ino: m.ino(), mtime: (m.mtime(), m.mtime_nsec()) })
    }
}

/// A SQL process the proxy started (exec'd, or forked by the server):
/// its pipes and a way to wait for and end it.
pub struct Process {
    pub pid: u32,
    /// The binary it runs.
    pub binary: Option<BinaryId>,
    pub stdin: Box<dyn AsyncWrite + Send + Unpin>,
    pub stdout: BufReader<Box<dyn AsyncRead + Send + Unpin>>,
    exit: Exit,
}

enum Exit {
    /// Our own child.
    Child(tokio::process::Child),
    /// The fork server's child, through its pidfd.
    Pidfd(AsyncFd<OwnedFd>),
}

impl Process {
    /// Runs `cmd` with piped stdin and stdout.
    pub fn exec(mut cmd: Command) -> io::Result<Process> {
        let binary = BinaryId::of(&cmd);
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped());
        let mut child = tokio::process::Command::from(cmd).spawn()?;
        let pid = child.id().unwrap_or(0);
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(io::Error::other("no pipes to the SQL process"));
        };
        Ok(Process {
            pid,
            binary,
            stdin: Box::new(stdin),
            stdout: BufReader::new(Box::new(stdout)),
            exit: Exit::Child(child),
        })
    }

    /// Waits until the process has exited.
    pub async fn wait(&mut self) {
        match &mut self.exit {
            Exit::Child(c) => {
                let _ = c.wait().await;
            }
            Exit::Pidfd(fd) => {
                // Readable once the process exits (errors: nothing to wait for).
                let _ = fd.readable().await.map(|mut g| g.retain_ready());
            }
        }
    }

    /// Kills the process and waits until it has exited.
    pub async fn kill(&mut self) {
        match &mut self.exit {
            Exit::Child(c) => {
                let _ = c.start_kill();
            }
            Exit::Pidfd(fd) => {
                // SAFETY: pidfd_send_signal on a pidfd we own, no siginfo.
                unsafe {
                    libc::syscall(
                        libc::SYS_pidfd_send_signal,
                        fd.as_raw_fd(),
                        libc::SIGKILL,
                        std::ptr::null::<libc::siginfo_t>(),
                        0,
                    );
                }
            }
        }
        self.wait().await;
    }
}

/// The proxy's side of the fork server: starts it when first needed and
/// again after it died.
pub struct ForkServer {
    command: CommandFactory,
    conn: tokio::sync::Mutex<State>,
}

#[derive(Default)]
struct State {
    conn: Option<Conn>,
    /// When a server last failed to start.
    failed: Option<Instant>,
}

/// A running fork server and our end of its socket pair.
struct Conn {
    child: tokio::process::Child,
    sock: UnixStream,
    /// The binary it runs.
    binary: Option<BinaryId>,
}

impl Drop for Conn {
    fn drop(&mut self) {
        // Closing the socket ends it; a server that is stuck goes too.
        let _ = self.child.start_kill();
    }
}

impl ForkServer {
    /// A fork server run by `command` (which must be `strata sql
    /// --fork-server ...`; its stdin is set here).
    pub fn new(command: CommandFactory) -> ForkServer {
        ForkServer { command, conn: tokio::sync::Mutex::new(State::default()) }
    }

    /// Forks a pooled SQL process; starts the server first if none runs,
    /// and once more if the running one fails the request. Fails at once
    /// for 30 s after a server failed to start.
    pub async fn fork(&self) -> io::Result<Process> {
        let mut st = self.conn.lock().await;
        let binary = BinaryId::of(&(self.command)());
        if st.conn.as_ref().is_some_and(|c| c.binary != binary) {
            tracing::info!("the strata binary was replaced; starting a new fork server");
            st.conn = None;
            st.failed = None;
        }
        let mut last = None;
        for _ in 0..2 {
            if st.conn.is_none() {
                if st.failed.is_some_and(|t| t.elapsed() < RETRY_AFTER) {
                    return Err(io::Error::other("the fork server failed to start recently"));
                }
                let started = match tokio::time::timeout(SERVER_TIMEOUT, self.start()).await {
                    Ok(r) => r,
                    Err(_) => Err(io::Error::other("the fork server did not get ready")),
                };
                match started {
                    Ok(c) => st.conn = Some(c),
                    Err(e) => {
                        st.failed = Some(Instant::now());
                        return Err(e);
                    }
                }
            }
            let c = st.conn.as_ref().expect("started above");
            match tokio::time::timeout(SERVER_TIMEOUT, request(c)).await {
                Ok(Ok(p)) => return Ok(p),
                Ok(Err(e)) => last = Some(e),
                Err(_) => last = Some(io::Error::other("the fork server did not answer")),
            }
            tracing::warn!(error = ?last, "the fork server failed; starting another");
            st.conn = None;
        }
        Err(last.unwrap_or_else(|| io::Error::other("the fork server failed")))
    }

    async fn start(&self) -> io::Result<Conn> {
        let (ours, theirs) = std::os::unix::net::UnixStream::pair()?;
        let mut cmd = (self.command)();
        let binary = BinaryId::of(&cmd);
        cmd.stdin(Stdio::from(OwnedFd::from(theirs))).stdout(Stdio::null());
        let child = tokio::process::Command::from(cmd).kill_on_drop(true).spawn()?;
        ours.set_nonblocking(true)?;
        let sock = UnixStream::from_std(ours)?;
        let line = read_line(&sock).await?.0;
        if line != "ready" {
            let why = line.strip_prefix("error ").unwrap_or(&line).to_string();
            return Err(io::Error::other(format!("the fork server did not start: {why}")));
        }
        tracing::info!(pid = child.id(), "fork server ready");
        Ok(Conn { child, sock, binary })
    }
}

/// One request: pipes made, their child ends sent, the answer read.
async fn request(conn: &Conn) -> io::Result<Process> {
    let sock = &conn.sock;
    let (stdin_r, stdin_w) = std::io::pipe()?;
    let (stdout_r, stdout_w) = std::io::pipe()?;
    let fds = [stdin_r.as_raw_fd(), stdout_w.as_raw_fd()];
    sock.async_io(Interest::WRITABLE, || {
        let cmsg = [ControlMessage::ScmRights(&fds)];
        sendmsg::<()>(sock.as_raw_fd(), &[IoSlice::new(b"F")], &cmsg, MsgFlags::empty(), None)
            .map_err(io::Error::from)
    })
    .await?;
    // The child holds its ends now (or nobody does: the server failed).
    drop((stdin_r, stdout_w));
    let (line, pidfd) = read_line(sock).await?;
    if let Some(why) = line.strip_prefix("error ") {
        return Err(io::Error::other(format!("the fork server could not fork: {why}")));
    }
    let pid = line.strip_prefix("pid ").and_then(|p| p.parse::<u32>().ok());
    let (Some(pid), Some(pidfd)) = (pid, pidfd) else {
        return Err(io::Error::other(format!("the fork server answered {line:?}")));
    };
    let stdin = tokio::net::unix::pipe::Sender::from_owned_fd(stdin_w.into())?;
    let stdout = tokio::net::unix::pipe::Receiver::from_owned_fd(stdout_r.into())?;
    // SAFETY: the AsyncFd owns the OwnedFd, which stays open (and the same
    // descriptor) until the AsyncFd drops it.
    let pidfd = unsafe { AsyncFd::register_with_interest(pidfd, Interest::READABLE) }
        .map_err(|e| e.into_parts().1)?;
    Ok(Process {
        pid,
        binary: conn.binary,
        stdin: Box::new(stdin),
        stdout: BufReader::new(Box::new(stdout)),
        exit: Exit::Pidfd(pidfd),
    })
}

/// Reads one line (and the descriptor that came with it) from the server.
/// The server writes each line with one sendmsg and waits for the next
/// request, so a line never shares a read with the next.
async fn read_line(sock: &UnixStream) -> io::Result<(String, Option<OwnedFd>)> {
    let mut buf = [0u8; 512];
    let (n, fd) = sock.async_io(Interest::READABLE, || recv(sock.as_raw_fd(), &mut buf)).await?;
    if n == 0 {
        return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "the fork server exited"));
    }
    let text = String::from_utf8_lossy(&buf[..n]);
    Ok((text.trim_end_matches('\n').to_string(), fd))
}

/// What [`serve`] returned in.
pub enum Forked {
    /// A forked child: its stdin and stdout are the pipes the proxy sent.
    Child,
    /// The server: the proxy closed its end.
    Done,
}

/// Runs the fork server on `sock` (its standard input): says `ready`, then
/// forks a child per request. Returns [`Forked::Child`] in each child and
/// [`Forked::Done`] in the server once the proxy has gone. Blocking; the
/// caller must have no other thread (a fork copies only the calling one,
/// and locks other threads held would stay held in the child), which is
/// checked.
pub fn serve(sock: OwnedFd) -> io::Result<Forked> {
    let threads = std::fs::read_dir("/proc/self/task")?.count();
    let mut sock = std::os::unix::net::UnixStream::from(sock);
    if threads != 1 {
        let _ = writeln!(sock, "error the fork server runs {threads} threads");
        return Err(io::Error::other(format!("the fork server runs {threads} threads")));
    }
    sock.write_all(b"ready\n")?;
    loop {
        reap();
        // Wake up now and then to reap children that exited.
        let mut poll = [libc::pollfd { fd: sock.as_raw_fd(), events: libc::POLLIN, revents: 0 }];
        // SAFETY: poll on one valid pollfd.
        if unsafe { libc::poll(poll.as_mut_ptr(), 1, 1000) } <= 0 {
            continue;
        }
        let mut byte = [0u8; 1];
        let (n, fds) = match recv_fds(sock.as_raw_fd(), &mut byte) {
            Ok(got) => got,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if n == 0 {
            return Ok(Forked::Done);
        }
        let [stdin, stdout] = <[OwnedFd; 2]>::try_from(fds).map_err(|fds| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("a fork request came with {} descriptors, not 2", fds.len()),
            )
        })?;
        // SAFETY: this process has one thread (checked above), so the
        // child may go on running anything.
        match unsafe { libc::fork() } {
            -1 => {
                let e = io::Error::last_os_error();
                write_answer(&sock, &format!("error fork: {e}"), None)?;
            }
            0 => {
                // The child: its pipes become stdin and stdout (the server's
                // socket, our stdin, closes with that).
                // SAFETY: dup2 onto the standard descriptors.
                let ok = unsafe {
                    libc::dup2(stdin.as_raw_fd(), 0) == 0 && libc::dup2(stdout.as_raw_fd(), 1) == 1
                };
                if !ok {
                    return Err(io::Error::last_os_error());
                }
                drop((stdin, stdout));
                std::mem::forget(sock); // fd 0 is the stdin pipe now
                return Ok(Forked::Child);
            }
            pid => {
                drop((stdin, stdout));
                // SAFETY: pidfd_open of our own child, not yet reaped.
                let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
                if fd < 0 {
                    let e = io::Error::last_os_error();
                    // SAFETY: kill of our own child, not yet reaped.
                    unsafe { libc::kill(pid, libc::SIGKILL) };
                    write_answer(&sock, &format!("error pidfd_open: {e}"), None)?;
                    continue;
                }
                // SAFETY: the kernel just gave us this descriptor.
                let pidfd = unsafe { OwnedFd::from_raw_fd(fd as RawFd) };
                write_answer(&sock, &format!("pid {pid}"), Some(&pidfd))?;
            }
        }
    }
}

/// Writes one answer line, with `fd` attached, in one sendmsg.
fn write_answer(
    sock: &std::os::unix::net::UnixStream,
    line: &str,
    fd: Option<&OwnedFd>,
) -> io::Result<()> {
    let text = format!("{line}\n");
    let raw: Vec<RawFd> = fd.iter().map(|f| f.as_raw_fd()).collect();
    let cmsg = [ControlMessage::ScmRights(&raw)];
    let cmsgs: &[ControlMessage] = if raw.is_empty() { &[] } else { &cmsg };
    let n = sendmsg::<()>(
        sock.as_raw_fd(),
        &[IoSlice::new(text.as_bytes())],
        cmsgs,
        MsgFlags::empty(),
        None,
    )
    .map_err(io::Error::from)?;
    if n != text.len() {
        (&*sock).write_all(&text.as_bytes()[n..])?;
    }
    Ok(())
}

/// Reaps every child of ours that has exited.
fn reap() {
    loop {
        let mut status = 0;
        // SAFETY: waitpid with a valid pointer to a local.
        if unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) } <= 0 {
            return;
        }
    }
}
