#!/usr/bin/env bash
# The measurements of results/scale/README.md: the plain run against bloomlab-dask on the
# local cluster (one worker per core), the overhead per task, and the low-rate run.
# Usage: results/scale/run.sh BLOOMLAB [what...]   what: ratio overhead low huge (default: all
# but huge, 10^11 queries: about 40 minutes on a quiet 2-core machine, resumable)
# Needs bloomlab-dask on PATH (pip install ./distributed, or distributed/install).
set -euo pipefail
bloomlab=${1:?the bloomlab binary}; shift
here=$(CDPATH='' cd -- "$(dirname -- "$0")" && pwd)
what=${*:-ratio overhead low}
classic=(sweep-size --n 1000000 --bits-per-key 43 --k 30 --yes --format csv -q)
clock() { local s=$(date +%s.%N); "$@"; local e=$(date +%s.%N); echo "$e - $s" | bc; }

{
    echo "# $(date -u +%FT%TZ) $($bloomlab --version)"
    echo "# CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-) x $(nproc); vector flags: $(grep -o -w 'avx512f\|avx512dq\|avx2' /proc/cpuinfo | sort -u | tr '\n' ' ')"
} >> "$here/log.txt"
for w in $what; do
    case $w in
    ratio)
        q=2e9
        t=$(clock "$bloomlab" "${classic[@]}" --seed 5 --queries $q --out "$here/ratio-plain.csv")
        echo "ratio plain queries=$q seconds=$t" | tee -a "$here/log.txt"
        t=$(clock bloomlab-dask --bloomlab "$bloomlab" -- "${classic[@]}" --seed 5 --queries $q --out "$here/ratio-dask.csv")
        echo "ratio dask queries=$q seconds=$t" | tee -a "$here/log.txt"
        cmp "$here/ratio-plain.csv" "$here/ratio-dask.csv" && echo "ratio outputs identical" | tee -a "$here/log.txt"
        ;;
    overhead)
        q=2e8
        for s in 1000 0.001; do
            t=$(clock bloomlab-dask --bloomlab "$bloomlab" --shard-seconds $s -- "${classic[@]}" --seed 6 --queries $q --out "$here/overhead.csv" 2> "$here/overhead-$s.err")
            echo "overhead shard-seconds=$s queries=$q seconds=$t $(grep -m1 'shards on' "$here/overhead-$s.err")" | tee -a "$here/log.txt"
            rm "$here/overhead-$s.err"
        done
        ;;
    low)
        q=1e10
        t=$(clock bloomlab-dask --bloomlab "$bloomlab" -- "${classic[@]}" --seed 7 --queries $q --out "$here/low-rate-1e10.csv" 2> "$here/low.err")
        echo "low dask queries=$q seconds=$t $(grep -m1 'shards on' "$here/low.err")" | tee -a "$here/log.txt"
        rm "$here/low.err"
        ;;
    huge)
        q=1e11
        resume=${BLOOMLAB_SCALE_RESUME:-$here/.resume-1e11}
        t=$(clock bloomlab-dask --bloomlab "$bloomlab" --resume "$resume" -- "${classic[@]}" --seed 8 --queries $q --out "$here/low-rate-1e11.csv" 2> "$here/huge.err")
        echo "huge dask queries=$q seconds=$t $(grep -m1 'shards on' "$here/huge.err")" | tee -a "$here/log.txt"
        rm "$here/huge.err"
        ;;
    esac
done
