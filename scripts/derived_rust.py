"""The one way the derive scripts (dial_tables.py, postal_regions.py, postal_anchors.py) write a
Rust table: formatted in the house style (rustfmt.toml), so that `cargo fmt --check` passes on it
as written, and with --check, compared with the committed file instead (npm test runs that)."""

import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent


def write(lines: list[str], out: pathlib.Path, script: str) -> bool:
    """Writes the table; returns False where --check found it as committed and wrote nothing
    (a differing one exits with a message)."""
    text = subprocess.run(
        ["rustfmt", "--edition", "2021", "--config-path", str(ROOT / "rustfmt.toml"), "--emit", "stdout"],
        input="\n".join(lines), capture_output=True, text=True, check=True, cwd=ROOT,
    ).stdout
    if "--check" in sys.argv:
        if out.read_text(encoding="utf-8") != text:
            sys.exit(f"{out.relative_to(ROOT)} is not what scripts/{script} derives: run it and commit the result")
        return False
    out.write_text(text, encoding="utf-8")
    return True
