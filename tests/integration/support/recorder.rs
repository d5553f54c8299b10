//! The HTTP recorder under test, run in-process on 127.0.0.1 until told
//! to stop.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use mcpcassette::record::{HttpRecordConfig, HttpRecordOutcome, RecordError, record_http};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// How long the recorder may take to start or stop.
const PATIENCE: Duration = Duration::from_secs(10);

/// A running `record --upstream`.
pub struct Recorder {
    /// Where the proxy listens.
    pub addr: SocketAddr,
    stop: oneshot::Sender<()>,
    /// The recording, for tests that kill it.
    pub task: JoinHandle<Result<HttpRecordOutcome, RecordError>>,
}

impl Recorder {
    /// Records `upstream` into `cassette` (`None`: passthrough).
    pub async fn start(cassette: Option<PathBuf>, upstream: String) -> Recorder {
        let config = HttpRecordConfig {
            cassette,
            upstream,
            listen: "127.0.0.1:0".parse().unwrap(),
            redaction: Default::default(),
            observer: None,
            upstream_headers: Vec::new(),
        };
        let (ready_tx, ready_rx) = oneshot::channel();
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(record_http(
            config,
            move |addr| ready_tx.send(addr).unwrap(),
            async move {
                let _ = stopped.await;
            },
        ));
        let addr = tokio::time::timeout(PATIENCE, ready_rx)
            .await
            .expect("the recorder never got ready")
            .expect("the recorder failed before it got ready");
        Recorder { addr, stop, task }
    }

    /// The proxy's URL for `path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// Stops it and waits for the cassette to be written.
    pub async fn finish(self) -> HttpRecordOutcome {
        self.stop.send(()).unwrap();
        tokio::time::timeout(PATIENCE, self.task)
            .await
            .expect("the recorder did not stop")
            .unwrap()
            .unwrap()
    }
}
