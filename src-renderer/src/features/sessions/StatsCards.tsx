import type { Stats } from '../../../../src-shared/sessions';

const CARDS: { key: keyof Stats; label: string; hint: string }[] = [
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
];

export function StatsCards({ stats }: { stats: Stats | undefined }) {
  return (
    <section className="stats" aria-label="Workspace stats">
      {CARDS.map((card) => (
        <div key={card.key} className="stat">
          <div className="stat-value">{stats ? stats[card.key] : '–'}</div>
          <div className="stat-label">{card.label}</div>
          <div className="stat-hint">{card.hint}</div>
        </div>
      ))}
    </section>
  );
}
