"""The benchmark cluster's server process, for the sections that restart it."""

from __future__ import annotations

import os
import subprocess


def restart(args, data_dir: str) -> None:
    """Restarts the server of `data_dir` with `pg_ctl restart` (as the postgres user, with
    the options it was started with), logging to the cluster's server.log."""
    logfile = os.path.join(os.path.dirname(data_dir), "server.log")
    subprocess.run(["runuser", "-u", "postgres", "--", os.path.join(args.pg_bin, "pg_ctl"), "-D", data_dir,
                    "-l", logfile, "-w", "-m", "fast", "restart"], check=True, capture_output=True)
