#!/bin/bash
# avg.sh OUT FILE... : the mean of the forecasts (every numeric column), rows matched by order
# (id and time checked equal).
out=$1; shift
awk -F, -v n=$# 'FNR==1 { f++; if (f==1) hdr=$0; next }
  { k=FNR; key=$1 FS $2; if (f==1) { keys[k]=key; cols=NF } else if (keys[k]!=key) { print "row mismatch " FILENAME " " k > "/dev/stderr"; exit 1 }
    for (c=3;c<=NF;c++) s[k,c]+=$c; rows=k }
  END { print hdr; for (k=2;k<=rows;k++) { line=keys[k]; for (c=3;c<=cols;c++) line=line sprintf(",%.6g", s[k,c]/n); print line } }' "$@" > $out
