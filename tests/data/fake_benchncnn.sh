#!/bin/sh
# Stands in for ncnn's benchncnn in infer-bench's --ncnn tests: prints what benchncnn prints for
# one model (its arguments echoed first, as benchncnn does), with a fixed figure.
echo "loop_count = $1"
echo "num_threads = $2"
echo "gpu_device = $4"
echo "      $6  min =    2.50  max =    2.75  avg =    2.60"
