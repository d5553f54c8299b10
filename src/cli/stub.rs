//! `mcpcassette stub`: connect to the server named, take its inventory
//! ([`mcpcassette::stub`]), mask it, and write the fixture.

use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, anyhow, bail};
use mcpcassette::cli_support::chain;
use mcpcassette::client::{HttpLive, Live, LiveError, StdioLive};
use mcpcassette::stub::{self, StubConfig};
use mcpcassette::{fixture, redact};

use super::args::StubArgs;

/// Exit 0 with the fixture written; errors exit 2.
pub fn run(args: StubArgs) -> anyhow::Result<ExitCode> {
    let era = args.era;
    let (mut live, target): (Box<dyn Live>, String) = match (&args.url, args.command.is_empty()) {
        (Some(url), _) => {
            let shown = redact::mask_command(std::slice::from_ref(url)).join(" ");
            let live = HttpLive::connect(url, era)
                .map_err(|e| anyhow!("{}", chain(&e).replace(url.as_str(), &shown)))?;
            (Box::new(live), shown)
        }
        (None, false) => {
            let shown = redact::mask_command(&args.command).join(" ");
            let live = StdioLive::spawn(&args.command, None).map_err(|e| match e {
                LiveError::Spawn { source, .. } => anyhow!("cannot start `{shown}`: {source}"),
                other => anyhow!(other),
            })?;
            (Box::new(live), shown)
        }
        (None, true) => {
            bail!("name the server to inventory: `mcpcassette stub -- SERVER CMD` or `--url URL`")
        }
    };
    tracing::info!("inventorying `{target}` ({era:?} era)");
    let config = StubConfig {
        era,
        timeout: Duration::from_secs(args.timeout),
    };
    let mut inventory =
        stub::inventory(live.as_mut(), &config).with_context(|| format!("stub of `{target}`"))?;
    // Token shapes and the environment's secrets, as a recording is masked.
    let masked = inventory.mask(&super::redactor(Vec::new(), Vec::new())?);
    if masked > 0 {
        tracing::warn!(
            "masked {masked} secret(s) in what the server lists: the fixture holds placeholders there"
        );
    }
    let counts = inventory.counts();
    let text = fixture::to_text(&inventory.into_fixture());
    match &args.output {
        Some(path) => {
            mcpcassette::cli_support::write_atomically(path, text.as_bytes())?;
            tracing::info!("{counts}: wrote {}", path.display());
        }
        None => {
            let mut stdout = std::io::stdout().lock();
            stdout.write_all(text.as_bytes())?;
            stdout.flush()?;
            tracing::info!("{counts}");
        }
    }
    Ok(ExitCode::from(super::exit::OK))
}
