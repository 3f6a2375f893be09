#!/bin/sh
# Rebuild arrowmm-spark.jar from src/ (javac --release 17 against pyspark's jars, then jar).
set -e
cd "$(dirname "$0")/../../.."
exec python -m arrowmm.spark jar --build "$@"
