#!/bin/sh
# bitstate.sh: a bitstate (supertrace) safety search of executor.pml on a
# workload too large for the exhaustive checks of `go test ./model`. Not
# part of the test; README.md records its results.
#
#   model/bitstate.sh whole [w]   the whole workload, 2 workers
#   model/bitstate.sh 3w [w]      timers-groups-batch's workload, 3 workers
#
# w is pan's -w, log2 of the bits of the hash array (default 28: 32 MB).
# Bitstate hashing may miss states: pan's hash factor (bits per state
# stored) says how much to trust a pass; above 100, little is missed.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
mode=${1:-whole}
w=${2:-28}
case $mode in
whole) defines="-DIDLE_UNIQUE" ;;
3w) defines="-DNW=3 -DT1FIRES=0 -DS1MSGS=0 -DS2MSGS=0 -DIDLE_UNIQUE" ;;
*) echo "usage: $0 whole|3w [w]" >&2; exit 2 ;;
esac
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cp "$here"/*.pml "$dir"
cd "$dir"
spin -a $defines executor.pml
# -O2: a search of minutes gains more than the 15 s gcc takes.
gcc -O2 -w -DSAFETY -DBITSTATE -o pan pan.c
start=$(date +%s)
# pan's progress lines (States=, every million states) show how far a run
# that is stopped early got.
./pan -m2000000 -w"$w" | grep --line-buffered -E 'States=|pan:|errors|states, stored|transitions|hash factor|elapsed|depth reached|Vector'
echo "wall $(($(date +%s) - start)) s, $mode, -w$w, load: $(cut -d' ' -f1-3 /proc/loadavg)"
if [ -f executor.pml.trail ]; then
	spin -t $defines executor.pml | grep -E 'MSC:|spin:'
	exit 1
fi
