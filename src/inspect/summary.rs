//! What a session added up to: per method, in total, and its violations.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Duration;

use serde::Serialize;

use super::event::{Event, EventKind, millis};
use crate::cassette::Direction;

/// What an [`Inspector`](super::Inspector) saw, at the end (or so far).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    /// Milliseconds since the inspector started.
    pub duration_ms: f64,
    /// The session's protocol version, if the handshake showed it.
    pub protocol_version: Option<String>,
    /// One entry per method of a request or notification, by name.
    pub methods: Vec<MethodSummary>,
    /// Every message.
    pub totals: Totals,
    /// Schema violations in all.
    pub violations: usize,
    /// Schema violations by code (`MC206`: 1).
    pub violation_codes: BTreeMap<String, usize>,
}

/// The requests or notifications of one method, and their answers.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MethodSummary {
    /// The method.
    pub method: String,
    /// Requests and notifications with this method, either way.
    pub count: usize,
    /// Answers that were errors.
    pub errors: usize,
    /// Answers seen (results and errors).
    pub answered: usize,
    /// Time from request to answer, over every answer.
    pub latency_ms: Option<Latency>,
}

/// Latencies in milliseconds (percentiles by nearest rank).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Latency {
    /// The mean.
    pub mean: f64,
    /// The median.
    pub p50: f64,
    /// The 99th percentile.
    pub p99: f64,
    /// The longest.
    pub max: f64,
}

/// Counts over every message.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Totals {
    /// Messages seen, either way.
    pub messages: usize,
    /// Messages from the client.
    pub client_to_server: usize,
    /// Messages from the server.
    pub server_to_client: usize,
    /// Bytes of the client's messages.
    pub bytes_client_to_server: usize,
    /// Bytes of the server's messages.
    pub bytes_server_to_client: usize,
    /// Requests, either way.
    pub requests: usize,
    /// Notifications, either way.
    pub notifications: usize,
    /// Responses, results and errors.
    pub responses: usize,
    /// Responses that were errors.
    pub errors: usize,
    /// Lines that were not JSON-RPC messages.
    pub invalid: usize,
    /// Requests never answered.
    pub unanswered: usize,
    /// Time from request to answer, over every answer.
    pub latency_ms: Option<Latency>,
}

/// Running counts.
#[derive(Debug, Default)]
pub(super) struct Stats {
    methods: BTreeMap<String, MethodStats>,
    totals: Totals,
    latencies: Samples,
    violation_codes: BTreeMap<String, usize>,
}

#[derive(Debug, Default)]
struct MethodStats {
    count: usize,
    errors: usize,
    answered: usize,
    latencies: Samples,
}

/// Latencies, in the memory of at most [`Samples::KEPT`] of them however
/// long the session: mean and max are exact; the percentiles are exact
/// up to that many, then read off a uniform sample (reservoir sampling,
/// with a fixed seed so that a run can be repeated).
#[derive(Debug, Default)]
struct Samples {
    kept: Vec<f64>,
    seen: u64,
    sum: f64,
    max: f64,
    random: u64,
}

impl Samples {
    const KEPT: usize = 16_384;

    fn add(&mut self, sample: f64) {
        self.seen += 1;
        self.sum += sample;
        self.max = if self.seen == 1 {
            sample
        } else {
            self.max.max(sample)
        };
        if self.kept.len() < Self::KEPT {
            self.kept.push(sample);
            return;
        }
        // Keeps the n-th sample with probability KEPT / n.
        self.random = self
            .random
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let slot = (self.random >> 11) % self.seen;
        if let Some(kept) = self.kept.get_mut(slot as usize) {
            *kept = sample;
        }
    }
}

impl Stats {
    /// Counts one event.
    pub(super) fn add(&mut self, event: &Event) {
        let totals = &mut self.totals;
        totals.messages += 1;
        match event.dir {
            Direction::ClientToServer => {
                totals.client_to_server += 1;
                totals.bytes_client_to_server += event.bytes;
            }
            Direction::ServerToClient => {
                totals.server_to_client += 1;
                totals.bytes_server_to_client += event.bytes;
            }
        }
        match event.kind {
            EventKind::Request => totals.requests += 1,
            EventKind::Notification => totals.notifications += 1,
            EventKind::Response => totals.responses += 1,
            EventKind::Error => {
                totals.responses += 1;
                totals.errors += 1;
            }
            EventKind::Invalid => totals.invalid += 1,
        }
        if let Some(method) = &event.method {
            match event.kind {
                EventKind::Request | EventKind::Notification => {
                    self.methods.entry(method.clone()).or_default().count += 1;
                }
                EventKind::Response | EventKind::Error if event.latency_ms.is_some() => {
                    let stats = self.methods.entry(method.clone()).or_default();
                    stats.answered += 1;
                    stats.errors += usize::from(event.kind == EventKind::Error);
                    if let Some(latency) = event.latency_ms {
                        stats.latencies.add(latency);
                    }
                }
                _ => {}
            }
        }
        if let Some(latency) = event.latency_ms {
            self.latencies.add(latency);
        }
        for flag in &event.violations {
            *self
                .violation_codes
                .entry(flag.code.to_owned())
                .or_default() += 1;
        }
    }

