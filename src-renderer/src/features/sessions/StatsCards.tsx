import type { Stats } from '../../../../src-shared/sessions';
import { costText } from '../../lib/usage';

type Figure = Exclude<keyof Stats, 'simulatedCostPastWeek'>;

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
  if (simulated === undefined) return <>{costText(stats.costPastWeek)}</>;
  if (stats.costPastWeek === 0) {
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
      {costText(stats.costPastWeek)} <span className="stat-simulated">+ {costText(simulated)} simulated</span>
    </>
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
            <div className="stat-hint">{card.hint}</div>
          </div>
        );
      })}
    </section>
  );
}
