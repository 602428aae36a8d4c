#!/usr/bin/env python3
"""How the synthetic build scales with cores on a machine with many (issue 33).

bench/cores.ts measures one core against two on the developers' machine; this script measures
1, 2, 4, ... N cores where there are N, on a machine that need not have Node: it needs only
python3, the pipeline binary (native/bin/storemap-ingest) and an extracted reference folder.
Each build is pinned to the first k cores (sched_setaffinity, which the pipeline's thread count
reads), into an empty folder; wall time, the child's own CPU time and peak RSS come from wait4.
One JSON line per build goes to stdout and to --out as it finishes, so a run cut short keeps
what it measured.

  python3 bench/cores_many.py --bin native/bin/storemap-ingest --reference REF --tables data \
      --plan 0.1:16,8,4,2,1 --plan 1:16,4 [--budget-s 480] [--out results.jsonl] [--malloc-conf CONF]
  python3 bench/cores_many.py --table results.jsonl     # the markdown table of a run's lines
"""
import argparse
import json
import os
import shutil
import sys
import tempfile
import time


def build(args, scale, cores, work):
    out_dir = os.path.join(work, f"build-{scale}-{cores}")
    shutil.rmtree(out_dir, ignore_errors=True)
    argv = [args.bin, "build", "--data-dir", out_dir, "--reference", args.reference, "--tables", args.tables,
            "--scale", str(scale), "--seed", "1", "--as-of", "2026-11-01T00:00:00Z"]
    stdout = os.path.join(work, "stdout.json")
    stderr = os.path.join(work, "stderr.txt")
    t0 = time.monotonic()
    pid = os.fork()
    if pid == 0:
        try:
            os.sched_setaffinity(0, range(cores))
            fd_out = os.open(stdout, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
            fd_err = os.open(stderr, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
            os.dup2(fd_out, 1)
            os.dup2(fd_err, 2)
            env = dict(os.environ)
            if args.malloc_conf:
                env["_RJEM_MALLOC_CONF"] = args.malloc_conf
            os.execve(argv[0], argv, env)
        finally:
            os._exit(127)
    timeline = sample(pid, args.timeline_s) if args.timeline_s else None
    _, status, usage = os.wait4(pid, 0)
    wall = time.monotonic() - t0
    shutil.rmtree(out_dir, ignore_errors=True)
    row = {"scale": scale, "cores": cores, "wall_s": round(wall, 2), "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
           "peak_rss_mib": round(usage.ru_maxrss / 1024, 1), "status": os.waitstatus_to_exitcode(status)}
    if args.malloc_conf:
        row["malloc_conf"] = args.malloc_conf
    if row["status"] != 0:
        with open(stderr) as f:
            row["stderr"] = f.read()[-2000:]
        return row
    with open(stdout) as f:
        summary = json.load(f)
    row["phases_s"] = summary.get("seconds", {})
    if timeline is not None:
        # The phase lines (CPU of the calling thread, longest item) and the cores in use over time.
        with open(stderr) as f:
            row["phase_lines"] = [line.rstrip() for line in f if ": " in line]
        row["timeline"] = timeline
    row["rows"] = summary.get("rows")
    row["reconcile"] = {k: v for k, v in summary.get("reconcile", {}).items() if isinstance(v, (int, float))}
    return row


def task_ticks(path):
    """User and system CPU ticks of a /proc stat file, 0 once the task is gone."""
    try:
        with open(path) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])
    except (OSError, IndexError, ValueError):
        return 0


def exited(pid):
    """The child has exited (a zombie until wait4 reaps it)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except (OSError, IndexError):
        return True


def sample(pid, bin_s):
    """Until the child exits, every `bin_s` seconds: the cores the whole process used, the ones its
    calling thread used, and the busiest other thread's share (one serial thread that bounds a phase
    shows as 1.0 there while the process uses few cores). CPU from /proc ticks (100 a second)."""
    hz = os.sysconf("SC_CLK_TCK")
    bins, last, t0 = [], None, time.monotonic()
    while True:
        tasks = {}
        try:
            for tid in os.listdir(f"/proc/{pid}/task"):
                tasks[tid] = task_ticks(f"/proc/{pid}/task/{tid}/stat")
        except OSError:
            break
        now = (time.monotonic(), task_ticks(f"/proc/{pid}/stat"), tasks)
        if last is not None:
            dt = now[0] - last[0]
            others = [v - last[2].get(t, v) for t, v in tasks.items() if t != str(pid)]
            bins.append([round(now[0] - t0, 2), round((now[1] - last[1]) / hz / dt, 2),
                         round((tasks.get(str(pid), 0) - last[2].get(str(pid), 0)) / hz / dt, 2),
                         round(max(others, default=0) / hz / dt, 2), len(tasks)])
        last = now
        time.sleep(bin_s)
        if exited(pid):
            break
    return bins


# "load reference" holds the border index since it became the land mask's grid (built beside the tables);
# "land mask" and "load borders" are the older records' phases.
PHASES = ("load reference", "generate sources", "import sources", "land mask", "load borders", "reconcile", "write snapshot")


def table(path):
    rows = [r for r in map(json.loads, open(path)) if r.get("status") == 0]
    one = {r["scale"]: r["wall_s"] for r in rows if r["cores"] == 1}
    print("| scale | cores | wall, s | speed-up | CPU, s | peak RSS, MiB | " + " | ".join(PHASES) + " |")
    print("|---:|---:|---:|---:|---:|---:|" + "---:|" * len(PHASES))
    for r in rows:
        up = f"{one[r['scale']] / r['wall_s']:.2f}x" if r["scale"] in one else "—"
        phases = " | ".join(f"{r['phases_s'].get(k, 0):.1f}" for k in PHASES)
        print(f"| {r['scale']:g} | {r['cores']} | {r['wall_s']:.1f} | {up} | {r['cpu_s']:.0f} | {r['peak_rss_mib']:.0f} | {phases} |")


def main():
    if sys.argv[1:2] == ["--table"]:
        table(sys.argv[2])
        return 0
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True)
    p.add_argument("--reference", required=True)
    p.add_argument("--tables", required=True)
    p.add_argument("--plan", action="append", required=True, help="SCALE:CORES,CORES,...")
    p.add_argument("--budget-s", type=float, default=480, help="skip a build once this much time has gone")
    p.add_argument("--out")
    p.add_argument("--malloc-conf", help="jemalloc options for the builds (_RJEM_MALLOC_CONF, in place of the binary's own), e.g. "
                   "background_thread:true,dirty_decay_ms:100,muzzy_decay_ms:0,narenas:8")
    p.add_argument("--timeline-s", type=float, default=0, help="also sample the cores in use every so many seconds, with the phase lines")
    args = p.parse_args()
    have = len(os.sched_getaffinity(0))
    print(json.dumps({"cores_available": have, "cpu_count": os.cpu_count()}), flush=True)
    start = time.monotonic()
    work = tempfile.mkdtemp(prefix="storemap-cores-")
    out = open(args.out, "a") if args.out else None
    for plan in args.plan:
        scale, cores = plan.split(":")
        for k in (int(c) for c in cores.split(",")):
            if k > have:
                continue
            if time.monotonic() - start > args.budget_s:
                print(json.dumps({"skipped": plan, "cores": k}), flush=True)
                continue
            row = build(args, float(scale), k, work)
            line = json.dumps(row)
            print(line, flush=True)
            if out:
                out.write(line + "\n")
                out.flush()
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
