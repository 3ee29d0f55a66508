#!/bin/sh
# Collect a snapshot from every node of a Slurm allocation, then judge them together.
#   salloc -N 64 sh slurm-collect.sh     (or sbatch it; SNAPSHOTS must be on a shared filesystem)
set -eu
SNAPSHOTS=${SNAPSHOTS:-$PWD/snapshots}
mkdir -p "$SNAPSHOTS"
# One task per node; each writes <node>.json (a dot-file first, so a reader never sees half of one).
srun --ntasks-per-node=1 sh -c 'cudadoctor probe --json > "$0/.$(hostname).json" && mv "$0/.$(hostname).json" "$0/$(hostname).json"' "$SNAPSHOTS"
cudadoctor fleet "$SNAPSHOTS" "$@"
