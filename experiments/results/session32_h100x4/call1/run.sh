#!/bin/bash
# session 32 call 1 (multi-GPU): the sharded Louvain by degree buckets, new vs base, planted and rmat
export NCCL_NVLS_ENABLE=0
nvidia-smi -L
mkdir -p $OUT/new $OUT/base
P=experiments/profile_sharded_louvain.py
timeout 200 env PYTHONPATH=. OUT=$OUT/new python3 $P --edges-per-device 16777216 --device-counts 1 2 4 2>&1 | grep -v Warn | tee $OUT/new/planted.log
(cd .scratch/base32 && timeout 150 env OUT=$OUT/base python3 $P --edges-per-device 16777216 --device-counts 1 2 4 --no-solo 2>&1 | grep -v Warn | tee $OUT/base/planted.log)
timeout 150 env PYTHONPATH=. OUT=$OUT/new python3 $P --graph-class rmat --edges-per-device 4194304 --device-counts 1 4 2>&1 | grep -v Warn | tee $OUT/new/rmat.log
(cd .scratch/base32 && timeout 90 env OUT=$OUT/base python3 $P --graph-class rmat --edges-per-device 4194304 --device-counts 1 4 --no-solo 2>&1 | grep -v Warn | tee $OUT/base/rmat.log)
