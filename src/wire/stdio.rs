//! Newline-delimited JSON framing, as MCP's stdio transport defines it:
//! one message per line, no embedded newlines.

use std::os::fd::AsFd;
use std::pin::Pin;

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncWrite};
use tokio::net::unix::pipe;

/// An async reader of this process's stdin.
pub(crate) type StdinReader = Pin<Box<dyn AsyncRead + Send>>;
/// An async writer to this process's stdout.
pub(crate) type StdoutWriter = Pin<Box<dyn AsyncWrite + Send>>;

/// This process's stdin and stdout as async streams. When they are pipes
/// (the usual case: a client spawned us) the reactor drives them directly,
/// which saves a hand-off to a blocking thread on every read and write;
/// anything else (a terminal, a file) uses tokio's blocking stdio. Must be
/// called inside a runtime.
pub fn process_stdio() -> (StdinReader, StdoutWriter) {
    let stdin: StdinReader = match std::io::stdin()
        .as_fd()
        .try_clone_to_owned()
        .and_then(pipe::Receiver::from_owned_fd)
    {
        Ok(pipe) => Box::pin(pipe),
        Err(_) => Box::pin(tokio::io::stdin()),
    };
    let stdout: StdoutWriter = match std::io::stdout()
        .as_fd()
        .try_clone_to_owned()
        .and_then(pipe::Sender::from_owned_fd)
    {
        Ok(pipe) => Box::pin(pipe),
        Err(_) => Box::pin(tokio::io::stdout()),
    };
    (stdin, stdout)
}

/// Reads one line at a time as raw bytes, newline included, reusing its
/// buffer; the bytes are forwarded or parsed exactly as they arrived.
#[derive(Debug)]
pub(crate) struct LineReader<R> {
    reader: R,
    buf: Vec<u8>,
}

impl<R: AsyncBufRead + Unpin> LineReader<R> {
    /// Wraps a buffered reader.
    pub(crate) fn new(reader: R) -> Self {
        LineReader {
            reader,
            buf: Vec::with_capacity(4096),
        }
    }

    /// The next line, or `None` at end of input. A last line without a
    /// newline is still returned.
    pub(crate) async fn next_line(&mut self) -> std::io::Result<Option<&[u8]>> {
        self.buf.clear();
        let n = self.reader.read_until(b'\n', &mut self.buf).await?;
        Ok((n > 0).then_some(&self.buf[..]))
    }
}

/// A line without surrounding whitespace (the newline, a `\r` from a
/// Windows peer, stray blanks).
pub(crate) fn trim_line(line: &[u8]) -> &[u8] {
    line.trim_ascii()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn yields_lines_with_and_without_final_newline() {
        let input: &[u8] = b"{\"a\":1}\r\n\n{\"b\":2}";
        let mut lines = LineReader::new(input);
        assert_eq!(
            lines.next_line().await.unwrap(),
            Some(&b"{\"a\":1}\r\n"[..])
        );
        assert_eq!(trim_line(lines.next_line().await.unwrap().unwrap()), b"");
        assert_eq!(lines.next_line().await.unwrap(), Some(&b"{\"b\":2}"[..]));
        assert_eq!(lines.next_line().await.unwrap(), None);
    }
}
