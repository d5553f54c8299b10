//! The mock's random numbers, for jitter.

/// xorshift64*: a tiny, seedable generator for jitter (no dependency, and
/// the same seed gives the same delays).
#[derive(Debug)]
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Self {
        // Zero is xorshift's one fixed point.
        Rng(seed.max(1))
    }

    /// A number in `0..n` (0 when `n` is 0).
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        let value = x.wrapping_mul(0x2545_f491_4f6c_dd1d);
        if n == 0 { 0 } else { value % n }
    }
}
