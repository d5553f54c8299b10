//! Errors say each cause once: an OS error wrapped by one of our
//! errors is not repeated by the chain printed after it.

use crate::support::mcpcassette;

#[test]
fn a_missing_file_is_reported_once_per_command() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.json");
    let missing = missing.to_str().unwrap();
    let cases: [&[&str]; 5] = [
        &["verify", missing],
        &["replay", missing],
        &["check", missing],
        &[
            "run",
            "--mode",
            "all",
            "--cassette",
            missing,
            "--",
            "/nonexistent/mcpcassette-server",
        ],
        &["serve", missing],
    ];
    for args in cases {
        let output = mcpcassette().args(args).output().unwrap();
        // `check` reports an unreadable file with its findings, on stdout.
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned()
            + &String::from_utf8_lossy(&output.stdout);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(
            stderr.matches("(os error 2)").count(),
            1,
            "{args:?}: said once:\n{stderr}"
        );
        assert!(
            stderr.contains("No such file or directory (os error 2)"),
            "{args:?}: {stderr}"
        );
    }
}
