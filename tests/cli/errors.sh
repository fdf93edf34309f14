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
# Safety engine: tune/export/verify options and certificates.
expect 0 "--plant-faults" -- "$tt" tune --help
expect 0 "--cert" -- "$tt" verify --help
expect 2 "--rule: lookup rule 'nearest'|lookup rule 'nearest'" -- "$tt" tune --db "$tmp/a.db" --shapes "16,64,64" --rule nearest
expect 2 "--m-max 0: expected a positive M" -- "$tt" tune --db "$tmp/a.db" --shapes "16,64,64" --m-max 0
expect 2 "--export needs coverage" -- "$tt" tune --db "$tmp/a.db" --shapes "16,64,64" --no-coverage --export "$tmp/t.csv"
expect 2 "-o/--output is required: the certificate" -- "$tt" export --db "$tmp/a.db"
expect 2 "family 'gemm_fp9'" -- "$tt" export --db "$tmp/a.db" --family gemm_fp9 -o "$tmp/t.csv"
expect 2 "a.db: no such database" -- "$tt" export --db "$tmp/a.db" -o "$tmp/t.csv"
: > "$tmp/a.db"
expect 1 "no gemm_bf16 row to export" -- "$tt" export --db "$tmp/a.db" -o "$tmp/t.csv"
expect 2 "the option '--table' is required|--table" -- "$tt" verify
expect 2 "nope.csv: cannot open" -- "$tt" verify --table "$tmp/nope.csv"
printf 'gfx,cu_num,M,N,K,bias,dtype,outdtype,scaleAB,bpreshuffle,libtype,solidx,splitK,us,kernelName,err_ratio,tflops,bw\nsm_90a,132,16,64,64,False,torch.bfloat16,torch.bfloat16,False,False,tunetab,1,1,3.0,tunetab_gemm_bf16_m16n64k64_w16x16_s4_mma_v8_sk1,0.0,1.0,1.0\n' > "$tmp/t.csv"
printf '{"format": "tunetab-certificate", "version": 1,' > "$tmp/t.csv.cert.json"
expect 2 "t.csv.cert.json: malformed JSON" -- "$tt" verify --table "$tmp/t.csv" --cert "$tmp/t.csv.cert.json"
printf '{"format": "tunetab-certificate", "version": 1, "table": "t.csv"}' > "$tmp/t.csv.cert.json"
expect 2 "t.csv.cert.json: table_format: missing" -- "$tt" verify --table "$tmp/t.csv" --cert "$tmp/t.csv.cert.json"
if ! "$tt" devices | grep -q "^0:"; then
  expect 2 "no GPU available" -- "$tt" verify --table "$tmp/t.csv"
fi

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

