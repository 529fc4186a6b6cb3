// The public ACP registry's agents, copied from https://github.com/agentclientprotocol/registry
// at commit 3de1678346d1b37b6c3f07de503043ebcbb9cbdb (2026-02-07): each agent.json's id, name,
// version, description, repository and Linux distributions, unchanged. Session Desk reads only this copy; it never fetches the
// registry or an agent. To update it, copy the agents' files again and note the commit here.

export interface RegistryLaunch {
  cmd?: string;
  package?: string;
  args?: readonly string[];
  env?: Readonly<Record<string, string>>;
  archive?: string;
}

export interface RegistryAgent {
  id: string;
  name: string;
  version: string;
  description: string;
  repository?: string | null;
  distribution: { npx?: RegistryLaunch; binary?: Readonly<Record<string, RegistryLaunch>> };
}

export const ACP_REGISTRY: { agents: readonly RegistryAgent[] } = {
  agents: [
    {
      id: 'auggie',
      name: 'Auggie CLI',
      version: '0.15.0',
      description: "Augment Code's powerful software agent, backed by industry-leading context engine",
      repository: 'https://github.com/augmentcode/auggie-zed-extension',
      distribution: {
        npx: {
          package: '@augmentcode/auggie@0.15.0',
          args: ['--acp'],
          env: {
            AUGMENT_DISABLE_AUTO_UPDATE: '1',
          },
        },
      },
    },
    {
      id: 'claude-code-acp',
      name: 'Claude Code',
      version: '0.16.0',
      description: "ACP wrapper for Anthropic's Claude",
      repository: 'https://github.com/zed-industries/claude-code-acp',
      distribution: {
        npx: {
          package: '@zed-industries/claude-code-acp@0.16.0',
        },
      },
    },
    {
      id: 'codex-acp',
      name: 'Codex CLI',
      version: '0.9.2',
      description: "ACP adapter for OpenAI's coding assistant",
      repository: 'https://github.com/zed-industries/codex-acp',
      distribution: {
        binary: {
          'linux-aarch64': {
            archive:
              'https://github.com/zed-industries/codex-acp/releases/download/v0.9.2/codex-acp-0.9.2-aarch64-unknown-linux-gnu.tar.gz',
            cmd: './codex-acp',
          },
          'linux-x86_64': {
            archive:
              'https://github.com/zed-industries/codex-acp/releases/download/v0.9.2/codex-acp-0.9.2-x86_64-unknown-linux-gnu.tar.gz',
            cmd: './codex-acp',
          },
        },
      },
    },
    {
      id: 'factory-droid',
      name: 'Factory Droid',
      version: '0.56.3',
      description: 'Factory Droid - AI coding agent powered by Factory AI',
      repository: null,
      distribution: {
        binary: {
          'linux-x86_64': {
            archive: 'https://downloads.factory.ai/factory-cli/releases/0.56.3/droid-linux-x86_64.tar.gz',
            cmd: './droid',
            args: ['exec', '--output-format', 'acp'],
            env: {
              DROID_DISABLE_AUTO_UPDATE: 'true',
              FACTORY_DROID_AUTO_UPDATE_ENABLED: 'false',
            },
          },
          'linux-aarch64': {
            archive: 'https://downloads.factory.ai/factory-cli/releases/0.56.3/droid-linux-aarch64.tar.gz',
            cmd: './droid',
            args: ['exec', '--output-format', 'acp'],
            env: {
              DROID_DISABLE_AUTO_UPDATE: 'true',
              FACTORY_DROID_AUTO_UPDATE_ENABLED: 'false',
            },
          },
        },
      },
    },
    {
      id: 'gemini',
      name: 'Gemini CLI',
      version: '0.27.3',
      description: "Google's official CLI for Gemini",
      repository: 'https://github.com/google-gemini/gemini-cli',
      distribution: {
        npx: {
          package: '@google/gemini-cli@0.27.3',
          args: ['--experimental-acp'],
        },
      },
    },
    {
      id: 'github-copilot',
      name: 'GitHub Copilot',
      version: '1.425.0',
      description: "GitHub's AI pair programmer",
      repository: 'https://github.com/github/copilot-language-server-release',
      distribution: {
        npx: {
          package: '@github/copilot-language-server@1.425.0',
          args: ['--acp'],
        },
      },
    },
    {
      id: 'kimi',
      name: 'Kimi CLI',
      version: '1.9.0',
      description: "Moonshot AI's coding assistant",
      repository: 'https://github.com/MoonshotAI/kimi-cli',
      distribution: {
        binary: {
          'linux-aarch64': {
            archive:
              'https://github.com/MoonshotAI/kimi-cli/releases/download/1.9/kimi-1.9-aarch64-unknown-linux-gnu.tar.gz',
            cmd: './kimi',
            args: ['acp'],
          },
          'linux-x86_64': {
            archive:
              'https://github.com/MoonshotAI/kimi-cli/releases/download/1.9/kimi-1.9-x86_64-unknown-linux-gnu.tar.gz',
            cmd: './kimi',
            args: ['acp'],
          },
        },
      },
    },
    {
      id: 'mistral-vibe',
      name: 'Mistral Vibe',
      version: '2.0.2',
      description: "Mistral's open-source coding assistant",
      repository: 'https://github.com/mistralai/mistral-vibe',
      distribution: {
        binary: {
          'linux-aarch64': {
            archive:
              'https://github.com/mistralai/mistral-vibe/releases/download/v2.0.2/vibe-acp-linux-aarch64-2.0.2.zip',
            cmd: './vibe-acp',
          },
          'linux-x86_64': {
            archive:
              'https://github.com/mistralai/mistral-vibe/releases/download/v2.0.2/vibe-acp-linux-x86_64-2.0.2.zip',
            cmd: './vibe-acp',
          },
        },
      },
    },
    {
      id: 'opencode',
      name: 'OpenCode',
      version: '1.1.53',
      description: 'The open source coding agent',
      repository: 'https://github.com/sst/opencode',
      distribution: {
        binary: {
          'linux-aarch64': {
            archive: 'https://github.com/sst/opencode/releases/download/v1.1.53/opencode-linux-arm64.tar.gz',
            cmd: './opencode',
            args: ['acp'],
          },
          'linux-x86_64': {
            archive: 'https://github.com/sst/opencode/releases/download/v1.1.53/opencode-linux-x64.tar.gz',
            cmd: './opencode',
            args: ['acp'],
          },
        },
      },
    },
    {
      id: 'qoder',
      name: 'Qoder CLI',
      version: '0.1.26',
      description: 'AI coding assistant with agentic capabilities',
      repository: null,
      distribution: {
        npx: {
          package: '@qoder-ai/qodercli@0.1.26',
          args: ['--acp'],
        },
      },
    },
    {
      id: 'qwen-code',
      name: 'Qwen Code',
      version: '0.9.1',
      description: "Alibaba's Qwen coding assistant",
      repository: 'https://github.com/QwenLM/qwen-code',
      distribution: {
        npx: {
          package: '@qwen-code/qwen-code@0.9.1',
          args: ['--acp', '--experimental-skills'],
        },
      },
    },
  ],
};
