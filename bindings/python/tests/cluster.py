"""A local cluster of the real daemons for the client tests: one
sokovan-manager on a Unix socket and one sokovan-agent, in a scratch
directory, started the way tests/e2e_cluster.h starts them (same flags).
The busybox image is imported through the library (skv_image_import_tar)."""
import ctypes
import os
import shutil
import signal
import subprocess
import tempfile
import time
import unittest

from sokovan import _lib

from skvtest import BUILD


def skip_reason():
    if os.geteuid() != 0:
        return "needs root (the agent runs containers)"
    if not os.access("/bin/busybox", os.X_OK):
        return "needs /bin/busybox (Debian package busybox-static)"
    for d in ("sokovan-manager", "sokovan-agent"):
        if not os.access(os.path.join(BUILD, "bin", d), os.X_OK):
            return f"needs {BUILD}/bin/{d} (make progs)"
    return None


def _import_busybox(root, images):
    rfs = os.path.join(root, "rfs")
    for d in ("bin", "etc", "tmp", "proc", "sys", "dev"):
        os.makedirs(os.path.join(rfs, d))
    os.chmod(os.path.join(rfs, "tmp"), 0o1777)
    shutil.copy("/bin/busybox", os.path.join(rfs, "bin", "busybox"))
    for a in ("sh", "true", "echo", "sleep", "cat", "seq"):
        os.symlink("busybox", os.path.join(rfs, "bin", a))
    tar = os.path.join(root, "busybox.tar")
    subprocess.run(["tar", "-C", rfs, "-cf", tar, "."], check=True)
    vp = ctypes.c_void_p
    f_open = _lib.fn("skv_image_store_open", ctypes.c_int,
                     ctypes.POINTER(vp), ctypes.c_char_p, _lib.ep)
    f_import = _lib.fn("skv_image_import_tar", ctypes.c_int, vp,
                       ctypes.c_char_p, ctypes.c_char_p, _lib.ep)
    f_free = _lib.fn("skv_image_store_free", None, vp)
    store = vp()
    _lib.call(f_open, ctypes.byref(store), images.encode())
    try:
        _lib.call(f_import, store, b"busybox", tar.encode())
    finally:
        f_free(store)


class LocalCluster:
    def __init__(self):
        why = skip_reason()
        if why:
            raise unittest.SkipTest("SKIP: " + why)
        self.root = tempfile.mkdtemp(prefix="skv-py-")
        self.data = os.path.join(self.root, "mgr")
        self.sock = os.path.join(self.root, "m.sock")
        self.endpoint = "unix:" + self.sock
        self.images = os.path.join(self.root, "images")
        self.key_file = os.path.join(self.data, "admin.key")
        self.procs = []
        _import_busybox(self.root, self.images)

    def _spawn(self, name, argv):
        log = open(os.path.join(self.root, name + ".log"), "ab")
        p = subprocess.Popen(argv, stdout=log, stderr=log,
                             stdin=subprocess.DEVNULL, start_new_session=True)
        log.close()
        self.procs.append((name, p))
        return p

    def log_tail(self, name):
        try:
            with open(os.path.join(self.root, name + ".log"), "rb") as f:
                return f.read()[-600:].decode(errors="replace")
        except OSError:
            return ""

    def start(self):
        b = os.path.join(BUILD, "bin")
        mgr = self._spawn("manager", [
            f"{b}/sokovan-manager", "--data-dir", self.data, "--listen",
            self.sock, "--tcp", "none", "--bootstrap-agents", "a1",
            "--heartbeat-interval-ms", "500", "--heartbeat-timeout-ms",
            "15000"])
        end = time.monotonic() + 15
        while not (os.path.exists(self.sock) and os.path.exists(self.key_file)):
            if mgr.poll() is not None or time.monotonic() > end:
                raise RuntimeError("sokovan-manager did not start: "
                                   + self.log_tail("manager"))
            time.sleep(0.02)
        state = os.path.join(self.root, "agent-a1")
        self._spawn("a1", [
            f"{b}/sokovan-agent", "--agent-id", "a1", "--manager",
            self.endpoint, "--data-dir", self.data, "--state-dir", state,
            "--run-dir", os.path.join(state, "containers"), "--image-dir",
            self.images, "--cpus", "0", "--memory", "4g",
            "--poll-interval-ms", "10", "--stats-interval-ms", "1000",
            "--reconnect-max-ms", "500"])
        return self

    def wait_agent(self, client, timeout_s=20):
        end = time.monotonic() + timeout_s
        while time.monotonic() < end:
            if any(a["status"] == "alive" for a in client.agents()):
                return
            time.sleep(0.05)
        raise RuntimeError("agent a1 did not register: " + self.log_tail("a1"))

    def stop(self):
        # agents first (they stop their containers), then the manager
        for name, p in reversed(self.procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        self.procs = []
        if os.environ.get("SKV_E2E_KEEP"):
            print(f"kept {self.root}")
            return
        subprocess.run(["rm", "-rf", "--one-file-system", self.root])
