//! How many bytes written to a stream its reader has not read yet.
//!
//! Stdio replay uses this to hold a response back until the client has read
//! the notifications written before it (replay's `StdioConfig` chooses it).
//! The kernel can tell for the two kinds of stream that clients spawn
//! servers with, and only on Linux:
//!
//! - a pipe (Python's and Rust's SDKs): `FIONREAD` gives the bytes in the
//!   pipe, from either end;
//! - a Unix stream socket (Node's `child_process`, so the TypeScript SDK,
//!   whose stdio is a `socketpair`): `SIOCOUTQ` on the writing end gives
//!   the bytes sent and not yet consumed by the peer (an AF_UNIX message
//!   stays charged to its sender until the receiver has read it whole).
//!
//! Anything else cannot tell, and says so with `None`: a file or a
//! terminal, and, on another OS or for a TCP socket, a stream whose reader
//! may be a client ([`Unread::is_stream`]).

use std::os::fd::{AsFd, AsRawFd, OwnedFd};

/// A probe on the writing end of a stream.
#[derive(Debug)]
pub struct Unread {
    fd: OwnedFd,
    kind: Kind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Pipe,
    UnixSocket,
    /// A pipe or socket the kernel cannot tell about.
    OtherStream,
    /// A file, a terminal, anything else.
    Passive,
}

impl Unread {
    /// A probe on (a duplicate of) `fd`.
    pub fn of(fd: impl AsFd) -> std::io::Result<Self> {
        let fd = fd.as_fd().try_clone_to_owned()?;
        let kind = kind_of(&fd);
        Ok(Unread { fd, kind })
    }

    /// A probe on this process's stdout.
    pub fn stdout() -> std::io::Result<Self> {
        Self::of(std::io::stdout())
    }

    /// Whether [`bytes`](Self::bytes) can ever tell.
    pub fn can_tell(&self) -> bool {
        matches!(self.kind, Kind::Pipe | Kind::UnixSocket)
    }

    /// Whether the stream is a pipe or a socket: something a program at
    /// the other end reads as it goes.
    pub fn is_stream(&self) -> bool {
        !matches!(self.kind, Kind::Passive)
    }

    /// The bytes written and not yet read, or `None` when the stream cannot
    /// tell (or asking failed).
    pub fn bytes(&self) -> Option<usize> {
        let request = match self.kind {
            Kind::Pipe => os::FIONREAD?,
            Kind::UnixSocket => os::OUTQ?,
            Kind::OtherStream | Kind::Passive => return None,
        };
        os::ioctl_count(self.fd.as_raw_fd(), request)
    }

    /// Whether nobody can read any more (the reader closed its end), so
    /// what is unread will stay so.
    pub fn reader_gone(&self) -> bool {
        os::hung_up(self.fd.as_raw_fd())
    }
}

fn kind_of(fd: &OwnedFd) -> Kind {
    use std::os::unix::fs::FileTypeExt;
    let Ok(file) = fd.try_clone().map(std::fs::File::from) else {
        return Kind::Passive;
    };
    let Ok(meta) = file.metadata() else {
        return Kind::Passive;
    };
    let kind = meta.file_type();
    if kind.is_fifo() && os::FIONREAD.is_some() {
        Kind::Pipe
    } else if kind.is_socket() && os::OUTQ.is_some() && os::is_unix_stream(fd.as_raw_fd()) {
        Kind::UnixSocket
    } else if kind.is_fifo() || kind.is_socket() {
        Kind::OtherStream
    } else {
        Kind::Passive
    }
}

#[cfg(target_os = "linux")]
mod os {
    use nix::libc;
    use std::os::fd::RawFd;

    /// The ioctl request type differs between C libraries.
    type Request = libc::Ioctl;

    pub(super) const FIONREAD: Option<Request> = Some(libc::FIONREAD as Request);
    /// `SIOCOUTQ`, which Linux spells `TIOCOUTQ` in its headers.
    pub(super) const OUTQ: Option<Request> = Some(libc::TIOCOUTQ as Request);

