//! Work spread over the machine's cores: one pool of worker threads for the whole process,
//! which every parallel step hands its items to from the thread that calls it (the calling
//! thread reads, orders and hands on; the workers only compute, and never wait on each other).

use std::collections::BTreeMap;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The longest time one item of a streamed step (a brand's world, a brand's reconciliation, a
/// block of a source's file) took since [`take_longest_item`] last read it: a step takes about
/// its biggest item's time at least on any number of cores, which the build's phase lines
/// report. Timed by its thread's wall clock, so it overstates the item's CPU where threads
/// outnumber the cores (two cores, four imports). [`parallel_map`]'s items are rows, each far
/// too small to bound anything, and are not timed (two clock reads a row on the hot path).
static LONGEST_ITEM_NS: AtomicU64 = AtomicU64::new(0);

/// The longest item since the last call, and a fresh start.
pub fn take_longest_item() -> Duration {
    Duration::from_nanos(LONGEST_ITEM_NS.swap(0, Ordering::Relaxed))
}

/// The longest item a run of items took, published for [`take_longest_item`] when it is
/// dropped: once per run of a one-thread step, and once per item of a [`parallel_stream`] on
/// the workers (whose items are brands, files and chunks, never rows: a shared maximum written
/// per row would pass one cache line between the cores for every row).
#[derive(Default)]
struct Longest(u64);

impl Longest {
    /// `f(item)`, its time kept if it is the longest so far.
    fn time<T, U>(&mut self, f: impl Fn(&T) -> U, item: &T) -> U {
        let start = Instant::now();
        let u = f(item);
        self.0 = self.0.max(start.elapsed().as_nanos().min(u64::MAX as u128) as u64);
        u
    }
}

impl Drop for Longest {
    fn drop(&mut self) {
        LONGEST_ITEM_NS.fetch_max(self.0, Ordering::Relaxed);
    }
}

/// The process's worker threads, [`threads`] of them, started when a step first needs them.
/// One pool, not threads per step: the four imports run at once, each handing out its rows
/// (and the Parquet ones making their rows too), and with threads of their own they ran eight
/// times as many threads as cores. jemalloc gives each thread an arena of its own up to four
/// per core, and each arena holds the pages freed into it until they decay: memory grew with the
/// threads (bench/RESULTS.md, "Memory on many threads").
fn pool() -> &'static rayon::ThreadPool {
    static POOL: OnceLock<rayon::ThreadPool> = OnceLock::new();
    POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads())
            // Named for profilers and `top -H`.
            .thread_name(|i| format!("storemap worker {i}"))
            .build()
            .expect("the worker threads could not start")
    })
}

/// Whether this thread is one of the pool's: a step called from a worker's item runs its
/// items on that worker, in turn (a worker waiting on items queued behind it could wait for
/// ever).
fn on_a_worker() -> bool {
    pool().current_thread_index().is_some()
}

/// Set when the step that submitted the items stops (its sink said so, or it panicked): the
/// items it submitted and no worker has started are then skipped.
struct StopOnDrop<'a>(&'a AtomicBool);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// The variable that sets how many worker threads a build runs its parallel steps on, in place
/// of the cores the process may use: fewer to leave cores to other work on a shared machine, more to
/// hold in flight what a bigger machine holds (how a 16-core build's memory was measured on two
/// cores, bench/RESULTS.md). The build's output does not depend on it.
pub const THREADS_VAR: &str = "STOREMAP_THREADS";
/// The most threads [`THREADS_VAR`] may ask for.
const MAX_THREADS: usize = storemap_core::MAX_BUILD_THREADS;

/// [`THREADS_VAR`] as set: `Ok(None)` where it is unset or empty, an error naming it for
/// anything but a whole number from 1 to [`MAX_THREADS`] (the CLI refuses to start then).
pub fn threads_setting() -> std::result::Result<Option<usize>, String> {
    let v = match std::env::var(THREADS_VAR) {
        Err(std::env::VarError::NotPresent) => return Ok(None),
        Err(e) => return Err(format!("{THREADS_VAR}: {e}")),
        Ok(v) => v,
    };
    match v.trim() {
        "" => Ok(None),
        t => t
            .parse::<usize>()
            .ok()
            .filter(|n| (1..=MAX_THREADS).contains(n))
            .map(Some)
            .ok_or_else(|| format!("{THREADS_VAR}={v:?}: a whole number of threads from 1 to {MAX_THREADS}")),
    }
}

