//! For the crate's own tests: a real server to talk to.

use std::path::PathBuf;
use std::sync::OnceLock;

/// The example server (`examples/demo_server.rs`), built if the test
/// runner did not build it.
pub(crate) fn demo_server() -> String {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        let exe = std::env::current_exe().expect("the test binary has a path");
        let profile_dir = exe
            .parent()
            .and_then(|deps| deps.parent())
            .expect("the test binary is in target/<profile>/deps");
        let path = profile_dir.join("examples").join("demo_server");
        if !path.exists() {
            let status = std::process::Command::new(env!("CARGO"))
                .args(["build", "--examples"])
                .status()
                .expect("cargo runs");
            assert!(status.success(), "building the examples failed");
        }
        path
    })
    .to_string_lossy()
    .into_owned()
}
