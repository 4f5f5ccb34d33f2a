#!/usr/bin/env bash
# The five real Hugging Face exports of test/fixtures/transformers through ortc: hf_models.sh's
# checks (one CUDA group, CUDA compiles, host emulator, CPU bundle against PyTorch's outputs) for
# the fixtures alone. ctest runs it as e2e.hf_fixtures.
# Usage: hf_fixtures.sh ORTC_BINARY EMULATE_BINARY WORK_DIR [FIXTURE...]
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: $0 ORTC_BINARY EMULATE_BINARY WORK_DIR [FIXTURE...]" >&2; exit 2; }
ortc=$1 emulate=$2 work=$3
shift 3
[ $# -gt 0 ] || set -- fixtures
exec "$(dirname "$0")/hf_models.sh" "$ortc" "$emulate" "$work" "$@"
