use std::borrow::Cow;

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use proptest::prelude::*;
use serde_json::{Value, json};

use super::*;

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| s.to_string()).collect()
}

fn redactor(env: &[(&str, &str)], extra: &[&str], rules: &[&str]) -> Redactor {
    Redactor::new(&RedactConfig {
        defaults: true,
        env: env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        extra_env: strings(extra),
        rules: rules.iter().map(|r| r.parse().unwrap()).collect(),
    })
    .unwrap()
}

fn text(r: &Redactor, input: &str) -> String {
    r.redact_text(input).into_owned()
}

// The original helpers keep printing the plain mask.

#[test]
fn masks_flag_values_and_assignments() {
    let args = strings(&[
        "server",
        "--token",
        "abc",
        "--api-key=xyz",
        "GITHUB_TOKEN=ghp",
        "--port",
        "80",
    ]);
    assert_eq!(
        mask_command(&args),
        strings(&[
            "server",
            "--token",
            MASK,
            "--api-key=[REDACTED]",
            "GITHUB_TOKEN=[REDACTED]",
            "--port",
            "80"
        ])
    );
}

#[test]
fn masks_url_passwords_and_token_shapes() {
    let args = strings(&[
        "https://me:hunter2@example.com/x",
        "ghp_0123456789abcdefghij",
        "x-sk-notatoken",
    ]);
    assert_eq!(
        mask_command(&args),
        strings(&[
            "https://me:[REDACTED]@example.com/x",
            MASK,
            "x-sk-notatoken"
        ])
    );
    assert_eq!(
        mask_tokens("Bearer eyJhbGciOi.eyJzdWIiOi.sig_nature"),
        "Bearer [REDACTED]"
    );
}

#[test]
fn leaves_ordinary_arguments_alone() {
    let args = strings(&["node", "dist/index.js", "stdio", "--max-tokens", "5"]);
    assert_eq!(mask_command(&args), args);
}

#[test]
fn secret_names_are_words_humps_and_infixes() {
    // Issue 12, item 8: names *containing* PASSWORD, and `_PWD`.
    for name in [
        "GITHUB_TOKEN",
        "PGPASSWORD",
        "MYSQL_PWD",
        "DB_PASSWD",
        "PIN_SECRET",
        "CLIENTSECRET",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "XAPIKEY",
        "NPMTOKEN",
        "GH_PAT",
        "SSH_PASSPHRASE",
        // Issue 12, item 7: camelCase flags and keys.
        "--accessToken",
        "--apiToken",
        "--apiKey",
        "--clientSecret",
        "X-Api-Key",
        "api_key",
        "Authorization",
        "Proxy-Authorization",
    ] {
        assert!(name_looks_secret(name), "{name}");
    }
    for name in [
        "PWD",
        "OLDPWD",
        "MAX_TOKENS",
        "maxTokens",
        "--max-tokens",
        "progressToken",
        "progress_token",
        "nextToken",
        "pageToken",
        "nextCursor",
        "KEYBOARD",
        "MONKEY",
        "publicKey",
        "PRIMARY_KEY",
        "PASSTHROUGH",
        "GIT_ASKPASS",
        "HOME",
        "--port",
    ] {
        assert!(!name_looks_secret(name), "{name}");
    }
    // URL parameters also carry signatures and codes (item 10).
    for name in [
        "sig",
        "code",
        "X-Amz-Signature",
        "X-Goog-Credential",
        "access_token",
        "id_token",
    ] {
        assert!(query_param_looks_secret(name), "{name}");
    }
    for name in ["sv", "se", "page", "cursor", "state", "X-Amz-Date"] {
        assert!(!query_param_looks_secret(name), "{name}");
    }
}

#[test]
fn p_after_package_tools_is_kept() {
    // `cargo run -p my-server` must run again when a recording is verified.
    for command in [
        &["cargo", "run", "-q", "-p", "my-server"][..],
        &["/usr/bin/uv", "run", "-p", "3.12", "server.py"],
        &["npx", "-p", "@scope/pkg", "server"],
        &["cargo", "run", "-pmy-server"],
    ] {
        let args = strings(command);
        assert_eq!(mask_command(&args), args, "{command:?}");
    }
    assert_eq!(
        mask_command(&strings(&["mysql", "-p", "hunter2"])),
        strings(&["mysql", "-p", MASK])
    );
}

#[test]
fn commands_lose_secrets_by_flag_header_and_assignment() {
    // Issue 12, item 7.
    let args = strings(&[
        "server",
        "--accessToken",
        "tok1",
        "--apiToken=tok2",
        "-p",
        "hunter2",
        "--header=X-Api-Key: key3",
        "-H",
        "Authorization: Bearer abc",
        "--header",
        "Cookie: session=abc",
        "PGPASSWORD=pw4",
        "MYSQL_PWD=pw5",
        "-u",
        "me:pw6",
        "--user=me:pw7",
        "-pS3cret8",
        "--env=API_KEY=key9",
        "https://h/mcp?sig=sig10&sv=1",
    ]);
    assert_eq!(
        mask_command(&args),
        strings(&[
            "server",
            "--accessToken",
            MASK,
            "--apiToken=[REDACTED]",
            "-p",
            MASK,
            "--header=X-Api-Key: [REDACTED]",
            "-H",
            "Authorization: [REDACTED]",
            "--header",
            "Cookie: [REDACTED]",
            "PGPASSWORD=[REDACTED]",
            "MYSQL_PWD=[REDACTED]",
            "-u",
            "me:[REDACTED]",
            "--user=me:[REDACTED]",
            "-p[REDACTED]",
            "--env=API_KEY=[REDACTED]",
            "https://h/mcp?sig=[REDACTED]&sv=1",
        ])
    );
    // Ports, words and ordinary flags stay.
    let args = strings(&[
        "docker",
        "run",
        "-p",
        "8080:80",
        "-p",
        "127.0.0.1:9000:9000/tcp",
        "-pthread",
        "-p5432",
        "--max-tokens",
        "5",
        "--progressToken",
        "abc",
        "http://localhost:3000/mcp",
        "time=12:30",
    ]);
    assert_eq!(mask_command(&args), args);
}

#[test]
fn commands_lose_the_environment_secrets() {
    // Issue 12, item 7: `server "$MY_SERVICE_TOKEN"`.
    let r = env_redactor();
    let args = strings(&[
        "server",
        SECRET,
        &format!("--opt={SECRET}"),
        "ghp_0123456789abcdefghijABCDEFGHIJ012345",
        "/home/someone",
    ]);
    assert_eq!(
        r.mask_command(&args),
        strings(&["server", MASK, "--opt=[REDACTED]", MASK, "/home/someone"])
    );
    assert_eq!(
        r.mask_plain(&format!("http://h/x?q={}", url_forms(SECRET)[1])),
        "http://h/x?q=[REDACTED]"
    );
}

#[test]
fn mask_value_masks_strings_not_keys() {
    let value =
        json!({"sk-0123456789abcdefgh1": ["ghp_0123456789abcdefghij", 3], "maxTokens": "fine"});
    assert_eq!(
        mask_value(&value),
        json!({"sk-0123456789abcdefgh1": ["[REDACTED]", 3], "maxTokens": "fine"})
    );
}

// Placeholders.

#[test]
fn placeholders_are_recognised() {
    assert_eq!(placeholder("GITHUB_TOKEN"), "[REDACTED:GITHUB_TOKEN]");
    assert!(is_placeholder("a [REDACTED:GITHUB_TOKEN] b"));
    assert!(is_placeholder(MASK));
    assert!(is_placeholder("[REDACTED[REDACTED:X1]"));
    assert!(!is_placeholder("[REDACTED:]"));
    assert!(!is_placeholder("[REDACTED:lower]"));
    assert!(!is_placeholder("[REDACTED"));
    assert!(!is_placeholder("REDACTED"));
    let r = Redactor::defaults();
    assert!(r.find("[REDACTED:GITHUB_TOKEN] [REDACTED]").is_empty());
}

// Token shapes.

