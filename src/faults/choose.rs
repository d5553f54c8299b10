//! Which rules fire on a request: the selectors, the per-session counts
//! behind `nth` and `times`, and the seeded chance behind `probability`
//! (no wall clock and no global random state, so the same seed fires the
//! same faults on every run and every machine).

use serde_json::Value;

use crate::cassette::{FaultSelect, Faults, Wait};
use crate::json::is_subset;
use crate::jsonrpc;

/// One session's counts, rule by rule.
#[derive(Debug, Clone)]
pub(crate) struct Counts {
    /// Matching requests seen.
    seen: Vec<u64>,
    /// Times fired.
    fired: Vec<u64>,
}

impl Counts {
    pub(crate) fn new(rules: usize) -> Self {
        Counts {
            seen: vec![0; rules],
            fired: vec![0; rules],
        }
    }
}

/// A rule that fires on a request, and the request's ordinal among those
/// it matched (which seeds anything the fault draws, a delay say).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Firing {
    pub(crate) rule: usize,
    pub(crate) ordinal: u64,
}

/// The rules of `faults` that fire on `request` (of `method`) in
/// `session`, in order, counting it.
pub(crate) fn firing(
    faults: &Faults,
    counts: &mut Counts,
    method: &str,
    request: &Value,
    session: u64,
) -> Vec<Firing> {
    let mut firing = Vec::new();
    for (rule, fault) in faults.rules.iter().enumerate() {
        let select = &fault.select;
        if !selects(select, method, request, session) {
            continue;
        }
        counts.seen[rule] += 1;
        let ordinal = counts.seen[rule];
        if ordinal < select.nth.unwrap_or(1) {
            continue;
        }
        if select
            .limit()
            .is_some_and(|limit| counts.fired[rule] >= limit)
        {
            continue;
        }
        if let Some(probability) = select.probability {
            let seed = select.seed.unwrap_or(faults.seed);
            if unit(seed, rule as u64, session, ordinal, 0) >= probability {
                continue;
            }
        }
        counts.fired[rule] += 1;
        firing.push(Firing { rule, ordinal });
    }
    firing
}

/// Whether `select` picks `request` out, counts aside.
pub(crate) fn selects(select: &FaultSelect, method: &str, request: &Value, session: u64) -> bool {
    if !select.may_hit_method(method) {
        return false;
    }
    if select.session.is_some_and(|s| s != session) {
        return false;
    }
    let params = jsonrpc::params(request).unwrap_or(&Value::Null);
    let named = |key: &str, wanted: &Option<String>| match wanted {
        Some(wanted) => params.get(key).and_then(Value::as_str) == Some(wanted.as_str()),
        None => true,
    };
    if !named("name", &select.name) || !named("uri", &select.uri) {
        return false;
    }
    match &select.when {
        Some(when) => is_subset(when, params),
        None => true,
    }
}

/// How long a delay waits on the `ordinal`-th request a rule fires on.
pub(crate) fn wait_ms(wait: Wait, seed: u64, rule: usize, session: u64, ordinal: u64) -> u64 {
    let draw = |stream| unit(seed, rule as u64, session, ordinal, stream);
    match wait {
        Wait::Fixed(ms) => ms,
        Wait::Uniform { min, max } => min + ((max - min + 1) as f64 * draw(1)) as u64,
        Wait::LogNormal { median, sigma, max } => {
            // Box–Muller: a standard normal from two uniform draws.
            let (u1, u2) = (1.0 - draw(1), draw(2));
            let normal = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
            let ms = median * (sigma * normal).exp();
            (ms.round() as u64).min(max)
        }
    }
    .min(crate::cassette::MAX_DELAY_MS)
}

/// A number in [0, 1) decided by its inputs alone (SplitMix64's mixer).
pub(crate) fn unit(seed: u64, rule: u64, session: u64, ordinal: u64, stream: u64) -> f64 {
    let hash = [rule, session, ordinal, stream]
        .into_iter()
        .fold(mix(seed), |hash, part| mix(hash ^ part));
    (hash >> 11) as f64 / (1_u64 << 53) as f64
}

fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn faults(rules: Value) -> Faults {
        Faults::from_document(&rules).unwrap()
    }

    fn call(name: &str) -> Value {
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": {"q": "x"}}})
    }

    /// Which of `n` calls of `name` rule 0 fires on (1-based).
    fn fired_on(faults: &Faults, name: &str, n: u64) -> Vec<u64> {
        let mut counts = Counts::new(faults.rules.len());
        (1..=n)
            .filter(|_| !firing(faults, &mut counts, "tools/call", &call(name), 1).is_empty())
            .collect()
    }

    #[test]
    fn nth_and_times_pick_a_window() {
        assert_eq!(
            fired_on(
                &faults(json!([{"name": "a", "nth": 2, "hang": true}])),
                "a",
                5
            ),
            [2]
        );
        assert_eq!(
            fired_on(
                &faults(json!([{"name": "a", "nth": 2, "times": 2, "hang": true}])),
                "a",
                5
            ),
            [2, 3]
        );
        assert_eq!(
            fired_on(&faults(json!([{"times": 2, "hang": true}])), "a", 5),
            [1, 2]
        );
        assert_eq!(
            fired_on(&faults(json!([{"hang": true}])), "a", 3),
            [1, 2, 3]
        );
        assert!(fired_on(&faults(json!([{"name": "b", "hang": true}])), "a", 3).is_empty());
    }

    #[test]
    fn when_is_a_subset_of_the_params() {
        let f = faults(
            json!([{"method": "tools/call", "when": {"arguments": {"q": "x"}}, "hang": true}]),
        );
        assert_eq!(fired_on(&f, "a", 1), [1]);
        let f = faults(
            json!([{"method": "tools/call", "when": {"arguments": {"q": "y"}}, "hang": true}]),
        );
        assert!(fired_on(&f, "a", 1).is_empty());
    }

    #[test]
    fn sessions_count_apart_and_can_be_selected() {
        let f = faults(json!([{"nth": 1, "session": 2, "hang": true}]));
        let mut counts = Counts::new(1);
        assert!(firing(&f, &mut counts, "tools/call", &call("a"), 1).is_empty());
        let mut counts = Counts::new(1);
        assert_eq!(
            firing(&f, &mut counts, "tools/call", &call("a"), 2).len(),
            1
        );
    }

    #[test]
    fn a_seed_decides_the_same_way_every_time_and_another_seed_otherwise() {
        let seeded = |seed: u64| {
            faults(json!({"seed": seed, "faults": [{"probability": 0.5, "hang": true}]}))
        };
        let first = fired_on(&seeded(1), "a", 200);
        assert_eq!(first, fired_on(&seeded(1), "a", 200));
        assert_ne!(first, fired_on(&seeded(2), "a", 200));
        // About half, as asked.
        assert!((70..130).contains(&first.len()), "{}", first.len());
    }

    #[test]
    fn waits_are_drawn_within_their_bounds() {
        for ordinal in 1..200 {
            let ms = wait_ms(Wait::Uniform { min: 10, max: 20 }, 3, 0, 1, ordinal);
            assert!((10..=20).contains(&ms), "{ms}");
            let ms = wait_ms(
                Wait::LogNormal {
                    median: 100.0,
                    sigma: 1.0,
                    max: 400,
                },
                3,
                0,
                1,
                ordinal,
            );
            assert!(ms <= 400, "{ms}");
        }
        assert_eq!(wait_ms(Wait::Fixed(7), 0, 0, 1, 1), 7);
    }
}