# gaps: shipped tables audited against a deployment's keys; 2 on bad input, 1 when a key has a gap.
glm5="$src/profiles/glm-5-fp8-ep8-gfx942.cfg"
fmoe_head='cu_num,token,model_dim,inter_dim,expert,topk,act_type,dtype,q_dtype_a,q_dtype_w,q_type,use_g1u1,doweight_stage1,block_m,ksplit,us1,kernelName1,err1,us2,kernelName2,err2,us,run_1stage'
fmoe_key='6144,2048,32,8,ActivationType.Silu,torch.bfloat16,torch.float8_e4m3fnuz,torch.float8_e4m3fnuz,QuantType.per_1x128,1,0'
printf '%s\n304,1,%s,32,0,84.3,k1,0.0%%,0.0,,0.0%%,84.3,1\n' "$fmoe_head" "$fmoe_key" > "$tmp/tuned_fmoe.csv"
expect 0 "--emit-untuned" -- "$tt" gaps --help
expect 2 "--format: required" -- "$tt" gaps --table "$tmp/tuned_fmoe.csv" --profile "$glm5"
expect 2 "--format 'aiter': expected one of aiter-fmoe" -- "$tt" gaps --format aiter --table "$tmp/tuned_fmoe.csv" --profile "$glm5"
expect 2 "--table: name at least one table" -- "$tt" gaps --format aiter-fmoe --profile "$glm5"
expect 2 "nope.csv: cannot open for reading" -- "$tt" gaps --format aiter-fmoe --table "$tmp/nope.csv" --profile "$glm5"
expect 2 "--m-max 0: expected a positive M" -- "$tt" gaps --format aiter-fmoe --table "$tmp/tuned_fmoe.csv" --profile "$glm5" --m-max 0
expect 2 "--max-err-ratio" -- "$tt" gaps --format aiter-fmoe --table "$tmp/tuned_fmoe.csv" --profile "$glm5" --max-err-ratio -1
expect 2 "give the deployment: --profile" -- "$tt" gaps --format aiter-fmoe --table "$tmp/tuned_fmoe.csv"
printf 'cu_num,token\n304,1\n' > "$tmp/cols.csv"
expect 2 "cols.csv: missing column" -- "$tt" gaps --format aiter-fmoe --table "$tmp/cols.csv" --profile "$glm5"
printf '%s\n304,x,%s,32,0,84.3,k1,0.0%%,0.0,,0.0%%,84.3,1\n' "$fmoe_head" "$fmoe_key" > "$tmp/token.csv"
expect 2 "token.csv:2: column 'token': expected an integer, got 'x'" -- "$tt" gaps --format aiter-fmoe --table "$tmp/token.csv" --profile "$glm5"
printf '%s\n304,1,%s,32,0,84.3,k1,zero,0.0,,0.0%%,84.3,1\n' "$fmoe_head" "$fmoe_key" > "$tmp/err.csv"
expect 2 "err.csv:2: column 'err1': expected a number, got 'zero'" -- "$tt" gaps --format aiter-fmoe --table "$tmp/err.csv" --profile "$glm5"
printf 'gfx,cu_num,M,N,K,us,kernelName\ngfx942,304,1,64,64,1.0,k\n' > "$tmp/gemm.csv"
expect 2 "gemm.csv: missing column 'errRatio' \(or 'err_ratio'\)" -- "$tt" gaps --format aiter-a8w8-blockscale-gemm --table "$tmp/gemm.csv" --profile "$glm5"
printf 'gfx,cu_num,M,N,K,us,kernelName,errRatio\ngfx942,304,1,64,64,1.0,k,0.0\n' > "$tmp/gemm_ok.csv"
printf 'N,M\n64,1\n' > "$tmp/keys.csv"
expect 2 "keys.csv: missing column 'K'" -- "$tt" gaps --format aiter-a8w8-blockscale-gemm --table "$tmp/gemm_ok.csv" --shapes "$tmp/keys.csv"
printf '{"1": {}}' > "$tmp/moe.json"
expect 2 "moe.json: the file name must read E=\{E\},N=\{N\}" -- "$tt" gaps --format vllm-moe-json --table "$tmp/moe.json" --profile "$glm5"
mkdir -p "$tmp/vllm"
printf '{"1": {"BLOCK_SIZE_M": 16,' > "$tmp/vllm/E=32,N=2048,device_name=AMD_Instinct_MI300X.json"
expect 2 "device_name=AMD_Instinct_MI300X.json: malformed JSON" -- "$tt" gaps --format vllm-moe-json --table "$tmp/vllm/E=32,N=2048,device_name=AMD_Instinct_MI300X.json" --profile "$glm5"
printf '{"one": {"BLOCK_SIZE_M": 16}}' > "$tmp/vllm/E=32,N=2048,device_name=AMD_Instinct_MI300X.json"
expect 2 'key "one": expected a batch size' -- "$tt" gaps --format vllm-moe-json --table "$tmp/vllm/E=32,N=2048,device_name=AMD_Instinct_MI300X.json" --profile "$glm5"
printf '{"1": {"BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 128}}' > "$tmp/vllm/E=32,N=2048,device_name=AMD_Instinct_MI300X.json"
expect 2 "--emit-untuned: vllm-moe-json has no untuned CSV" -- "$tt" gaps --format vllm-moe-json --table "$tmp/vllm/E=32,N=2048,device_name=AMD_Instinct_MI300X.json" --profile "$glm5" --emit-untuned "$tmp/u.csv"
# The one-row tables: AITER serves M 1 only, 2..16384 miss (exit 1); vLLM's nearest key serves every M
# (GLM-5 EP8: E=32, N=2048) from its M=1 config, so 2..16384 are extrapolated (exit 1).
expect 1 "miss +M 2..16384 " -- "$tt" gaps --format aiter-fmoe --table "$tmp/tuned_fmoe.csv" --profile "$glm5"
expect 1 "extrapolated +M 2..16384 " -- "$tt" gaps --format vllm-moe-json --table "$tmp/vllm/E=32,N=2048,device_name=AMD_Instinct_MI300X.json" --profile "$glm5" --quant bf16
# Real tables: glm5_1 has no token-512 row for GLM-5's key (exit 1); glm47 covers GLM-4.5's key (exit 0).
aiter="$shared/aiter-configs"
if [ -d "$aiter/model_configs" ]; then
  expect 1 "miss +M 257..512 +gfx=gfx942 cu_num=304 model_dim=6144 inter_dim=2048 expert=32 topk=8" -- \
    "$tt" gaps --format aiter-fmoe --table "$aiter/tuned_fmoe.csv" --table "$aiter/model_configs/a8w8_blockscale_tuned_fmoe_glm5_1.csv" --profile "$glm5"
  expect 1 '"m_first": 257' -- "$tt" gaps --format aiter-fmoe --table "$aiter/model_configs/a8w8_blockscale_tuned_fmoe_glm5_1.csv" --profile "$glm5" --json
  expect 1 "wrote the buckets of 1 miss ranges" -- "$tt" gaps --format aiter-fmoe --table "$aiter/model_configs/a8w8_blockscale_tuned_fmoe_glm5_1.csv" --profile "$glm5" --emit-untuned "$tmp/glm5_untuned.csv"
  if ! grep -qx "512,6144,2048,32,8,ActivationType.Silu,torch.bfloat16,torch.float8_e4m3fnuz,torch.float8_e4m3fnuz,QuantType.per_1x128,1,0" "$tmp/glm5_untuned.csv"; then
    echo "FAIL: gaps --emit-untuned did not write the token-512 bucket"
    fails=$((fails + 1))
  fi
  expect 0 "summary: 1 keys, 1 complete" -- "$tt" gaps --format aiter-fmoe --table "$aiter/model_configs/glm47_fp8_tuned_fmoe.csv" --profile "$src/profiles/glm-4.5-fp8-per-token-tp8.cfg"