const SHAPES: [(&str, &str); 53] = [
    ("sk-proj-abc123DEF456ghi789JKL012mno345", "OPENAI_KEY"),
    ("sk-0123456789abcdefghijABCDEFGHIJ", "OPENAI_KEY"),
    ("sk-ant-api03-abcdefGHIJKL0123456789_xyz", "ANTHROPIC_KEY"),
    ("ghp_0123456789abcdefghijABCDEFGHIJ012345", "GITHUB_TOKEN"),
    ("gho_0123456789abcdefghijABCDEFGHIJ012345", "GITHUB_TOKEN"),
    ("ghu_0123456789abcdefghijABCDEFGHIJ012345", "GITHUB_TOKEN"),
    ("ghs_0123456789abcdefghijABCDEFGHIJ012345", "GITHUB_TOKEN"),
    ("ghr_0123456789abcdefghijABCDEFGHIJ012345", "GITHUB_TOKEN"),
    (
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
        "GITHUB_PAT",
    ),
    (
        "xoxb-123456789012-1234567890123-AbCdEfGhIjKl",
        "SLACK_TOKEN",
    ),
    ("xoxp-123456789012-abcdef", "SLACK_TOKEN"),
    ("xoxa-2-123456789012-abcdef", "SLACK_TOKEN"),
    ("xoxr-123456789012-abcdef", "SLACK_TOKEN"),
    ("xoxs-123456789012-abcdef", "SLACK_TOKEN"),
    ("AKIAIOSFODNN7EXAMPLE", "AWS_ACCESS_KEY_ID"),
    ("ASIAY34FZKBOKMUTVV7A", "AWS_ACCESS_KEY_ID"),
    (
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        "JWT",
    ),
    ("eyJhbGciOiJub25lIn0.eyJzdWIiOiIxIn0.", "JWT"),
    ("sk-live-0123456789abcdef", "OPENAI_KEY"),
    ("ghp_liveLiveLiveLiveLive0000", "GITHUB_TOKEN"),
    // Issue 12, item 9.
    ("sk_live_ErQHQwjyaxErPZDS3MoJaQNj", "STRIPE_KEY"),
    ("rk_live_Cxkv5ndK0meGR0vRzZ1fb6d0", "STRIPE_KEY"),
    ("sk_test_6QGofB8ChQBiIu4NJkS4dJkG", "STRIPE_KEY"),
    (
        "whsec_0fzMAQMEEMyIbPUf9mYQqw8x3SyRthqp",
        "STRIPE_WEBHOOK_SECRET",
    ),
    (
        "sk-ant-admin01-vxxGKZWGlby02BcHboRBcynXMgWJoleSrcBrFwMO",
        "ANTHROPIC_KEY",
    ),
    (
        "sk-svcacct-UdGDxnvsDES92Ep9kD7JxlmXVo6Ma8_r6XZvlpYaG",
        "OPENAI_KEY",
    ),
    ("glpat-cpNhxIGjb7u4YQ1rOhoY", "GITLAB_TOKEN"),
    ("glrt-HGEFOwqR8C5VkCsN3crv", "GITLAB_TOKEN"),
    (
        "xapp-1-A062NS7QBAB-1234567890123-48d476df181dd2c6bbc5",
        "SLACK_TOKEN",
    ),
    ("xoxe-1-bSTj5bZc5e6AImY7yYgTwmtr7YSRIF", "SLACK_TOKEN"),
    ("xoxe.xoxp-1-NNhnIMSRzLpeAwufRvjRfUttSlWRQO", "SLACK_TOKEN"),
    ("xoxc-123456789012-7BxlbnFNCFld", "SLACK_TOKEN"),
    ("AIzaQMvDp4ug8oa9xxr2mSBsoH6jG5SvkGDyMG1", "GOOGLE_API_KEY"),
    (
        "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",
        "GOOGLE_CLIENT_SECRET",
    ),
    (
        "ya29.a0UbuXF5xOtkiEoZIiqFcBZxsA7OMsy03Y5MujiqPc",
        "GOOGLE_OAUTH_TOKEN",
    ),
    ("npm_1QMYYyABNQqvAXyFy8z0ZlkYn1qhrH4d31P3", "NPM_TOKEN"),
    ("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", "HUGGINGFACE_TOKEN"),
    (
        "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",
        "SENDGRID_KEY",
    ),
    ("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", "SHOPIFY_TOKEN"),
    ("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", "SHOPIFY_TOKEN"),
    ("SKabb49aac1a2385f295e7927668365f9e", "TWILIO_API_KEY"),
    (
        "dop_v1_4fceecb867fabc94029c9f4da58dd141e397563cf92647c8b6463781e3f51d90",
        "DIGITALOCEAN_TOKEN",
    ),
    ("dapifcbc22ec0bd40a28979d8c219b9b2313", "DATABRICKS_TOKEN"),
    ("dapi424455b7c049eea5809dd650bb93fbdb-3", "DATABRICKS_TOKEN"),
    (
        "pypi-AgEIcHlwaS5vcmcucKtI3HNJ5atN3Jui71d6up7IQYT5n4hf99eNlVB0RvrXcBo6xuvdO94uQSE",
        "PYPI_TOKEN",
    ),
    (
        "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",
        "GROQ_KEY",
    ),
    (
        "xai-HfBPz6mk926KPlPKjfISkUuOLQkcoEU2FV4ik6f28DMSJJoj7FY6j5rHJMpH3OqqfzkJr68I4KQbBMcC",
        "XAI_KEY",
    ),
    (
        "r8_1Hi9mOBX3JlRdR6bahUIjztJnfCP6T11I0fGl",
        "REPLICATE_TOKEN",
    ),
    (
        "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",
        "PERPLEXITY_KEY",
    ),
    (
        "hvs.roSu48qXXEEvahfzakoC7FRI326Zz4SWPySef449kMCkSV20CtJt9Upda3muFzJuWTl6iZeAifNvyauDrwetvvbgvB",
        "VAULT_TOKEN",
    ),
    (
        "ntn_prmdAin7XTN0aV2osgdYRPUTjbYxI2fxnl9BNhf2f7WJw1",
        "NOTION_TOKEN",
    ),
    (
        "lin_api_EliOlUFvBglVjtCWh6dbEddGUpXuTa8tkIAOA3ev",
        "LINEAR_KEY",
    ),
    (
        "sk.eyJ1IjoiZXhhbXBsZSIsImEiOiJjbGV4YW1wbGUifQ.3hcF2Rg4dE5P9BX0LtPHEF",
        "MAPBOX_TOKEN",
    ),
];

#[test]
fn every_shape_is_masked_with_its_name() {
    let r = Redactor::defaults();
    for (token, name) in SHAPES {
        for (before, after) in [
            ("", ""),
            ("key ", " end"),
            ("\"", "\""),
            ("(", ")"),
            ("=", ","),
        ] {
            let input = format!("{before}{token}{after}");
            assert_eq!(
                text(&r, &input),
                format!("{before}[REDACTED:{name}]{after}"),
                "{input}"
            );
        }
        let hits = r.find(&format!("a {token}"));
        assert_eq!(
            hits,
            [Hit {
                range: 2..2 + token.len(),
                name: name.to_owned()
            }]
        );
    }
}

#[test]
fn scheme_credentials_keep_the_scheme_word() {
    let r = Redactor::defaults();
    assert_eq!(
        text(&r, "Authorization: Bearer abcDEF123456ghiJKL789"),
        "Authorization: Bearer [REDACTED:BEARER_TOKEN]"
    );
    assert_eq!(
        text(&r, "authorization: bearer abc.DEF-123_456~ghi+JKL/789=="),
        "authorization: bearer [REDACTED:BEARER_TOKEN]"
    );
    // user:hunter2
    assert_eq!(
        text(&r, "Authorization: Basic dXNlcjpodW50ZXIy"),
        "Authorization: Basic [REDACTED:BASIC_CREDENTIALS]"
    );
    assert_eq!(
        text(&r, "Basic YWxhZGRpbjpvcGVuc2VzYW1l, ok"),
        "Basic [REDACTED:BASIC_CREDENTIALS], ok"
    );
    // A specific shape inside names it better.
    assert_eq!(
        text(&r, "Bearer eyJhbGciOi.eyJzdWIiOi.sig_nature"),
        "Bearer [REDACTED:JWT]"
    );
    assert_eq!(
        text(&r, "Bearer ghp_0123456789abcdefghijABCDEFGHIJ012345"),
        "Bearer [REDACTED:GITHUB_TOKEN]"
    );
}