/// The process's worker threads, which every parallel step shares: [`THREADS_VAR`] where set,
/// else the cores this process may use (its affinity mask, what `taskset` and the benchmarks
/// set, which the standard library reads; 2 where it cannot tell). Every window of work kept
/// ahead is a multiple of it.
pub fn threads() -> usize {
    static SET: OnceLock<Option<usize>> = OnceLock::new();
    SET.get_or_init(|| threads_setting().ok().flatten()).unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()))
}

/// Maps `f` over `items` on every core this process may use, keeping order. Each thread takes
/// the next item not yet taken: callers pass brands in rank order, biggest first, so the big
/// ones start first and the small ones fill in behind them (a fixed deal, thread t taking t,
/// t+T, ..., left one thread with the biggest brands and the others idle on 16 cores). The
/// result is the same whatever the timing: each output goes to its item's place.
/// (Rayon's parallel iterators were tried here: on two cores the build took 2 s longer, their
/// work stealing crowding out the border loader that runs beside generation. Here each worker
/// of the process's pool runs one loop over the items, taking them in order.)
/// Fewer items than 64 run on the calling thread: per-row work that small costs less than the
/// threads.
pub fn parallel_map<T: Sync, U: Send>(items: &[T], f: impl Fn(&T) -> U + Sync) -> Vec<U> {
    parallel_map_from(64, items, f)
}

/// [`parallel_map`] for items each worth a thread of their own (a brand's world to generate):
/// on every core from `min_items` items up.
pub fn parallel_map_from<T: Sync, U: Send>(min_items: usize, items: &[T], f: impl Fn(&T) -> U + Sync) -> Vec<U> {
    let threads = threads().max(1).min(items.len().max(1));
    if items.len() < min_items.max(2) || threads == 1 || on_a_worker() {
        return items.iter().map(&f).collect();
    }
    let next = AtomicUsize::new(0);
    let parts = Mutex::new(Vec::with_capacity(threads));
    pool().in_place_scope(|s| {
        for _ in 0..threads {
            let (f, next, parts) = (&f, &next, &parts);
            s.spawn(move |_| {
                let mut done = Vec::new();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(item) = items.get(i) else { break };
                    done.push((i, f(item)));
                }
                parts.lock().unwrap_or_else(|e| e.into_inner()).push(done);
            });
        }
    });
    let mut slots: Vec<Option<U>> = std::iter::repeat_with(|| None).take(items.len()).collect();
    for (i, u) in parts.into_inner().unwrap_or_else(|e| e.into_inner()).into_iter().flatten() {
        slots[i] = Some(u);
    }
    slots.into_iter().map(|u| u.expect("every item mapped")).collect()
}

/// Maps `f` over `items` on every core, as [`parallel_map`] does, and hands each result to
/// `sink` on the calling thread in the items' order as soon as it and every one before it are
/// done. Item `i` starts only when `ahead(next, i)` allows it, `next` being the item `sink`
/// waits for (the next one always may), which bounds the results waiting at once; nothing waits
/// for a whole block of items to finish, as in blocks a block's slowest item (the biggest brand)
/// held every core but one idle at its end. `sink` may stop the run: no item starts after a
/// [`ControlFlow::Break`].
pub fn parallel_stream<T: Sync, U: Send>(
    items: &[T],
    ahead: impl Fn(usize, usize) -> bool + Sync,
    f: impl Fn(&T) -> U + Sync,
    mut sink: impl FnMut(U) -> ControlFlow<()>,
) {
    let threads = threads().max(1).min(items.len().max(1));
    if threads == 1 || items.len() < 2 || on_a_worker() {
        let mut longest = Longest::default();
        for t in items {
            if sink(longest.time(&f, t)).is_break() {
                return;
            }
        }
        return;
    }
    let stop = AtomicBool::new(false);
    pool().in_place_scope(|s| {
        // Whatever ends this scope (the sink's break, a panic) stops the items not started.
        let _stop = StopOnDrop(&stop);
        let mut turns = Turns::new();
        // Submits, in order, every item `ahead` lets start while `next` is the one awaited.
        let submit = |turns: &mut Turns<U>, next: usize| {
            while turns.sent < items.len() && (turns.sent == next || ahead(next, turns.sent)) {
                let (item, f) = (&items[turns.sent], &f);
                turns.submit(s, &stop, move || Longest::default().time(f, item));
            }
        };
        submit(&mut turns, 0);
        for next in 0..items.len() {
            let u = turns.take();
            // The items the next turn lets start go out before this one is handed on.
            submit(&mut turns, next + 1);
            if sink(u).is_break() {
                return;
            }
        }
    });
}

