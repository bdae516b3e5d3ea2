#!/bin/bash
# med.sh OUT FILE... : the element-wise median of the forecasts (every numeric column; the
# mean of the two middle values for an even count), rows matched by order.
out=$1; shift
awk -F, -v n=$# 'FNR==1 { f++; if (f==1) hdr=$0; next }
  { k=FNR; key=$1 FS $2; if (f==1) { keys[k]=key; cols=NF } else if (keys[k]!=key) { print "row mismatch " FILENAME " " k > "/dev/stderr"; exit 1 }
    for (c=3;c<=NF;c++) v[k,c,f]=$c; rows=k }
  END { print hdr; for (k=2;k<=rows;k++) { line=keys[k]; for (c=3;c<=cols;c++) {
      m=0; for (i=1;i<=n;i++) a[i]=v[k,c,i];
      for (i=2;i<=n;i++) { x=a[i]; j=i-1; while (j>=1 && a[j]>x) { a[j+1]=a[j]; j-- } a[j+1]=x }
      med = (n%2) ? a[(n+1)/2] : 0.5*(a[n/2]+a[n/2+1]);
      line=line sprintf(",%.6g", med) } print line } }' "$@" > $out
