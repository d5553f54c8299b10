//! Sets of protocol versions, so that one table row can say "since
//! 2025-06-18" instead of being copied per version. The versions
//! themselves are [`crate::protocol::Version`]; the rule tables name them
//! bare (`since(V2025_06_18)`), hence the re-export of its variants.

pub(crate) use crate::protocol::Version::{self, *};

/// `v`'s bit in a [`Versions`] set.
const fn bit(v: Version) -> u8 {
    1 << v as u8
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
    Versions(ALL.0 & !(bit(v) - 1))
}

/// `v` and every earlier version.
pub(crate) const fn until(v: Version) -> Versions {
    Versions(bit(v) | (bit(v) - 1))
}

/// Only `v`.
pub(crate) const fn only(v: Version) -> Versions {
    Versions(bit(v))
}

impl Versions {
    /// Whether `v` is in the set.
    pub(crate) const fn contains(self, v: Version) -> bool {
        self.0 & bit(v) != 0
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
