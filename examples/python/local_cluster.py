#!/usr/bin/env python3
"""Drive a local sokovan cluster from Python through the client library.

Start one first (`make demo` or examples/local-cluster.sh: a manager and
one agent with a busybox image), then:

    python3 examples/python/local_cluster.py
    python3 examples/python/local_cluster.py --endpoint unix:/path/m.sock \\
        --key-file /path/admin.key

It lists the agents, submits a session, streams its output while it runs,
shows its final record and lists the sessions (`sokovan ps`).
"""
import argparse
import sys

import sokovan

DEFAULT_KEY = "/var/lib/sokovan/manager/admin.key"
DEFAULT_ENDPOINT = "unix:/run/sokovan/manager.sock"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--endpoint", default=DEFAULT_ENDPOINT)
    ap.add_argument("--key-file", default=DEFAULT_KEY)
    ap.add_argument("--image", default="busybox")
    args = ap.parse_args()
    try:
        client = sokovan.Client.connect(args.endpoint, key_file=args.key_file)
    except sokovan.SokovanError as e:
        print(f"cannot connect to {args.endpoint}: {e} "
              "(is a cluster running? make demo)", file=sys.stderr)
        return 1
    with client:
        for a in client.agents():
            print(f"agent {a['agent_id']}: {a['status']}, capacity "
                  f"{a['capacity']}, {a['n_running']} running")
        sid = client.submit(image=args.image, name="py-example",
                            slots="cpu=0.1,mem=32m", command=[
                                "sh", "-c", "echo hello from a sokovan session; "
                                "for i in 1 2 3; do echo step $i; sleep 0.2; done"])
        print(f"submitted {sid}")
        client.wait(sid, until=("RUNNING", "TERMINATED", "ERROR", "CANCELLED"))
        for chunk in client.log_chunks(sid, follow=True):
            sys.stdout.write(chunk.decode(errors="replace"))
        s = client.wait(sid)
        print(f"{sid}: {s['status']} exit {s['exit_code']} on "
              f"{', '.join(k['agent_id'] or '?' for k in s['kernels'])}")
        for row in client.ps(limit=5):
            print(f"  {row['session_id']:<24} {row['status']:<11} "
                  f"{row['name'] or ''}")
        return 0 if s["status"] == "TERMINATED" and s["exit_code"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
