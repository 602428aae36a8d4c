"""scripts/ray_build.py on a real local Ray cluster of two nodes (one CPU each, so the two
shards run on different nodes): the merged snapshot is the one-process build's byte for byte,
a shard that fails once is retried by Ray and the build still lands, and a shard that keeps
failing is named and leaves the serving snapshot as it was.

    ~/.cache/storemap/ray-venv/bin/python test/ray/test_ray_build.py   (scripts/test.sh runs it)
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

from ray.cluster_utils import Cluster

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RUNNER = os.path.join(ROOT, "scripts", "ray_build.py")
REFERENCE = os.environ.get("STOREMAP_REFERENCE_DIR", os.path.join(ROOT, "data", "generated", "reference"))
BUILD = ["build", "--scale", "0.01", "--seed", "7", "--as-of", "2026-11-01T00:00:00Z"]
# Ray's shared-memory object store: these tasks pass a few hundred bytes.
STORE = 80 * 2**20


def storemap(data_dir: str, *args: str) -> subprocess.CompletedProcess:
    os.makedirs(data_dir, exist_ok=True)
    link = os.path.join(data_dir, "reference")
    if not os.path.lexists(link):
        os.symlink(REFERENCE, link)
    env = {**os.environ, "STOREMAP_DATA_DIR": data_dir}
    return subprocess.run(["node", os.path.join(ROOT, "bin", "storemap.js"), *args], env=env, capture_output=True, text=True, cwd=ROOT)


class Arguments(unittest.TestCase):
    def test_rewrite_history_goes_to_the_merge_not_the_shards(self) -> None:
        sys.path.insert(0, os.path.join(ROOT, "scripts"))
        from ray_build import merge_only

        self.assertEqual(merge_only([*BUILD, "--rewrite-history"]), (BUILD, ["--rewrite-history"]))
        self.assertEqual(merge_only(BUILD), (BUILD, []))


class RayBuild(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = tempfile.mkdtemp(prefix="storemap-ray-")
        cls.cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "object_store_memory": STORE})
        cls.cluster.add_node(num_cpus=1, object_store_memory=STORE)
        cls.cluster.wait_for_nodes()
        one = storemap(os.path.join(cls.tmp, "one"), "data", *BUILD)
        assert one.returncode == 0, one.stderr
        with open(os.path.join(cls.tmp, "one", "snapshot.smap"), "rb") as f:
            cls.whole = f.read()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.cluster.shutdown()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def runner(self, name: str, *options: str, env: dict | None = None) -> subprocess.CompletedProcess:
        argv = [sys.executable, RUNNER, "--address", self.cluster.address, "--shards", "2", "--parts", os.path.join(self.tmp, name, "parts"),
                "--out", os.path.join(self.tmp, name, "data"), "--reference", REFERENCE, *options, "--", *BUILD]
        return subprocess.run(argv, env={**os.environ, **(env or {})}, capture_output=True, text=True, cwd=ROOT, timeout=900)

    def snapshot(self, name: str) -> bytes:
        with open(os.path.join(self.tmp, name, "data", "snapshot.smap"), "rb") as f:
            return f.read()

    def test_two_shards_on_two_nodes_merge_to_the_one_process_snapshot_through_a_retry(self) -> None:
        marker = os.path.join(self.tmp, "failed-once")
        done = self.runner("retried", env={"STOREMAP_RAY_FAIL_ONCE": f"2:{marker}"})
        self.assertEqual(done.returncode, 0, done.stderr[-3000:])
        self.assertTrue(os.path.exists(marker), "shard 2 failed once and was run again")
        said = [line for line in done.stdout.splitlines() if line.startswith('{"shard"')]
        self.assertEqual(sorted(s.split('"')[3] for s in said), ["1/2", "2/2"], done.stdout)
        for k in (1, 2):
            self.assertTrue(os.path.exists(os.path.join(self.tmp, "retried", "parts", f"part-{k}", "part.json")))
        self.assertTrue(self.snapshot("retried") == self.whole, "the merged snapshot differs from the one-process build's")

    def test_a_shard_that_keeps_failing_is_named_and_the_serving_snapshot_stays(self) -> None:
        ok = self.runner("kept")
        self.assertEqual(ok.returncode, 0, ok.stderr[-3000:])
        serving = self.snapshot("kept")
        marker = os.path.join(self.tmp, "fails")
        done = self.runner("kept", "--retries", "0", env={"STOREMAP_RAY_FAIL_ONCE": f"1:{marker}"})
        self.assertEqual(done.returncode, 1, done.stderr[-3000:])
        self.assertIn("shard 1/2 failed", done.stderr)
        self.assertIn("not merged", done.stderr)
        self.assertTrue(self.snapshot("kept") == serving)


if __name__ == "__main__":
    result = unittest.main(exit=False, verbosity=2).result
    bad = len(result.failures) + len(result.errors)
    print(f"{result.testsRun - bad} passed, {bad} failed")
    sys.exit(1 if bad or not result.wasSuccessful() else 0)