#[test]
fn credentials_in_context_are_masked() {
    // Issue 12, item 9: PEM blocks, URL passwords, Bearer tokens in lower
    // case or after `%20`/`:`, Azure keys, Slack webhooks.
    let r = Redactor::defaults();
    let pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF8PbnGy\n0AHB7MhgHcTz6sE2I2yPB\n-----END RSA PRIVATE KEY-----";
    for (input, output) in [
        (format!("key: {pem} done"), "key: [REDACTED:PRIVATE_KEY] done".to_owned()),
        // In raw JSON text, the newlines are `\n`.
        (
            format!("\"{}\"", pem.replace('\n', "\\n")),
            "\"[REDACTED:PRIVATE_KEY]\"".to_owned(),
        ),
        // Cut off before its end.
        (
            "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\nQyNTUxOQAAACBz\n".to_owned(),
            "[REDACTED:PRIVATE_KEY]".to_owned(),
        ),
        (
            "-----BEGIN PGP PRIVATE KEY BLOCK-----\nlQOYBF\n-----END PGP PRIVATE KEY BLOCK-----".to_owned(),
            "[REDACTED:PRIVATE_KEY]".to_owned(),
        ),
        (
            "db postgres://user:hunter2@db:5432/x and redis://:pw0rd@cache".to_owned(),
            "db postgres://user:[REDACTED:URL_PASSWORD]@db:5432/x and redis://:[REDACTED:URL_PASSWORD]@cache".to_owned(),
        ),
        (
            "https://x-access-token:ghp_0123456789abcdefghijABCDEFGHIJ012345@github.com/o/r".to_owned(),
            "https://x-access-token:[REDACTED:GITHUB_TOKEN]@github.com/o/r".to_owned(),
        ),
        (
            "https://ghp_0123456789abcdefghijABCDEFGHIJ012345:x-oauth-basic@github.com".to_owned(),
            "https://[REDACTED:GITHUB_TOKEN]:[REDACTED:URL_PASSWORD]@github.com".to_owned(),
        ),
        (
            r"https:\/\/me:p%40ss@h\/x".to_owned(),
            r"https:\/\/me:[REDACTED:URL_PASSWORD]@h\/x".to_owned(),
        ),
        (
            "authorization: bearer abcdefghijklmnopqrstuvwx".to_owned(),
            "authorization: bearer [REDACTED:BEARER_TOKEN]".to_owned(),
        ),
        (
            "Authorization: Bearer ABCDEFGHIJKLMNOPQRSTUV".to_owned(),
            "Authorization: Bearer [REDACTED:BEARER_TOKEN]".to_owned(),
        ),
        (
            "?h=Authorization%3A%20Bearer%20abc123DEF456ghi789JKL&x=1".to_owned(),
            "?h=Authorization%3A%20Bearer%20[REDACTED:BEARER_TOKEN]&x=1".to_owned(),
        ),
        (
            "bearer:abc123DEF456ghi789JKL".to_owned(),
            "bearer:[REDACTED:BEARER_TOKEN]".to_owned(),
        ),
        (
            "Basic%20dXNlcjpodW50ZXIy".to_owned(),
            "Basic%20[REDACTED:BASIC_CREDENTIALS]".to_owned(),
        ),
        (
            "?token=x%20ghp_0123456789abcdefghijABCDEFGHIJ012345".to_owned(),
            "?token=x%20[REDACTED:GITHUB_TOKEN]".to_owned(),
        ),
        (
            "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=2F8Zqza7QvD9JjAsxcv/2C03uwS/Ow4wcnFG0K5R63iappeszhdp3X4d5XfwShzZnIJWyYAOFnuA+6yuohls3W==;EndpointSuffix=core.windows.net".to_owned(),
            "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=[REDACTED:AZURE_KEY];EndpointSuffix=core.windows.net".to_owned(),
        ),
        (
            "Endpoint=sb://x.servicebus.windows.net/;SharedAccessKeyName=root;SharedAccessKey=VpX/3hCsI95pQKaAE1qleZdJNDtfb59fSmbwJ+wr+Ve=".to_owned(),
            "Endpoint=sb://x.servicebus.windows.net/;SharedAccessKeyName=root;SharedAccessKey=[REDACTED:AZURE_KEY]".to_owned(),
        ),
        (
            "https://a.blob.core.windows.net/c/b?sv=2022-11-02&sr=b&sig=8g1DxuX26zo67YKA3WTRuhosEi71Xz0tOT4jeSWoeYm%3D".to_owned(),
            "https://a.blob.core.windows.net/c/b?sv=2022-11-02&sr=b&sig=[REDACTED:AZURE_SAS_SIGNATURE]".to_owned(),
        ),
        (
            "?sig=%2B8g1DxuX26zo67YKA3WTRuhosEi71Xz0tOT4jeSWoeYm%3D".to_owned(),
            "?sig=[REDACTED:AZURE_SAS_SIGNATURE]".to_owned(),
        ),
        (
            "whsec_ab=cdMfKQ9r8GKYqrTwjUPD8ILPZIo2".to_owned(),
            "[REDACTED:STRIPE_WEBHOOK_SECRET]".to_owned(),
        ),
        (
            "https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX".to_owned(),
            "https://hooks.slack.com/services/T00000000/B00000000/[REDACTED:SLACK_WEBHOOK]".to_owned(),
        ),
    ] {
        assert_eq!(text(&r, &input), output, "{input}");
        assert!(prescan::prescan(input.as_bytes()), "{input}");
    }
}

#[test]
fn the_prescan_never_misses_a_shape() {
    // Whatever the shapes find, the pre-scan let through.
    let r = Redactor::defaults();
    for (token, _) in SHAPES {
        for before in ["", " ", "\"", "\\n", "%20", "x", "_"] {
            let input = format!("{before}{token}");
            if !r.find_all(&input).is_empty() {
                assert!(prescan::prescan(input.as_bytes()), "{input}");
            }
        }
    }
}

#[test]
fn the_false_positive_corpus_is_untouched() {
    let r = Redactor::defaults();
    let mut image = String::new();
    let mut state: u32 = 7;
    let mut bytes = Vec::new();
    for _ in 0..3000 {
        state = state.wrapping_mul(1_103_515_245).wrapping_add(12345);
        bytes.push((state >> 16) as u8);
    }
    image.push_str(&STANDARD.encode(&bytes));
    let url_safe = URL_SAFE_NO_PAD.encode(&bytes);
    for input in [
        "123e4567-e89b-12d3-a456-426614174000",
        "a3f9c0d2e4b6a8c0a3f9c0d2e4b6a8c0a3f9c0d2e4b6a8c0a3f9c0d2e4b6a8c0",
        "commit 9fceb02d0ae598e95dc970b74767f19372d61af8",
        "AC0123456789abcdef0123456789abcdef",
        "sha512-2F8Zqza7QvD9JjAsxcv/2C03uwS/Ow4wcnFG0K5R63iappeszhdp3X4d5XfwShzZnIJWyYAOFnuA+6yuohls3W==",
        image.as_str(),
        url_safe.as_str(),
        "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
        "maxTokens",
        "progressToken",
        "eyJvZmZzZXQiOjEwMCwibGltaXQiOjUwfQ",
        "nextCursor: eyJvZmZzZXQiOjEwMCwibGltaXQiOjUwfQ==",
        "https://user@example.com/x",
        "http://localhost:8080/mcp?page=2",
        "git@github.com:org/repo.git",
        "mailto:me@example.com",
        "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkq\n-----END PUBLIC KEY-----",
        "the PRIVATE KEY format",
        "Bearer tokens-are-described-here",
        "bearer authentication",
        "hf_hub_download",
        "npm_config_cache",
        "sk_live_",
        "glpat-short",
        "AIzaShort",
        "SKU1234567",
        "task_SK0123456789abcdef0123456789abcdef",
        "dapi endpoint",
        "adapter_v1_config",
        "shpat_not-hex",
        "SG.short.x",
        "config=abc&sign=1",
        "xapp-1",
    ] {
        assert!(
            matches!(r.redact_text(input), Cow::Borrowed(_)),
            "{input} → {}",
            r.redact_text(input)
        );
    }
}

#[test]
fn near_misses_are_not_masked() {
    let r = Redactor::defaults();
    for input in [
        "x-sk-notatoken",
        "task-12345678901234567890abcd",
        "disk-0123456789abcdefghijk",
        "sk-short1",
        "sk-learn-compatible-estimators",
        "ghp_short123",
        "xghp_0123456789abcdefghij0123",
        "ghp-0123456789abcdefghij0123",
        "xoxb-short",
        "xoxz-123456789012-abcdef",
        "AKIAIOSFODNN7EXAMPL",
        "AKIAIOSFODNN7EXAMPLEX",
        "myAKIAIOSFODNN7EXAMPLE",
        "AKIAiosfodnn7example",
        "eyJhbGciOi",
        "eyJhbGciOi.x",
        "Basic authentication is supported",
        "Basic usage: run it",
        "Bearer tokens-are-described-here",
        "Bearer short1",
        "maxTokens",
        "github_pat_short",
        "the sk- prefix",
        "[REDACTED:GITHUB_TOKEN]",
    ] {
        assert!(
            matches!(r.redact_text(input), Cow::Borrowed(_)),
            "{input} → {}",
            r.redact_text(input)
        );
        assert!(r.find(input).is_empty(), "{input}");
    }
}

// Environment values.

const SECRET: &str = "Sup3r$ecret/Pa ss+wörd\"q";
const NAME: &str = "MY_SERVICE_TOKEN";
const MASKED: &str = "[REDACTED:MY_SERVICE_TOKEN]";

fn env_redactor() -> Redactor {
    redactor(
        &[
            ("PATH", "/usr/bin:/bin"),
            (NAME, SECRET),
            ("HOME", "/home/someone"),
        ],
        &[],
        &[],
    )
}

#[test]
fn the_needles_are_built_only_once_an_anchor_is_seen() {
    let r = env_redactor();
    assert!(r.inner.needles.get().is_none(), "built eagerly");
    assert_eq!(text(&r, "nothing secret here"), "nothing secret here");
    assert!(r.inner.needles.get().is_none(), "built without an anchor");
    assert!(!text(&r, &format!("key {SECRET} end")).contains(SECRET));
    assert!(r.inner.needles.get().is_some_and(Option::is_some));
}

/// HTML form encoding: what `url::form_urlencoded` sends.
const FORM: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'*')
    .remove(b'-')
    .remove(b'.')
    .remove(b'_');
/// `encodeURIComponent`.
const URI_COMPONENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~')
    .remove(b'!')
    .remove(b'*')
    .remove(b'\'')
    .remove(b'(')
    .remove(b')');

