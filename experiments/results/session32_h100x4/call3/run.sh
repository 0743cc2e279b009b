#!/bin/bash
# session 32 call 3 (4 x H100): fewer collectives a turn (commit after 5c98368)
export NCCL_NVLS_ENABLE=0
mkdir -p $OUT/new
P=experiments/profile_sharded_louvain.py
timeout 240 env PYTHONPATH=. OUT=$OUT/new python3 $P --edges-per-device 16777216 --device-counts 1 2 4 --no-solo 2>&1 | grep -v Warn | tee $OUT/new/planted.log
timeout 150 env PYTHONPATH=. OUT=$OUT/new python3 $P --graph-class rmat --edges-per-device 4194304 --device-counts 1 4 --no-solo 2>&1 | grep -v Warn | tee $OUT/new/rmat.log
timeout 150 env PYTHONPATH=. OUT=$OUT/new python3 $P --graph-class power_law --edges-per-device 4194304 --device-counts 1 4 --no-solo 2>&1 | grep -v Warn | tee $OUT/new/power_law.log
