#!/usr/bin/env python3
"""A storemap build in shards on a Ray cluster: one Ray task per shard, then the merge.

Each task runs `storemap data build|import ... --shard K/N --part PARTS/part-K` in a scratch data
folder of its own (a synthetic build generates its world there), and writes its part to PARTS, a
folder every node and the driver can read (NFS, a mounted bucket). Ray places the tasks, retries
a task that fails or whose node dies (`--retries`), and names a shard that still fails; the
driver then runs `storemap data merge` into OUT, which replaces OUT's snapshot only when every
part is there, complete and of the same build. The merged snapshot is the one a one-process
build writes from the same inputs, byte for byte (docs/DEPLOYMENT.md, "A build on many
machines").

    python scripts/ray_build.py --address auto --shards 16 --parts /shared/parts \\
        --out /srv/storemap/data -- import --osm /shared/branded.osm.pbf --overture /shared/overture \\
        --as-of 2026-11-30T00:00:00Z

Everything after `--` is `storemap data build|import`'s own arguments; without `--as-of` the
driver's current time is given to every shard (each process would otherwise take its own).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid

import ray

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: Set only by tests: "K:FILE" makes shard K fail once (the first run that finds FILE missing
#: creates it and fails), so the engine's retry is exercised for real.
FAIL_ONCE_ENV = "STOREMAP_RAY_FAIL_ONCE"
#: What a failure message keeps of the command's output.
TAIL_CHARS = 2000
#: storemap-ingest's MAX_SHARDS.
MAX_SHARDS = 1024
#: Settings that stay on the driver: the ledger and anything secret has no business in a build,
#: and Ray's runtime environment is readable through its state API.
PRIVATE_SETTINGS = ("STOREMAP_DATABASE_URL", "STOREMAP_DB", "STOREMAP_DATA_DIR")
SECRET_WORDS = ("KEY", "SECRET", "PASSWORD", "TOKEN")


class ShardFailed(RuntimeError):
    """A shard's `storemap` run exited non-zero."""


def storemap_command(spec: str | None) -> list[str]:
    """The command that runs storemap on every node: given, else this checkout's."""
    if spec:
        return shlex.split(spec)
    return ["node", os.path.join(ROOT, "bin", "storemap.js")]


def link_reference(data_dir: str, reference: str | None) -> None:
    """Points a data folder's reference data at a shared copy, so that no node extracts its own."""
    if not reference:
        return
    os.makedirs(data_dir, exist_ok=True)
    target = os.path.join(data_dir, "reference")
    if not os.path.lexists(target):
        os.symlink(os.path.abspath(reference), target)


def inject_failure(k: int) -> None:
    spec = os.environ.get(FAIL_ONCE_ENV)
    if not spec:
        return
    shard, marker = spec.split(":", 1)
    if int(shard) == k and not os.path.exists(marker):
        with open(marker, "w") as f:
            f.write(socket.gethostname())
        raise ShardFailed(f"shard {k}: failure injected by {FAIL_ONCE_ENV}")