fn url_forms(secret: &str) -> Vec<String> {
    let component = utf8_percent_encode(secret, URI_COMPONENT).to_string();
    let form = utf8_percent_encode(secret, FORM)
        .to_string()
        .replace("%20", "+");
    let strict = utf8_percent_encode(secret, NON_ALPHANUMERIC).to_string();
    let lower = regex::Regex::new("%[0-9A-F]{2}")
        .unwrap()
        .replace_all(&component, |caps: &regex::Captures<'_>| {
            caps[0].to_lowercase()
        })
        .into_owned();
    vec![lower, component, form, strict]
}

/// The characters of base64 text fixed by `secret` at each alignment.
fn base64_middles(secret: &str) -> Vec<String> {
    let mut out = Vec::new();
    for engine in [&STANDARD_NO_PAD, &URL_SAFE_NO_PAD] {
        for offset in 0..3 {
            let mut input = vec![b'\0'; offset];
            input.extend_from_slice(secret.as_bytes());
            let encoded = engine.encode(&input);
            let start = (8 * offset).div_ceil(6);
            let end = 8 * (offset + secret.len()) / 6;
            if end >= start + 6 {
                out.push(encoded[start..end].to_owned());
            }
        }
    }
    out
}

fn escaped(secret: &str) -> String {
    let quoted = serde_json::to_string(secret).unwrap();
    quoted[1..quoted.len() - 1].to_owned()
}

#[test]
fn env_values_are_masked_verbatim_and_url_encoded() {
    let r = env_redactor();
    assert_eq!(text(&r, &format!("a {SECRET} b")), format!("a {MASKED} b"));
    for form in url_forms(SECRET) {
        assert_ne!(form, SECRET);
        let input = format!("https://h/x?token={form}&y=1");
        assert_eq!(
            text(&r, &input),
            format!("https://h/x?token={MASKED}&y=1"),
            "{form}"
        );
    }
    let hits = r.find(&format!("xx{SECRET}"));
    assert_eq!(
        hits,
        [Hit {
            range: 2..2 + SECRET.len(),
            name: NAME.to_owned()
        }]
    );
}

#[test]
fn env_values_are_masked_json_escaped() {
    let r = env_redactor();
    // In raw JSON text (a line that is not parsed as a whole, or a log).
    let once = escaped(SECRET);
    assert_ne!(once, SECRET);
    assert_eq!(
        text(&r, &format!("{{\"k\":\"{once}\"}}")),
        format!("{{\"k\":\"{MASKED}\"}}")
    );
    // Python's ensure_ascii and escaped slashes.
    let ascii = once.replace('ö', "\\u00f6");
    assert_eq!(text(&r, &ascii), MASKED);
    assert_eq!(text(&r, &once.replace('/', "\\/")), MASKED);
    // JSON nested in a string value, then that message as a line.
    let inner = serde_json::to_string(&json!({"token": SECRET})).unwrap();
    let message = json!({"jsonrpc": "2.0", "id": 1, "result": {"text": inner}});
    let line = serde_json::to_vec(&message).unwrap();
    let out = r.redact_line(&line);
    let out: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(out["result"]["text"], format!("{{\"token\":\"{MASKED}\"}}"));
    let mut parsed = message.clone();
    let masked = r.redact_message(&mut parsed);
    assert_eq!(parsed, out);
    assert_eq!(
        masked,
        [Masked {
            pointer: "/result/text".to_owned(),
            name: NAME.to_owned()
        }]
    );
}

#[test]
fn env_values_are_masked_in_base64_at_every_alignment() {
    let r = env_redactor();
    let middles = base64_middles(SECRET);
    assert_eq!(middles.len(), 6);
    for engine in [&STANDARD, &STANDARD_NO_PAD, &URL_SAFE, &URL_SAFE_NO_PAD] {
        for before in ["", "a", "ab", "abc", "user:"] {
            for after in ["", "z", "zz", "zzz"] {
                let blob = engine.encode(format!("{before}{SECRET}{after}"));
                let out = text(&r, &format!("data {blob} end"));
                assert!(out.contains(MASKED), "{blob} → {out}");
                for middle in &middles {
                    assert!(!out.contains(middle.as_str()), "{blob} → {out}");
                }
            }
        }
    }
    // Basic credentials lose the secret whole; the env name wins.
    let basic = STANDARD.encode(format!("user:{SECRET}"));
    assert_eq!(
        text(&r, &format!("Authorization: Basic {basic}")),
        format!("Authorization: Basic {MASKED}")
    );
}

#[test]
fn env_values_take_precedence_over_shapes() {
    let token = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
    let r = redactor(&[("GH_TOKEN", token)], &[], &[]);
    assert_eq!(text(&r, &format!("x {token}")), "x [REDACTED:GH_TOKEN]");
    assert_eq!(
        text(&r, &format!("Bearer {token}")),
        "Bearer [REDACTED:GH_TOKEN]"
    );
}

#[test]
fn short_and_trivial_values_are_not_auto_masked() {
    let r = redactor(
        &[
            ("AUTH_ENABLED", "true"),
            ("API_KEY_ID", "1234567"),
            ("SECRET_MODE", "short"),
            ("AUTH_STATE", "disabled"),
            ("GITHUB_TOKEN", ""),
            ("MAX_TOKENS", "long-enough-value-1"),
            ("KEYBOARD", "long-enough-value-2"),
            ("DB_PASSWORD", "12345678"),
        ],
        &[],
        &[],
    );
    let input = "true 1234567 short disabled long-enough-value-1 long-enough-value-2";
    assert!(matches!(r.redact_text(input), Cow::Borrowed(_)));
    assert_eq!(text(&r, "pin 12345678"), "pin [REDACTED:DB_PASSWORD]");
}

#[test]
fn env_values_are_masked_hex_encoded_and_case_changed() {
    // Issue 12, item 8.
    let key = "a3f9c0d2e4b6a8c01234";
    let r = redactor(&[("SIGNING_KEY", key), (NAME, SECRET)], &[], &[]);
    assert_eq!(
        text(&r, &format!("k={} K={}", key, key.to_uppercase())),
        "k=[REDACTED:SIGNING_KEY] K=[REDACTED:SIGNING_KEY]"
    );
    assert_eq!(
        text(
            &r,
            &format!("{} {}", hex::encode(SECRET), hex::encode_upper(SECRET))
        ),
        format!("{MASKED} {MASKED}")
    );
    assert_eq!(text(&r, &SECRET.to_ascii_uppercase()), MASKED);
    assert_eq!(text(&r, &SECRET.to_ascii_lowercase()), MASKED);
}

#[test]
fn password_variables_are_found_by_a_word_inside_the_name() {
    // Issue 12, item 8: PGPASSWORD, MYSQL_PWD.
    let r = redactor(
        &[
            ("PGPASSWORD", "pg-pass-1234"),
            ("MYSQL_PWD", "my-pass-5678"),
            ("PWD", "/home/someone/project"),
        ],
        &[],
        &[],
    );
    assert_eq!(
        text(&r, "pg-pass-1234 my-pass-5678 /home/someone/project"),
        "[REDACTED:PGPASSWORD] [REDACTED:MYSQL_PWD] /home/someone/project"
    );
}

#[test]
fn numeric_env_values_are_masked_as_json_numbers() {
    // Issue 12, item 8: `PIN_SECRET=8675309123` → `"pin": 8675309123`.
    let r = redactor(&[("PIN_SECRET", "8675309123")], &[], &[]);
    let line = br#"{"jsonrpc":"2.0","id":8675309123,"result":{"pin":8675309123,"f":8675309123.0,"other":18675309123,"n":[8675309123]}}"#;
    let out: Value = serde_json::from_slice(&r.redact_line(line)).unwrap();
    assert_eq!(
        out,
        json!({"jsonrpc": "2.0", "id": 8675309123u64, "result": {
            "pin": "[REDACTED:PIN_SECRET]", "f": "[REDACTED:PIN_SECRET]",
            "other": 18675309123u64, "n": ["[REDACTED:PIN_SECRET]"]}})
    );
    // Replay masks a live request the same way.
    let live = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"arguments": {"pin": 8675309123u64}}});
    let masked = r.masked(&live);
    assert!(matches!(masked, Cow::Owned(_)));
    assert_eq!(
        masked["params"]["arguments"]["pin"],
        "[REDACTED:PIN_SECRET]"
    );
    let n = |v: u64| serde_json::Number::from(v);
    assert_eq!(r.number_secret(&n(8675309123)), Some("PIN_SECRET"));
    assert_eq!(r.number_secret(&n(867530912)), None);
    // Without a numeric secret, numbers are not looked at.
    assert_eq!(env_redactor().number_secret(&n(8675309123)), None);
}

