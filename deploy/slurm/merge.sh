#!/bin/bash
# Merges the parts of deploy/slurm/render-array.sh into one image, bit-identical to an
# unsharded render; submit it to run after every array task succeeded:
#   sbatch --dependency=afterok:$JOBID deploy/slurm/merge.sh   # JOBID: the array's, from sbatch --parsable
#SBATCH --job-name=lumbre-merge
#SBATCH --time=00:10:00
#SBATCH --output=lumbre-merge-%j.out
set -eu

parts=${LUMBRE_PARTS:-parts}
lumbre merge "$parts"/part-*.lpart -o "$parts/frame.exr"