fi
# The acceptance tunes' committed tables (runs/: issue 6 on the H200 and on the H100) cover GLM-5 EP8's keys with no gap.
h200="$src/profiles/glm-5-fp8-ep8-h200.cfg"
for run in glm5 glm5-h100; do
  d="$src/runs/$run"
  expect 0 "summary: 9 keys, 9 complete; 243 rows; miss 0" -- "$tt" gaps --format aiter-a8w8-blockscale-gemm --table "$d/a8w8_blockscale_tuned_gemm.csv" --profile "$h200"
  expect 0 "summary: 4 keys, 4 complete; 97 rows; miss 0" -- "$tt" gaps --format aiter-bf16-gemm --table "$d/bf16_tuned_gemm.csv" --profile "$h200"
  expect 0 "summary: 1 keys, 1 complete; 13 rows; miss 0" -- "$tt" gaps --format aiter-fmoe --table "$d/tuned_fmoe.csv" --profile "$h200"
  expect 0 "summary: 1 keys, 1 complete; 4096 rows; miss 0 extrapolated 0" -- "$tt" gaps --format vllm-moe-json --table "$d"/E=32,N=2048,*128].json --profile "$h200"
done
# tune --profile: keys no family serves and conflicting options are input errors, before any device work.
expect 0 "--export-dir" -- "$tt" tune --help
expect 2 "quant fp8-per-token has no tunetab GEMM family" -- "$tt" tune --db "$tmp/p.db" --profile "$src/profiles/glm-4.5-fp8-per-token-tp8.cfg"
expect 2 "--shapes: not with --profile" -- "$tt" tune --db "$tmp/p.db" --profile "$glm5" --shapes "1,64,64"
expect 2 "--rule/--m-max: not with --profile" -- "$tt" tune --db "$tmp/p.db" --profile "$glm5" --rule exact
expect 2 "--export-dir: only with --profile" -- "$tt" tune --db "$tmp/p.db" --shapes "16,64,64" --export-dir "$tmp/x"
expect 2 "--families: only with --profile" -- "$tt" tune --db "$tmp/p.db" --shapes "16,64,64" --families fused_moe
expect 2 "--tier-keep: only with --profile" -- "$tt" tune --db "$tmp/p.db" --shapes "16,64,64" --tier-keep 3
expect 2 "--sweep-rows: only with --profile" -- "$tt" tune --db "$tmp/p.db" --shapes "16,64,64" --sweep-rows 257-352
expect 2 "--sweep-rows 'x-1': expected FIRST-LAST" -- "$tt" tune --db "$tmp/p.db" --profile "$glm5" --sweep-rows x-1
expect 2 "--sweep-rows: not with --full-sweep" -- "$tt" tune --db "$tmp/p.db" --profile "$glm5" --sweep-rows 257-352 --full-sweep
expect 2 "--tp: only with --profile" -- "$tt" tune --db "$tmp/p.db" --shapes "16,64,64" --tp 8
expect 2 "--families 'fused_moe': the plan has no key of these families" -- "$tt" tune --db "$tmp/p.db" --profile "$src/profiles/llama-3.1-8b-bf16-tp1.cfg" --families fused_moe
# export --profile: a deployment's tables from its tune's database alone; 2 on bad input, 1 when a row is left out.
expect 0 "--device-name" -- "$tt" export --help
: > "$tmp/empty.db"  # an empty file: the commands open it as an empty database
expect 2 "nope.db: no such database" -- "$tt" db --db "$tmp/nope.db"
expect 0 "runs: none" -- "$tt" db --db "$tmp/empty.db"
expect 2 "nope.db: no such database" -- "$tt" export --profile "$h200" --db "$tmp/nope.db" --export-dir "$tmp/e"
expect 2 "--export-dir is required with --profile" -- "$tt" export --profile "$h200" --db "$tmp/p.db"
expect 2 "--format/--family: not with --profile" -- "$tt" export --profile "$h200" --db "$tmp/p.db" --export-dir "$tmp/e" --family gemm_fp8_blockscale
expect 2 "--output: not with --profile" -- "$tt" export --profile "$h200" --db "$tmp/p.db" --export-dir "$tmp/e" -o "$tmp/t.csv"
expect 2 "--rule/--m-max/--every-m: not with --profile" -- "$tt" export --profile "$h200" --db "$tmp/p.db" --export-dir "$tmp/e" --m-max 64
expect 2 "--export-dir: only with --profile" -- "$tt" export --db "$tmp/p.db" --export-dir "$tmp/e"
expect 2 "--gemm-rule: only with --profile" -- "$tt" export --db "$tmp/empty.db" -o "$tmp/t.csv" --gemm-rule exact
expect 2 "quant fp8-per-token has no tunetab GEMM family" -- "$tt" export --profile "$src/profiles/glm-4.5-fp8-per-token-tp8.cfg" --db "$tmp/empty.db" --export-dir "$tmp/e"
# A database with no covered row: every table written (header only) with its certificate, each row named as left
# out, and the gap report's misses.
expect 1 "not exported: fmoe model_dim=6144 inter_dim=2048 expert=32 topk=8 .* M=512: no row passed coverage" -- \
  "$tt" export --profile "$h200" --db "$tmp/empty.db" --export-dir "$tmp/e"
expect 1 "summary: 1 keys, 0 complete; 0 rows; miss 1" -- "$tt" export --profile "$h200" --db "$tmp/empty.db" --export-dir "$tmp/e"
for f in bf16_tuned_gemm.csv a8w8_blockscale_tuned_gemm.csv tuned_fmoe.csv; do
  if [ ! -f "$tmp/e/$f" ] || [ ! -f "$tmp/e/$f.cert.json" ]; then
    echo "FAIL: export --profile did not write $f and its certificate"
    fails=$((fails + 1))
  fi
done
echo "$fails failed"
[ "$fails" = 0 ]
