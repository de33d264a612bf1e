#!/usr/bin/env bash
# A one-node SLURM cluster on this machine, for the tests of `arl submit` (docs/distributed.md,
# "Sweeps on a cluster"): Debian's slurm-wlm (22.05 on Debian 12) with munge, slurmctld and slurmd
# on localhost, proctrack/linuxproc and no cgroups (CI machines and containers often have no
# delegated cgroup tree). Run as root. Idempotent: a cluster already up is left as it is.
#   scripts/slurm-local.sh           install what is missing, configure, start, wait until the node is idle
#   scripts/slurm-local.sh --stop    stop the daemons this script started
set -euo pipefail

conf_dir=/etc/slurm
conf=$conf_dir/slurm.conf
host=$(hostname -s)
log_dir=/var/log/slurm

stop() {
  for pidfile in /run/slurmd.pid /run/slurmctld.pid /run/munge/munged.pid; do
    if [ -s "$pidfile" ]; then kill "$(cat "$pidfile")" 2>/dev/null || true; fi
  done
}
if [ "${1:-}" = "--stop" ]; then stop; exit 0; fi

if [ "$(id -u)" != 0 ]; then
  echo "slurm-local.sh: run as root (it installs packages, writes $conf and starts daemons)" >&2
  exit 1
fi

if ! command -v slurmctld >/dev/null 2>&1 || ! command -v munged >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  started=$(date +%s)
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends slurm-wlm munge >/dev/null
  echo "slurm-local.sh: installed slurm-wlm and munge in $(($(date +%s) - started)) s"
fi

# munge: the key the package made, the daemon as the munge user (as its systemd unit runs it).
install -d -o munge -g munge -m 0755 /run/munge
if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
  [ -s /etc/munge/munge.key ] || runuser -u munge -- mungekey --create
  runuser -u munge -- /usr/sbin/munged
fi

# The node as this machine is: every CPU, and a little less memory than it has (a node that
# reports less than its configured RealMemory is drained). Memory is not a consumable resource
# here (CR_Core), so jobs are placed by cores only.
cpus=$(nproc)
mem_mb=$(($(awk '/^MemTotal:/ { print $2 }' /proc/meminfo) / 1024 * 9 / 10))
wanted=$(cat <<EOF
# Written by scripts/slurm-local.sh: a one-node cluster on localhost for ARL's tests.
ClusterName=arl-local
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
AuthType=auth/munge
CredType=cred/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
# A finished job stays visible to squeue/scontrol this long (s); then only the run directories tell.
MinJobAge=600
# Between the SIGTERM of a cancellation and the SIGKILL (s): time for arl to stop and close its trainer.
KillWait=10
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldLogFile=$log_dir/slurmctld.log
SlurmdLogFile=$log_dir/slurmd.log
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem_mb State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
)
mkdir -p "$conf_dir" /var/spool/slurmctld /var/spool/slurmd "$log_dir"
changed=0
if [ ! -f "$conf" ] || [ "$(cat "$conf")" != "$wanted" ]; then
  printf '%s\n' "$wanted" > "$conf"
  changed=1
fi

running() { [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }
# A changed configuration is read by daemons started afresh.
if [ "$changed" = 1 ]; then
  for pidfile in /run/slurmd.pid /run/slurmctld.pid; do
    if running "$pidfile"; then kill "$(cat "$pidfile")"; sleep 1; fi
  done
fi
running /run/slurmctld.pid || slurmctld || { echo "slurm-local.sh: slurmctld did not start; see $log_dir/slurmctld.log" >&2; exit 1; }
running /run/slurmd.pid || slurmd || { echo "slurm-local.sh: slurmd did not start; see $log_dir/slurmd.log" >&2; exit 1; }

# Until the controller answers and the node takes jobs (a node left down by an earlier run is resumed).
for _ in $(seq 1 60); do
  state=$(sinfo -h -n "$host" -o %T 2>/dev/null || true)
  case "$state" in
    idle*|mixed*|allocated*) echo "slurm-local.sh: node $host $state ($cpus CPUs), partition debug"; exit 0 ;;
    down*|drain*) scontrol update nodename="$host" state=resume 2>/dev/null || true ;;
  esac
  sleep 1
done
echo "slurm-local.sh: the cluster did not come up; see $log_dir/slurmctld.log and $log_dir/slurmd.log" >&2
sinfo 2>&1 >&2 || true
exit 1
