#!/bin/sh
# Installs the coding-agent CLIs Session Desk drives (Claude Code, Codex, Gemini CLI) from npm
# into a prefix of their own, outside any project, and prints the folder holding their programs.
#   scripts/install-agent-clis.sh [prefix]     (default: a new temporary folder)
# The defaults are the versions the recordings in test/fixtures/agents come from; choose others
# with CLAUDE_CODE_VERSION, CODEX_VERSION, GEMINI_CLI_VERSION (any npm version or tag).
set -eu

prefix=${1:-$(mktemp -d "${TMPDIR:-/tmp}/agent-clis.XXXXXX")}
mkdir -p "$prefix"

# Claude Code's postinstall copies its native program into place, and Gemini CLI's node-pty and
# keytar build native addons (its shell and keychain): the prefix's own package.json allows these
# install scripts by name, as npm's allowScripts asks.
cat >"$prefix/package.json" <<JSON
{
  "private": true,
  "dependencies": {
    "@anthropic-ai/claude-code": "${CLAUDE_CODE_VERSION:-2.1.330}",
    "@openai/codex": "${CODEX_VERSION:-0.169.0}",
    "@google/gemini-cli": "${GEMINI_CLI_VERSION:-0.61.0}"
  },
  "allowScripts": { "@anthropic-ai/claude-code": true, "node-pty": true, "@github/keytar": true }
}
JSON
npm install --prefix "$prefix" --no-audit --no-fund --foreground-scripts >&2

bin="$(cd "$prefix" && pwd)/node_modules/.bin"
for program in claude codex gemini; do
  printf '%s: %s\n' "$program" "$("$bin/$program" --version 2>/dev/null | head -n 1)" >&2
done
echo "$bin"
