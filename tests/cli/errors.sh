#!/usr/bin/env bash
# Bad input gets a clear message naming the file, line or field, and a non-zero exit (2 for input errors).
set -u
tt=$1
shared=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
expect() {  # expect CODE PATTERN -- command...
  local code=$1 pattern=$2
  shift 3
  local out rc
  out=$("$@" 2>&1)
  rc=$?
  if [ "$rc" != "$code" ] || ! grep -qE -- "$pattern" <<<"$out"; then
    echo "FAIL: $* -> rc=$rc (want $code), output: $out (want /$pattern/)"
    fails=$((fails + 1))
  else
    echo "ok: $* -> $rc"
  fi
}
expect 2 "usage: tunetab" -- "$tt"
expect 0 "tune .*compile, validate" -- "$tt" --help
expect 0 "--shapes-file" -- "$tt" tune --help
expect 0 "--format" -- "$tt" export --help
expect 2 "unknown command 'frobnicate'" -- "$tt" frobnicate
expect 2 "unrecognised option|unrecognized option" -- "$tt" tune --no-such-flag
expect 2 "--shapes: entry '1,2' is not M,N,K" -- "$tt" tune --db "$tmp/a.db" --shapes "1,2"
expect 2 "nope.csv: cannot open" -- "$tt" tune --db "$tmp/a.db" --shapes-file "$tmp/nope.csv"
printf 'M,N,K,bias,dtype,outdtype\n1,64,64,False,torch.bfloat16\n' > "$tmp/short.csv"
expect 2 "short.csv:2: 5 fields, header has 6" -- "$tt" tune --db "$tmp/a.db" --shapes-file "$tmp/short.csv"
printf 'M,N,K,bias,dtype,outdtype\n1,64,64,False,torch.float8,torch.bfloat16\n' > "$tmp/dtype.csv"
expect 2 "dtype.csv:2: unknown dtype 'torch.float8'" -- "$tt" tune --db "$tmp/a.db" --shapes-file "$tmp/dtype.csv"
head -c 5000 /dev/urandom > "$tmp/garbage.db"
expect 2 "garbage.db" -- "$tt" db --db "$tmp/garbage.db"
expect 2 "--format 'vllm-json'" -- "$tt" export --db "$tmp/a.db" --format vllm-json
expect 2 "--target 'h100'" -- "$tt" compile --target h100
expect 2 "--index-bits 16" -- "$tt" compile --index-bits 16
echo "$fails failed"
[ "$fails" = 0 ]