#[test]
fn explicitly_named_variables_are_masked_whatever_their_names() {
    let env = [
        ("PORTAL_ID", "42"),
        ("DATABASE_URL", "postgres://u:pw@db/x"),
        ("npm_config_x", "weird value"),
    ];
    let r = redactor(
        &env,
        &["PORTAL_ID", "DATABASE_URL", "npm_config_x", "UNSET"],
        &[],
    );
    assert_eq!(text(&r, "id=42;"), "id=[REDACTED:PORTAL_ID];");
    assert_eq!(
        text(&r, "url postgres://u:pw@db/x"),
        "url [REDACTED:DATABASE_URL]"
    );
    assert_eq!(
        text(&r, "postgres%3A%2F%2Fu%3Apw%40db%2Fx"),
        "[REDACTED:DATABASE_URL]"
    );
    assert_eq!(text(&r, "a weird+value"), "a [REDACTED:NPM_CONFIG_X]");
    // Without defaults: no shapes and no auto-detection, but named ones.
    let r = Redactor::new(&RedactConfig {
        defaults: false,
        env: [("PORTAL_ID", "42"), ("GITHUB_TOKEN", "long-enough-secret")]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        extra_env: strings(&["PORTAL_ID"]),
        rules: Vec::new(),
    })
    .unwrap();
    assert_eq!(
        text(
            &r,
            "42 long-enough-secret ghp_0123456789abcdefghijABCDEFGHIJ012345"
        ),
        "[REDACTED:PORTAL_ID] long-enough-secret ghp_0123456789abcdefghijABCDEFGHIJ012345"
    );
}

#[test]
fn masking_is_idempotent_next_to_placeholders() {
    // Once the env value is masked, the shape after it starts a word.
    let r = redactor(&[("MY_TOKEN", "abcdefgh1")], &[], &[]);
    let once = text(&r, "abcdefgh1sk-0123456789abcdefghijABCD");
    assert_eq!(once, "[REDACTED:MY_TOKEN][REDACTED:OPENAI_KEY]");
    assert_eq!(text(&r, &once), once);
    // A secret that is part of a placeholder's text does not loop.
    let r = redactor(&[("X_TOKEN", "REDACTED")], &["X_TOKEN"], &[]);
    assert_eq!(text(&r, "REDACTED"), "[REDACTED:X_TOKEN]");
    assert_eq!(text(&r, "[REDACTED:X_TOKEN]"), "[REDACTED:X_TOKEN]");
}

// Rules.

#[test]
fn rules_parse_from_the_command_line() {
    let rule: RedactRule = "acct-[0-9]{6}".parse().unwrap();
    assert!(matches!(&rule.target, RedactTarget::Regex(r) if r.as_str() == "acct-[0-9]{6}"));
    assert_eq!(rule.name, None);
    assert_eq!(rule.effective_name(), "PATTERN");

    let rule: RedactRule = "ACCOUNT=acct-[0-9]{6}".parse().unwrap();
    assert!(matches!(&rule.target, RedactTarget::Regex(r) if r.as_str() == "acct-[0-9]{6}"));
    assert_eq!(rule.name.as_deref(), Some("ACCOUNT"));
    assert_eq!(rule.to_string(), "ACCOUNT=acct-[0-9]{6}");

    let rule: RedactRule = "/params/arguments/token".parse().unwrap();
    assert!(
        matches!(&rule.target, RedactTarget::Selector(s) if s.as_str() == "/params/arguments/token")
    );
    assert_eq!(rule.effective_name(), "TOKEN");

    let rule: RedactRule = "API=/params/arguments/token".parse().unwrap();
    assert!(matches!(&rule.target, RedactTarget::Selector(_)));
    assert_eq!(rule.effective_name(), "API");

    // Lower-case before `=` is part of the regex.
    let rule: RedactRule = "key=[a-z]+".parse().unwrap();
    assert!(matches!(&rule.target, RedactTarget::Regex(r) if r.as_str() == "key=[a-z]+"));

    let err = "acct-[".parse::<RedactRule>().unwrap_err().to_string();
    assert!(
        err.starts_with("invalid redaction regex `acct-[`: "),
        "{err}"
    );
    let err = "X=".parse::<RedactRule>().unwrap_err().to_string();
    assert!(err.contains("invalid redaction rule `X=`"), "{err}");
    let err = "/a/***".parse::<RedactRule>().unwrap_err().to_string();
    assert!(err.contains("invalid selector `/a/***`"), "{err}");
}

#[test]
fn default_names_come_from_the_selector() {
    for (selector, name) in [
        ("/params/arguments/apiKey", "API_KEY"),
        ("/params/arguments/api_key", "API_KEY"),
        ("/params/arguments/X-Api-Key", "X_API_KEY"),
        ("/params/arguments/*", "SELECTOR"),
        ("/params/**", "SELECTOR"),
        ("/params/items/0", "SELECTOR"),
        ("/params/2fa", "SELECTOR"),
    ] {
        let rule: RedactRule = selector.parse().unwrap();
        assert_eq!(rule.effective_name(), name, "{selector}");
    }
}

#[test]
fn rules_round_trip_through_serde() {
    for value in [
        json!({"selector": "/params/arguments/api_key"}),
        json!({"regex": "acct-[0-9]{6}", "name": "ACCOUNT"}),
        json!({"selector": "/params/**/password", "name": "PW"}),
    ] {
        let rule: RedactRule = serde_json::from_value(value.clone()).unwrap();
        assert_eq!(serde_json::to_value(&rule).unwrap(), value);
        let text = rule.to_string();
        assert_eq!(text.parse::<RedactRule>().unwrap(), rule);
    }
    let rule = RedactRule::regex(RegexText::new("acct-[0-9]{6}").unwrap()).named("ACCOUNT");
    assert_eq!(
        serde_json::from_value::<RedactRule>(json!({"regex": "acct-[0-9]{6}", "name": "ACCOUNT"}))
            .unwrap(),
        rule
    );
}

#[test]
fn bad_stored_rules_say_why() {
    let err = |value: Value| {
        serde_json::from_value::<RedactRule>(value)
            .unwrap_err()
            .to_string()
    };
    let e = err(json!({"regex": "acct-["}));
    assert!(e.contains("invalid redaction regex `acct-[`"), "{e}");
    let e = err(json!({"selector": "params"}));
    assert!(e.contains("invalid selector `params`"), "{e}");
    let e = err(json!({"regex": "a", "name": "bad name"}));
    assert!(e.contains("invalid redaction name `bad name`"), "{e}");
    let e = err(json!({"regex": "a", "name": "_X"}));
    assert!(e.contains("invalid redaction name"), "{e}");
    let e = err(json!({}));
    assert!(e.contains("needs `selector` or `regex`"), "{e}");
    let e = err(json!({"regex": "a", "selector": "/a"}));
    assert!(e.contains("not both"), "{e}");
    let e = err(json!({"regex": "a", "flags": "i"}));
    assert!(e.contains("unknown field `flags`"), "{e}");
    // A name set in code is checked when the redactor is built.
    let rule = RedactRule::regex(RegexText::new("a").unwrap()).named("lower");
    let e = Redactor::new(&RedactConfig {
        rules: vec![rule],
        ..RedactConfig::default()
    })
    .unwrap_err();
    assert!(matches!(e, RedactError::InvalidName { .. }), "{e}");
}

#[test]
fn selector_rules_mask_whole_values_keeping_structure() {
    let r = redactor(
        &[],
        &[],
        &[
            "/params/arguments/apiKey",
            "/params/arguments/port",
            "CONFIG=/params/arguments/config",
        ],
    );
    let mut message = json!({
        "jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "connect", "arguments": {
            "apiKey": "short", "port": 8080, "host": "h",
            "config": {"user": "me", "retries": 3, "tags": ["a", "b"], "on": true}
        }}
    });
    let masked = r.redact_message(&mut message);
    assert_eq!(
        message["params"]["arguments"],
        json!({
            "apiKey": "[REDACTED:API_KEY]", "port": "[REDACTED:PORT]", "host": "h",
            "config": {"user": "[REDACTED:CONFIG]", "retries": 3,
                       "tags": ["[REDACTED:CONFIG]", "[REDACTED:CONFIG]"], "on": true}
        })
    );
    let pointers: Vec<&str> = masked.iter().map(|m| m.pointer.as_str()).collect();
    assert_eq!(
        pointers,
        [
            "/params/arguments/apiKey",
            "/params/arguments/port",
            "/params/arguments/config/user",
            "/params/arguments/config/tags/0",
            "/params/arguments/config/tags/1",
        ]
    );
    // Again: nothing more.
    let before = message.clone();
    assert!(r.redact_message(&mut message).is_empty());
    assert_eq!(message, before);
}

#[test]
fn regex_rules_mask_matches_or_the_secret_group() {
    let r = redactor(
        &[],
        &[],
        &["ACCOUNT=acct-[0-9]{6}", "key=(?P<secret>[a-z0-9]+)"],
    );
    assert_eq!(
        text(&r, "acct-123456 and acct-12345 key=abc9, KEY=no"),
        "[REDACTED:ACCOUNT] and acct-12345 key=[REDACTED:PATTERN], KEY=no"
    );
    let mut message = json!({"jsonrpc": "2.0", "id": 1, "result": {"content": [
        {"type": "text", "text": "your account is acct-000001"}
    ], "acct-999999": 1}});
    let masked = r.redact_message(&mut message);
    assert_eq!(
        message["result"]["content"][0]["text"],
        "your account is [REDACTED:ACCOUNT]"
    );
    assert!(message["result"].get("acct-999999").is_some());
    assert_eq!(
        masked,
        [Masked {
            pointer: "/result/content/0/text".to_owned(),
            name: "ACCOUNT".to_owned()
        }]
    );
}

