//! Credentials in URLs written where people read them (a recorded server
//! command, `transport.url`): the password of `scheme://user:pass@host`,
//! and query or fragment parameters named like credentials (`?sig=…`,
//! `?code=…`, `?access_token=…`, `#id_token=…`). They get the plain
//! [`MASK`], like the rest of a command.

use super::{MASK, query_param_looks_secret};

/// Where an authority ends.
const AUTHORITY_END: [char; 4] = ['/', '?', '#', '\\'];

/// `text` with, in every URL in it, the password and the values of
/// credential-looking query and fragment parameters masked.
pub fn mask_url(text: &str) -> String {
    if !text.contains("://") {
        return text.to_owned();
    }
    mask_parameters(&mask_passwords(text))
}

/// `scheme://user:password@host` → `scheme://user:[REDACTED]@host`, for
/// every `://` in `text`.
fn mask_passwords(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(found) = rest.find("://") {
        let authority_start = found + 3;
        out.push_str(&rest[..authority_start]);
        rest = &rest[authority_start..];
        let end = rest
            .find(|c: char| AUTHORITY_END.contains(&c) || c.is_whitespace())
            .unwrap_or(rest.len());
        let authority = &rest[..end];
        match authority.rfind('@').and_then(|at| {
            let colon = authority[..at].find(':')?;
            Some((colon, at))
        }) {
            Some((colon, at)) if at > colon + 1 => {
                out.push_str(&authority[..=colon]);
                out.push_str(MASK);
                out.push_str(&authority[at..]);
            }
            _ => out.push_str(authority),
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// The values of credential-looking parameters after `?` or `#` masked;
/// a query ends at whitespace.
fn mask_parameters(text: &str) -> String {
    let Some(start) = text.find(['?', '#']) else {
        return text.to_owned();
    };
    let mut out = String::with_capacity(text.len());
    out.push_str(&text[..start]);
    let mut rest = &text[start..];
    while let Some(first) = rest.chars().next() {
        let len = rest.find(|c: char| c.is_whitespace()).unwrap_or(rest.len());
        let (query, after) = rest.split_at(len);
        // `?` or `#`, then the parameters.
        out.push(first);
        let params = &query[first.len_utf8()..];
        let mut fragment = None;
        let params = match params.find('#') {
            Some(hash) if first == '?' => {
                fragment = Some(&params[hash..]);
                &params[..hash]
            }
            _ => params,
        };
        out.push_str(&mask_pairs(params));
        if let Some(fragment) = fragment {
            out.push('#');
            out.push_str(&mask_pairs(&fragment[1..]));
        }
        match after.find(['?', '#']) {
            Some(next) => {
                out.push_str(&after[..next]);
                rest = &after[next..];
            }
            None => {
                out.push_str(after);
                rest = "";
            }
        }
    }
    out
}

/// `a=1&sig=xyz` → `a=1&sig=[REDACTED]`.
fn mask_pairs(params: &str) -> String {
    let pairs: Vec<String> = params
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some((name, value)) if !value.is_empty() && query_param_looks_secret(name) => {
                format!("{name}={MASK}")
            }
            _ => pair.to_owned(),
        })
        .collect();
    pairs.join("&")
}
