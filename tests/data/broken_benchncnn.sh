#!/bin/sh
# Stands in for a benchncnn that fails: no figure, an error, a non-zero exit.
echo "fopen $5 failed"
exit 3
