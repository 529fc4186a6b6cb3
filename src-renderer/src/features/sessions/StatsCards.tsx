import type { Stats } from '../../../../src-shared/sessions';
import { costText } from '../../lib/usage';

const CARDS: { key: keyof Stats; label: string; hint: string; show?: (value: number) => string }[] = [
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
    show: costText,
  },
];

export function StatsCards({ stats }: { stats: Stats | undefined }) {
  return (
    <section className="stats" aria-label="Workspace stats">
      {CARDS.map((card) => {
        const value = stats?.[card.key];
        return (
          <div key={card.key} className="stat">
            <div className="stat-value">
              {value === undefined ? '–' : card.show ? card.show(value) : value}
            </div>
            <div className="stat-label">{card.label}</div>
            <div className="stat-hint">{card.hint}</div>
          </div>
        );
      })}
    </section>
  );
}
