// The public ACP registry's agents (https://github.com/agentclientprotocol/registry), from the
// registry repository's agent.json files (the newest stored version of each) for the agents its
// protocol matrix of 2026-08-20 lists, Autohand left out (no agent.json of it was found), written
// on 2026-12-07: each agent's id, name, version, description, repository (or website) and its npx,
// uvx and Linux binary distributions, unchanged. Written by scripts/refresh-acp-registry.mjs; do
// not edit by hand. Session Desk reads only this copy; it never fetches the registry or an agent.

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
  distribution: {
    npx?: RegistryLaunch;
    uvx?: RegistryLaunch;
    binary?: Readonly<Record<string, RegistryLaunch>>;
  };
}

export const ACP_REGISTRY: { agents: readonly RegistryAgent[] } = {
  agents: [
    {
      id: 'amp-acp',
      name: 'Amp',
      version: '0.9.0',
      description: 'ACP wrapper for Amp - the frontier coding agent',
      repository: 'https://github.com/tao12345666333/amp-acp',
      distribution: {
        binary: {
          'linux-x86_64': {
            cmd: './amp-acp',
            archive:
              'https://github.com/tao12345666333/amp-acp/releases/download/v0.9.0/amp-acp-linux-x86_64.tar.gz',
          },
          'linux-aarch64': {
            cmd: './amp-acp',
            archive:
              'https://github.com/tao12345666333/amp-acp/releases/download/v0.9.0/amp-acp-linux-aarch64.tar.gz',
          },
        },
      },
    },
    {
      id: 'auggie',
      name: 'Auggie CLI',
      version: '0.21.0',
      description: "Augment Code's powerful software agent, backed by industry-leading context engine",
      repository: 'https://github.com/augmentcode/auggie',
      distribution: {
        npx: {
          package: '@augmentcode/auggie@0.21.0',
          args: ['--acp'],
          env: {
            AUGMENT_DISABLE_AUTO_UPDATE: '1',
          },
        },
      },
    },
    {
      id: 'claude-acp',
      name: 'Claude Agent',
      version: '0.85.1',
      description: "ACP wrapper for Anthropic's Claude",
      repository: 'https://github.com/agentclientprotocol/claude-agent-acp',
      distribution: {
        npx: {
          package: '@agentclientprotocol/claude-agent-acp@0.85.1',
        },
      },
    },
    {
      id: 'cline',
      name: 'Cline',
      version: '3.0.4',
      description:
        'Autonomous coding agent CLI - capable of creating/editing files, running commands, using the browser, and more',
      repository: 'https://github.com/cline/cline',
      distribution: {
        npx: {
          package: 'cline@3.0.4',
          args: ['--acp'],
        },
      },
    },
    {
      id: 'codex-acp',
      name: 'Codex',
      version: '1.4.0',
      description: "ACP adapter for OpenAI's coding assistant",
      repository: 'https://github.com/agentclientprotocol/codex-acp',
      distribution: {
        npx: {
          package: '@agentclientprotocol/codex-acp@1.4.0',
        },
      },
    },
    {
      id: 'cortex-code',
      name: 'Cortex Code',
      version: '1.1.27',
      description: "Snowflake's Cortex Code coding agent",
      repository: 'https://docs.snowflake.com/en/user-guide/cortex-code/cortex-code',
      distribution: {
        binary: {
          'linux-x86_64': {
            cmd: './coco-1.1.27+200623.07dcb388081e-linux-amd64/cortex',
            archive:
              'https://sfc-repo.snowflakecomputing.com/cortex-code-cli/a4643c4278/1.1.27%2B200623.07dcb388081e/coco-1.1.27%2B200623.07dcb388081e-linux-amd64.tar.gz',
            args: ['acp', 'serve'],
          },
          'linux-aarch64': {
            cmd: './coco-1.1.27+200623.07dcb388081e-linux-arm64/cortex',
            archive:
              'https://sfc-repo.snowflakecomputing.com/cortex-code-cli/a4643c4278/1.1.27%2B200623.07dcb388081e/coco-1.1.27%2B200623.07dcb388081e-linux-arm64.tar.gz',
            args: ['acp', 'serve'],
          },
        },
      },
    },
    {
      id: 'corust-agent',
      name: 'Corust Agent',
      version: '0.3.7',
      description: 'Co-building with a seasoned Rust partner.',
      repository: 'https://github.com/Corust-ai/corust-agent-release',
      distribution: {
        binary: {
          'linux-x86_64': {
            cmd: './corust-agent-acp',
            archive:
              'https://github.com/Corust-ai/corust-agent-release/releases/download/v0.3.7/agent-linux-x64.tar.gz',
          },
        },
      },
    },
    {
      id: 'cursor',
      name: 'Cursor',
      version: '2026.10.01',
      description: "Cursor's coding agent",
      repository: 'https://cursor.com/docs/cli/acp',
      distribution: {
        binary: {
          'linux-x86_64': {
            cmd: './dist-package/cursor-agent',
            archive: 'https://downloads.cursor.com/lab/2026.10.01-e373342/linux/x64/agent-cli-package.tar.gz',
            args: ['acp'],
          },
          'linux-aarch64': {
            cmd: './dist-package/cursor-agent',
            archive:
              'https://downloads.cursor.com/lab/2026.10.01-e373342/linux/arm64/agent-cli-package.tar.gz',
            args: ['acp'],
          },
        },
      },
    },
    {
      id: 'devin',
      name: 'Devin',
      version: '3000.6.7',
      description: 'Devin CLI coding agent by Cognition',
      repository: 'https://github.com/CognitionAI/devin-cli',
      distribution: {
        binary: {
          'linux-x86_64': {
            cmd: './bin/devin',
            archive: 'https://static.devin.ai/cli/3000.6.7/devin-3000.6.7-x86_64-unknown-linux.tar.gz',
            args: ['acp'],
          },
          'linux-aarch64': {
            cmd: './bin/devin',
            archive: 'https://static.devin.ai/cli/3000.6.7/devin-3000.6.7-aarch64-unknown-linux.tar.gz',
            args: ['acp'],
          },
        },
      },
    },
    {
      id: 'dimcode',
      name: 'DimCode',
      version: '0.5.7',
      description: 'A coding agent that puts leading models at your command.',
      repository: 'https://dimcode.dev/docs/acp.html',
      distribution: {
        npx: {
          package: 'dimcode@0.5.7',
          args: ['acp'],
        },
      },
    },
    {
      id: 'dirac',
      name: 'Dirac',
      version: '0.3.1',
      description:
        'Reduces API costs by more than 50%, produces better and faster work. Uses Hash anchored parallel edits, AST manipulation and a whole lot of neat optimizations. Fully Open Source.',
      repository: 'https://github.com/dirac-run/dirac',
      distribution: {
        npx: {
          package: 'dirac-cli@0.3.0',
          args: ['--acp'],
        },
      },
    },
    {
      id: 'factory-droid',
      name: 'Factory Droid',
      version: '0.218.0',
      description: 'Factory Droid - AI coding agent powered by Factory AI',
      repository: 'https://factory.ai/product/cli',
      distribution: {
        npx: {
          package: 'droid@0.218.0',
          args: ['exec', '--output-format', 'acp-daemon'],
          env: {
            DROID_DISABLE_AUTO_UPDATE: 'true',
            FACTORY_DROID_AUTO_UPDATE_ENABLED: 'false',
          },
        },
      },
    },
    {
      id: 'gemini',
      name: 'Gemini CLI',
      version: '0.37.0',
      description: "Google's official CLI for Gemini",
      repository: 'https://github.com/google-gemini/gemini-cli',
      distribution: {
        npx: {
          package: '@google/gemini-cli@0.37.1',
          args: ['--acp'],
        },
      },
    },
    {
      id: 'github-copilot',
      name: 'GitHub Copilot',
      version: '1.548.0',
      description: "GitHub's AI pair programmer",
      repository: 'https://github.com/github/copilot-language-server-release',
      distribution: {
        npx: {
          package: '@github/copilot-language-server@1.548.0',
          args: ['--acp'],
        },
      },
    },
    {
      id: 'github-copilot-cli',
      name: 'GitHub Copilot',
      version: '1.0.80',
      description: "GitHub's AI pair programmer",
      repository: 'https://github.com/github/copilot-cli',
      distribution: {
        npx: {
          package: '@github/copilot@1.0.80',
          args: ['--acp'],
        },
      },
    },
    {
      id: 'glm-acp-agent',
      name: 'GLM Agent',
      version: '1.5.0',
      description:
        "ACP agent powered by Zhipu AI's GLM Coding Plan models (glm-5.1, glm-5-turbo, glm-4.7, glm-4.5-air). Supports streaming, tool calls, mid-session model switching, image input via Z.AI Coding Plan Vision MCP, and session load/fork/resume with on-disk persistence.",
      repository: 'https://github.com/stefandevo/glm-acp-agent',
      distribution: {
        npx: {
          package: 'glm-acp-agent@1.5.0',
        },
      },
    },
    {
      id: 'goose',
      name: 'goose',
      version: '1.50.1',
      description: 'A local, extensible, open source AI agent that automates engineering tasks',
      repository: 'https://github.com/block/goose',
      distribution: {
        binary: {
          'linux-x86_64': {
            cmd: './goose',
            archive:
              'https://github.com/block/goose/releases/download/v1.50.1/goose-x86_64-unknown-linux-gnu.tar.bz2',
            args: ['acp'],
          },
          'linux-aarch64': {
            cmd: './goose',
            archive:
              'https://github.com/block/goose/releases/download/v1.50.1/goose-aarch64-unknown-linux-gnu.tar.bz2',
            args: ['acp'],
          },
        },
      },
    },
    {
      id: 'grok-build',
      name: 'Grok Build',
      version: '1.0.30',
      description: "xAI's coding agent and CLI",
      repository: 'https://x.ai/cli',
      distribution: {
        npx: {
          package: '@xai-official/grok@1.0.30',
          args: ['agent', 'stdio'],
        },
      },
    },
    {
      id: 'harn',
      name: 'Harn',
      version: '0.10.155',
      description: 'Harn runs .harn agent pipelines as a native ACP coding agent over stdio.',
      repository: 'https://github.com/burin-labs/harn',
      distribution: {
        binary: {
          'linux-x86_64': {
            cmd: './harn',
            archive:
              'https://github.com/burin-labs/harn/releases/download/v0.10.155/harn-x86_64-unknown-linux-gnu.tar.gz',
            args: ['serve', 'acp'],
          },
          'linux-aarch64': {
            cmd: './harn',
            archive:
              'https://github.com/burin-labs/harn/releases/download/v0.10.155/harn-aarch64-unknown-linux-gnu.tar.gz',
            args: ['serve', 'acp'],
          },
        },
      },
    },
    {
      id: 'junie',
      name: 'Junie',
      version: '2698.3.0',
      description: 'AI Coding Agent by JetBrains',
      repository: 'https://github.com/JetBrains/junie-acp-release',
      distribution: {
        binary: {
          'linux-x86_64': {
            cmd: './junie-app/bin/junie',
            archive:
              'https://github.com/JetBrains/junie-acp-release/releases/download/2698.3/junie-release-2698.3-linux-amd64.zip',
            args: ['--acp=true'],
          },
          'linux-aarch64': {
            cmd: './junie-app/bin/junie',
            archive:
              'https://github.com/JetBrains/junie-acp-release/releases/download/2698.3/junie-release-2698.3-linux-aarch64.zip',
            args: ['--acp=true'],
          },
        },
      },
    },
    {
      id: 'kilo',
      name: 'Kilo',
      version: '7.5.5',
      description: 'The open source coding agent',
      repository: 'https://github.com/Kilo-Org/kilocode',
      distribution: {
        npx: {
          package: '@kilocode/cli@7.5.5',
          args: ['acp'],
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
          'linux-x86_64': {
            cmd: './kimi',
            archive:
              'https://github.com/MoonshotAI/kimi-cli/releases/download/1.9.0/kimi-1.9.0-x86_64-unknown-linux-gnu.tar.gz',
            args: ['acp'],
          },
          'linux-aarch64': {
            cmd: './kimi',
            archive:
              'https://github.com/MoonshotAI/kimi-cli/releases/download/1.9.0/kimi-1.9.0-aarch64-unknown-linux-gnu.tar.gz',
            args: ['acp'],
          },
        },
      },
    },
    {
      id: 'nova',
      name: 'Nova',
      version: '1.0.44',
      description: 'Nova by Compass AI - a fully-fledged software engineer at your command',
      repository: 'https://github.com/Compass-Agentic-Platform/nova',
      distribution: {
        npx: {
          package: '@compass-ai/nova@1.0.44',
          args: ['acp'],
        },
      },
    },
    {
      id: 'opencode',
      name: 'OpenCode',
      version: '2.0.23',
      description: 'The open source coding agent',
      repository: 'https://github.com/anomalyco/opencode',
      distribution: {
        npx: {
          package: '@opencode/cli@2.0.23',
          args: ['acp'],
        },
      },
    },
    {
      id: 'pi-acp',
      name: 'pi ACP',
      version: '0.0.16',
      description: 'ACP adapter for pi coding agent',
      repository: 'https://github.com/svkozak/pi-acp',
      distribution: {
        npx: {
          package: 'pi-acp@0.0.16',
        },
      },
    },
    {
      id: 'poolside',
      name: 'Poolside',
      version: '1.0.16',
      description: "Poolside's coding agent",
      repository: 'https://github.com/poolsideai/pool',
      distribution: {
        binary: {
          'linux-x86_64': {
            cmd: './pool-linux-amd64',
            archive: 'https://downloads.poolside.ai/pool/v1.0.16/pool-linux-amd64.tar.gz',
            args: ['acp'],
          },
          'linux-aarch64': {
            cmd: './pool-linux-arm64',
            archive: 'https://downloads.poolside.ai/pool/v1.0.16/pool-linux-arm64.tar.gz',
            args: ['acp'],
          },
        },
      },
    },
    {
      id: 'qwen-code',
      name: 'Qwen Code',
      version: '0.21.14',
      description: "Alibaba's Qwen coding assistant",
      repository: 'https://github.com/QwenLM/qwen-code',
      distribution: {
        npx: {
          package: '@qwen-code/qwen-code@0.21.14',
          args: ['--acp', '--experimental-skills'],
        },
      },
    },
    {
      id: 'sigit',
      name: 'siGit Code',
      version: '1.5.12',
      description:
        'Local-first coding agent. Runs entirely on your machine with optional on-device LLM inference via Onde.',
      repository: 'https://github.com/getsigit/sigit',
      distribution: {
        npx: {
          package: '@smbcloud/sigit@1.5.12',
        },
      },
    },
    {
      id: 'stakpak',
      name: 'Stakpak',
      version: '0.3.67',
      description: 'Open-source DevOps agent in Rust with enterprise-grade security',
      repository: 'https://github.com/stakpak/agent',
      distribution: {
        binary: {
          'linux-x86_64': {
            cmd: './stakpak',
            archive: 'https://github.com/stakpak/agent/releases/download/v0.3.67/stakpak-linux-x86_64.tar.gz',
            args: ['acp'],
          },
          'linux-aarch64': {
            cmd: './stakpak',
            archive:
              'https://github.com/stakpak/agent/releases/download/v0.3.67/stakpak-linux-aarch64.tar.gz',
            args: ['acp'],
          },
        },
      },
    },
  ],
};
