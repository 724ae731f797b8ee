#!/usr/bin/env bash
# The peer of bench/e2e: the same N trivial jobs (/bin/true, 16 MiB) through
# Slurm on this machine, with a one-node cluster made for the run (munged,
# slurmctld, slurmd in a scratch directory, cgroup process tracking and
# task containment like sokovan's cgroups; Debian's slurm-wlm packages,
# stock scheduler settings). Jobs ask for 1 CPU (Slurm's smallest unit) on
# a partition that lets 16 jobs share a core, so two cores run up to 32
# jobs at once, more than the 20 that sokovan's 0.1-CPU sessions allow.
# Each job is submitted with sbatch, one process per job like the sokovan
# CLI; throughput is from the first submit until the queue is empty.
#   usage: slurm-peer.sh N
# Prints one JSON object; {"skipped":true,...} when Slurm or munge is not
# installed or the cluster does not come up. Needs root.
# SPDX-License-Identifier: Apache-2.0
set -u
n=${1:-1000}

skip() {
    printf '{"skipped":true,"why":"%s"}\n' "$1"
    exit 0
}

for p in munged slurmctld slurmd sbatch squeue sinfo; do
    command -v "$p" >/dev/null 2>&1 || skip "$p not installed (apt-get install slurmctld slurmd slurm-client munge)"
done
[ "$(id -u)" = 0 ] || skip "needs root"
[ -r /etc/munge/munge.key ] || skip "no /etc/munge/munge.key"

host=$(hostname -s)
# slurmd leaves its cgroup directories (slurm_<host>) behind; they are
# removed after the run, so a host that already has them (a real Slurm
# node) is left alone.
for c in /sys/fs/cgroup/*/slurm_"$host" /sys/fs/cgroup/system.slice/slurmstepd.scope; do
    [ -e "$c" ] && skip "Slurm cgroups already exist here (a Slurm node runs on this host?)"
done
D=$(mktemp -d /tmp/skv-slurm-XXXXXX)
cleanup() {
    pids=
    for f in d.pid ctld.pid munge/munged.pid; do
        [ -f "$D/$f" ] && pids="$pids $(cat "$D/$f")"
    done
    [ -n "$pids" ] && kill $pids 2>/dev/null
    # The cgroups can go once the daemons (and slurmstepd) have ended.
    for i in $(seq 50); do
        busy=
        for p in $pids; do kill -0 "$p" 2>/dev/null && busy=1; done
        pgrep -x slurmstepd >/dev/null && busy=1
        [ -z "$busy" ] && break
        sleep 0.1
    done
    for c in /sys/fs/cgroup/*/slurm_"$host"; do
        [ -d "$c" ] && find "$c" -depth -type d -exec rmdir {} + 2>/dev/null
    done
    rm -rf "$D"
}
trap cleanup EXIT
mkdir -p "$D/ctld" "$D/d" "$D/munge"
chmod 700 "$D/munge"
cat > "$D/slurm.conf" <<EOF
ClusterName=skvbench
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$D/munge/munge.socket
StateSaveLocation=$D/ctld
SlurmdSpoolDir=$D/d
SlurmctldPidFile=$D/ctld.pid
SlurmdPidFile=$D/d.pid
SlurmctldPort=16817
SlurmdPort=16818
SlurmctldLogFile=$D/ctld.log
SlurmdLogFile=$D/d.log
ProctrackType=proctrack/cgroup
TaskPlugin=task/cgroup
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SchedulerType=sched/backfill
ReturnToService=2
MpiDefault=none
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
NodeName=$host CPUs=$(nproc) RealMemory=8000 State=UNKNOWN
PartitionName=bench Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:16
EOF
cat > "$D/cgroup.conf" <<EOF
CgroupPlugin=autodetect
ConstrainCores=yes
ConstrainRAMSpace=yes
EOF
export SLURM_CONF=$D/slurm.conf
munged --socket="$D/munge/munge.socket" --pid-file="$D/munge/munged.pid" \
    --log-file="$D/munge/munged.log" --seed-file="$D/munge/seed" --force \
    >/dev/null 2>&1 ||
    skip "munged did not start"
slurmctld >/dev/null 2>&1 || skip "slurmctld did not start"
slurmd >/dev/null 2>&1 || skip "slurmd did not start"
for i in $(seq 100); do
    [ "$(sinfo -h -o %t 2>/dev/null)" = idle ] && break
    sleep 0.1
done
[ "$(sinfo -h -o %t 2>/dev/null)" = idle ] || skip "the Slurm node did not become idle"

now() { date +%s.%N; }
t0=$(now)
failed=0
for i in $(seq "$n"); do
    sbatch -Q --wrap=/bin/true -c1 --mem=16M -o /dev/null >/dev/null 2>&1 ||
        failed=$((failed + 1))
done
t1=$(now)
end=$(( $(date +%s) + 600 ))
while [ "$(squeue -h -t PD,R,CG,CF 2>/dev/null | wc -l)" != 0 ]; do
    [ "$(date +%s)" -gt "$end" ] && break
    sleep 0.02
done
t2=$(now)
done_n=$(squeue -h -t CD -o %i 2>/dev/null | wc -l)
awk -v t0="$t0" -v t1="$t1" -v t2="$t2" -v n="$n" -v d="$done_n" -v f="$failed" 'BEGIN {
    printf "{\"jobs\":%d,\"submit_s\":%.3f,\"total_s\":%.3f,\"jobs_per_s\":%.1f,\"completed\":%d,\"submit_failed\":%d}\n",
        n, t1 - t0, t2 - t0, n / (t2 - t0), d, f }'
