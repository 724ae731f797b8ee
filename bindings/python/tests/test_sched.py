import unittest

from sokovan import Scheduler, Slots, errors

GPU = [{"id": f"gpu{i}", "whole_slot": "cuda.device",
        "share_slot": "cuda.shares"} for i in range(4)]


def cluster(**group):
    s = Scheduler()
    s.add_group("g", **group)
    for i in range(2):
        s.add_agent(f"n{i}", "g", "cpu=16,mem=64g", devices=GPU,
                    labels={"zone": "a" if i == 0 else "b"})
    return s


class SchedulerTest(unittest.TestCase):
    def test_submit_pass_and_results(self):
        with cluster(selector="concentrated") as s:
            s.submit("j1", "g", "cuda.device=2,cpu=4,mem=8g", user="ann")
            s.submit("j2", "g", kernels=["cpu=1", "cpu=1"],
                     cluster_mode="multi-node", one_kernel_per_agent=True)
            s.submit("j3", "g", "cuda.shares=0.5,cpu=1", labels={"zone": "b"})
            r = s.run_pass(now_ms=1000)
            self.assertEqual(r.now_ms, 1000)
            self.assertEqual(sorted(p["session_id"] for p in r), ["j1", "j2", "j3"])
            self.assertEqual(r.considered, 3)
            j1 = next(p for p in r if p["session_id"] == "j1")
            devs = j1["kernels"][0]["devices"]
            self.assertEqual([d["slot"] for d in devs], ["cuda.device"] * 2)
            self.assertTrue(all(d["whole"] and d["amount"] == 1000 for d in devs))
            self.assertEqual(sorted(r.agents_of("j2")), ["n0", "n1"])
            self.assertEqual(r.agents_of("j3"), ["n1"])
            self.assertEqual(s.state("j1"), "scheduled")
            s.mark_started("j1", 1100)
            self.assertEqual(s.state("j1"), "running")
            used, cap = s.agent_usage(r.agents_of("j1")[0])
            self.assertGreaterEqual(used["cpu"].value, 4)
            self.assertEqual(str(cap["mem"]), "64g")
            self.assertEqual(s.placement("j1")["kernels"][0]["agent_id"],
                             r.agents_of("j1")[0])
            s.mark_finished("j1", 2000)
            self.assertEqual(s.state("j1"), "finished")
            s.forget("j1")
            with self.assertRaises(errors.NotFoundError):
                s.state("j1")
            s.check()

    def test_pending_reasons_and_quota(self):
        with cluster() as s:
            s.set_policy("user", "bob", limit="cpu=2", max_pending=2)
            s.submit("big", "g", "cuda.device=5")
            s.submit("q", "g", "cpu=4", user="bob")
            s.submit("ok", "g", "cpu=1", user="bob")
            with self.assertRaises(errors.NoSpaceError):
                s.submit("third", "g", "cpu=1", user="bob")  # max_pending 2
            r = s.run_pass(10)
            self.assertEqual([p["session_id"] for p in r], ["ok"])
            big = s.reason("big")
            self.assertIn(big.code, ("resources", "has-reservation"))
            self.assertIn("cuda.device", big.text + str(big.short_slots))
            q = s.reason("q")
            self.assertEqual(q.code, "quota")
            self.assertEqual((q.scope, q.detail, q.slot), ("user", "bob", "cpu"))
            self.assertEqual(q.shortfall, 2000)   # 4 asked, limit 2, none used
            self.assertIn("bob", q.text)
            u = s.owner_usage("user", "bob")
            self.assertEqual((u["active"], u["pending"]), (1, 1))
            self.assertEqual(u["usage"], Slots("cpu=1"))
            with self.assertRaises(ValueError):
                s.set_policy("team", "x")

    def test_preemption_plan(self):
        with cluster(preemption=True) as s:
            s.submit("low", "g", "cuda.device=4,cpu=1", priority=0,
                     preemptible=True)
            s.submit("low2", "g", "cuda.device=4,cpu=1", priority=0,
                     preemptible=True)
            s.run_pass(0)
            s.mark_started("low", 0)
            s.mark_started("low2", 0)
            s.submit("high", "g", "cuda.device=4", priority=10)
            r = s.run_pass(100000)
            self.assertEqual(len(r), 0)
            self.assertEqual(len(r.preemptions), 1)
            plan = r.preemptions[0]
            self.assertIn(plan["victim"], ("low", "low2"))
            self.assertEqual(plan["for_session"], "high")
            self.assertEqual(plan["cause"], "priority")
            self.assertEqual(s.reason("high").code, "preempting")
            s.requeue(plan["victim"], 100001)
            r = s.run_pass(100002)
            self.assertEqual([p["session_id"] for p in r], ["high"])

    def test_agents_and_bad_input(self):
        with cluster() as s:
            s.submit("j", "g", "cpu=1")
            s.run_pass(0)
            agent = s.placement("j")["kernels"][0]["agent_id"]
            with self.assertRaises(errors.BusyError):
                s.remove_agent(agent)
            self.assertEqual(s.agent_lost(agent, 5), 1)
            self.assertEqual(s.state("j"), "lost")
            with self.assertRaises(errors.InvalidArgumentError):
                s.submit("bad", "g", "")          # empty request
            with self.assertRaises(errors.NotFoundError):
                s.submit("bad", "nogroup", "cpu=1")
            with self.assertRaises(TypeError):
                s.submit("bad", "g", "cpu=1", type=3)
            with self.assertRaises(TypeError):
                s.add_agent("x", "g", "cpu=1", devices=["gpu0"])
            s.set_schedulable("n0" if agent == "n1" else "n1", False)
            s.submit("k", "g", "cpu=1")
            self.assertEqual(s.run_pass(6).placements, [])
            self.assertEqual(s.reason("k").code, "no-agent")
            s.check()

    def test_simulator_policy_as_selector(self):
        with Scheduler() as s:
            s.add_group("g", selector="frag")
            s.add_agent("n0", "g", "cpu=8,mem=8g", devices=GPU)
            s.submit("x", "g", "cuda.shares=0.5")
            self.assertEqual(len(s.run_pass(0)), 1)


if __name__ == "__main__":
    unittest.main()
