//! The protocol versions the built-in rules know, and sets of them, so one
//! table row can say "since 2025-06-18" instead of being copied per version.

/// A protocol version this crate has rules for, oldest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Version {
    V2024_11_05,
    V2025_03_26,
    V2025_06_18,
    V2025_11_25,
    V2026_07_28,
}

pub(crate) use Version::*;

impl Version {
    /// Every known version, oldest first (same order as [`super::VERSIONS`]).
    pub(crate) const ALL: [Version; 5] = [
        V2024_11_05,
        V2025_03_26,
        V2025_06_18,
        V2025_11_25,
        V2026_07_28,
    ];

    /// The version named `name`, if it is one we know.
    pub(crate) fn parse(name: &str) -> Option<Version> {
        Version::ALL.into_iter().find(|v| v.as_str() == name)
    }

    /// The version's name as it appears on the wire.
    pub(crate) const fn as_str(self) -> &'static str {
        match self {
            V2024_11_05 => "2024-11-05",
            V2025_03_26 => "2025-03-26",
            V2025_06_18 => "2025-06-18",
            V2025_11_25 => "2025-11-25",
            V2026_07_28 => "2026-07-28",
        }
    }

    const fn bit(self) -> u8 {
        1 << self as u8
    }
}

/// A set of versions (a bit per version), built with const helpers so that
/// static rule tables can carry them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Versions(u8);

/// Every known version.
pub(crate) const ALL: Versions = Versions(0b1_1111);
/// No version.
pub(crate) const NONE: Versions = Versions(0);
/// The versions with the `initialize` handshake.
pub(crate) const LEGACY: Versions = until(V2025_11_25);

/// `v` and every later version.
pub(crate) const fn since(v: Version) -> Versions {
    Versions(ALL.0 & !(v.bit() - 1))
}

/// `v` and every earlier version.
pub(crate) const fn until(v: Version) -> Versions {
    Versions(v.bit() | (v.bit() - 1))
}

/// Only `v`.
pub(crate) const fn only(v: Version) -> Versions {
    Versions(v.bit())
}

impl Versions {
    /// Whether `v` is in the set.
    pub(crate) const fn contains(self, v: Version) -> bool {
        self.0 & v.bit() != 0
    }

    /// The versions in both sets.
    pub(crate) const fn and(self, other: Versions) -> Versions {
        Versions(self.0 & other.0)
    }

    /// The versions in `self` but not in `other`.
    pub(crate) const fn minus(self, other: Versions) -> Versions {
        Versions(self.0 & !other.0)
    }

    /// The versions in either set.
    pub(crate) const fn or(self, other: Versions) -> Versions {
        Versions(self.0 | other.0)
    }

    /// "2024-11-05, 2025-03-26": for messages that say where something exists.
    pub(crate) fn describe(self) -> String {
        let names: Vec<&str> = Version::ALL
            .into_iter()
            .filter(|v| self.contains(*v))
            .map(Version::as_str)
            .collect();
        names.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_cover_the_right_versions() {
        assert!(since(V2025_06_18).contains(V2026_07_28));
        assert!(!since(V2025_06_18).contains(V2025_03_26));
        assert!(until(V2025_03_26).contains(V2024_11_05));
        assert!(!until(V2025_03_26).contains(V2025_06_18));
        assert_eq!(LEGACY.minus(only(V2025_11_25)), until(V2025_06_18));
        assert_eq!(ALL.and(NONE), NONE);
        assert_eq!(
            only(V2024_11_05).or(only(V2026_07_28)).describe(),
            "2024-11-05, 2026-07-28"
        );
        assert_eq!(Version::parse("2025-11-25"), Some(V2025_11_25));
        assert_eq!(Version::parse("2023-01-01"), None);
    }
}
