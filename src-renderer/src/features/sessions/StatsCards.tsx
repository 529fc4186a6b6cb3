import type { Stats } from '../../../../src-shared/sessions';
import { AGENT_NAMES, costText, unknownCostReason } from '../../lib/usage';

type Figure = Exclude<keyof Stats, 'simulatedCostPastWeek' | 'costUnknownPastWeek'>;

/** Each card: its figure, a short label, and what it counts (shown on hover, read by screen readers). */
const CARDS: { key: Figure; label: string; hint: string }[] = [
  {
    key: 'mergesPastWeek',
    label: 'Merged this week',
    hint: 'Pull requests from sessions, merged in the last 7 days',
  },
  {
    key: 'authorsPastWeek',
    label: 'Authors this week',
    hint: 'People who started a session in the last 7 days',
  },
  {
    key: 'humansPastWeek',
    label: 'Active people',
    hint: 'People who started a session or sent a prompt in the last 7 days',
  },
  { key: 'humansPromptingNow', label: 'Prompting now', hint: 'People with a session active right now' },
  {
    key: 'costPastWeek',
    label: 'Agent cost this week',
    hint: 'What agent CLIs reported for runs that ended in the last 7 days',
  },
];

const SIMULATED_NOTE = 'Made up by the demo agent: no real agent ran, and nothing was paid';

/**
 * The agent cost card. Runs of the demo agent have a made-up cost: shown, marked simulated,
 * and never added to what real agents reported.
 */
function CostValue({ stats }: { stats: Stats }) {
  const simulated = stats.simulatedCostPastWeek;
  const known = stats.costPastWeek;
  // Runs of unknown cost are left out of the sum: it is shown as a part, never as the whole.
  const unknown = stats.costUnknownPastWeek !== undefined;
  const real = unknown ? (known > 0 ? `${costText(known)} + unknown` : 'Unknown') : costText(known);
  if (simulated === undefined) return <>{real}</>;
  if (known === 0 && !unknown) {
    return (
      <>
        {costText(simulated)}{' '}
        <span className="stat-simulated" title={SIMULATED_NOTE}>
          simulated
        </span>
      </>
    );
  }
  return (
    <>
      {real} <span className="stat-simulated">+ {costText(simulated)} simulated</span>
    </>
  );
}

/** What the cost card leaves out, per agent: "cost of 6 Codex sessions unknown: no price for gpt-6.1-sol". */
function UnknownCosts({ unknown }: { unknown: NonNullable<Stats['costUnknownPastWeek']> }) {
  return (
    <ul className="stat-unknown">
      {unknown.map((u) => (
        <li key={u.agent}>
          cost of {u.sessions} {AGENT_NAMES[u.agent]} {u.sessions === 1 ? 'session' : 'sessions'} unknown:{' '}
          {unknownCostReason(u.models)}
        </li>
      ))}
    </ul>
  );
}

export function StatsCards({ stats }: { stats: Stats | undefined }) {
  return (
    <section className="stats" aria-label="Workspace stats">
      {CARDS.map((card) => {
        const value = stats?.[card.key];
        return (
          <div key={card.key} className="stat" title={card.hint}>
            <div className="stat-value">
              {stats === undefined || value === undefined ? (
                '–'
              ) : card.key === 'costPastWeek' ? (
                <CostValue stats={stats} />
              ) : (
                value
              )}
            </div>
            <div className="stat-label">{card.label}</div>
            {card.key === 'costPastWeek' && stats?.costUnknownPastWeek !== undefined && (
              <UnknownCosts unknown={stats.costUnknownPastWeek} />
            )}
            <div className="stat-hint">{card.hint}</div>
          </div>
        );
      })}
    </section>
  );
}
