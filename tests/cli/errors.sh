#!/usr/bin/env bash
# Bad input gets a clear message naming the file, line or field, and a non-zero exit (2 for input errors).
set -u
tt=$1
shared=$2
src=$3
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

# shapes: a model's config.json and serving envelope -> keys and buckets.
expect 0 "--fuse-shared-experts" -- "$tt" shapes --help
expect 2 "nope.json: cannot open the model config" -- "$tt" shapes --hf-config "$tmp/nope.json"
printf '{"hidden_size": 7168,\n' > "$tmp/broken.json"
expect 2 "broken.json: malformed JSON" -- "$tt" shapes --hf-config "$tmp/broken.json"
printf '{"architectures": ["Qwen3MoeForCausalLM"], "hidden_size": 4096, "vocab_size": 151936, "num_attention_heads": 64,
 "num_key_value_heads": 4, "head_dim": 128, "num_experts": 128, "moe_intermediate_size": 1536}\n' > "$tmp/noexp.json"
expect 2 "noexp.json: field 'num_experts_per_tok' missing \(Qwen3MoeForCausalLM needs it\)" -- "$tt" shapes --hf-config "$tmp/noexp.json"
printf '{"architectures": ["FooForCausalLM"], "hidden_size": 1024}\n' > "$tmp/foo.json"
expect 2 "foo.json: unknown architecture 'FooForCausalLM'.*num_experts_per_tok" -- "$tt" shapes --hf-config "$tmp/foo.json"
printf '{"architectures": ["FooMoe"], "hidden_size": 1024, "moe_intermediate_size": 1000, "num_experts": 8, "num_experts_per_tok": 2}\n' > "$tmp/moe.json"
expect 2 "moe.json: moe_intermediate_size 1000 is not divisible by --tp 16" -- "$tt" shapes --hf-config "$tmp/moe.json" --tp 16
expect 2 "--quant 'int4': expected one of bf16" -- "$tt" shapes --hf-config "$tmp/moe.json" --quant int4
expect 2 "--format 'csv'" -- "$tt" shapes --hf-config "$tmp/moe.json" --format csv
expect 2 "--gemm-rule: lookup rule 'nearest'" -- "$tt" shapes --hf-config "$tmp/moe.json" --gemm-rule nearest
expect 2 "nope.cfg: cannot open the profile" -- "$tt" shapes --profile "$tmp/nope.cfg"
printf 'tp = 8\ntensor-parallel = 8\n' > "$tmp/bad.cfg"
expect 2 "bad.cfg: .*tensor-parallel" -- "$tt" shapes --profile "$tmp/bad.cfg"
# A shipped profile with a flag over it, and AITER's own untuned file for that deployment, byte for byte.
expect 0 '"inter_dim": 192' -- "$tt" shapes --profile "$src/profiles/qwen3-235b-fp8-tp4.cfg" --tp 8
expect 0 "wrote .*untuned_fmoe.csv" -- "$tt" shapes --profile "$src/profiles/deepseek-v3-fp8-tp8.cfg" --format aiter-untuned -o "$tmp/ds"
if [ -f "$shared/aiter-configs/model_configs/a8w8_blockscale_untuned_fmoe_ds_v3.csv" ] &&
   ! cmp "$tmp/ds/untuned_fmoe.csv" "$shared/aiter-configs/model_configs/a8w8_blockscale_untuned_fmoe_ds_v3.csv"; then
  echo "FAIL: shapes --format aiter-untuned differs from AITER's DeepSeek-V3 untuned_fmoe"
  fails=$((fails + 1))
fi
echo "$fails failed"
[ "$fails" = 0 ]
