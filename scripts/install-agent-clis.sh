#!/bin/sh
# Installs the coding-agent CLIs Session Desk drives (Claude Code, Codex, Gemini CLI) from npm
# into a prefix of their own, outside any project, and prints the folder holding their programs.
#   scripts/install-agent-clis.sh [prefix]          (default: a new temporary folder)
#   scripts/install-agent-clis.sh --acp [prefix]    the agents that speak the Agent Client
#                                                   Protocol instead (see below)
# The defaults are the versions the recordings in test/fixtures/agents come from; choose others
# with CLAUDE_CODE_VERSION, CODEX_VERSION, GEMINI_CLI_VERSION (any npm version or tag).
#
# The ACP set (recordings in test/fixtures/agents/acp) is OpenCode, Qwen Code and Zed's ACP
# adapters for Claude Code and Codex; Gemini CLI, the fifth, speaks ACP itself (`gemini --acp`)
# and comes with the first set. Versions: OPENCODE_VERSION, QWEN_CODE_VERSION,
# CLAUDE_AGENT_ACP_VERSION, CODEX_ACP_VERSION. All of them install from the npm registry alone:
# OpenCode and codex-acp are native programs shipped as per-platform optional packages.
set -eu

set_name=clis
if [ "${1:-}" = "--acp" ]; then
  set_name=acp
  shift
fi
prefix=${1:-$(mktemp -d "${TMPDIR:-/tmp}/agent-$set_name.XXXXXX")}
mkdir -p "$prefix"

if [ "$set_name" = acp ]; then
  # OpenCode's postinstall copies its platform's program (an optional package) into its bin
  # folder. Qwen Code's optional node-pty is prebuilt; its microphone addon (voice input, which
  # no headless run uses) would build from source, so its script is refused.
  cat >"$prefix/package.json" <<JSON
{
  "private": true,
  "dependencies": {
    "opencode-ai": "${OPENCODE_VERSION:-1.18.33}",
    "@qwen-code/qwen-code": "${QWEN_CODE_VERSION:-0.24.4}",
    "@zed-industries/claude-agent-acp": "${CLAUDE_AGENT_ACP_VERSION:-0.23.1}",
    "@zed-industries/codex-acp": "${CODEX_ACP_VERSION:-0.16.0}"
  },
  "allowScripts": { "opencode-ai": true, "@qwen-code/audio-capture": false }
}
JSON
  packages="opencode-ai @qwen-code/qwen-code @zed-industries/claude-agent-acp @zed-industries/codex-acp"
else
  # Claude Code's postinstall copies its native program into place, and Gemini CLI's node-pty and
  # keytar build native addons (its shell and keychain): the prefix's own package.json allows
  # these install scripts by name, as npm's allowScripts asks.
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
  packages="@anthropic-ai/claude-code @openai/codex @google/gemini-cli"
fi
npm install --prefix "$prefix" --no-audit --no-fund --foreground-scripts >&2

# The adapters have no --version (they speak ACP on stdin at once): each package says its own.
modules="$(cd "$prefix" && pwd)/node_modules"
for package in $packages; do
  printf '%s: %s\n' "$package" "$(node -p "require('$modules/$package/package.json').version")" >&2
done
echo "$modules/.bin"
