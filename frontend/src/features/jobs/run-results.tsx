import { ArrowDownRight, ArrowUpRight, Check, X } from 'lucide-react';
import { DataTable } from '@/components/data-table';
import { cn } from '@/lib/utils';
import { changeText, tableOf, valueText, type ChangeEntry } from './change';
import type { JobCheck } from './types';

/** A run's named results: each value (a table as a small table) and its change since the last run. */
export function RunResults({ names, results, change }: { names: string[]; results: Record<string, unknown>; change: Record<string, unknown> }) {
  const shown = [...names.filter((n) => n in results), ...Object.keys(results).filter((n) => !names.includes(n))];
  if (!shown.length) return null;
  return (
    <div className="space-y-2" data-testid="run-results">
      {shown.map((name) => {
        const value = results[name];
        const table = tableOf(value);
        const entry = change[name] as ChangeEntry | undefined;
        return (
          <div key={name} className="min-w-0 space-y-1" data-testid="run-result" data-name={name}>
            <div className="flex flex-wrap items-baseline gap-x-3 gap-y-0.5 text-sm">
              <span className="font-mono text-xs text-muted-foreground">{name}</span>
              {!table && (
                <span className="font-medium tabular-nums break-all" data-testid="result-value">
                  {valueText(value)}
                </span>
              )}
              {entry && <ChangeBadge entry={entry} isTable={!!table} />}
            </div>
            {table && <DataTable columns={table.columns.map((c) => ({ name: c }))} rows={table.rows} rowCount={table.rowCount} pageSize={5} className="text-xs" />}
          </div>
        );
      })}
    </div>
  );
}

/** "48,210 → 52,000 +7.9%", the per cent green when up, red when down. */
export function ChangeBadge({ entry, isTable = false }: { entry: ChangeEntry; isTable?: boolean }) {
  const c = changeText(entry, isTable);
  const Arrow = c.direction === 'down' ? ArrowDownRight : ArrowUpRight;
  return (
    <span className="inline-flex flex-wrap items-center gap-x-1.5 text-xs text-muted-foreground tabular-nums" data-testid="result-change" data-direction={c.direction}>
      <span>{c.text}</span>
      {c.pct && (
        <span
          className={cn(
            'inline-flex items-center gap-0.5 rounded px-1 font-medium',
            c.direction === 'up' && 'bg-emerald-500/10 text-emerald-700 dark:text-emerald-400',
            c.direction === 'down' && 'bg-destructive/10 text-destructive',
          )}
          data-testid="result-pct"
        >
          {c.direction !== 'same' && <Arrow className="size-3" />}
          {c.pct}
        </span>
      )}
      {c.rows && <span>({c.rows})</span>}
    </span>
  );
}

/** A run's checks: passed ones by name, failed ones with the check's own sentence. */
export function RunChecks({ checks }: { checks: JobCheck[] }) {
  if (!checks.length) return null;
  const failed = checks.filter((c) => !c.passed);
  return (
    <div className="space-y-1" data-testid="run-checks">
      <p className="text-xs font-medium text-muted-foreground">
        Checks: {checks.length - failed.length} of {checks.length} passed
      </p>
      <ul className="space-y-0.5 text-xs">
        {checks.map((c) => (
          <li key={c.name} className="flex items-start gap-1.5" data-testid="run-check" data-passed={c.passed}>
            {c.passed ? <Check className="mt-px size-3.5 shrink-0 text-emerald-600" /> : <X className="mt-px size-3.5 shrink-0 text-destructive" />}
            <span className="min-w-0 break-words">
              <span className="font-mono text-muted-foreground">{c.name}</span>
              {!c.passed && c.message && <span className="text-destructive"> — {c.message}</span>}
            </span>
          </li>
        ))}
      </ul>
    </div>
  );
}
