"""The cluster client through the C client library, against real daemons."""
import os
import stat
import subprocess
import sys
import unittest

from sokovan import Client, errors
from sokovan.client import read_keyfile

from cluster import LocalCluster
from skvtest import SRC

SLOTS = "cpu=0.1,mem=32m"


class ClientTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.cluster = LocalCluster()
        try:
            cls.cluster.start()
            cls.admin = Client.connect(cls.cluster.endpoint,
                                       key_file=cls.cluster.key_file,
                                       timeout_ms=20000)
            cls.cluster.wait_agent(cls.admin)
        except BaseException:
            cls.cluster.stop()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.admin.close()
        cls.cluster.stop()

    def test_submit_show_list_logs(self):
        c = self.admin
        sid = c.submit(image="busybox", name="hello",
                       command=["sh", "-c", "echo hello; echo oops >&2"],
                       slots=SLOTS)
        s = c.wait(sid, timeout_s=60)
        self.assertEqual(s["status"], "TERMINATED", s)
        self.assertEqual(s["exit_code"], 0)
        self.assertEqual(s["name"], "hello")
        self.assertEqual(s["kernels"][0]["agent_id"], "a1")
        self.assertTrue(s["history"])
        self.assertEqual(c.logs(sid), b"hello\n")
        self.assertEqual(c.logs(sid, stream="stderr"), b"oops\n")
        ids = [x["session_id"] for x in c.ps()]
        self.assertIn(sid, ids)
        done = c.list(statuses=["TERMINATED"])
        self.assertTrue(all(x["status"] == "TERMINATED" for x in done))

    def test_stream_logs_while_running(self):
        c = self.admin
        sid = c.submit(image="busybox", slots=SLOTS, command=[
            "sh", "-c", "for i in 1 2 3 4; do echo line$i; sleep 0.3; done"])
        c.wait(sid, until=("RUNNING",) + ("TERMINATED", "ERROR"))
        chunks = list(c.log_chunks(sid, follow=True, poll_s=0.05))
        self.assertEqual(b"".join(chunks), b"line1\nline2\nline3\nline4\n")
        self.assertGreater(len(chunks), 1, "output arrived while it ran")

    def test_terminate(self):
        c = self.admin
        sid = c.submit(image="busybox", command=["sleep", "60"], slots=SLOTS)
        c.wait(sid, until=("RUNNING",))
        c.terminate(sid, reason="test", force=True)
        s = c.wait(sid, timeout_s=30)
        self.assertIn(s["status"], ("CANCELLED", "TERMINATED"))

    def test_admin_and_users(self):
        c = self.admin
        users = c.admin("user", "create", name="pyuser", role="user", active=1)
        self.assertEqual(users[0]["name"], "pyuser")
        keys = c.admin("keypair", "create", user="pyuser", active=1)
        ak, sk = keys[0]["access_key"], keys[0]["secret_key"]
        self.assertTrue(sk)
        names = [u["name"] for u in c.admin("user", "list")]
        self.assertIn("pyuser", names)
        with Client.connect(self.cluster.endpoint, access_key=ak,
                            secret_key=sk) as user:
            with self.assertRaises(errors.PermissionDeniedError) as ctx:
                user.admin("user", "list")
            self.assertEqual(ctx.exception.name, "SKV_EPERM")
            sid = user.submit(image="busybox", command=["true"], slots=SLOTS)
            self.assertIn(sid, [x["session_id"] for x in user.ps()])
        with self.assertRaises(ValueError):
            c.admin("user", "frobnicate")
        with self.assertRaises(TypeError):
            c.admin("user", "create", nickname="x")

    def test_quota(self):
        c = self.admin
        c.admin("project", "create", name="pyq", active=1)
        q = c.admin("quota", "update", scope="project", owner="pyq",
                    resource_group="default", guaranteed="cpu=1")
        self.assertEqual(q[0]["guaranteed"], "cpu=1")
        self.assertIsNone(q[0]["limit"])
        nodes = c.quota_tree("default")
        mine = [n for n in nodes if n["name"] == "pyq"]
        self.assertEqual(mine[0]["scope"], "project")
        self.assertEqual(mine[0]["parent"], "default")
        with self.assertRaises(errors.NotFoundError):
            c.admin("quota", "update", scope="project", owner="nope",
                    resource_group="default", guaranteed="cpu=1")
        c.admin("quota", "delete", scope="project", owner="pyq",
                resource_group="default")
        self.assertEqual(c.admin("quota", "list", owner="pyq"), [])

    def test_errors(self):
        c = self.admin
        with self.assertRaises(errors.NotFoundError) as ctx:
            c.show("no-such-session")
        self.assertTrue(ctx.exception.message)
        ak, _ = read_keyfile(self.cluster.key_file)
        with Client.connect(self.cluster.endpoint, access_key=ak,
                            secret_key="A" * 43 + "=") as bad:
            with self.assertRaises(errors.AuthError):
                bad.ps()
        loose = os.path.join(self.cluster.root, "loose.key")
        with open(self.cluster.key_file) as src, open(loose, "w") as dst:
            dst.write(src.read())
        os.chmod(loose, stat.S_IRUSR | stat.S_IWUSR | stat.S_IROTH)
        with self.assertRaises(errors.PermissionDeniedError):
            Client.connect(self.cluster.endpoint, key_file=loose)
        with self.assertRaises(errors.SokovanError):
            Client.connect("unix:/nonexistent.sock",
                           key_file=self.cluster.key_file)
        with self.assertRaises(TypeError):
            c.submit(image="busybox", command="echo", slots=SLOTS)

    def test_example_script_drives_the_cluster(self):
        script = os.path.join(SRC, "examples", "python", "local_cluster.py")
        r = subprocess.run([sys.executable, script, "--endpoint",
                            self.cluster.endpoint, "--key-file",
                            self.cluster.key_file], capture_output=True,
                           text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("hello from a sokovan session", r.stdout)


if __name__ == "__main__":
    unittest.main()
