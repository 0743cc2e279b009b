#!/usr/bin/env bash
# A/B on the device: the families' benchmarks on the code before session 15's refactor (.old, HEAD 6a2f832)
# and after it (the working tree), alternately, same machine, same call. Usage: bash .old/ab.sh FAMILY...
set -u
R=/tmp/r; mkdir -p $R/old $R/new
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader
args() {
  case $1 in
    matching) echo "-m experiments.bench_matching --scales 20 --classes road delaunay rgg --orders orig rcp --peers --repeats 3 --no-memory --json m.json";;
    flow) echo "-m experiments.bench_flow --sizes matching:18 power_law:20 rlg:18 genrmf:18 road:20 --variants bcsr --peers --repeats 3 --budget 200";;
    weighted) echo "-m experiments.bench_weighted --sizes 1e7 --classes rmat,road,power_law --algos suitor,ld,b_suitor --repeats 3";;
    stable) echo "-m experiments.bench_stable --easy 5e6 --hard 1e5 --methods mcvitie_wilson --reps 5 --peer-max-hard 0 --peer-max-easy 0 --matching-max 0 --gs-max-hard 0";;
    weighted2) echo "-m experiments.bench_weighted --sizes 1e7 --classes power_law --algos suitor --repeats 9";;
    bsuitor) echo "-m experiments.bench_weighted --sizes 1e7 --classes rmat,road --algos b_suitor --repeats 5";;
    graft) echo "-m experiments.bench_matching --scales 20 --classes delaunay rgg --orders rcp --methods graft apfb --peers --repeats 3 --no-memory --json m2.json";;
    louvain2) echo "-m experiments.louvain_levels --classes power_law delaunay --repeats 5 --no-cut";;
    louvain) echo "-m experiments.louvain_levels --classes rmat power_law delaunay --repeats 3 --no-cut";;
  esac
}
for fam in "$@"; do
  for v in ${ORDER:-old new}; do
    if [ $v = old ]; then d=.old; else d=.; fi
    t0=$(date +%s)
    mkdir -p $R/$v/$fam; (cd $d && OUT=$R/$v/$fam PYTHONPATH=. PYTHONUNBUFFERED=1 timeout ${TMO:-270} python3 $(args $fam)) > $R/$v/$fam/run_$(date +%s).log 2>&1
    echo "=== $fam $v rc=$? $(( $(date +%s) - t0 )) s"; tail -n ${TAILN:-16} $(ls -t $R/$v/$fam/*.log | head -1)
  done
done
tar czf $OUT/ab_$(echo "$@" | tr ' ' '_').tgz -C $R .
