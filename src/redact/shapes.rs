//! Well-known token shapes: the widely published formats of API keys and
//! tokens (OpenAI, Anthropic, GitHub, GitLab, Slack, Stripe, Google, AWS,
//! npm, Hugging Face, SendGrid, Shopify, Twilio, DigitalOcean, Databricks,
//! Azure, …), JWTs, PEM private keys, passwords in URLs, and the
//! credentials of `Bearer` and `Basic` authorization. They are recognised
//! without any configuration, so even a redactor built with no environment
//! keeps the common leaks out. The pre-scan's literals for them are in
//! [`super::prescan`].

use std::ops::Range;
use std::sync::LazyLock;

use base64::Engine as _;
use regex::Regex;

use super::RawHit;

/// Priority of a specific shape (`ghp_…`) among overlapping hits.
const SPECIFIC: u8 = 2;
/// Priority of a credential found by its context (`Bearer …`, a URL's
/// password): a specific shape inside it names it better.
const SCHEME: u8 = 3;

/// What a candidate must also satisfy, beyond its regex (which has no
/// look-around).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Check {
    /// Nothing more.
    None,
    /// No token character right after it (a fixed-length shape).
    End,
    /// Digits or mixed case: `sk-learn-compatible` is a word.
    Random,
    /// A bearer credential: random, or long and not hyphenated words.
    Bearer,
    /// Base64 of `user:password`.
    Credentials,
}

/// One token shape.
#[derive(Debug)]
pub(super) struct Shape {
    /// The placeholder name.
    pub name: &'static str,
    /// The regex. A group named `secret` (the first group, if any) is what
    /// is masked; else the whole match.
    pub regex: &'static str,
    check: Check,
    priority: u8,
    /// Whether a token character right before the match rules it out.
    boundary: bool,
}

const fn shape(name: &'static str, regex: &'static str, check: Check) -> Shape {
    Shape {
        name,
        regex,
        check,
        priority: SPECIFIC,
        boundary: true,
    }
}

