#!/bin/bash
# One frame of set:bunny-room as 4 shards, one array task (one GPU) each; the parts go to
# $LUMBRE_PARTS (default: parts/ in the submit folder, which every node must see).
# lumbre must be on PATH on the nodes (cargo install --path crates/cli). Submit, then merge:
#   JOBID=$(sbatch --parsable deploy/slurm/render-array.sh)
#   sbatch --dependency=afterok:${JOBID%%;*} deploy/slurm/merge.sh
# The array is 0-based and its size is the N of --shard: change both together.
#SBATCH --job-name=lumbre-render
#SBATCH --array=0-3
#SBATCH --gres=gpu:1
#SBATCH --cpus-per-task=4
#SBATCH --time=02:00:00
#SBATCH --output=lumbre-render-%A_%a.out
set -eu

# An --array given on the sbatch command line overrides the one above; refuse a mismatch.
if [ "${SLURM_ARRAY_TASK_COUNT:-4}" != 4 ]; then
    echo "error: the array has $SLURM_ARRAY_TASK_COUNT tasks but --shard splits into 4 (use --array=0-3)" >&2
    exit 2
fi

parts=${LUMBRE_PARTS:-parts}
mkdir -p "$parts"
lumbre render set:bunny-room --method path --spp 1024 --width 1920 --height 1080 --backend gpu \
    --shard "$SLURM_ARRAY_TASK_ID/4" -o "$parts/part-$SLURM_ARRAY_TASK_ID.lpart"