    /// The summary of what was counted.
    pub(super) fn summary(
        &self,
        elapsed: Duration,
        version: Option<&str>,
        unanswered: usize,
    ) -> Summary {
        let methods = self
            .methods
            .iter()
            .map(|(method, stats)| MethodSummary {
                method: method.clone(),
                count: stats.count,
                errors: stats.errors,
                answered: stats.answered,
                latency_ms: Latency::of(&stats.latencies),
            })
            .collect();
        let mut totals = self.totals.clone();
        totals.unanswered = unanswered;
        totals.latency_ms = Latency::of(&self.latencies);
        Summary {
            duration_ms: millis(elapsed),
            protocol_version: version.map(str::to_owned),
            methods,
            totals,
            violations: self.violation_codes.values().sum(),
            violation_codes: self.violation_codes.clone(),
        }
    }
}

impl Latency {
    /// Mean, p50, p99 and max of `samples`; `None` when there are none.
    fn of(samples: &Samples) -> Option<Latency> {
        if samples.seen == 0 {
            return None;
        }
        let mut sorted = samples.kept.clone();
        sorted.sort_by(f64::total_cmp);
        let mean = samples.sum / samples.seen as f64;
        let rank = |p: f64| {
            let rank = (p / 100.0 * sorted.len() as f64).ceil() as usize;
            sorted[rank.clamp(1, sorted.len()) - 1]
        };
        Some(Latency {
            mean: (mean * 1000.0).round() / 1000.0,
            p50: rank(50.0),
            p99: rank(99.0),
            max: samples.max,
        })
    }
}

impl Summary {
    /// The summary as a table, for people:
    ///
    /// ```text
    /// mcpcassette inspect: 9 messages in 0.42 s (protocol 2025-11-25)
    /// method                     count  errors   mean ms    p50 ms    p99 ms
    /// initialize                     1       0      1.20      1.20      1.20
    /// notifications/initialized      1       -         -         -         -
    /// total                          5       0      0.90      0.80      1.20
    /// client → server: 5 messages, 812 B; server → client: 4 messages, 2301 B
    /// schema violations: none
    /// ```
    pub fn render(&self) -> String {
        let mut out = String::new();
        let version = self
            .protocol_version
            .as_deref()
            .map(|v| format!(" (protocol {v})"))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "mcpcassette inspect: {} message(s) in {:.2} s{version}",
            self.totals.messages,
            self.duration_ms / 1000.0
        );
        let width = self
            .methods
            .iter()
            .map(|m| m.method.chars().count())
            .max()
            .unwrap_or(0)
            .max("method".len());
        let _ = writeln!(
            out,
            "{:width$}  {:>6}  {:>6}  {:>9}  {:>9}  {:>9}",
            "method", "count", "errors", "mean ms", "p50 ms", "p99 ms"
        );
        for method in &self.methods {
            let errors = if method.answered == 0 && method.errors == 0 {
                "-".to_owned()
            } else {
                method.errors.to_string()
            };
            row(
                &mut out,
                width,
                &method.method,
                method.count,
                &errors,
                method.latency_ms,
            );
        }
        let totals = &self.totals;
        row(
            &mut out,
            width,
            "total",
            totals.requests + totals.notifications,
            &totals.errors.to_string(),
            totals.latency_ms,
        );
        let _ = writeln!(
            out,
            "client → server: {} message(s), {} B; server → client: {} message(s), {} B",
            totals.client_to_server,
            totals.bytes_client_to_server,
            totals.server_to_client,
            totals.bytes_server_to_client
        );
        if totals.unanswered > 0 {
            let _ = writeln!(out, "unanswered requests: {}", totals.unanswered);
        }
        if totals.invalid > 0 {
            let _ = writeln!(out, "not JSON-RPC: {} line(s)", totals.invalid);
        }
        if self.violations == 0 {
            let _ = writeln!(out, "schema violations: none");
        } else {
            let codes = self
                .violation_codes
                .iter()
                .map(|(code, n)| format!("{code} ×{n}"))
                .collect::<Vec<_>>()
                .join(", ");
            let _ = writeln!(
                out,
                "schema violations: {} ({codes}; the codes are `mcpcassette check`'s)",
                self.violations
            );
        }
        out
    }
}

/// One row of the table.
fn row(
    out: &mut String,
    width: usize,
    name: &str,
    count: usize,
    errors: &str,
    latency: Option<Latency>,
) {
    let cell = |value: Option<f64>| value.map_or_else(|| "-".to_owned(), |v| format!("{v:.2}"));
    let _ = writeln!(
        out,
        "{name:width$}  {count:>6}  {errors:>6}  {:>9}  {:>9}  {:>9}",
        cell(latency.map(|l| l.mean)),
        cell(latency.map(|l| l.p50)),
        cell(latency.map(|l| l.p99)),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_session_keeps_a_bounded_sample_and_exact_extremes() {
        let mut samples = Samples::default();
        let n = Samples::KEPT as u64 * 20;
        for i in 1..=n {
            samples.add(i as f64);
        }
        assert_eq!(samples.kept.len(), Samples::KEPT);
        let latency = Latency::of(&samples).unwrap();
        assert_eq!(latency.max, n as f64);
        assert_eq!(latency.mean, (n as f64 + 1.0) / 2.0);
        // A uniform sample: the percentiles within 2 % of the exact ones.
        let close = |found: f64, exact: f64| (found - exact).abs() / exact < 0.02;
        assert!(close(latency.p50, n as f64 * 0.5), "{latency:?}");
        assert!(close(latency.p99, n as f64 * 0.99), "{latency:?}");
    }
}
