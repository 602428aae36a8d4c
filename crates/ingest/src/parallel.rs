//! Work spread over the machine's cores with the standard library's scoped threads: the
//! pipeline's per-brand steps are independent and need no more than this.

use std::sync::atomic::{AtomicUsize, Ordering};

/// Maps `f` over `items` on every core this process may use, keeping order. Each thread takes
/// the next item not yet taken: callers pass brands in rank order, biggest first, so the big
/// ones start first and the small ones fill in behind them (a fixed deal, thread t taking t,
/// t+T, ..., left one thread with the biggest brands and the others idle on 16 cores). The
/// result is the same whatever the timing: each output goes to its item's place.
/// (Rayon's work stealing was tried here: on two cores the build took 2 s longer, its workers
/// crowding out the border loader that runs beside generation.)
/// Fewer items than 64 run on the calling thread: per-row work that small costs less than the
/// threads.
pub fn parallel_map<T: Sync, U: Send>(items: &[T], f: impl Fn(&T) -> U + Sync) -> Vec<U> {
    parallel_map_from(64, items, f)
}

/// [`parallel_map`] for items each worth a thread of their own (a brand's world to generate):
/// on every core from `min_items` items up.
pub fn parallel_map_from<T: Sync, U: Send>(min_items: usize, items: &[T], f: impl Fn(&T) -> U + Sync) -> Vec<U> {
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get()).max(1).min(items.len().max(1));
    if items.len() < min_items.max(2) || threads == 1 {
        return items.iter().map(&f).collect();
    }
    let next = AtomicUsize::new(0);
    let parts: Vec<Vec<(usize, U)>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                let (f, next) = (&f, &next);
                s.spawn(move || {
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(item) = items.get(i) else { break };
                        done.push((i, f(item)));
                    }
                    done
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("worker panicked")).collect()
    });
    let mut slots: Vec<Option<U>> = std::iter::repeat_with(|| None).take(items.len()).collect();
    for (i, u) in parts.into_iter().flatten() {
        slots[i] = Some(u);
    }
    slots.into_iter().map(|u| u.expect("every item mapped")).collect()
}

#[cfg(test)]
mod tests {
    use super::parallel_map;

    #[test]
    fn keeps_the_order_of_items_of_uneven_cost() {
        // Uneven work (the first items cost the most, as the biggest brands do) must still come
        // back in the items' order.
        let items: Vec<u64> = (0..1000).collect();
        let out = parallel_map(&items, |&i| {
            (0..(1000 - i) * 50).fold(i, |a, b| a.wrapping_add(b % 3)).wrapping_sub((0..(1000 - i) * 50).map(|b| b % 3).sum::<u64>())
        });
        assert_eq!(out, items);
    }
}