/// Jobs out at once, per thread, across every [`in_order`] running in the process: the four
/// imports run at once, each reading its file and handing its rows out (and the Parquet ones
/// making their rows out too), and with only a window of their own they could hold eight times
/// what keeps the threads busy.
const JOBS_OUT_PER_THREAD: usize = 2;

/// Jobs submitted by an [`in_order`] and not yet taken, every call in the process together.
static JOBS_OUT: AtomicUsize = AtomicUsize::new(0);

/// An [`in_order`] call's jobs counted in [`JOBS_OUT`]; they leave it when taken, and whatever
/// is left when the call ends (a panic) leaves it then.
struct Out(usize);

impl Out {
    /// One more job out, if the process's jobs out are below `limit`, or unless this call has
    /// some out already (a call with none out may always send one, so that no call waits on
    /// another call's progress, only on its own jobs, which the workers finish: none of them
    /// ever waits).
    fn reserve(&mut self, limit: usize) -> bool {
        let room = JOBS_OUT.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| (n < limit || self.0 == 0).then_some(n + 1)).is_ok();
        self.0 += room as usize;
        room
    }

    fn taken(&mut self) {
        self.0 -= 1;
        JOBS_OUT.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Drop for Out {
    fn drop(&mut self) {
        JOBS_OUT.fetch_sub(self.0, Ordering::AcqRel);
    }
}

/// Running totals of item sizes for a [`parallel_stream`] window: `t[i]` is the size of the
/// items before item `i`, `t[len]` of them all.
pub fn running_totals(sizes: impl IntoIterator<Item = u64>) -> Vec<u64> {
    std::iter::once(0)
        .chain(sizes.into_iter().scan(0, |sum, n| {
            *sum += n;
            Some(*sum)
        }))
        .collect()
}

/// Whether item `i` may start while `next` is the item the sink waits for, by size: the items
/// after `next` up to `i` come to at most `cap` (`next`'s own size is not counted: it is never
/// held back, and the biggest alone may be over the cap). `totals` from [`running_totals`].
pub fn ahead_within(totals: &[u64], next: usize, i: usize, cap: u64) -> bool {
    totals[i + 1] - totals[next + 1] <= cap
}

/// Runs `work` on every core over the jobs `produce` submits, one at a time, from the calling
/// thread, and hands each result to `take` on the calling thread in the order its job was
/// submitted: a reader that must go through its file in order (a Parquet row group's rows, an
/// import's batches of rows) hands on what it read and goes on reading
/// while the cores match and pack it. At most `ahead_per_core` jobs per core are out at once,
/// and at most [`JOBS_OUT_PER_THREAD`] per thread of every call in the process together, plus
/// one for each call (submitting waits for this call's oldest), which bounds what waits in
/// memory. `take` runs
/// inside `submit`, as results come in, and for the rest once `produce` returns. A panic in
/// `work` reaches the caller when its result's turn comes; on one core everything runs in turn
/// on the calling thread.
pub fn in_order<J: Send, R: Send, T>(
    ahead_per_core: usize,
    work: impl Fn(J) -> R + Sync,
    mut take: impl FnMut(R),
    produce: impl FnOnce(&mut dyn FnMut(J)) -> T,
) -> T {
    let threads = threads().max(1);
    if threads == 1 || on_a_worker() {
        return produce(&mut |j| take(work(j)));
    }
    let ahead = (ahead_per_core * threads).max(1);
    let stop = AtomicBool::new(false);
    pool().in_place_scope(|s| {
        // A panic here (in `produce`, `take`, or a job's, handed on) skips the jobs not started.
        let _stop = StopOnDrop(&stop);
        let mut order = InOrder { turns: Turns::new(), out: Out(0) };
        let limit = JOBS_OUT_PER_THREAD * threads;
        let out = produce(&mut |j| {
            // Room for this job: the oldest ones' results taken first, within this call's
            // window and the process's.
            order.take_until((order.turns.sent + 1).saturating_sub(ahead), &mut take);
            while !order.out.reserve(limit) {
                order.take_until(order.turns.next + 1, &mut take);
            }
            let work = &work;
            order.turns.submit(s, &stop, move || work(j));
            order.take_ready(&mut take);
        });
        order.take_until(order.turns.sent, &mut take);
        out
    })
}

/// Jobs run on the pool, their results handed back on the submitting thread in the order they
/// were submitted: [`parallel_stream`]'s items and [`in_order`]'s jobs.
struct Turns<R> {
    done: std::sync::mpsc::Sender<(usize, std::thread::Result<R>)>,
    results: std::sync::mpsc::Receiver<(usize, std::thread::Result<R>)>,
    /// Results come in as workers finish, and wait here until their turn.
    waiting: BTreeMap<usize, std::thread::Result<R>>,
    /// Jobs submitted.
    sent: usize,
    /// The job whose result is handed back next.
    next: usize,
}

impl<R: Send> Turns<R> {
    fn new() -> Turns<R> {
        let (done, results) = std::sync::mpsc::channel();
        Turns { done, results, waiting: BTreeMap::new(), sent: 0, next: 0 }
    }

    /// Runs `job` on one of `scope`'s workers as the next job, unless `stop` is set by the
    /// time a worker takes it up. A panic in it is kept as its result.
    fn submit<'s>(&mut self, scope: &rayon::Scope<'s>, stop: &'s AtomicBool, job: impl FnOnce() -> R + Send + 's)
    where
        R: 's,
    {
        let (i, done) = (self.sent, self.done.clone());
        scope.spawn(move |_| {
            if stop.load(Ordering::Relaxed) {
                return;
            }
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
            // The receiver is gone only once the step has stopped.
            let _ = done.send((i, r));
        });
        self.sent += 1;
    }

    /// The next job's result, waiting for it; its panic goes on from here.
    fn take(&mut self) -> R {
        loop {
            if let Some(r) = self.waiting.remove(&self.next) {
                return self.hand_back(r);
            }
            let (i, r) = self.results.recv().expect("every job submitted sends its result");
            self.waiting.insert(i, r);
        }
    }

    /// The next job's result if it is done, without waiting.
    fn ready(&mut self) -> Option<R> {
        while let Ok((i, r)) = self.results.try_recv() {
            self.waiting.insert(i, r);
        }
        self.waiting.remove(&self.next).map(|r| self.hand_back(r))
    }

    fn hand_back(&mut self, r: std::thread::Result<R>) -> R {
        self.next += 1;
        r.unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    }
}