    /// An ioctl that stores a count in an `int`.
    pub(super) fn ioctl_count(fd: RawFd, request: Request) -> Option<usize> {
        let mut count: libc::c_int = 0;
        // SAFETY: both requests write one `int` through the pointer, which
        // points to a live `c_int`; `fd` is owned by the caller's probe.
        let status = unsafe { libc::ioctl(fd, request, &mut count as *mut libc::c_int) };
        (status == 0).then(|| usize::try_from(count).unwrap_or(0))
    }

    /// Whether `fd` is an AF_UNIX stream socket.
    pub(super) fn is_unix_stream(fd: RawFd) -> bool {
        let option = |name| {
            let mut value: libc::c_int = 0;
            let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
            // SAFETY: the option is an `int`; value and len point to live
            // locals of the sizes given.
            let status = unsafe {
                libc::getsockopt(
                    fd,
                    libc::SOL_SOCKET,
                    name,
                    (&mut value as *mut libc::c_int).cast(),
                    &mut len,
                )
            };
            (status == 0).then_some(value)
        };
        option(libc::SO_DOMAIN) == Some(libc::AF_UNIX)
            && option(libc::SO_TYPE) == Some(libc::SOCK_STREAM)
    }

    /// Whether polling `fd` reports that the other end is gone.
    pub(super) fn hung_up(fd: RawFd) -> bool {
        let mut poll = libc::pollfd {
            fd,
            events: libc::POLLOUT,
            revents: 0,
        };
        // SAFETY: one valid `pollfd`, no timeout.
        let ready = unsafe { libc::poll(&mut poll, 1, 0) };
        ready > 0 && poll.revents & (libc::POLLERR | libc::POLLHUP) != 0
    }
}

#[cfg(not(target_os = "linux"))]
mod os {
    //! Elsewhere `FIONREAD` on a pipe's writing end reads the wrong buffer
    //! (or fails), and there is no `SIOCOUTQ`: the probe cannot tell.
    use std::os::fd::RawFd;

    pub const FIONREAD: Option<u64> = None;
    pub const OUTQ: Option<u64> = None;

    pub fn ioctl_count(_fd: RawFd, _request: u64) -> Option<usize> {
        None
    }

    pub fn is_unix_stream(_fd: RawFd) -> bool {
        false
    }

    pub fn hung_up(_fd: RawFd) -> bool {
        false
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    #[test]
    fn a_pipe_counts_what_its_reader_has_not_read() {
        let (mut reader, mut writer) = std::io::pipe().unwrap();
        let probe = Unread::of(&writer).unwrap();
        assert!(probe.can_tell() && probe.is_stream());
        assert_eq!(probe.bytes(), Some(0));
        writer.write_all(b"0123456789").unwrap();
        assert_eq!(probe.bytes(), Some(10));
        let mut buf = [0; 4];
        reader.read_exact(&mut buf).unwrap();
        assert_eq!(probe.bytes(), Some(6));
        let mut rest = [0; 6];
        reader.read_exact(&mut rest).unwrap();
        assert_eq!(probe.bytes(), Some(0));
        assert!(!probe.reader_gone());
        drop(reader);
        assert!(probe.reader_gone());
    }

    #[test]
    fn a_unix_socket_counts_what_its_peer_has_not_read() {
        let (mut ours, mut theirs) = std::os::unix::net::UnixStream::pair().unwrap();
        let probe = Unread::of(&ours).unwrap();
        assert!(probe.can_tell());
        assert_eq!(probe.bytes(), Some(0));
        ours.write_all(b"first line\n").unwrap();
        ours.write_all(b"second line\n").unwrap();
        assert!(probe.bytes().unwrap() > 0);
        let mut buf = [0; 23];
        theirs.read_exact(&mut buf).unwrap();
        assert_eq!(probe.bytes(), Some(0));
        drop(theirs);
        assert!(probe.reader_gone());
    }

    #[test]
    fn a_file_cannot_tell() {
        let file = tempfile::tempfile().unwrap();
        let probe = Unread::of(&file).unwrap();
        assert!(!probe.can_tell() && !probe.is_stream());
        assert_eq!(probe.bytes(), None);
    }
}