#[test]
fn protocol_fields_and_keys_are_never_rewritten() {
    let token = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
    let r = redactor(&[("MY_TOKEN", "tools/call-secret")], &[], &[".+", "/**"]);
    let request = json!({
        "jsonrpc": "2.0", "id": token, "method": "tools/call-secret",
        "params": {"_meta": {"progressToken": token, "other": "x"},
                   "arguments": {"maxTokens": 5, "api_key": "k", token: "v"}}
    });
    let mut message = request.clone();
    r.redact_message(&mut message);
    for pointer in ["/jsonrpc", "/id", "/method", "/params/_meta/progressToken"] {
        assert_eq!(
            message.pointer(pointer),
            request.pointer(pointer),
            "{pointer}"
        );
    }
    let arguments = message["params"]["arguments"].as_object().unwrap();
    assert_eq!(
        arguments.keys().collect::<Vec<_>>(),
        ["maxTokens", "api_key", token]
    );
    assert_eq!(message["params"]["_meta"]["other"], "[REDACTED:SELECTOR]");

    let notification = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": token, "progressToken": token, "reason": token}});
    let mut message = notification.clone();
    r.redact_message(&mut message);
    assert_eq!(message["params"]["requestId"], token);
    assert_eq!(message["params"]["progressToken"], token);
    assert_eq!(message["method"], "notifications/cancelled");
    assert_eq!(message["params"]["reason"], "[REDACTED:SELECTOR]");

    let response = json!({"jsonrpc": "2.0", "id": 7, "result": {"resultType": token, "x": token}});
    let mut message = response.clone();
    r.redact_message(&mut message);
    assert_eq!(message["result"]["resultType"], token);
    assert_eq!(message["id"], 7);
    assert_eq!(message["jsonrpc"], "2.0");
}

#[test]
fn cursors_are_protocol_fields() {
    let r = Redactor::defaults();
    let cursor = "eyJhbGciOiJub25lIn0.eyJvZmZzZXQiOjEwfQ.";
    let mut request =
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"cursor": cursor}});
    assert!(r.redact_message(&mut request).is_empty());
    let mut response =
        json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": [], "nextCursor": cursor}});
    assert!(r.redact_message(&mut response).is_empty());
    assert_eq!(response["result"]["nextCursor"], cursor);
}

#[test]
fn documents_are_masked_everywhere_but_keys() {
    let r = redactor(&[("PIN_SECRET", "8675309123")], &[], &["/params/x"]);
    let token = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
    let mut report = json!({"id": token, "method": token, "params": {"x": "kept", "progressToken": token},
        "misses": [{"pin": 8675309123u64, token: 1}]});
    let masked = r.redact_document(&mut report);
    assert_eq!(masked.len(), 4);
    assert_eq!(
        report,
        json!({"id": "[REDACTED:GITHUB_TOKEN]", "method": "[REDACTED:GITHUB_TOKEN]",
            "params": {"x": "kept", "progressToken": "[REDACTED:GITHUB_TOKEN]"},
            "misses": [{"pin": "[REDACTED:PIN_SECRET]", token: 1}]})
    );
}

#[test]
fn batches_are_redacted_message_by_message() {
    let r = Redactor::defaults();
    let token = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
    let mut batch = json!([
        {"jsonrpc": "2.0", "id": token, "method": "ping"},
        {"jsonrpc": "2.0", "id": 2, "method": "x", "params": {"t": token}}
    ]);
    let masked = r.redact_message(&mut batch);
    assert_eq!(batch[0]["id"], token);
    assert_eq!(batch[1]["params"]["t"], "[REDACTED:GITHUB_TOKEN]");
    assert_eq!(
        masked,
        [Masked {
            pointer: "/1/params/t".to_owned(),
            name: "GITHUB_TOKEN".to_owned()
        }]
    );
}

// Lines.

#[test]
fn clean_lines_are_borrowed() {
    let r = redactor(
        &[
            ("GITHUB_TOKEN", "long-enough-secret-1"),
            ("HOME", "/home/me"),
        ],
        &[],
        &[],
    );
    let mut text = String::new();
    while text.len() < 10_000 {
        text.push_str(
            "Ask the task-runner: Basic usage of the desk-lamp API, with maxTokens and eyJ. ",
        );
    }
    let line = serde_json::to_vec(&json!({
        "jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": text}]}
    }))
    .unwrap();
    assert!(line.len() >= 10_000);
    assert!(matches!(r.redact_line(&line), Cow::Borrowed(_)));
    let mut with_newline = line.clone();
    with_newline.push(b'\n');
    assert!(matches!(r.redact_line(&with_newline), Cow::Borrowed(_)));
    assert!(matches!(r.redact_text(&text), Cow::Borrowed(_)));
    // A shape-like protocol field alone is parsed but left borrowed.
    let line = br#"{"jsonrpc":"2.0","id":"ghp_0123456789abcdefghijABCDEFGHIJ012345","result":{}}"#;
    assert!(matches!(r.redact_line(line), Cow::Borrowed(_)));
}

#[test]
fn lines_are_masked_and_keep_their_newline() {
    let r = Redactor::defaults();
    let line = b"{\"jsonrpc\": \"2.0\", \"id\": 1, \"result\": {\"t\": \"ghp_0123456789abcdefghijABCDEFGHIJ012345\"}}\r\n";
    assert_eq!(
        r.redact_line(line).as_ref(),
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"t\":\"[REDACTED:GITHUB_TOKEN]\"}}\r\n"
    );
    // Not JSON: masked as text.
    let line = b"error: token ghp_0123456789abcdefghijABCDEFGHIJ012345 refused\n";
    assert_eq!(
        r.redact_line(line).as_ref(),
        b"error: token [REDACTED:GITHUB_TOKEN] refused\n"
    );
    // An escape right before a shape is a boundary once decoded.
    let line =
        br#"{"jsonrpc":"2.0","id":1,"result":{"t":"a\nghp_0123456789abcdefghijABCDEFGHIJ012345"}}"#;
    let out: Value = serde_json::from_slice(&r.redact_line(line)).unwrap();
    assert_eq!(out["result"]["t"], "a\n[REDACTED:GITHUB_TOKEN]");
}