/// Every shape, most specific first (the regex alternation tries them in
/// this order at each position).
pub(super) const SHAPES: [Shape; 36] = [
    shape("ANTHROPIC_KEY", r"sk-ant-[A-Za-z0-9_-]{20,}", Check::Random),
    shape("OPENAI_KEY", r"sk-[A-Za-z0-9_-]{20,}", Check::Random),
    shape(
        "STRIPE_KEY",
        r"[sr]k_(?:live|test)_[A-Za-z0-9]{10,}",
        Check::None,
    ),
    shape(
        "STRIPE_WEBHOOK_SECRET",
        r"whsec_[A-Za-z0-9+/=]{24,}",
        Check::None,
    ),
    shape("GITHUB_TOKEN", r"gh[pousr]_[A-Za-z0-9_-]{20,}", Check::None),
    shape("GITHUB_PAT", r"github_pat_[A-Za-z0-9_-]{22,}", Check::None),
    shape(
        "GITLAB_TOKEN",
        r"gl(?:pat|rt)-[A-Za-z0-9_-]{20,}",
        Check::None,
    ),
    shape(
        "SLACK_TOKEN",
        r"(?:xox[abcprse]|xoxe\.xox[bp]|xapp)-[A-Za-z0-9_-]{10,}",
        Check::None,
    ),
    Shape {
        boundary: false,
        ..shape(
            "SLACK_WEBHOOK",
            r"hooks\.slack\.com/services/T[A-Z0-9]+/B[A-Z0-9]+/(?P<secret>[A-Za-z0-9]{20,})",
            Check::None,
        )
    },
    shape(
        "AWS_ACCESS_KEY_ID",
        r"(?:AKIA|ASIA)[A-Z0-9]{16}",
        Check::End,
    ),
    shape(
        "MAPBOX_TOKEN",
        r"sk\.eyJ[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{20,}",
        Check::None,
    ),
    shape(
        "JWT",
        r"eyJ[A-Za-z0-9_-]{7,}\.[A-Za-z0-9_-]{2,}\.[A-Za-z0-9_-]*",
        Check::None,
    ),
    shape("GOOGLE_API_KEY", r"AIza[0-9A-Za-z_-]{35}", Check::End),
    shape(
        "GOOGLE_CLIENT_SECRET",
        r"GOCSPX-[A-Za-z0-9_-]{28}",
        Check::End,
    ),
    shape(
        "GOOGLE_OAUTH_TOKEN",
        r"ya29\.[0-9A-Za-z_-]{20,}",
        Check::None,
    ),
    shape("NPM_TOKEN", r"npm_[A-Za-z0-9]{36}", Check::End),
    shape("HUGGINGFACE_TOKEN", r"hf_[A-Za-z0-9]{30,}", Check::Random),
    Shape {
        boundary: false,
        ..shape(
            "PRIVATE_KEY",
            concat!(
                r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----",
                r"(?:(?s:.*?)-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----",
                // Cut off: the key's lines, raw or JSON-escaped.
                r"|[A-Za-z0-9+/=\s\\:,.-]*)",
            ),
            Check::None,
        )
    },
    shape(
        "SENDGRID_KEY",
        r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}",
        Check::End,
    ),
    shape(
        "SHOPIFY_TOKEN",
        r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}",
        Check::End,
    ),
    shape("TWILIO_API_KEY", r"SK[0-9a-f]{32}", Check::End),
    shape("DIGITALOCEAN_TOKEN", r"do[opr]_v1_[a-f0-9]{64}", Check::End),
    shape(
        "DATABRICKS_TOKEN",
        r"dapi[a-f0-9]{32}(?:-[0-9]+)?",
        Check::End,
    ),
    shape(
        "AZURE_KEY",
        r"(?:AccountKey|SharedAccessKey)=(?P<secret>[A-Za-z0-9+/]{20,}={0,2})",
        Check::None,
    ),
    shape(
        "PYPI_TOKEN",
        r"pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}",
        Check::None,
    ),
    shape("GROQ_KEY", r"gsk_[A-Za-z0-9]{48,}", Check::None),
    shape("XAI_KEY", r"xai-[A-Za-z0-9]{70,}", Check::None),
    shape("REPLICATE_TOKEN", r"r8_[A-Za-z0-9]{37,}", Check::None),
    shape("PERPLEXITY_KEY", r"pplx-[A-Za-z0-9]{40,}", Check::None),
    shape("VAULT_TOKEN", r"hvs\.[A-Za-z0-9_-]{24,}", Check::None),
    shape("NOTION_TOKEN", r"ntn_[A-Za-z0-9]{40,}", Check::None),
    shape("LINEAR_KEY", r"lin_api_[A-Za-z0-9]{40,}", Check::None),
    Shape {
        priority: SCHEME,
        boundary: false,
        ..shape(
            "URL_PASSWORD",
            r#"[A-Za-z][A-Za-z0-9+.-]*:(?://|\\/\\/)[^\s/?#@:"'<>\\]*:(?P<secret>[^\s/?#"'<>\\]+)@"#,
            Check::None,
        )
    },
    Shape {
        priority: SCHEME,
        ..shape(
            "BEARER_TOKEN",
            r"(?:Bearer|bearer|BEARER)(?:[ \t]+|%20|\+|:[ \t]*)(?P<secret>[A-Za-z0-9._~+/%-]{16,}=*)",
            Check::Bearer,
        )
    },
    Shape {
        priority: SCHEME,
        ..shape(
            "BASIC_CREDENTIALS",
            r"(?:Basic|basic|BASIC)(?:[ \t]+|%20|\+|:[ \t]*)(?P<secret>[A-Za-z0-9+/]{8,}(?:%3D|=){0,2})",
            Check::Credentials,
        )
    },
    // An Azure SAS URL's signature (`?sv=…&sig=…`).
    Shape {
        boundary: false,
        ..shape(
            "AZURE_SAS_SIGNATURE",
            r"[?&]sig=(?P<secret>[A-Za-z0-9%+/=]{40,})",
            Check::None,
        )
    },
];

/// The shapes as one regex, with the group of each shape and of its
/// `secret`.
struct Combined {
    regex: Regex,
    /// For each shape: its group, and its `secret` group if it has one.
    groups: Vec<(usize, Option<usize>)>,
}

/// One regex for every shape; which group matched says which shape. Each
/// hit is then checked by [`accept`].
static COMBINED: LazyLock<Combined> = LazyLock::new(|| {
    let mut alternatives = Vec::with_capacity(SHAPES.len());
    let mut groups = Vec::with_capacity(SHAPES.len());
    let mut next = 1;
    for shape in &SHAPES {
        let alone = Regex::new(shape.regex).expect("each token shape is a valid regex");
        let secret = alone.capture_names().nth(1).flatten() == Some("secret");
        groups.push((next, secret.then_some(next + 1)));
        next += alone.captures_len();
        alternatives.push(format!("({})", shape.regex.replace("(?P<secret>", "(")));
    }
    Combined {
        regex: Regex::new(&alternatives.join("|")).expect("the token shapes combine"),
        groups,
    }
});

fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

