//! Passes over every message of a big cassette, split across the cores.
//!
//! A bottom layer: it imports nothing else from the crate.

/// How many threads a pass over `count` items uses, at least `per_thread`
/// items each: one for small inputs, where a thread costs more than it
/// saves (and asking for the core count, which reads cgroup files, too).
pub(crate) fn threads_for(count: usize, per_thread: usize) -> usize {
    if count < 2 * per_thread {
        return 1;
    }
    std::thread::available_parallelism()
        .map_or(1, std::num::NonZeroUsize::get)
        .min(count / per_thread)
        .max(1)
}

/// `f` of each of `items` on `threads` threads, in the order of `items`.
pub(crate) fn map_in_order<T: Sync, R: Send>(
    items: &[T],
    threads: usize,
    f: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    if threads <= 1 || items.len() < threads {
        return items.iter().map(f).collect();
    }
    let f = &f;
    std::thread::scope(|scope| {
        let parts: Vec<_> = items
            .chunks(items.len().div_ceil(threads))
            .map(|part| scope.spawn(move || part.iter().map(f).collect::<Vec<_>>()))
            .collect();
        parts
            .into_iter()
            .flat_map(|part| {
                part.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    })
}

/// `a` and `b` at once, `a` on a thread of its own when `split` (two
/// independent passes over one big input), else one after the other.
pub(crate) fn join<A: Send, B>(
    split: bool,
    a: impl FnOnce() -> A + Send,
    b: impl FnOnce() -> B,
) -> (A, B) {
    if !split {
        return (a(), b());
    }
    std::thread::scope(|scope| {
        let a = scope.spawn(a);
        let b = b();
        let a = a
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (a, b)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_keep_the_order_of_the_items_on_any_number_of_threads() {
        let items: Vec<u64> = (0..1000).collect();
        let squares: Vec<u64> = items.iter().map(|n| n * n).collect();
        for threads in [1, 2, 3, 7, 1000, 5000] {
            assert_eq!(
                map_in_order(&items, threads, |n| n * n),
                squares,
                "{threads}"
            );
        }
        assert_eq!(threads_for(10, 8192), 1);
        for split in [false, true] {
            assert_eq!(join(split, || 1, || "b"), (1, "b"));
        }
        assert!(threads_for(1_000_000, 8192) >= 1);
    }
}
