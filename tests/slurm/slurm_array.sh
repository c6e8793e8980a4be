#!/usr/bin/env bash
# Integration test: a real single-node Slurm (munged, slurmctld, slurmd on
# localhost, configured in a temporary directory) runs a small array of CPU
# reconstructions through scripts/slurm/submit.sh and the job script; the
# merged summary must equal an unsharded batch's, row for row (timing columns,
# q_source and the output directory's parent aside). Exit 77 (ctest: skipped)
# with the reason when the daemons cannot run here. Stops what it started.
#   tests/slurm/slurm_array.sh FHDRECON
set -uo pipefail
exe=$(realpath "$1")
root=$(cd "$(dirname "$0")/../.." && pwd)
skip() { echo "SKIP: $*"; exit 77; }

# The scripts' own argument handling, without Slurm: a fake sbatch (first on
# PATH) records the arguments it is given, a fake fhdrecon prints its own.
F=$(mktemp -d /tmp/fhdrecon-slurm-args-XXXXXX)
argfail() { echo "FAIL: $*"; rm -rf "$F"; exit 1; }
mkdir -p "$F/bin"
printf '#!/usr/bin/env bash\nprintf "[%%s]" "$@" >> "%s/sbatch.log"; echo >> "%s/sbatch.log"; echo 42\n' "$F" "$F" \
  > "$F/bin/sbatch"
printf '#!/usr/bin/env bash\nprintf "[%%s]" "$@"\n' > "$F/bin/fake-fhdrecon"
chmod +x "$F/bin/sbatch" "$F/bin/fake-fhdrecon"
echo "$F/a.h5" > "$F/list.txt"
# --max-running as the last argument: one line saying so (was "$2: unbound variable").
said=$(PATH="$F/bin:$PATH" "$root/scripts/slurm/submit.sh" --max-running 2>&1) &&
  argfail "submit.sh --max-running without a count exited 0: $said"
[[ $said == *"--max-running needs a count"* && $said != *unbound* ]] ||
  argfail "submit.sh --max-running without a count: $said"
# --cpu without --wait: the empty arrays expand to no argument at all (written
# ${a[@]+"${a[@]}"}, since "${a[@]}" of an empty array is "unbound" on bash < 4.4).
PATH="$F/bin:$PATH" FHDRECON=$F/bin/fake-fhdrecon "$root/scripts/slurm/submit.sh" --cpu "$F/list.txt" "$F/out" 2 \
  > "$F/submit.txt" 2>&1 || argfail "submit.sh --cpu through a fake sbatch: $(cat "$F/submit.txt")"
[[ $(wc -l < "$F/sbatch.log") -eq 2 ]] || argfail "expected 2 sbatch calls: $(cat "$F/sbatch.log")"
! grep -q -e '\[\]' -e gres -e '\[--wait\]' "$F/sbatch.log" ||
  argfail "an empty or unwanted sbatch argument: $(cat "$F/sbatch.log")"
# The job script without FHD_DEVICE (device=()), then with it.
task() { SLURM_ARRAY_TASK_ID=1 FHD_SHARDS=3 FHDRECON=$F/bin/fake-fhdrecon "$@" \
  bash "$root/scripts/slurm/fhdrecon-array.sbatch" L O --iters 2 2>&1; }
got=$(task env -u FHD_DEVICE)
[[ $got == "[--quiet][batch][--files-from][L][--out][O][--shard][1/3][--iters][2]" ]] ||
  argfail "job script without FHD_DEVICE ran: $got"
got=$(task env FHD_DEVICE=cpu)
[[ $got == "[--quiet][batch][--files-from][L][--out][O][--shard][1/3][--device][cpu][--iters][2]" ]] ||
  argfail "job script with FHD_DEVICE=cpu ran: $got"
rm -rf "$F"

for d in munged slurmctld slurmd sbatch squeue; do
  command -v "$d" >/dev/null || skip "$d not installed (scripts/setup.sh installs slurm-wlm and munge)"
done
[[ $(id -u) -eq 0 ]] || skip "the daemons run as root here; not root"