/// Whether `start` is where a word may begin: not right after a token
/// character, unless that ends a percent escape (`%20ghp_…`).
pub(super) fn starts_word(bytes: &[u8], start: usize) -> bool {
    if start == 0 || !is_token_byte(bytes[start - 1]) {
        return true;
    }
    start >= 3
        && bytes[start - 3] == b'%'
        && bytes[start - 2].is_ascii_hexdigit()
        && bytes[start - 1].is_ascii_hexdigit()
}

/// Adds every token shape in `text` (found at `offset` of the whole) to
/// `out`.
pub(super) fn find(text: &str, offset: usize, out: &mut Vec<RawHit<'static>>) {
    let combined = &*COMBINED;
    let mut at = 0;
    while at < text.len() {
        let Some(caps) = combined.regex.captures_at(text, at) else {
            break;
        };
        let whole = caps.get(0).expect("group 0 always matches");
        let found = combined
            .groups
            .iter()
            .zip(&SHAPES)
            .find_map(|(&(group, secret), shape)| {
                caps.get(group)?;
                let masked = secret
                    .and_then(|s| caps.get(s))
                    .map_or(whole.range(), |m| m.range());
                Some((shape, masked))
            });
        match found.filter(|(shape, masked)| accept(text, shape, whole.range(), masked)) {
            Some((shape, masked)) => {
                out.push(RawHit {
                    range: offset + masked.start..offset + masked.end,
                    priority: shape.priority,
                    name: shape.name,
                });
                // What the match holds around its secret (a URL's user), and
                // a specific shape inside a credential, which names it
                // better (`Bearer ghp_…`).
                find(
                    &text[whole.start()..masked.start],
                    offset + whole.start(),
                    out,
                );
                find(&text[masked.end..whole.end()], offset + masked.end, out);
                if shape.priority == SCHEME {
                    find(&text[masked.clone()], offset + masked.start, out);
                }
                at = whole.end();
            }
            None => {
                // Retry just after this start: a shape may begin inside a
                // rejected candidate (`xBearer sk-…`).
                at = whole.start()
                    + text[whole.start()..]
                        .chars()
                        .next()
                        .map_or(1, char::len_utf8);
            }
        }
    }
}

/// Checks a candidate: word boundary before it, and what the regex cannot
/// say (randomness, decodable credentials, the end of a fixed length).
fn accept(text: &str, shape: &Shape, whole: Range<usize>, masked: &Range<usize>) -> bool {
    let bytes = text.as_bytes();
    if shape.boundary && !starts_word(bytes, whole.start) {
        return false;
    }
    let secret = &text[masked.clone()];
    match shape.check {
        Check::None => true,
        Check::End => !bytes.get(whole.end).is_some_and(|&b| is_token_byte(b)),
        Check::Random => looks_random(secret),
        Check::Bearer => looks_random(secret) || (secret.len() >= 20 && !secret.contains('-')),
        Check::Credentials => decodes_to_credentials(&secret.replace("%3D", "=")),
    }
}

/// Random tokens have digits or mixed case; words (`sk-learn-compatible`,
/// `Bearer authentication-required`) do not.
fn looks_random(token: &str) -> bool {
    let has = |f: fn(&u8) -> bool| token.as_bytes().iter().any(f);
    has(u8::is_ascii_digit) || (has(u8::is_ascii_uppercase) && has(u8::is_ascii_lowercase))
}

/// `Basic` credentials are base64 of `user:password`; prose such as
/// `Basic authentication` does not decode to that.
fn decodes_to_credentials(b64: &str) -> bool {
    let engine = base64::engine::GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        base64::engine::GeneralPurposeConfig::new()
            .with_decode_padding_mode(base64::engine::DecodePaddingMode::Indifferent)
            .with_decode_allow_trailing_bits(true),
    );
    let Ok(bytes) = engine.decode(b64) else {
        return false;
    };
    let Ok(text) = String::from_utf8(bytes) else {
        return false;
    };
    text.contains(':') && !text.chars().any(char::is_control)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shape_compiles_with_its_secret_group_first() {
        for shape in &SHAPES {
            let regex = Regex::new(shape.regex).unwrap();
            let names: Vec<_> = regex.capture_names().skip(1).collect();
            assert!(
                names.iter().all(|n| n.is_none_or(|n| n == "secret")),
                "{}",
                shape.name
            );
            if names.contains(&Some("secret")) {
                assert_eq!(names[0], Some("secret"), "{}", shape.name);
            }
        }
        assert_eq!(COMBINED.groups.len(), SHAPES.len());
    }
}
