#!/usr/bin/env bash
# A one-node Slurm cluster on this machine, for schedscope's Slurm test
# (cmd/schedscope's TestSlurmShards) and for trying deploy/slurm by hand.
# Needs root and Debian's slurm-wlm and munge (.ci/run installs them).
# Idempotent: a cluster that already answers is left as it is; a node
# left down or drained by an earlier start is resumed.
set -euo pipefail

node=$(hostname -s)
conf=/etc/slurm/slurm.conf
cpus=$(nproc)

# munge: the key, then the daemon (as the munge user, as the package runs it).
if [ ! -s /etc/munge/munge.key ]; then
	if command -v mungekey >/dev/null; then
		mungekey --create --force >/dev/null
	else
		dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
	fi
	chown munge:munge /etc/munge/munge.key
	chmod 0400 /etc/munge/munge.key
fi
mkdir -p /run/munge && chown munge:munge /run/munge
if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
	runuser -u munge -- /usr/sbin/munged
	for _ in $(seq 1 50); do munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && break; sleep 0.1; done
	munge -n | unmunge >/dev/null
fi

# slurm.conf: this one node, its real CPU count; processes tracked by
# /proc and no task plugin, so no cgroup setup is needed.
want=$(cat <<CONF
# Written by schedscope's deploy/slurm/ci-cluster.sh: a one-node cluster for tests.
ClusterName=schedscope-ci
SlurmctldHost=$node
SlurmUser=root
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
MpiDefault=none
ReturnToService=2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=ci Nodes=$node Default=YES MaxTime=INFINITE State=UP
CONF
)
mkdir -p /etc/slurm /var/spool/slurmctld /var/spool/slurmd /var/log/slurm
restart=""
if [ ! -f "$conf" ] || [ "$(cat "$conf")" != "$want" ]; then
	printf '%s\n' "$want" >"$conf"
	restart=1
fi

running() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }
if [ -n "$restart" ]; then
	for pidfile in /run/slurmd.pid /run/slurmctld.pid; do
		if running "$pidfile"; then kill "$(cat "$pidfile")"; sleep 1; fi
	done
fi
running /run/slurmctld.pid || slurmctld
for _ in $(seq 1 100); do scontrol ping 2>/dev/null | grep -q UP && break; sleep 0.1; done
running /run/slurmd.pid || slurmd

state=""
for _ in $(seq 1 150); do
	state=$(sinfo -h -n "$node" -o %t 2>/dev/null | head -n 1)
	case "$state" in
	idle | mix | alloc) break ;;
	down* | drain* | drng*) scontrol update nodename="$node" state=resume 2>/dev/null || true ;;
	esac
	sleep 0.2
done
case "$state" in
idle | mix | alloc) echo "slurm: node $node $state ($cpus CPUs), partition ci" ;;
*)
	echo "slurm: node $node is '$state', not idle; see /var/log/slurm/" >&2
	exit 1
	;;
esac
