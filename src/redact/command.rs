//! Server command lines and free-standing values, as people read them
//! (cassette headers, reports, fixes to run again): they get the plain
//! [`MASK`]. The context-free part knows flag and variable names, URLs,
//! headers and token shapes; [`Redactor::mask_command`] adds the values of
//! the environment's secrets (`server "$MY_SERVICE_TOKEN"`).

use serde_json::Value;

use super::{MASK, Redactor, merge, name_looks_secret, shapes, url};

/// What an argument says about the one after it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Next {
    /// Nothing: it is read on its own.
    Plain,
    /// It is a secret (`--token X`).
    Secret,
    /// A password, unless it is a port (`-p X`: mysql's password, many
    /// tools' port).
    PasswordOrPort,
    /// `user:password` (`-u`, `--user`).
    UserPassword,
}

/// Masks secrets in a command line: `--token X`, `--accessToken X`,
/// `--api-key=X`, `API_KEY=X`, `PGPASSWORD=X`, `-p X` (not a port),
/// `-u user:X`, header values (`-H "X-Api-Key: X"`,
/// `--header=Authorization: Bearer X`), URL passwords and credential
/// query parameters (`?sig=X`), and token-shaped arguments.
pub fn mask_command(args: &[String]) -> Vec<String> {
    let mut masked = Vec::with_capacity(args.len());
    let mut next = Next::Plain;
    // After `cargo`, `uv`, `npm`, `docker`, … `-p` names a package, a
    // project or a port, never a password: `cargo run -p my-server` must
    // still run when a recording is verified.
    let mut p_is_not_a_password = false;
    for arg in args {
        let out = match std::mem::replace(&mut next, Next::Plain) {
            Next::Secret => MASK.to_owned(),
            Next::PasswordOrPort if p_is_not_a_password => arg.clone(),
            Next::PasswordOrPort => password_or_port(arg),
            Next::UserPassword => user_password(arg),
            Next::Plain => {
                p_is_not_a_password |= is_package_tool(arg);
                let (out, then) = mask_arg(arg, p_is_not_a_password);
                next = then;
                out
            }
        };
        masked.push(out);
    }
    masked
}

/// Programs whose `-p` is a package, project, profile or port.
fn is_package_tool(arg: &str) -> bool {
    let program = arg.rsplit('/').next().unwrap_or(arg);
    matches!(
        program,
        "cargo"
            | "uv"
            | "uvx"
            | "pip"
            | "pip3"
            | "pipx"
            | "npm"
            | "npx"
            | "pnpm"
            | "yarn"
            | "bun"
            | "bunx"
            | "docker"
            | "podman"
            | "nerdctl"
            | "kubectl"
            | "ssh"
            | "scp"
            | "sftp"
    )
}

/// One argument read on its own, and what it says about the next.
fn mask_arg(arg: &str, p_is_not_a_password: bool) -> (String, Next) {
    let is_flag = arg.starts_with('-') && arg.len() > 1;
    if is_flag && !arg.contains('=') {
        if arg == "-p" {
            return (arg.to_owned(), Next::PasswordOrPort);
        }
        if let Some(attached) = arg.strip_prefix("-p")
            && !p_is_not_a_password
            && !attached.starts_with('-')
            && looks_random(attached)
        {
            // mysql's `-pSECRET`.
            return (format!("-p{}", password_or_port(attached)), Next::Plain);
        }
        if matches!(arg, "-u" | "--user" | "--proxy-user") {
            return (arg.to_owned(), Next::UserPassword);
        }
        if name_looks_secret(arg) {
            return (arg.to_owned(), Next::Secret);
        }
        return (arg.to_owned(), Next::Plain);
    }
    if is_flag && let Some((name, value)) = arg.split_once('=') {
        let value = match name {
            _ if name_looks_secret(name) => MASK.to_owned(),
            "-p" if p_is_not_a_password => value.to_owned(),
            "-p" => password_or_port(value),
            "-u" | "--user" | "--proxy-user" => user_password(value),
            _ => mask_text(value),
        };
        return (format!("{name}={value}"), Next::Plain);
    }
    (mask_text(arg), Next::Plain)
}

/// A value read on its own: `NAME=X` and `Name: X` with a secret-looking
/// name, URLs, token shapes.
fn mask_text(text: &str) -> String {
    if let Some((name, separator)) = assignment(text)
        && header_looks_secret(name)
    {
        return format!("{name}{separator}{MASK}");
    }
    mask_tokens(&url::mask_url(text))
}

