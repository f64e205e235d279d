#!/bin/bash
# Queues the sweep (a job array, sweep.sbatch) and its merge (merge.sbatch),
# the merge held until every array task has succeeded (afterok). Run it from
# the directory that should hold results/ (a shared file system); RESULTS
# and DPBANDIT (the binary's path) pass through to both jobs.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

array="$(sbatch --parsable --export=ALL "${here}/sweep.sbatch")"
array="${array%%;*}" # --parsable prints "jobid[;cluster]"
merge="$(sbatch --parsable --export=ALL --dependency="afterok:${array}" --kill-on-invalid-dep=yes "${here}/merge.sbatch")"
merge="${merge%%;*}"
echo "sweep: job array ${array}; merge: job ${merge} (after the array succeeds)"