T=$(mktemp -d /tmp/fhdrecon-slurm-XXXXXX)
pids=()
cleanup() {
  for p in ${pids[@]+"${pids[@]}"}; do kill "$p" 2>/dev/null; done
  sleep 0.5
  for p in ${pids[@]+"${pids[@]}"}; do kill -9 "$p" 2>/dev/null; done
  rm -rf "$T"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; for f in "$T"/log/* "$T"/parts/logs/*; do echo "== $f"; tail -n 20 "$f"; done; exit 1; }

# Scans: 5 tiny 2D files, two trajectories.
mkdir -p "$T/in" "$T/log" "$T/state" "$T/spool" "$T/munge"
i=0
for spec in "a.h5 12 0.02" "b.h5 16 0.05" "c.h5 16 0.1" "d.mrd 12 0" "e.h5 16 0"; do
  set -- $spec
  "$exe" --quiet synth --phantom shepp2d --matrix 16 --spokes "$2" --noise "$3" -o "$T/in/$1" || fail "synth $1"
done
ls "$T"/in/* > "$T/list.txt"
opts=(--iters 4 --no-cache --device cpu)
export OMP_NUM_THREADS=1  # the same arithmetic in every process: equal figures
"$exe" --quiet batch --files-from "$T/list.txt" --out "$T/whole" "${opts[@]}" > "$T/log/whole.txt" 2>&1 ||
  fail "unsharded batch"

# munge with its own key and socket.
dd if=/dev/urandom of="$T/munge/munge.key" bs=1024 count=1 status=none
chmod 0400 "$T/munge/munge.key"
chmod 0700 "$T/munge"
munged --foreground --key-file="$T/munge/munge.key" --socket="$T/munge/sock" --pid-file="$T/munge/pid" \
  --seed-file="$T/munge/seed" --log-file="$T/log/munged.log" --force > /dev/null 2>&1 &
pids+=($!)
for _ in $(seq 50); do [[ -S $T/munge/sock ]] && break; sleep 0.1; done
[[ -S $T/munge/sock ]] || skip "munged did not start ($(tail -n 1 "$T/log/munged.log" 2>/dev/null))"

host=$(hostname -s)
port=$((20000 + $$ % 20000))
export SLURM_CONF=$T/slurm.conf
cat > "$SLURM_CONF" <<CONF
ClusterName=fhdtest
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/munge
AuthInfo=socket=$T/munge/sock
CredType=cred/munge
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/log/slurmctld.log
SlurmdLogFile=$T/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
SlurmdTimeout=30
InactiveLimit=0
KillWait=2
NodeName=fhdnode NodeAddr=127.0.0.1 CPUs=$(nproc --all) State=UNKNOWN
PartitionName=fhd Nodes=fhdnode Default=YES MaxTime=INFINITE State=UP
CONF
slurmctld -D -i -f "$SLURM_CONF" > "$T/log/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -N fhdnode -f "$SLURM_CONF" > "$T/log/slurmd.out" 2>&1 &
pids+=($!)
up=""
for _ in $(seq 100); do
  state=$(sinfo -h -N -o %T 2>/dev/null | head -n 1)
  [[ $state == idle* ]] && { up=1; break; }
  for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null || skip "a Slurm daemon exited at start ($(tail -n 1 "$T"/log/slurm*.log "$T"/log/*.out 2>/dev/null | tr '\n' ' '))"; done
  sleep 0.2
done
[[ -n $up ]] || skip "the node did not become idle within 20 s (state: ${state:-none}); log: $(tail -n 2 "$T/log/slurmd.log" 2>/dev/null | tr '\n' ' ')"

# Three array tasks (shards) and the merge, through the project's scripts.
FHDRECON=$exe timeout 60 "$root/scripts/slurm/submit.sh" --cpu --wait "$T/list.txt" "$T/parts" 3 "${opts[@]}" \
  > "$T/log/submit.txt" 2>&1 || fail "submit/merge (exit $?): $(cat "$T/log/submit.txt")"
for i in 0 1 2; do
  [[ -f $T/parts/shards/shard-000$i-of-0003.json ]] || fail "no shard $i"
done
# Columns: file,status,reason,output,coils,q_source,psnr x4,times x6. Compare
# all but output's directory, q_source (which task computed Q first) and times.
rows() { awk -F, 'NR > 1 { n = split($4, p, "/"); print $1 "," $2 "," $3 "," p[n] "," $5 "," $7 "," $8 "," $9 "," $10 }' "$1"; }
diff <(rows "$T/whole/summary.csv") <(rows "$T/parts/summary.csv") > "$T/log/diff.txt" ||
  fail "merged summary differs from the unsharded one: $(cat "$T/log/diff.txt")"
[[ $(rows "$T/parts/summary.csv" | grep -c ',ok,') -eq 5 ]] || fail "expected 5 ok rows: $(cat "$T/parts/summary.csv")"
echo "PASS: 5 scans in 3 Slurm array tasks, merged summary equals the unsharded batch's"
