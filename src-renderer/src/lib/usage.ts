import type { AgentKind } from '../../../src-shared/constants';
import type { Usage } from '../../../src-shared/sessions';

/** The agent kinds' names; an ACP agent's own name is agent-names.ts's. */
export const AGENT_NAMES: Record<AgentKind, string> = {
  demo: 'Demo agent',
  command: 'Custom command',
  'claude-code': 'Claude Code',
  codex: 'Codex',
  gemini: 'Gemini CLI',
  acp: 'ACP agent',
};

const tokens = new Intl.NumberFormat('en', { notation: 'compact', maximumFractionDigits: 1 });

/**
 * "12.3K in · 1.2K out" (input counts cached tokens too), and the cost when there is one. A cost
 * left partly or wholly unknown says so and why: it never passes for the whole cost, nor for $0.
 */
export function usageText(usage: Usage): string {
  const input = usage.inputTokens + usage.cacheReadTokens + usage.cacheWriteTokens;
  const text = `${tokens.format(input)} in · ${tokens.format(usage.outputTokens)} out`;
  const { costUsd, costUnknown } = usage;
  if (costUnknown !== undefined) {
    const why = unknownCostReason(costUnknown.models);
    return costUsd === undefined
      ? `${text} · cost unknown: ${why}`
      : `${text} · ${costText(costUsd)} + unknown: ${why}`;
  }
  return costUsd === undefined ? text : `${text} · ${costText(costUsd)}`;
}

/** Why a cost is unknown: the models the price table lacks, else the agent reported none. */
export function unknownCostReason(models: readonly string[]): string {
  return models.length > 0 ? `no price for ${models.join(', ')}` : 'no cost reported';
}

/** Dollars with cents, or to a tenth of a cent below one cent. */
export function costText(usd: number): string {
  return usd > 0 && usd < 0.01 ? `$${usd.toFixed(4)}` : `$${usd.toFixed(2)}`;
}

/** Cache reads and writes, for a tooltip. */
export function usageDetail(usage: Usage): string {
  return `Input ${usage.inputTokens}, cache read ${usage.cacheReadTokens}, cache write ${usage.cacheWriteTokens}, output ${usage.outputTokens} tokens, summed over the session's runs`;
}