/// `NAME=…`, `Name: …`: the name and the separator (with its spaces), when
/// the name is a word a variable or header could have.
fn assignment(text: &str) -> Option<(&str, &str)> {
    let end = text.find(['=', ':'])?;
    let name = &text[..end];
    let valid = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_-.".contains(&b));
    if !valid || text[end..].starts_with("://") {
        return None;
    }
    let spaces = text[end + 1..].bytes().take_while(|&b| b == b' ').count();
    let value_start = end + 1 + spaces;
    (value_start < text.len()).then(|| (name, &text[end..value_start]))
}

/// A header or variable name whose value is a credential.
fn header_looks_secret(name: &str) -> bool {
    name_looks_secret(name) || name.eq_ignore_ascii_case("cookie")
}

/// `-p`'s value: kept when it is a port (`8080`, `127.0.0.1:8080:80`,
/// `8000-8010/tcp`), else masked.
fn password_or_port(value: &str) -> String {
    let ports = value
        .strip_suffix("/tcp")
        .or_else(|| value.strip_suffix("/udp"))
        .unwrap_or(value);
    let is_port = |part: &str| {
        let numbers: Vec<&str> = part.split(['-', '.']).collect();
        numbers
            .iter()
            .all(|n| (1..=5).contains(&n.len()) && n.bytes().all(|b| b.is_ascii_digit()))
    };
    if !ports.is_empty() && ports.split(':').all(is_port) {
        value.to_owned()
    } else {
        MASK.to_owned()
    }
}

/// `user:password` → `user:[REDACTED]`.
fn user_password(value: &str) -> String {
    match value.split_once(':') {
        Some((user, password)) if !password.is_empty() => format!("{user}:{MASK}"),
        _ => mask_text(value),
    }
}

/// Digits or mixed case: a value, not a word such as `-pthread`.
fn looks_random(text: &str) -> bool {
    let has = |f: fn(&u8) -> bool| text.as_bytes().iter().any(f);
    !text.is_empty()
        && (has(u8::is_ascii_digit)
            || has(u8::is_ascii_uppercase)
            || has(|b| !b.is_ascii_alphanumeric()))
}

/// Replaces well-known token shapes (the same ones a [`super::Redactor`]
/// knows) wherever they appear in `text`, with the plain [`MASK`].
pub fn mask_tokens(text: &str) -> String {
    // Most commands and URLs hold no token: the pre-scan says so without
    // compiling the shapes' regex, which start-up would otherwise pay for.
    if !super::prescan::prescan(text.as_bytes()) {
        return text.to_owned();
    }
    let mut raw = Vec::new();
    shapes::find(text, 0, &mut raw);
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for hit in merge(raw) {
        out.push_str(&text[last..hit.range.start]);
        out.push_str(MASK);
        last = hit.range.end;
    }
    out.push_str(&text[last..]);
    out
}

/// A copy of `value` with token shapes masked in every string (keys are
/// left alone: they are protocol field names).
pub fn mask_value(value: &Value) -> Value {
    match value {
        Value::String(s) => Value::String(mask_tokens(s)),
        Value::Array(items) => Value::Array(items.iter().map(mask_value).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), mask_value(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

impl Redactor {
    /// [`mask_command`], then in every argument what this redactor finds
    /// (the environment's secrets, the rules, token shapes), with the plain
    /// [`MASK`]: a secret passed as `"$MY_SERVICE_TOKEN"` is masked too.
    pub fn mask_command(&self, args: &[String]) -> Vec<String> {
        mask_command(args)
            .iter()
            .map(|arg| self.mask_plain(arg))
            .collect()
    }

    /// `text` with every secret this redactor finds replaced by the plain
    /// [`MASK`] (for a URL or a path shown next to a command).
    pub fn mask_plain(&self, text: &str) -> String {
        let mut current = text.to_owned();
        for _ in 0..super::MAX_PASSES {
            let hits = self.find(&current);
            if hits.is_empty() {
                break;
            }
            let mut out = String::with_capacity(current.len());
            let mut last = 0;
            for hit in hits {
                out.push_str(&current[last..hit.range.start]);
                out.push_str(MASK);
                last = hit.range.end;
            }
            out.push_str(&current[last..]);
            current = out;
        }
        current
    }
}