def run_shard(k: int, n: int, verb: str, args: list[str], parts: str, scratch_root: str, reference: str | None, command: list[str]) -> dict:
    """One shard, on whichever node Ray chose; its scratch folder is removed afterwards."""
    started = time.time()
    inject_failure(k)
    scratch = os.path.join(scratch_root, f"storemap-shard-{k}-of-{n}-{uuid.uuid4().hex[:8]}")
    part = os.path.join(parts, f"part-{k}")
    try:
        link_reference(scratch, reference)
        env = {**os.environ, "STOREMAP_DATA_DIR": scratch}
        argv = [*command, "data", verb, *args, "--shard", f"{k}/{n}", "--part", part]
        done = subprocess.run(argv, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            tail = (done.stderr + done.stdout)[-TAIL_CHARS:]
            raise ShardFailed(f"shard {k}/{n} failed on {socket.gethostname()} (exit {done.returncode}): {tail}")
        return {"shard": f"{k}/{n}", "host": socket.gethostname(), "seconds": round(time.time() - started, 1), "said": done.stdout.strip().splitlines()[-1:]}
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def merge_only(args: list[str]) -> tuple[list[str], list[str]]:
    """The build's arguments for the shards, and those only the merge takes: the history is the
    merge's to write (the shards write parts), so `--rewrite-history` goes to it alone."""
    merge = [a for a in args if a == "--rewrite-history"][:1]
    return [a for a in args if a != "--rewrite-history"], merge


def main(argv: list[str]) -> int:
    if "--" not in argv:
        print("usage: ray_build.py [options] -- build|import [storemap data arguments]", file=sys.stderr)
        return 2
    split = argv.index("--")
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--shards", type=int, required=True, help="N: the build is cut into N shards of about equal size")
    p.add_argument("--parts", required=True, help="a folder the workers write parts to and the driver reads (shared)")
    p.add_argument("--out", required=True, help="the data folder whose snapshot the merge replaces")
    p.add_argument("--address", default=None, help="the Ray cluster (`auto` for the one this machine belongs to); none: a local one")
    p.add_argument("--retries", type=int, default=2, help="times Ray reruns a failed shard before the build gives up")
    p.add_argument("--cpus-per-shard", type=float, default=1, help="CPUs Ray reserves for each shard (a shard uses every core it is given)")
    p.add_argument("--memory-per-shard", type=float, default=0, help="GiB of memory Ray reserves for each shard (docs/DEPLOYMENT.md has the per-row figures)")
    p.add_argument("--reference", default=None, help="a shared copy of the reference data (a data folder's reference/), linked into every scratch folder")
    p.add_argument("--scratch", default=None, help="where each shard's scratch data folder goes on its node (default: the system temp folder)")
    p.add_argument("--storemap", default=None, help="the command that runs storemap on every node (default: node <this checkout>/bin/storemap.js)")
    o = p.parse_args(argv[:split])
    rest = argv[split + 1 :]
    if not rest or rest[0] not in ("build", "import"):
        p.error("after -- comes `build` or `import` and its arguments")
    if not 1 <= o.shards <= MAX_SHARDS:
        p.error(f"--shards must be from 1 to {MAX_SHARDS}")
    if o.retries < 0:
        p.error("--retries must be 0 or more")
    verb, args = rest[0], rest[1:]
    if any(a.startswith("--shard") or a.startswith("--part") for a in args):
        p.error("the runner sets --shard and --part itself")
    args, rewrite = merge_only(args)
    if not any(a == "--as-of" or a.startswith("--as-of=") for a in args):
        args = [*args, "--as-of", time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())]
    parts = os.path.abspath(o.parts)
    os.makedirs(parts, exist_ok=True)
    command = storemap_command(o.storemap)
    scratch_root = o.scratch or tempfile.gettempdir()

    ray.init(address=o.address, include_dashboard=False, log_to_driver=False)
    # The driver's storemap build settings (STOREMAP_DISABLED_SOURCES, STOREMAP_MULTI_SOURCE…)
    # hold for every shard: Ray's workers do not inherit the driver's environment.
    settings = {
        k: v
        for k, v in os.environ.items()
        if k.startswith("STOREMAP_") and k not in PRIVATE_SETTINGS and not any(w in k for w in SECRET_WORDS)
    }
    options = {"num_cpus": o.cpus_per_shard, "max_retries": o.retries, "retry_exceptions": True, "runtime_env": {"env_vars": settings}}
    if o.memory_per_shard > 0:
        options["memory"] = int(o.memory_per_shard * 2**30)
    task = ray.remote(run_shard).options(**options)
    pending = {task.remote(k, o.shards, verb, args, parts, scratch_root, o.reference, command): k for k in range(1, o.shards + 1)}
    failed = []
    while pending:
        ready, _ = ray.wait(list(pending), num_returns=1)
        k = pending.pop(ready[0])
        try:
            print(json.dumps(ray.get(ready[0])), flush=True)
        except Exception as e:  # Ray wraps the task's own exception; its message names the shard
            cause = getattr(e, "cause", None) or e
            failed.append(k)
            print(f"shard {k}/{o.shards} failed after {o.retries} retries: {cause}", file=sys.stderr, flush=True)
    ray.shutdown()
    if failed:
        print(f"not merged: shard{'s' if len(failed) > 1 else ''} {', '.join(f'{k}/{o.shards}' for k in sorted(failed))} failed; {o.out} is unchanged", file=sys.stderr)
        return 1

    link_reference(o.out, o.reference)
    merge = [*command, "data", "merge", *(os.path.join(parts, f"part-{k}") for k in range(1, o.shards + 1)), "--out", o.out, *rewrite]
    return subprocess.run(merge, env={**os.environ, "STOREMAP_DATA_DIR": os.path.abspath(o.out)}).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
