#!/usr/bin/env bash
# The steps of the `simulate` composite action (action.yml beside this file), one phase per
# step, so that they can be run and tested outside GitHub Actions: every `run:` step of
# action.yml is `simulate.sh PHASE` and nothing else (tests/e2e/test_simulate_action.py runs
# them in order in a fresh clone). docs/ci.md explains the inputs.
#
#   install    make install (the project's venv) with $SIMULATE_PYTHON
#   cache-key  the binary cache's directory and key, to $GITHUB_OUTPUT (for actions/cache)
#   build      skctl env build: a no-op when the cache was restored
#   up         skctl env up: services, and the autoscaler asked for
#   check      skctl check --trace: replay the trace, judge it against the baseline, write
#              the Markdown summary and the JUnit XML; exits 1 on a regression
#   down       skctl env down (the action runs it even when a step before it failed)
#
# The project is the repository this script is in (a composite action is checked out
# whole), so a workflow in another repository can use the action; relative paths (trace,
# baseline, thresholds, junit) are the workflow's working directory's.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
SKCTL="$ROOT/.venv/bin/skctl"
ENV_NAME="${SIMULATE_ENV_NAME:-simulate}"
AUTOSCALER="${SIMULATE_AUTOSCALER:-none}"
CA_BINARY="${SIMULATE_CLUSTER_AUTOSCALER_BINARY:-}"

fail() { echo "simulate.sh: $*" >&2; exit 2; }

output() {  # name=value lines for the step's outputs; printed too outside Actions
    if [[ -n "${GITHUB_OUTPUT:-}" ]]; then tee -a "$GITHUB_OUTPUT"; else cat; fi
}

build_flags() {  # CA is built only when it is asked for and no binary was given
    case "$AUTOSCALER" in
        none|karpenter) ;;
        cluster-autoscaler) [[ -n "$CA_BINARY" ]] || echo "--autoscaler" ;;
        *) fail "autoscaler is '$AUTOSCALER': one of none, karpenter, cluster-autoscaler" ;;
    esac
}

phase_install() {
    make -C "$ROOT" install PYTHON="${SIMULATE_PYTHON:-python3.11}"
}

phase_cache_key() {
    local flags  # assigned apart from `local` so that a bad autoscaler stops the script
    flags="$(build_flags)"
    # shellcheck disable=SC2086  # zero or one word
    "$SKCTL" env build --print-cache-key $flags | output
}

phase_build() {
    local flags
    flags="$(build_flags)"
    # shellcheck disable=SC2086
    "$SKCTL" env build $flags
}

phase_up() {
    local args=(env up --name "$ENV_NAME")
    case "$AUTOSCALER" in
        none) args+=(--services) ;;
        karpenter) args+=(--autoscaler karpenter) ;;
        cluster-autoscaler)
            args+=(--autoscaler cluster-autoscaler)
            if [[ -n "$CA_BINARY" ]]; then args+=(--autoscaler-binary "$CA_BINARY"); fi ;;
        *) fail "autoscaler is '$AUTOSCALER': one of none, karpenter, cluster-autoscaler" ;;
    esac
    "$SKCTL" "${args[@]}"
}

phase_check() {
    [[ -n "${SIMULATE_TRACE:-}" ]] || fail "the trace input is empty"
    [[ -n "${SIMULATE_BASELINE:-}" ]] || fail "the baseline input is empty"
    local junit="${SIMULATE_JUNIT:-simkube-check.xml}"
    local markdown="${SIMULATE_MARKDOWN:-simkube-check.md}"
    local args=(check --trace "$SIMULATE_TRACE" --baseline "$SIMULATE_BASELINE"
                --env "$ENV_NAME" --markdown --junit "$junit")
    if [[ -n "${SIMULATE_THRESHOLDS:-}" ]]; then args+=(--thresholds "$SIMULATE_THRESHOLDS"); fi
    if [[ -n "${SIMULATE_SPEED:-}" ]]; then args+=(--speed "$SIMULATE_SPEED"); fi
    if [[ -n "${SIMULATE_DURATION:-}" ]]; then args+=(--duration "$SIMULATE_DURATION"); fi
    if [[ -n "${SIMULATE_REPETITIONS:-}" ]]; then
        args+=(--repetitions "$SIMULATE_REPETITIONS"); fi
    if [[ -n "${SIMULATE_TIMEOUT:-}" ]]; then args+=(--timeout "$SIMULATE_TIMEOUT"); fi
    if [[ -n "${SIMULATE_NAME:-}" ]]; then args+=(--name "$SIMULATE_NAME"); fi
    local code=0
    "$SKCTL" "${args[@]}" > "$markdown" || code=$?
    cat "$markdown"
    local result
    case "$code" in
        0) result=pass ;;
        1) result=regression ;;
        *) result=error ;;
    esac
    printf 'result=%s\njunit=%s\nmarkdown=%s\n' "$result" "$junit" "$markdown" | output
    return "$code"
}

phase_down() {  # runs after any failure too: nothing to stop is not an error
    if [[ ! -x "$SKCTL" ]]; then echo "no skctl: nothing to stop"; return 0; fi
    local code=0
    "$SKCTL" env status --name "$ENV_NAME" > /dev/null 2>&1 || code=$?
    if [[ "$code" == 3 ]]; then echo "no environment '$ENV_NAME': nothing to stop"; return 0; fi
    "$SKCTL" env down --name "$ENV_NAME"
}

case "${1:-}" in
    install) phase_install ;;
    cache-key) phase_cache_key ;;
    build) phase_build ;;
    up) phase_up ;;
    check) phase_check ;;
    down) phase_down ;;
    *) fail "usage: simulate.sh install|cache-key|build|up|check|down (got '${1:-}')" ;;
esac
