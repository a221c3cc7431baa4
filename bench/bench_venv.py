"""The benchmark scripts' virtualenv (bench/.venv): standard library only, so a script
imports it before any third-party module and re-executes itself inside the venv."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO_DIR = BENCH_DIR.parent
VENV_DIR = BENCH_DIR / ".venv"
REQUIREMENTS = BENCH_DIR / "requirements.txt"


def ensure_venv_and_reexec(script: str) -> None:
    """Re-execute `script` inside bench/.venv, creating it and installing requirements if needed."""
    if Path(sys.prefix).resolve() == VENV_DIR.resolve():
        return
    python = VENV_DIR / "bin" / "python"
    if not python.exists():
        print(f"bench: creating {VENV_DIR.relative_to(REPO_DIR)}", flush=True)
        if subprocess.run([sys.executable, "-m", "venv", str(VENV_DIR)]).returncode != 0:
            # Debian's system python ships venv (ensurepip) in a separate package.
            if os.geteuid() == 0 and subprocess.run(["which", "apt-get"], capture_output=True).returncode == 0:
                subprocess.run(["apt-get", "install", "-y", "-q", "python3-venv"], check=True)
                subprocess.run([sys.executable, "-m", "venv", "--clear", str(VENV_DIR)], check=True)
            else:
                sys.exit("bench: cannot create a virtualenv; install python3-venv")
    # A stamp with the hash of requirements.txt makes the install idempotent and cheap.
    stamp = VENV_DIR / ".requirements.sha1"
    wanted = hashlib.sha1(REQUIREMENTS.read_bytes()).hexdigest()
    if not stamp.exists() or stamp.read_text().strip() != wanted:
        print("bench: installing Python dependencies (duckdb, psycopg, matplotlib)", flush=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                        "-r", str(REQUIREMENTS)], check=True)
        stamp.write_text(wanted + "\n")
    os.execv(str(python), [str(python), str(Path(script).resolve()), *sys.argv[1:]])
