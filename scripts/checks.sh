#!/usr/bin/env bash
# The type check and the linter side by side: each uses one core, so on two
# cores both take about as long as the slower one alone (35 s, not 65).
# Fails when either fails; each prints its own errors.
set -u
cd "$(dirname "$0")/.."
npm run --silent typecheck &
typecheck=$!
npm run --silent lint
lint=$?
wait "$typecheck"
typecheck=$?
[ "$typecheck" -eq 0 ] && [ "$lint" -eq 0 ]
