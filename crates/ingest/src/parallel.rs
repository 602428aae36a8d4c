//! Work spread over the machine's cores with the standard library's scoped threads: the
//! pipeline's per-brand steps are independent and need no more than this.

/// Maps `f` over `items` on every core this process may use, keeping order. Items are dealt
/// out strided (thread t takes t, t+T, t+2T, ...) rather than in contiguous halves: callers
/// pass brands in rank order, biggest first, and halves would give one thread all the big ones.
/// (Rayon's work stealing was tried here: on two cores the build took 2 s longer, its workers
/// crowding out the border loader that runs beside generation.)
pub fn parallel_map<T: Sync, U: Send>(items: &[T], f: impl Fn(&T) -> U + Sync) -> Vec<U> {
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get()).max(1);
    if items.len() < 64 || threads == 1 {
        return items.iter().map(&f).collect();
    }
    let parts: Vec<Vec<U>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let f = &f;
                s.spawn(move || items.iter().skip(t).step_by(threads).map(f).collect::<Vec<U>>())
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("worker panicked")).collect()
    });
    let mut iters: Vec<_> = parts.into_iter().map(|p| p.into_iter()).collect();
    (0..items.len()).map(|i| iters[i % threads].next().expect("every item mapped")).collect()
}
