# A one-node Slurm cluster for the MPI tests, sourced by slurm.sh and
# tspkt_mpi.sh: munged, slurmctld and slurmd (Debian's), run in the
# foreground of background jobs (no systemd), with their key, sockets,
# state and a minimal slurm.conf in a temporary folder $d, stopped and
# removed when the sourcing script exits.  Exports SLURM_CONF for srun.
for c in munged slurmctld slurmd srun scontrol; do
	command -v "$c" >/dev/null 2>&1 || [ -x "/usr/sbin/$c" ] || {
		echo "slurm: $c not found (scripts/install-deps.sh)" >&2
		exit 1; }
done
PATH=$PATH:/usr/sbin
d=$(mktemp -d /tmp/tsgrep-slurm.XXXXXX)
pids=""
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	for p in $pids; do wait "$p" 2>/dev/null; done
	rm -rf "$d"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
host=$(hostname -s)
user=$(id -un)
# free ports: the controller's and the node daemon's
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
ctl_port=$(port)
node_port=$(port)
mkdir -p "$d/state" "$d/spool" "$d/munge"
chmod 711 "$d/munge"
dd if=/dev/urandom of="$d/munge/key" bs=1024 count=1 2>/dev/null
chmod 400 "$d/munge/key"
munged --force --key-file="$d/munge/key" --socket="$d/munge/sock" \
	--pid-file="$d/munge/pid" --log-file="$d/munge/log" \
	--seed-file="$d/munge/seed" --foreground >"$d/munge/out" 2>&1 &
pids="$pids $!"
cat > "$d/slurm.conf" <<CONF
ClusterName=tstest
SlurmctldHost=$host
SlurmUser=$user
SlurmdUser=$user
AuthType=auth/munge
AuthInfo=socket=$d/munge/sock
CredType=cred/munge
SlurmctldPort=$ctl_port
SlurmdPort=$node_port
StateSaveLocation=$d/state
SlurmdSpoolDir=$d/spool
SlurmctldPidFile=$d/slurmctld.pid
SlurmdPidFile=$d/slurmd.pid
SlurmctldLogFile=$d/slurmctld.log
SlurmdLogFile=$d/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
SelectType=select/linear
SchedulerType=sched/builtin
MpiDefault=pmix
ReturnToService=2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
NodeName=$host CPUs=$(nproc) State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE
CONF
export SLURM_CONF="$d/slurm.conf"
i=0
until [ -S "$d/munge/sock" ]; do
	i=$((i + 1)); [ $i -lt 100 ] || { echo "slurm: munged did not start" >&2; cat "$d/munge/log" >&2; exit 1; }
	sleep 0.1
done
slurmctld -D -i >"$d/slurmctld.out" 2>&1 &
pids="$pids $!"
slurmd -D -N "$host" >"$d/slurmd.out" 2>&1 &
pids="$pids $!"
i=0
until scontrol show node "$host" 2>/dev/null | grep -q 'State=IDLE'; do
	i=$((i + 1))
	[ $i -lt 300 ] || {
		echo "slurm: the node did not come up" >&2
		tail -20 "$d/slurmctld.log" "$d/slurmd.log" >&2
		exit 1; }
	sleep 0.1
done