/// [`in_order`]'s jobs, counted out of the process's window as their results are taken.
struct InOrder<R> {
    turns: Turns<R>,
    out: Out,
}

impl<R: Send> InOrder<R> {
    /// Hands on results until job `end`'s turn, waiting for each.
    fn take_until(&mut self, end: usize, take: &mut impl FnMut(R)) {
        while self.turns.next < end {
            let r = self.turns.take();
            self.out.taken();
            take(r);
        }
    }

    /// Hands on the results whose turn has come, without waiting.
    fn take_ready(&mut self, take: &mut impl FnMut(R)) {
        while let Some(r) = self.turns.ready() {
            self.out.taken();
            take(r);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::ops::ControlFlow;

    use super::{in_order, parallel_map, parallel_stream, threads};

    #[test]
    fn the_longest_item_of_a_step_is_kept_for_the_phase() {
        // One item sleeps 80 ms, the others nothing: the longest item is at least that long.
        // (Other tests' items may run meanwhile in this process and only raise it: the bound
        // is a floor.)
        let items: Vec<u64> = (0..100).collect();
        let work = |&i: &u64| {
            if i == 37 {
                std::thread::sleep(std::time::Duration::from_millis(80));
            }
            i
        };
        super::take_longest_item();
        let mut out = Vec::new();
        parallel_stream(
            &items,
            |next, i| i < next + 8,
            work,
            |i| {
                out.push(i);
                ControlFlow::Continue(())
            },
        );
        assert_eq!(out, items);
        assert!(super::take_longest_item() >= std::time::Duration::from_millis(80));
    }

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

    #[test]
    fn a_stream_hands_results_over_in_order_within_its_window() {
        let items: Vec<u64> = (0..500).collect();
        let waiting = std::sync::atomic::AtomicUsize::new(0);
        let (mut out, mut most) = (Vec::new(), 0);
        parallel_stream(
            &items,
            |next, i| i < next + 8,
            |&i| {
                // The first items cost the most, as the biggest brands do.
                let spin = (0..(500 - i) * 200).fold(0u64, |a, b| a.wrapping_add(b % 7));
                waiting.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                (i, spin)
            },
            |(i, _)| {
                // Results made but not yet handed over never exceed the window, plus the one
                // being handed over (its turn has passed when the sink runs).
                most = most.max(waiting.fetch_sub(1, std::sync::atomic::Ordering::SeqCst));
                out.push(i);
                ControlFlow::Continue(())
            },
        );
        assert_eq!(out, items);
        assert!(most <= 9, "{most} results waited at once");
    }

    #[test]
    fn a_stream_stops_when_its_sink_says_so() {
        let items: Vec<u32> = (0..10_000).collect();
        let started = std::sync::atomic::AtomicUsize::new(0);
        let mut seen = Vec::new();
        parallel_stream(
            &items,
            |next, i| i < next + 4,
            |&i| {
                started.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                i
            },
            |i| {
                seen.push(i);
                if i == 20 {
                    ControlFlow::Break(())
                } else {
                    ControlFlow::Continue(())
                }
            },
        );
        assert_eq!(seen, (0..=20).collect::<Vec<_>>());
        // Nothing past the turn of the last item handed over, and its few ahead, was started.
        let n = started.load(std::sync::atomic::Ordering::SeqCst);
        assert!(n <= 21 + 4 + 2, "{n} items started");
    }

    #[test]
    #[should_panic(expected = "item 3")]
    fn a_panic_in_a_worker_reaches_the_caller() {
        let items: Vec<u32> = (0..100).collect();
        parallel_stream(&items, |next, i| i < next + 4, |&i| if i == 3 { panic!("item 3") } else { i }, |_| ControlFlow::Continue(()));
    }

    #[test]
    #[should_panic(expected = "sink")]
    fn a_panic_in_the_sink_stops_the_workers() {
        let items: Vec<u32> = (0..100).collect();
        parallel_stream(
            &items,
            |next, i| i < next + 4,
            |&i| i,
            |i| {
                assert!(i < 3, "sink");
                ControlFlow::Continue(())
            },
        );
    }

    /// Work of uneven cost: the earlier jobs cost the most, so later ones finish first.
    fn costly(i: u64, of: u64) -> u64 {
        (0..(of - i) * 300).fold(i, |a, b| a.wrapping_add(b % 5)).wrapping_sub((0..(of - i) * 300).map(|b| b % 5).sum::<u64>())
    }

    #[test]
    fn in_order_hands_results_over_in_the_order_jobs_were_submitted() {
        let mut out = Vec::new();
        let said = in_order(
            2,
            |i: u64| costly(i, 400),
            |r| out.push(r),
            |submit| {
                (0..400).for_each(&mut *submit);
                "read"
            },
        );
        assert_eq!(said, "read");
        assert_eq!(out, (0..400).collect::<Vec<u64>>());
        let mut none = Vec::<u64>::new();
        assert_eq!(in_order(2, |i: u64| i, |r| none.push(r), |_| 7), 7);
        assert!(none.is_empty());
    }

    #[test]
    fn in_order_keeps_at_most_its_window_of_jobs_out() {
        let cores = threads();
        if cores == 1 {
            return;
        }
        let ahead = 2 * cores;
        let taken = std::cell::Cell::new(0usize);
        let mut lag = Vec::new();
        in_order(
            2,
            |i: u64| costly(i % 8, 8),
            |_| taken.set(taken.get() + 1),
            |submit| {
                for k in 0..(6 * ahead) as u64 {
                    submit(k);
                    // Once job k is out, every job older than the window has been taken.
                    lag.push((k as usize + 1).saturating_sub(ahead) <= taken.get());
                }
            },
        );
        assert!(lag.iter().all(|&ok| ok), "jobs beyond the window were out: {lag:?}");
        assert_eq!(taken.get(), 6 * ahead);
    }

    #[test]
    fn in_order_calls_at_once_share_one_window() {
        // Four calls at once (the four imports), each allowing 8 jobs per core of its own:
        // together they keep at most the process's window out, plus one each (a call with
        // none out may always send one). Jobs out are counted here, apart from the code's own
        // count: one more once its submit returns, one fewer when taken. A call's part of this
        // count passes its part of the code's by at most the job it is taking, and a call is
        // over the window by at most one job either way, so the bound is the same.
        let cores = threads();
        if cores == 1 {
            return;
        }
        let out = std::sync::atomic::AtomicIsize::new(0);
        let most = std::sync::atomic::AtomicIsize::new(0);
        std::thread::scope(|s| {
            for _ in 0..4 {
                let (out, most) = (&out, &most);
                s.spawn(move || {
                    let mut got = Vec::new();
                    in_order(
                        8,
                        |i: u64| {
                            std::thread::sleep(std::time::Duration::from_micros(200));
                            i
                        },
                        |r| {
                            out.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
                            got.push(r);
                        },
                        |submit| {
                            for k in 0..600 {
                                submit(k);
                                let n = out.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
                                most.fetch_max(n, std::sync::atomic::Ordering::SeqCst);
                            }
                        },
                    );
                    assert_eq!(got, (0..600).collect::<Vec<u64>>());
                });
            }
        });
        let most = most.into_inner();
        assert!(most <= (super::JOBS_OUT_PER_THREAD * cores + 4) as isize, "{most} jobs were out at once");
    }

    #[test]
    #[should_panic(expected = "job 3")]
    fn a_panic_in_an_in_order_job_reaches_the_caller() {
        in_order(2, |i: u32| if i == 3 { panic!("job 3") } else { i }, |_| {}, |submit| (0..100).for_each(&mut *submit));
    }

    #[test]
    fn steps_at_once_share_the_process_workers() {
        // The four imports at once, each an in_order with a stream inside its reading (as ATP's
        // files and OSM's chunks are): every item runs on one of the process's `threads()`
        // workers, where each step used to start as many threads of its own.
        let cores = threads();
        if cores == 1 {
            return;
        }
        let ran_on = std::sync::Mutex::new(std::collections::HashSet::new());
        let note = || {
            ran_on.lock().unwrap().insert(std::thread::current().id());
            std::thread::sleep(std::time::Duration::from_micros(100));
        };
        std::thread::scope(|s| {
            for _ in 0..4 {
                let note = &note;
                s.spawn(move || {
                    let mut got = Vec::new();
                    in_order(
                        2,
                        |i: u64| {
                            note();
                            i
                        },
                        |r| got.push(r),
                        |submit| {
                            let items: Vec<u64> = (0..50).collect();
                            parallel_stream(
                                &items,
                                |next, i| i < next + 4,
                                |&i| {
                                    note();
                                    i
                                },
                                |i| {
                                    submit(i);
                                    ControlFlow::Continue(())
                                },
                            );
                        },
                    );
                    assert_eq!(got, (0..50).collect::<Vec<u64>>());
                });
            }
        });
        let n = ran_on.into_inner().unwrap().len();
        assert!(n <= cores, "items ran on {n} threads, with {cores} workers");
    }

    #[test]
    fn a_step_inside_a_workers_item_runs_on_that_worker() {
        // Every worker busy with an item that itself runs a step: each finishes (on its own
        // worker, in turn), none waits for work queued behind the others.
        let items: Vec<u64> = (0..(threads() as u64 * 4).max(8)).collect();
        let mut sums = Vec::new();
        in_order(
            2,
            |i: u64| {
                let inner: Vec<u64> = (0..100).map(|k| k * i).collect();
                let mut total = 0;
                parallel_stream(
                    &inner,
                    |next, k| k < next + 4,
                    |&v| v + 1,
                    |v| {
                        total += v;
                        ControlFlow::Continue(())
                    },
                );
                (total, parallel_map(&inner, |&v| v * 2).iter().sum::<u64>())
            },
            |r| sums.push(r),
            |submit| items.iter().for_each(|&i| submit(i)),
        );
        let expected: Vec<(u64, u64)> = items.iter().map(|&i| ((0..100).map(|k| k * i + 1).sum(), (0..100).map(|k| 2 * k * i).sum())).collect();
        assert_eq!(sums, expected);
    }
}