#[test]
fn unicode_escaped_shapes_are_masked_in_lines() {
    // Issue 12, item 6: `"\u0073k-proj-…"` and `"gh\u0070_…"` passed the
    // pre-scan and were stored decoded, in clear.
    let r = Redactor::defaults();
    for (escaped, name) in [
        (r"\u0073k-proj-abc123DEF456ghi789JKL012mno345", "OPENAI_KEY"),
        (
            r"gh\u0070_0123456789abcdefghijABCDEFGHIJ012345",
            "GITHUB_TOKEN",
        ),
        (
            r"\u0067\u0068\u0070\u005F0123456789abcdefghijABCDEFGHIJ012345",
            "GITHUB_TOKEN",
        ),
        (r"AKIA\u0049OSFODNN7EXAMPLE", "AWS_ACCESS_KEY_ID"),
    ] {
        let line = format!(r#"{{"jsonrpc":"2.0","id":1,"result":{{"t":"x {escaped} y"}}}}"#);
        let out = r.redact_line(line.as_bytes());
        let out: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(
            out["result"]["t"],
            format!("x [REDACTED:{name}] y"),
            "{line}"
        );
        // Free text (a log line, a line that is not JSON) too.
        assert_eq!(
            text(&r, &format!("sent {line}")),
            format!(r#"sent {{"jsonrpc":"2.0","id":1,"result":{{"t":"x [REDACTED:{name}] y"}}}}"#)
        );
        // And what `check` looks at.
        assert!(!r.find(&format!("t {escaped}")).is_empty(), "{escaped}");
    }
    // JSON nested in a string: escaped twice in the line.
    let inner = r#"{"k":"\u0073k-proj-abc123DEF456ghi789JKL012mno345"}"#;
    let line =
        serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": 1, "result": {"t": inner}})).unwrap();
    let out: Value = serde_json::from_slice(&r.redact_line(&line)).unwrap();
    assert_eq!(out["result"]["t"], r#"{"k":"[REDACTED:OPENAI_KEY]"}"#);
    let once = text(&r, std::str::from_utf8(&line).unwrap());
    assert!(!once.contains("proj-abc123"), "{once}");
}

#[test]
fn unicode_escaped_env_values_are_masked() {
    // Issue 12, item 6: Go's encoding/json writes `&<>` as `\u0026`,
    // `\u003c`, `\u003e`.
    let secret = "&<tok>&-Secret-9";
    let r = redactor(&[("MY_API_TOKEN", secret)], &[], &[]);
    let go = r"\u0026\u003ctok\u003e\u0026-Secret-9";
    let line = format!(r#"{{"jsonrpc":"2.0","id":1,"result":{{"t":"v={go};"}}}}"#);
    let out: Value = serde_json::from_slice(&r.redact_line(line.as_bytes())).unwrap();
    assert_eq!(out["result"]["t"], "v=[REDACTED:MY_API_TOKEN];");
    assert_eq!(
        text(&r, &format!("log v={go};")),
        "log v=[REDACTED:MY_API_TOKEN];"
    );
    // Any hex case, any character of a non-ASCII secret.
    let r = redactor(&[("MY_API_TOKEN", "é-secret-1234")], &[], &[]);
    for escaped in [r"\u00E9-secret-1234", r"\u00e9-s\u0065cret-1234"] {
        let line = format!(r#"{{"jsonrpc":"2.0","id":1,"result":{{"t":"{escaped}"}}}}"#);
        let out: Value = serde_json::from_slice(&r.redact_line(line.as_bytes())).unwrap();
        assert_eq!(out["result"]["t"], "[REDACTED:MY_API_TOKEN]", "{escaped}");
    }
    // An escape that cannot hide anything keeps a clean line borrowed.
    let r = redactor(&[("MY_API_TOKEN", secret)], &[], &[]);
    let line = br#"{"jsonrpc":"2.0","id":1,"result":{"t":"caf\u00e9 \u001b[0m"}}"#;
    assert!(matches!(r.redact_line(line), Cow::Borrowed(_)));
}

#[test]
fn selector_rules_apply_to_lines_without_any_needle() {
    let r = redactor(&[], &[], &["/params/arguments/pin"]);
    let line =
        br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{"pin":1234}}}"#;
    let out: Value = serde_json::from_slice(&r.redact_line(line)).unwrap();
    assert_eq!(out["params"]["arguments"]["pin"], "[REDACTED:PIN]");
}

#[test]
fn regex_rules_see_decoded_strings_in_lines() {
    let r = redactor(&[], &[], &["a\"b"]);
    let line = br#"{"jsonrpc":"2.0","id":1,"result":{"t":"xa\"by"}}"#;
    let out: Value = serde_json::from_slice(&r.redact_line(line)).unwrap();
    assert_eq!(out["result"]["t"], "x[REDACTED:PATTERN]y");
}

#[test]
fn redactors_are_shareable() {
    fn assert_send_sync<T: Send + Sync + Clone>() {}
    assert_send_sync::<Redactor>();
    let r = RedactConfig::from_process_env(Vec::new(), Vec::new());
    assert!(r.defaults);
    assert!(Redactor::new(&r).is_ok());
}

// Properties.

const KEYS: &[&str] = &["a", "text", "maxTokens", "api_key", "x/y", "t~"];
const PROTECTED_POINTERS: [&str; 9] = [
    "/jsonrpc",
    "/id",
    "/method",
    "/params/_meta/progressToken",
    "/params/progressToken",
    "/params/requestId",
    "/params/cursor",
    "/result/nextCursor",
    "/result/resultType",
];
const TOKEN: &str = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
const SELECTED: &str = "/params/password";

fn tree() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        (-3i64..1000).prop_map(Value::from),
        "[a-z ]{0,8}".prop_map(Value::from),
        Just(Value::from("acct-123456")),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((prop::sample::select(KEYS), inner), 0..4).prop_map(|members| {
                Value::Object(
                    members
                        .into_iter()
                        .map(|(k, v)| (k.to_owned(), v))
                        .collect(),
                )
            }),
        ]
    })
}

fn id() -> impl Strategy<Value = Value> {
    prop_oneof![
        (0i64..100).prop_map(Value::from),
        Just(Value::from(TOKEN)),
        Just(Value::from("acct-123456")),
    ]
}

fn message() -> impl Strategy<Value = Value> {
    let method = prop::sample::select(&["tools/call", "acct-123456", TOKEN][..]);
    prop_oneof![
        (id(), method, tree(), tree()).prop_map(|(id, method, arguments, password)| json!({
            "jsonrpc": "2.0", "id": id, "method": method,
            "params": {"_meta": {"progressToken": TOKEN, "note": "n"}, "arguments": arguments, "password": password}
        })),
        (id(), tree()).prop_map(|(id, reason)| json!({
            "jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": id, "progressToken": "acct-123456", "reason": reason}
        })),
        (id(), tree()).prop_map(|(id, content)| json!({
            "jsonrpc": "2.0", "id": id, "result": {"resultType": TOKEN, "content": content}
        })),
    ]
}

/// The secret: no `[`/`]` (so it cannot straddle a placeholder) and no
/// surrounding space (so it is long enough once trimmed).
fn secret() -> impl Strategy<Value = String> {
    "[A-Za-z0-9!#$%&()*+,/:;=?@^_{|}~ \"\\\\é-]{6,14}".prop_map(|middle| format!("K{middle}9"))
}

/// The forms a secret is inserted in.
fn forms(secret: &str) -> Vec<String> {
    let mut out = vec![
        secret.to_owned(),
        serde_json::to_string(&json!({"k": secret})).unwrap(),
        format!("Basic {}", STANDARD.encode(format!("user:{secret}"))),
        URL_SAFE_NO_PAD.encode(format!("x{secret}yz")),
        STANDARD.encode(format!("ab{secret}")),
    ];
    out.extend(url_forms(secret));
    out
}

/// Pointers of every string value outside the protected fields.
fn string_pointers(value: &Value, pointer: &mut String, out: &mut Vec<String>) {
    match value {
        Value::String(_) if !PROTECTED_POINTERS.contains(&pointer.as_str()) => {
            out.push(pointer.clone())
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                let len = pointer.len();
                pointer.push_str(&format!("/{i}"));
                string_pointers(item, pointer, out);
                pointer.truncate(len);
            }
        }
        Value::Object(map) => {
            for (key, child) in map {
                let len = pointer.len();
                pointer.push('/');
                pointer.push_str(&key.replace('~', "~0").replace('/', "~1"));
                string_pointers(child, pointer, out);
                pointer.truncate(len);
            }
        }
        _ => {}
    }
}

fn all_strings<'a>(value: &'a Value, out: &mut Vec<&'a str>) {
    match value {
        Value::String(s) => out.push(s),
        Value::Array(items) => items.iter().for_each(|v| all_strings(v, out)),
        Value::Object(map) => map.values().for_each(|v| all_strings(v, out)),
        _ => {}
    }
}

