#!/usr/bin/env bash
# A one-node Slurm cluster on this machine, for tests and benchmarks of
# `modelstat suite slurm` (Debian's slurm-wlm and munge; run as root):
#   tools/slurm_local_cluster.sh start DIR    munged, slurmctld and slurmd; prints DIR/slurm.conf
#   tools/slurm_local_cluster.sh stop DIR     stops the three (by their pid files) and keeps DIR's logs
# Then: export SLURM_CONF=DIR/slurm.conf (sbatch, squeue, sinfo and scontrol read it).
# Everything lives in DIR: the munge key and socket, Slurm's state, spool, logs
# and pid files; nothing in /etc is touched and no system service is started.
# proctrack/linuxproc and task/none need no cgroups, and no cgroup.conf is
# written (Slurm 22.05 cannot be told to do without one, but these plugins never
# read it). The node line is `slurmd -C`'s, so the node is what slurmd finds.
set -euo pipefail

usage() { echo "usage: $0 start|stop DIR" >&2; exit 2; }
[ $# -eq 2 ] || usage
action=$1
dir=$(mkdir -p "$2" && cd "$2" && pwd)

# Two free TCP ports for slurmctld and slurmd (the system's default 6817/6818 may be taken).
free_port() {
  /usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

start() {
  if [ "$(id -u)" -ne 0 ]; then
    echo "$0: munged, slurmctld and slurmd are started as root here (run as root, as CI does)" >&2
    exit 1
  fi
  for tool in munged mungekey slurmctld slurmd sinfo; do
    command -v "$tool" >/dev/null || { echo "$0: $tool not found (apt-get install slurm-wlm munge)" >&2; exit 1; }
  done
  rm -rf "$dir/munge" "$dir/state" "$dir/spool"
  mkdir -p "$dir/munge" "$dir/state" "$dir/spool" "$dir/log"
  chmod 700 "$dir" "$dir/munge"
  mungekey --create --keyfile "$dir/munge/munge.key"
  munged --force --key-file="$dir/munge/munge.key" --socket="$dir/munge/munge.socket" \
    --pid-file="$dir/munge/munged.pid" --log-file="$dir/log/munged.log" --seed-file="$dir/munge/munged.seed"

  local host node name ctld_port d_port
  host=$(hostname -s)
  node=$(slurmd -C | head -1)  # NodeName=vm CPUs=2 Boards=1 ... RealMemory=24105
  name=$(echo "$node" | sed 's/^NodeName=\([^ ]*\).*/\1/')
  ctld_port=$(free_port)
  d_port=$(free_port)
  while [ "$d_port" = "$ctld_port" ]; do d_port=$(free_port); done
  cat >"$dir/slurm.conf" <<EOF
# Written by tools/slurm_local_cluster.sh: a one-node cluster in $dir
ClusterName=modelstat-local
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.socket
SlurmctldPort=$ctld_port
SlurmdPort=$d_port
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
SlurmctldTimeout=30
SlurmdTimeout=30
$node State=UNKNOWN
PartitionName=debug Nodes=$name Default=YES MaxTime=INFINITE State=UP
EOF
  export SLURM_CONF=$dir/slurm.conf
  slurmctld -f "$SLURM_CONF"
  slurmd -f "$SLURM_CONF"
  for _ in $(seq 1 120); do
    if [ "$(sinfo -h -o %T 2>/dev/null | head -1)" = "idle" ]; then
      echo "$SLURM_CONF"
      return 0
    fi
    sleep 0.5
  done
  echo "$0: the node did not come up idle in 60 s; logs in $dir/log" >&2
  sinfo >&2 || true
  tail -20 "$dir/log/slurmctld.log" "$dir/log/slurmd.log" >&2 || true
  stop
  exit 1
}

# Ends the daemon whose pid file is $1: SIGTERM, then SIGKILL after 10 s.
end_daemon() {
  [ -f "$1" ] || return 0
  local pid
  pid=$(cat "$1")
  kill "$pid" 2>/dev/null || return 0
  for _ in $(seq 1 100); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  kill -9 "$pid" 2>/dev/null || true
}

stop() {
  end_daemon "$dir/slurmd.pid"
  end_daemon "$dir/slurmctld.pid"
  end_daemon "$dir/munge/munged.pid"
  rm -f "$dir/slurmd.pid" "$dir/slurmctld.pid" "$dir/munge/munged.pid"
}

case "$action" in
  start) start ;;
  stop) stop ;;
  *) usage ;;
esac