/// Same keys, lengths and non-string scalars; a scalar the selector picks
/// becomes a placeholder.
fn same_shape(before: &Value, after: &Value, pointer: &str) -> Result<(), String> {
    let fail = || Err(format!("{pointer}: {before} → {after}"));
    match (before, after) {
        (Value::Object(a), Value::Object(b)) => {
            if !a.keys().eq(b.keys()) {
                return fail();
            }
            for (key, child) in a {
                let escaped = key.replace('~', "~0").replace('/', "~1");
                same_shape(child, &b[key], &format!("{pointer}/{escaped}"))?;
            }
            Ok(())
        }
        (Value::Array(a), Value::Array(b)) => {
            if a.len() != b.len() {
                return fail();
            }
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                same_shape(x, y, &format!("{pointer}/{i}"))?;
            }
            Ok(())
        }
        (Value::String(_), Value::String(_)) => Ok(()),
        (_, Value::String(s)) if pointer == SELECTED && s == "[REDACTED:PASSWORD]" => Ok(()),
        (a, b) if a == b => Ok(()),
        _ => fail(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn messages_lose_the_secret_in_every_encoding(
        message in message(),
        secret in secret(),
        inserts in prop::collection::vec(
            (any::<prop::sample::Index>(), any::<prop::sample::Index>(), any::<prop::sample::Index>()),
            1..5,
        ),
    ) {
        let redactor = Redactor::new(&RedactConfig {
            defaults: true,
            env: vec![
                ("HOME".to_owned(), "/home/someone".to_owned()),
                ("MY_API_TOKEN".to_owned(), secret.clone()),
                ("PATH".to_owned(), "/usr/bin".to_owned()),
            ],
            extra_env: Vec::new(),
            rules: vec![SELECTED.parse().unwrap(), "ACCOUNT=acct-[0-9]{6}".parse().unwrap()],
        }).unwrap();
        let mut original = message;
        let forms = forms(&secret);
        for (which, at, form) in inserts {
            let mut pointers = Vec::new();
            string_pointers(&original, &mut String::new(), &mut pointers);
            if pointers.is_empty() {
                break;
            }
            let pointer = which.get(&pointers);
            let Some(Value::String(text)) = original.pointer_mut(pointer) else { unreachable!() };
            let boundaries: Vec<usize> =
                text.char_indices().map(|(i, _)| i).chain([text.len()]).collect();
            text.insert_str(*at.get(&boundaries), form.get(&forms).as_str());
        }

        let mut redacted = original.clone();
        let masked = redactor.redact_message(&mut redacted);

        // The secret is gone in every encoding.
        let mut strings = Vec::new();
        all_strings(&redacted, &mut strings);
        let json_escaped = escaped(&secret);
        let mut needles = vec![secret.clone(), json_escaped.clone()];
        needles.extend(url_forms(&secret));
        needles.extend(base64_middles(&secret));
        for text in &strings {
            for needle in &needles {
                prop_assert!(!text.contains(needle.as_str()), "{:?} in {:?}", needle, text);
            }
        }
        let serialized = serde_json::to_string(&redacted).unwrap();
        prop_assert!(!serialized.contains(&json_escaped), "{}", serialized);

        // Protocol fields identical, structure kept.
        for pointer in PROTECTED_POINTERS {
            prop_assert_eq!(redacted.pointer(pointer), original.pointer(pointer));
        }
        if let Err(why) = same_shape(&original, &redacted, "") {
            prop_assert!(false, "{}", why);
        }
        prop_assert_eq!(masked.is_empty(), redacted == original);

        // Idempotent.
        let mut again = redacted.clone();
        prop_assert!(redactor.redact_message(&mut again).is_empty());
        prop_assert_eq!(&again, &redacted);

        // The line path agrees.
        let line = serde_json::to_vec(&original).unwrap();
        match redactor.redact_line(&line) {
            Cow::Borrowed(same) => {
                prop_assert!(masked.is_empty());
                prop_assert_eq!(same, &line[..]);
            }
            Cow::Owned(out) => {
                prop_assert!(!masked.is_empty());
                prop_assert_eq!(out, serde_json::to_vec(&redacted).unwrap());
            }
        }
    }

    #[test]
    fn text_redaction_is_idempotent(
        parts in prop::collection::vec(
            prop_oneof![
                "[a-z :/=-]{0,6}".boxed(),
                prop::sample::select(SHAPES.map(|(t, _)| t).to_vec()).prop_map(str::to_owned).boxed(),
                Just("Bearer ".to_owned()).boxed(),
                Just("Sup3r$ecret".to_owned()).boxed(),
            ],
            0..8,
        ),
    ) {
        let r = redactor(&[("MY_TOKEN", "Sup3r$ecret")], &[], &["ACCOUNT=acct-[0-9]{6}"]);
        let input: String = parts.concat();
        let once = r.redact_text(&input).into_owned();
        prop_assert!(!once.contains("Sup3r$ecret"));
        prop_assert_eq!(r.redact_text(&once).into_owned(), once.clone());
        prop_assert!(r.find(&once).is_empty());
    }
}

// Keeping it closed (issue 12): no known shape and no registered value
// survives in any encoding, through the line path or as free text.

/// The encodings of an environment secret.
#[derive(Debug, Clone, Copy)]
enum Encoding {
    Verbatim,
    Url(usize),
    Base64 { url_safe: bool, before: usize },
    Hex { upper: bool },
    Upper,
    Lower,
}

fn encoding() -> impl Strategy<Value = Encoding> {
    prop_oneof![
        Just(Encoding::Verbatim),
        (0usize..4).prop_map(Encoding::Url),
        (any::<bool>(), 0usize..3)
            .prop_map(|(url_safe, before)| Encoding::Base64 { url_safe, before }),
        any::<bool>().prop_map(|upper| Encoding::Hex { upper }),
        Just(Encoding::Upper),
        Just(Encoding::Lower),
    ]
}

fn encode(secret: &str, encoding: Encoding) -> String {
    match encoding {
        Encoding::Verbatim => secret.to_owned(),
        Encoding::Url(which) => url_forms(secret)[which].clone(),
        Encoding::Base64 { url_safe, before } => {
            let data = format!("{}{secret}", &"abc"[..before]);
            if url_safe {
                URL_SAFE_NO_PAD.encode(data)
            } else {
                STANDARD.encode(data)
            }
        }
        Encoding::Hex { upper: false } => hex::encode(secret),
        Encoding::Hex { upper: true } => hex::encode_upper(secret),
        Encoding::Upper => secret.to_ascii_uppercase(),
        Encoding::Lower => secret.to_ascii_lowercase(),
    }
}

/// Every form of `secret` that must not be left.
fn leftovers(secret: &str) -> Vec<String> {
    let mut out = vec![
        secret.to_owned(),
        secret.to_ascii_uppercase(),
        secret.to_ascii_lowercase(),
        hex::encode(secret),
        hex::encode_upper(secret),
        escaped(secret),
    ];
    out.extend(url_forms(secret));
    out.extend(base64_middles(secret));
    out
}

/// `text` as it appears between the quotes of a JSON string, with the
/// characters `mask` picks written as `\uXXXX` (hex case by `upper`).
fn json_mix(text: &str, mask: &[bool], upper: bool) -> String {
    let mut out = String::new();
    for (i, c) in text.chars().enumerate() {
        if mask.get(i % mask.len().max(1)).copied().unwrap_or(false) {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                if upper {
                    out.push_str(&format!("\\u{unit:04X}"));
                } else {
                    out.push_str(&format!("\\u{unit:04x}"));
                }
            }
        } else {
            out.push_str(&escaped(c.encode_utf8(&mut [0; 4])));
        }
    }
    out
}

/// `text`, and `text` decoded as the inside of a JSON string (by serde, not
/// by the code under test).
fn raw_and_decoded(text: &str) -> Vec<String> {
    let mut out = vec![text.to_owned()];
    if let Ok(decoded) = serde_json::from_str::<String>(&format!("\"{text}\"")) {
        out.push(decoded);
    }
    out
}

/// Separators a secret may sit between (no backslash: it would escape).
const AROUND: [&str; 8] = ["", " ", "=", "\"", "(", ": ", "/", ", "];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn no_secret_survives_any_encoding(
        secret in secret(),
        numeric in "[1-9][0-9]{7,15}",
        token in prop::sample::select(SHAPES.map(|(t, _)| t).to_vec()),
        encoding in encoding(),
        what in 0u8..3,
        mask in prop::collection::vec(any::<bool>(), 0..6),
        upper in any::<bool>(),
        before in prop::sample::select(AROUND.to_vec()),
        after in prop::sample::select(AROUND.to_vec()),
    ) {
        let redactor = Redactor::new(&RedactConfig {
            defaults: true,
            env: vec![
                ("HOME".to_owned(), "/home/someone".to_owned()),
                ("MY_API_TOKEN".to_owned(), secret.clone()),
                ("PIN_SECRET".to_owned(), numeric.clone()),
            ],
            extra_env: Vec::new(),
            rules: Vec::new(),
        }).unwrap();
        // What goes in, and what must not come out.
        let (plain, gone) = match what {
            0 => (encode(&secret, encoding), leftovers(&secret)),
            1 => (token.to_owned(), vec![token.to_owned()]),
            _ => (numeric.clone(), vec![numeric.clone()]),
        };
        let inside = json_mix(&format!("{before}{plain}{after}"), &mask, upper);

        // A line: the string written with escapes in any mix, and the
        // numeric secret as a number.
        let pin = if what == 2 { format!(r#","pin":{numeric}"#) } else { String::new() };
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":1,"result":{{"content":[{{"type":"text","text":"x {inside} y"}}]{pin}}}}}"#
        );
        prop_assume!(serde_json::from_str::<Value>(&line).is_ok());
        let out = redactor.redact_line(line.as_bytes()).into_owned();
        let out_text = String::from_utf8(out).unwrap();
        let parsed: Value = serde_json::from_str(&out_text).unwrap();
        let mut strings = Vec::new();
        all_strings(&parsed, &mut strings);
        for form in &gone {
            prop_assert!(!out_text.contains(form.as_str()), "{:?} in {}", form, out_text);
            for s in &strings {
                prop_assert!(!s.contains(form.as_str()), "{:?} in {:?}", form, s);
            }
        }
        if what == 2 {
            prop_assert_eq!(&parsed["result"]["pin"], "[REDACTED:PIN_SECRET]");
        }

        // Free text holding the same escaped form: a log line.
        let text = format!("log: x {inside} y");
        let masked = redactor.redact_text(&text).into_owned();
        for level in raw_and_decoded(&masked) {
            for form in &gone {
                prop_assert!(!level.contains(form.as_str()), "{:?} in {:?}", form, level);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn the_prescan_lets_every_shape_through(
        parts in prop::collection::vec(
            prop_oneof![
                prop::sample::select(SHAPES.map(|(t, _)| t).to_vec()).prop_map(str::to_owned),
                prop::sample::select(vec![
                    " ", "x", "_", "-", ".", "%20", "\\n", "\\u0073", "\\u0067h", "sk", "Bearer",
                    "bearer:", "Basic ", "https://u:p@h/", "AccountKey=", "?sig=", "-----BEGIN ",
                    "PRIVATE KEY-----", "=", "\"", "lin_", "dop_", "pp",
                ]).prop_map(str::to_owned),
                "[A-Za-z0-9+/=%_.-]{0,12}",
            ],
            0..8,
        ),
    ) {
        let r = Redactor::defaults();
        let text: String = parts.concat();
        if !r.find_all(&text).is_empty() {
            prop_assert!(prescan::prescan(text.as_bytes()), "{:?}", text);
        }
    }
}
